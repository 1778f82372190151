// RUN: nnx-opt %s --nnx-build-forward --nnx-cpu-pipeline | FileCheck %s

// A whole model through nnx-build-forward and the pipeline: the weights
// become LLVM globals, tanh goes through libm.
// CHECK-DAG:   llvm.mlir.global private constant @{{.*}}(dense<{{.*}}> : tensor<4x3xf32>)
// CHECK-DAG:   llvm.func @tanhf(f32) -> f32 attributes
// CHECK-LABEL: llvm.func @forward(
// CHECK:         llvm.call @tanhf
// CHECK-LABEL: llvm.func @_mlir_ciface_forward(
nnx.model @mlp inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 1.0, 2.0, 3.0]]> : tensor<3x4xf32>}
    nnx.tanh @"1"
  }
}
