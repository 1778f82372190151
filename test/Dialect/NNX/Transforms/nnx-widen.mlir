// RUN: split-file %s %t
// RUN: nnx-opt %t/pos.mlir --nnx-widen="layer=0 width=5 seed=0" | FileCheck %t/pos.mlir --check-prefix=POS
// RUN: nnx-opt %t/pos.mlir --nnx-widen="layer=0 width=3 seed=1" | FileCheck %t/pos.mlir --check-prefix=SEED1
// Deterministic: the same seed gives the same IR.
// RUN: nnx-opt %t/pos.mlir --nnx-widen="layer=0 width=5 seed=0" > %t.a
// RUN: nnx-opt %t/pos.mlir --nnx-widen="layer=0 width=5 seed=0" > %t.b
// RUN: diff %t.a %t.b
// RUN: nnx-opt %t/named.mlir --nnx-widen="layer=body.fc width=6 seed=7" | FileCheck %t/named.mlir --check-prefix=NAMED
// RUN: nnx-opt %t/ff.mlir --nnx-widen="layer=layers.1 width=4 seed=3" | FileCheck %t/ff.mlir --check-prefix=L1
// RUN: nnx-opt %t/ff.mlir --nnx-widen="layer=layers.0 width=4 seed=3" | FileCheck %t/ff.mlir --check-prefix=L0
// RUN: nnx-opt %t/cnn.mlir --nnx-widen="layer=layers.0 width=3" | FileCheck %t/cnn.mlir --check-prefix=CNN0
// RUN: nnx-opt %t/cnn.mlir --nnx-widen="layer=layers.1 width=4" | FileCheck %t/cnn.mlir --check-prefix=CNN1
// RUN: nnx-opt %t/cnn.mlir --nnx-widen="layer=fcs.0 width=3" | FileCheck %t/cnn.mlir --check-prefix=CNNFC

//--- pos.mlir
// Positional sequential. Units 2..4 replicate units chosen by
// mt19937_64(seed): seed 0 picks 0, 1, 1, so unit 0 is held twice and unit 1
// three times; the consumer's columns are divided by those counts (the
// original columns included). The target's bias flag and the consumer's mode
// are kept.
// POS-LABEL: nnx.model @mlp
// POS:      nnx.linear @"0" {bias = dense<[5.000000e-01, -5.000000e-01, 5.000000e-01, -5.000000e-01, -5.000000e-01]> : tensor<5xf32>, requires_grad = {bias = false}, weight = dense<{{\[}}[1.000000e+00], [2.000000e+00], [1.000000e+00], [2.000000e+00], [2.000000e+00]]> : tensor<5x1xf32>}
// POS-NEXT: nnx.relu @"1"
// POS-NEXT: nnx.linear @"2" {train, weight = dense<{{\[}}[1.500000e+00, 1.33333337, 1.500000e+00, 1.33333337, 1.33333337]]> : tensor<1x5xf32>}

// SEED1-LABEL: nnx.model @mlp
// SEED1:      nnx.linear @"0" {{{.*}}weight = dense<{{\[}}[1.000000e+00], [2.000000e+00], [1.000000e+00]]> : tensor<3x1xf32>}
// SEED1:      nnx.linear @"2" {train, weight = dense<{{\[}}[1.500000e+00, 4.000000e+00, 1.500000e+00]]> : tensor<1x3xf32>}
nnx.model @mlp inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>, requires_grad = {bias = false}}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>, train}
  }
}

//--- named.mlir
// Nested named sequential; the path crosses gelu, dropout and identity.
// f64 parameters stay f64; flags and modes stay on their modules.
// NAMED-LABEL: nnx.model @named
// NAMED:      nnx.sequential @body keying = named attributes {train}
// NAMED-NEXT: nnx.linear @fc {bias = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, 1.000000e-01, 1.000000e-01, 1.000000e-01]> : tensor<6xf64>, requires_grad = {weight = false}, train, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00], [1.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00]]> : tensor<6x2xf64>}
// NAMED-NEXT: nnx.gelu @act
// NAMED-NEXT: nnx.dropout @drop
// NAMED-NEXT: nnx.identity @id
// NAMED-NEXT: nnx.linear @head {bias = dense<5.000000e-01> : tensor<1xf64>, requires_grad = {bias = false}, weight = dense<{{\[}}[2.500000e-01, 2.000000e+00, 3.000000e+00, 2.500000e-01, 2.500000e-01, 2.500000e-01]]> : tensor<1x6xf64>}
// NAMED-NEXT: }
// NAMED-NEXT: nnx.tanh @out
nnx.model @named inputs(tensor<?x2xf64>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = named attributes {train} {
      nnx.linear @fc {weight = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf64>, bias = dense<[0.1, 0.2, 0.3]> : tensor<3xf64>, requires_grad = {weight = false}, train}
      nnx.gelu @act
      nnx.dropout @drop {p = 0.1 : f64}
      nnx.identity @id
      nnx.linear @head {weight = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf64>, bias = dense<0.5> : tensor<1xf64>, requires_grad = {bias = false}}
    }
    nnx.tanh @out
  }
}

