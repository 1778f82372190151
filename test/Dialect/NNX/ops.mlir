// RUN: nnx-opt %s | FileCheck %s
// Round trip through text, generic form and bytecode must be lossless.
// RUN: nnx-opt %s | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s

// CHECK-LABEL: nnx.model @mlp inputs(tensor<?x4xf32>)
// CHECK: nnx.sequential @net keying = positional
// CHECK: nnx.linear @"0" {bias = dense<0.000000e+00> : tensor<8xf32>, requires_grad = {bias = false}, weight = dense<5.000000e-01> : tensor<8x4xf32>}
// CHECK: nnx.relu @"1"
nnx.model @mlp inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.0> : tensor<8xf32>, requires_grad = {bias = false}}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<0.25> : tensor<2x8xf32>, bias = dense<0.0> : tensor<2xf32>}
  }
}
