// RUN: nnx-opt %s --nnx-build-forward --nnx-cpu-pipeline \
// RUN: | FileCheck %s --implicit-check-not=llvm.mlir.global
// RUN: nnx-opt %s --nnx-build-forward=parameters=constants --nnx-cpu-pipeline \
// RUN: | FileCheck %s --check-prefix=CONST

// A whole model through nnx-build-forward and the pipeline. By default the
// weight is an argument of the compiled forward (after the input, before
// the result): no global holds it, the code does not depend on its values.
// The matmul's schedule reads it as K x N: the forward records that the
// argument holds the stored weight transposed (the runner transposes once).
// tanh is a polynomial (nnx-approximate-math), not a libm call.
// CHECK-LABEL: llvm.func @forward(
// CHECK-LABEL: llvm.func @_mlir_ciface_forward(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {nnx.parameter = "0.weight"})
// CHECK-SAME:    nnx.parameter_layouts = {"0.weight" = array<i64: 1, 0>}
// CHECK:       llvm.func @forward_layer_{{[0-9]+}}_kernel_
// CHECK:         llvm.intr.fma
// CHECK-NOT:     llvm.call @tanhf

// With parameters=constants the weights become LLVM globals.
// CONST-DAG:   llvm.mlir.global private constant @{{.*}}(dense<{{.*}}> : tensor<4x3xf32>)
// The Linear's layer kernel (nnx-outline-layers) reads its global.
// CONST-LABEL: llvm.func @forward(
// CONST-LABEL: llvm.func @_mlir_ciface_forward(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
// CONST-LABEL: llvm.func @forward_layer_0(
// CONST:         llvm.mlir.addressof @__constant_4x3xf32
// CONST:       llvm.func @forward_layer_{{[0-9]+}}_kernel_
// CONST:         llvm.intr.fma
// CONST-NOT:     llvm.call @tanhf
nnx.model @mlp inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 1.0, 2.0, 3.0]]> : tensor<3x4xf32>}
    nnx.tanh @"1"
  }
}
