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
