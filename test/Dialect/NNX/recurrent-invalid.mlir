// RUN: nnx-opt %s -split-input-file -verify-diagnostics

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{tensor 'weight_ih_l0' must be a float tensor of shape 32x4, got 'tensor<32x5xf32>'}}
  nnx.lstm @rnn {input_size = 4, hidden_size = 8,
                 weight_ih_l0 = dense<0.1> : tensor<32x5xf32>,
                 weight_hh_l0 = dense<0.1> : tensor<32x8xf32>,
                 bias_ih_l0 = dense<0.0> : tensor<32xf32>,
                 bias_hh_l0 = dense<0.0> : tensor<32xf32>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{tensor 'weight_hh_l0' must be a float tensor of shape 24x8, got 'tensor<32x8xf32>'}}
  nnx.gru @rnn {input_size = 4, hidden_size = 8, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<24x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<32x8xf32>}
}

// -----

// Layer 1 reads layer 0's output: hidden_size features.
nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{needs tensor 'weight_ih_l1'}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, num_layers = 2, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf32>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{attribute 'num_layers' failed to satisfy constraint}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, num_layers = 0, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf32>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{has tensor 'weight_ih_l1', which a 1-layer unidirectional bias-free layer does not have}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf32>,
                weight_ih_l1 = dense<0.1> : tensor<8x8xf32>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{has tensor 'weight_ih_l0_reverse', which a 1-layer unidirectional bias-free layer does not have}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf32>,
                weight_ih_l0_reverse = dense<0.1> : tensor<8x4xf32>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{tensor 'weight_hh_l0' holds 'f64', the others 'f32'}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf64>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{nonlinearity must be tanh or relu, got gelu}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, bias = false,
                nonlinearity = #nnx.activation<gelu>,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf32>}
}

// -----

nnx.model @m inputs(tensor<?x?x4xf32>) {
  // expected-error @+1 {{dropout must lie in [0, 1], got 1.5}}
  nnx.rnn @rnn {input_size = 4, hidden_size = 8, bias = false,
                dropout = 1.5 : f64,
                weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<8x8xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{needs both 'bias_ih' and 'bias_hh', or neither}}
  nnx.gru_cell @cell {input_size = 4, hidden_size = 8,
                      weight_ih = dense<0.1> : tensor<24x4xf32>,
                      weight_hh = dense<0.1> : tensor<24x8xf32>,
                      bias_ih = dense<0.0> : tensor<24xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{tensor 'weight_ih' must be a float tensor of shape 32x4, got 'tensor<24x4xf32>'}}
  nnx.lstm_cell @cell {input_size = 4, hidden_size = 8,
                       weight_ih = dense<0.1> : tensor<24x4xf32>,
                       weight_hh = dense<0.1> : tensor<32x8xf32>}
}

// -----

// The type function: the input's features, then h_0's shape.
// expected-error @+1 {{expects 4 input features, got 5}}
nnx.model @m inputs(tensor<?x?x5xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.gru @rnn {input_size = 4, hidden_size = 8, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<24x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<24x8xf32>}
}

// -----

// expected-error @+1 {{takes h_0 of shape tensor<2x?x8xf32>, got tensor<1x?x8xf32>}}
nnx.model @m inputs(tensor<?x?x4xf32>, tensor<1x?x8xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.gru @rnn {input_size = 4, hidden_size = 8, bias = false, bidirectional,
                weight_ih_l0 = dense<0.1> : tensor<24x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<24x8xf32>,
                weight_ih_l0_reverse = dense<0.1> : tensor<24x4xf32>,
                weight_hh_l0_reverse = dense<0.1> : tensor<24x8xf32>}
}

// -----

// expected-error @+1 {{takes h_0 of shape tensor<1x3x8xf32>, got tensor<1x2x8xf32>}}
nnx.model @m inputs(tensor<5x3x4xf32>, tensor<1x2x8xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.gru @rnn {input_size = 4, hidden_size = 8, bias = false,
                weight_ih_l0 = dense<0.1> : tensor<24x4xf32>,
                weight_hh_l0 = dense<0.1> : tensor<24x8xf32>}
}

// -----

// expected-error @+1 {{takes the input, h and c (or the input alone), got 2 inputs}}
nnx.model @m inputs(tensor<?x?x4xf32>, tensor<1x?x8xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.lstm @rnn {input_size = 4, hidden_size = 8, bias = false,
                 weight_ih_l0 = dense<0.1> : tensor<32x4xf32>,
                 weight_hh_l0 = dense<0.1> : tensor<32x8xf32>}
}

// -----

// expected-error @+1 {{takes input of rank 3 (batch, seq, features) or 2 (unbatched), got tensor<?xf32>}}
nnx.model @m inputs(tensor<?xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.lstm @rnn {input_size = 4, hidden_size = 8, bias = false, batch_first,
                 weight_ih_l0 = dense<0.1> : tensor<32x4xf32>,
                 weight_hh_l0 = dense<0.1> : tensor<32x8xf32>}
}