//--- ff.mlir
// feed_fwd: hidden_dims records the new width; the per-layer activations and
// dropout_probs overrides (and the scalar defaults) are kept as they were.
// L1-LABEL: nnx.model @ff
// L1:      nnx.feed_fwd @net attributes {activations = [#nnx.activation<tanh>, #nnx.activation<relu>], dropout = 3.000000e-01 : f64, dropout_probs = [1.000000e-01, 2.000000e-01], hidden_dims = array<i64: 3, 4>, input_dim = 2 : i64, output_dim = 1 : i64}
// L1:      nnx.linear @"1" {bias = dense<[1.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>, weight = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<4x3xf32>}
// L1-NEXT: nnx.linear @"2" {weight = dense<{{\[}}[1.000000e+00, -0.333333343, -0.333333343, -0.333333343]]> : tensor<1x4xf32>}

// L0-LABEL: nnx.model @ff
// L0:      nnx.feed_fwd @net attributes {activations = [#nnx.activation<tanh>, #nnx.activation<relu>], dropout = 3.000000e-01 : f64, dropout_probs = [1.000000e-01, 2.000000e-01], hidden_dims = array<i64: 4, 2>, input_dim = 2 : i64, output_dim = 1 : i64}
// L0:      nnx.linear @"0" {weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>}
// L0-NEXT: nnx.linear @"1" {bias = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, weight = dense<{{\[}}[1.000000e+00, 2.000000e+00, 1.500000e+00, 1.500000e+00], [4.000000e+00, 5.000000e+00, 3.000000e+00, 3.000000e+00]]> : tensor<2x4xf32>}
// L0-NEXT: nnx.linear @"2" {weight = dense<{{\[}}[1.000000e+00, -1.000000e+00]]> : tensor<1x2xf32>}
nnx.model @ff inputs(tensor<?x2xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 2, hidden_dims = array<i64: 3, 2>, output_dim = 1, activation = #nnx.activation<relu>, activations = [#nnx.activation<tanh>, #nnx.activation<relu>], dropout = 0.3 : f64, dropout_probs = [0.1, 0.2]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>}
      nnx.linear @"1" {weight = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, bias = dense<[1.0, 2.0]> : tensor<2xf32>}
      nnx.linear @"2" {weight = dense<[[1.0, -1.0]]> : tensor<1x2xf32>}
    }
  }
}

//--- cnn.mlir
// conv_nn: channels / hidden_dims record the new width. A block feeds the
// next block (each input channel's 3 x 3 taps), the last block feeds fcs.0
// through the global average pool (one column per channel), and a hidden fc
// feeds the next fc.
// CNN0:      nnx.conv_nn @net attributes {channels = array<i64: 3, 3>, {{.*}}hidden_dims = array<i64: 2>
// CNN0:      nnx.conv2d @"0" {{.*}}out_channels = 3 : i64{{.*}}tensor<3x2x3x3xf32>}
// CNN0-NEXT: nnx.conv2d @"1" {{.*}}in_channels = 3 : i64{{.*}}tensor<3x3x3x3xf32>}
// CNN1:      nnx.conv_nn @net attributes {channels = array<i64: 2, 4>,
// CNN1:      nnx.conv2d @"1" {{.*}}out_channels = 4 : i64{{.*}}tensor<4x2x3x3xf32>}
// CNN1:      nnx.linear @"0" {weight = dense<{{.*}}> : tensor<2x4xf32>}
// CNNFC:     nnx.conv_nn @net attributes {channels = array<i64: 2, 3>, {{.*}}hidden_dims = array<i64: 3>
// CNNFC:     nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<3x3xf32>}
// CNNFC-NEXT: nnx.linear @"1" {weight = dense<{{.*}}> : tensor<1x3xf32>}
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1, pool = 2, dropout = 0.25 : f64} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>, bias = dense<0.1> : tensor<2xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.25> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
