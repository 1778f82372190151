// RUN: nnx-opt %s | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s
// Modules as exported code has them: a module the forward never calls
// (`nnx.uncalled`, no forward), a read of a descendant's tensor
// (`nnx.state` with `nnx.of`), and a root exported from another method
// (`nnx.entry`). Each round-trips through text, generic form and bytecode.

// CHECK-LABEL: nnx.model @pool
// CHECK:         nnx.module @aux class = "InceptionAux" attributes {nnx.uncalled, state = {scale = dense<2.000000e+00> : tensor<4xf32>}} {
// CHECK-NEXT:      nnx.linear @fc
// CHECK-NEXT:      nnx.module @drop class = "StochasticDepth" attributes {nnx.uncalled} {
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         nnx.forward @forward(%{{.*}}: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.entry = "encode_image"}
// CHECK:           nnx.state "bias" {nnx.of = @q} : tensor<4xf32>
// CHECK:           nnx.state "weight" {nnx.of = @blocks::@"0"} : tensor<4x4xf32>
nnx.model @pool inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Pool" {
    nnx.linear @q {weight = dense<1.0> : tensor<4x4xf32>,
                   bias = dense<0.5> : tensor<4xf32>}
    nnx.module_list @blocks {
      nnx.linear @"0" {weight = dense<0.25> : tensor<4x4xf32>}
    }
    nnx.module @aux class = "InceptionAux" attributes {nnx.uncalled, state = {scale = dense<2.0> : tensor<4xf32>}} {
      nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf32>}
      nnx.module @drop class = "StochasticDepth" attributes {nnx.uncalled} {
      }
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.entry = "encode_image"} {
      %h = nnx.call @q(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %b = nnx.state "bias" {nnx.of = @q} : tensor<4xf32>
      %w = nnx.state "weight" {nnx.of = @blocks::@"0"} : tensor<4x4xf32>
      %y = nnx.fn.add %h, %b : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}
