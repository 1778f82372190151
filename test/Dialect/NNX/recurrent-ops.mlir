// RUN: nnx-opt %s | FileCheck %s
// RUN: nnx-opt %s | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s

// A 2-layer bidirectional LSTM called with (h_0, c_0): three results.
// CHECK-LABEL: nnx.model @lstm
// CHECK:         nnx.lstm @rnn {batch_first, bias_hh_l0 = {{.*}}, bias_ih_l1_reverse = dense<0.000000e+00> : tensor<12xf32>, bidirectional, hidden_size = 3 : i64, input_size = 2 : i64, num_layers = 2 : i64, {{.*}}weight_ih_l1_reverse = dense<1.000000e-01> : tensor<12x6xf32>}
// CHECK:         %[[R:.*]]:3 = nnx.call @rnn(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?x2xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>) -> (tensor<?x?x6xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>)
// CHECK:         nnx.return %[[R]]#0, %[[R]]#1, %[[R]]#2
nnx.model @lstm inputs(tensor<?x?x2xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>) {
  nnx.module @net class = "Tagger" {
    nnx.lstm @rnn {input_size = 2, hidden_size = 3, num_layers = 2, batch_first, bidirectional,
                   weight_ih_l0 = dense<0.1> : tensor<12x2xf32>, weight_hh_l0 = dense<0.1> : tensor<12x3xf32>,
                   bias_ih_l0 = dense<0.0> : tensor<12xf32>, bias_hh_l0 = dense<0.0> : tensor<12xf32>,
                   weight_ih_l0_reverse = dense<0.1> : tensor<12x2xf32>, weight_hh_l0_reverse = dense<0.1> : tensor<12x3xf32>,
                   bias_ih_l0_reverse = dense<0.0> : tensor<12xf32>, bias_hh_l0_reverse = dense<0.0> : tensor<12xf32>,
                   weight_ih_l1 = dense<0.1> : tensor<12x6xf32>, weight_hh_l1 = dense<0.1> : tensor<12x3xf32>,
                   bias_ih_l1 = dense<0.0> : tensor<12xf32>, bias_hh_l1 = dense<0.0> : tensor<12xf32>,
                   weight_ih_l1_reverse = dense<0.1> : tensor<12x6xf32>, weight_hh_l1_reverse = dense<0.1> : tensor<12x3xf32>,
                   bias_ih_l1_reverse = dense<0.0> : tensor<12xf32>, bias_hh_l1_reverse = dense<0.0> : tensor<12xf32>}
    nnx.forward @forward(%x: tensor<?x?x2xf32>, %h: tensor<4x?x3xf32>, %c: tensor<4x?x3xf32>) -> (tensor<?x?x6xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>) {
      %o, %hn, %cn = nnx.call @rnn(%x, %h, %c) : (tensor<?x?x2xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>) -> (tensor<?x?x6xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>)
      nnx.return %o, %hn, %cn : tensor<?x?x6xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>
    }
  }
}

// The GRU and the Elman RNN, on x alone (zero initial state).
// CHECK-LABEL: nnx.model @gru
// CHECK:         nnx.gru @net {bias = false, dropout = 2.500000e-01 : f64, hidden_size = 2 : i64, input_size = 4 : i64, weight_hh_l0 = dense<1.000000e-01> : tensor<6x2xf32>, weight_ih_l0 = dense<1.000000e-01> : tensor<6x4xf32>}
// CHECK-LABEL: nnx.model @rnn
// CHECK:         nnx.rnn @net {{{.*}}nonlinearity = #nnx.activation<relu>{{.*}}}
nnx.model @gru inputs(tensor<?x?x4xf32>) {
  nnx.gru @net {input_size = 4, hidden_size = 2, bias = false, dropout = 0.25 : f64,
                weight_ih_l0 = dense<0.1> : tensor<6x4xf32>, weight_hh_l0 = dense<0.1> : tensor<6x2xf32>}
}

nnx.model @rnn inputs(tensor<?x?x4xf32>, tensor<1x?x2xf32>) {
  nnx.rnn @net {input_size = 4, hidden_size = 2, nonlinearity = #nnx.activation<relu>,
                weight_ih_l0 = dense<0.1> : tensor<2x4xf32>, weight_hh_l0 = dense<0.1> : tensor<2x2xf32>,
                bias_ih_l0 = dense<0.0> : tensor<2xf32>, bias_hh_l0 = dense<0.0> : tensor<2xf32>}
}

// The cells.
// CHECK-LABEL: nnx.model @cells
// CHECK:         nnx.lstm_cell @lstm {bias_hh = {{.*}}, bias_ih = {{.*}}, hidden_size = 2 : i64, input_size = 4 : i64, weight_hh = dense<1.000000e-01> : tensor<8x2xf32>, weight_ih = dense<1.000000e-01> : tensor<8x4xf32>}
// CHECK:         nnx.gru_cell @gru {hidden_size = 2 : i64, input_size = 4 : i64, weight_hh
// The default nonlinearity (tanh) is not printed.
// CHECK:         nnx.rnn_cell @rnn {hidden_size = 2 : i64, input_size = 4 : i64, weight_hh
// CHECK:         %[[L:.*]]:2 = nnx.call @lstm(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
// CHECK:         nnx.call @gru(%{{.*}}, %[[L]]#0) : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK:         nnx.call @rnn(%{{.*}}) : (tensor<?x4xf32>) -> tensor<?x2xf32>
nnx.model @cells inputs(tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  nnx.module @net class = "Cells" {
    nnx.lstm_cell @lstm {input_size = 4, hidden_size = 2,
                         weight_ih = dense<0.1> : tensor<8x4xf32>, weight_hh = dense<0.1> : tensor<8x2xf32>,
                         bias_ih = dense<0.0> : tensor<8xf32>, bias_hh = dense<0.0> : tensor<8xf32>}
    nnx.gru_cell @gru {input_size = 4, hidden_size = 2,
                       weight_ih = dense<0.1> : tensor<6x4xf32>, weight_hh = dense<0.1> : tensor<6x2xf32>}
    nnx.rnn_cell @rnn {input_size = 4, hidden_size = 2, nonlinearity = #nnx.activation<tanh>,
                       weight_ih = dense<0.1> : tensor<2x4xf32>, weight_hh = dense<0.1> : tensor<2x2xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>, %h: tensor<?x2xf32>, %c: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
      %h1, %c1 = nnx.call @lstm(%x, %h, %c) : (tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
      %h2 = nnx.call @gru(%x, %h1) : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
      %h3 = nnx.call @rnn(%x) : (tensor<?x4xf32>) -> tensor<?x2xf32>
      nnx.return %h2, %c1, %h3 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
    }
  }
}
