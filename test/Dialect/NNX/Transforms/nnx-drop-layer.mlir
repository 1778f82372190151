// RUN: split-file %s %t
// RUN: nnx-opt %t/seq.mlir --nnx-drop-layer="layer=body.1" | FileCheck %t/seq.mlir
// RUN: nnx-opt %t/alias.mlir --nnx-drop-layer="layer=again" | FileCheck %t/alias.mlir
// RUN: nnx-opt %t/ff.mlir --nnx-drop-layer="layer=layers.1" | FileCheck %t/ff.mlir
// The dropped feed_fwd round-trips (its verifier accepts the identity slot).
// RUN: nnx-opt %t/ff.mlir --nnx-drop-layer="layer=layers.1" | nnx-opt | FileCheck %t/ff.mlir
// RUN: nnx-opt %t/cnn.mlir --nnx-drop-layer="layer=layers.0" | FileCheck %t/cnn.mlir
// RUN: nnx-opt %t/cnn.mlir --nnx-drop-layer="layer=layers.0" | nnx-opt | FileCheck %t/cnn.mlir

//--- seq.mlir
// The module becomes nnx.identity under the same key, in its mode.
// CHECK-LABEL: nnx.model @seq
// CHECK:      nnx.sequential @body keying = positional {
// CHECK-NEXT:   nnx.linear @"0"
// CHECK-NEXT:   nnx.identity @"1" {train}
// CHECK-NEXT:   nnx.linear @"2"
nnx.model @seq inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<8x8xf32>, bias = dense<0.0> : tensor<8xf32>, train}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

//--- alias.mlir
// Dropping an alias slot replaces that registration only: the module stays at
// its own path.
// CHECK-LABEL: nnx.model @alias
// CHECK:      nnx.linear @t {weight = dense<1.000000e+00> : tensor<8x8xf32>}
// CHECK-NEXT: nnx.relu @r
// CHECK-NEXT: nnx.identity @again{{$}}
nnx.model @alias inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.relu @r
    nnx.alias @again = @t
  }
}

//--- ff.mlir
// A feed_fwd keeps its keys and hidden_dims: the dropped slot holds an
// nnx.identity (its params say 8 -> 8).
// CHECK-LABEL: nnx.model @ff
// CHECK:      nnx.feed_fwd @net attributes {hidden_dims = array<i64: 8, 8>, input_dim = 4 : i64, output_dim = 2 : i64}
// CHECK-NEXT: nnx.module_list @layers {
// CHECK-NEXT:   nnx.linear @"0"
// CHECK-NEXT:   nnx.identity @"1"{{$}}
// CHECK-NEXT:   nnx.linear @"2"
nnx.model @ff inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8, 8>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<8x8xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

//--- cnn.mlir
// conv_nn: a 2 -> 2 block becomes an identity; the params keep describing
// it (channels unchanged), and the verifier accepts the identity.
// CHECK:      nnx.conv_nn @net attributes {channels = array<i64: 2, 3>,
// CHECK-NEXT: nnx.module_list @layers {
// CHECK-NEXT:   nnx.identity @"0"
// CHECK-NEXT:   nnx.conv2d @"1"
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
