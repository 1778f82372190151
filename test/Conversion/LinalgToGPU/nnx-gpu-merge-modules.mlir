// RUN: nnx-opt %s --nnx-gpu-merge-modules | FileCheck %s

// Every outlined kernel moves into the first gpu.module, renamed after the
// module it came from; launches are retargeted.

// CHECK: gpu.module @k {
// CHECK: gpu.func @k(
// CHECK: gpu.func @k_0(
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func  @k::@k blocks
// CHECK: gpu.launch_func  @k::@k_0 blocks
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @k_0 {
    gpu.func @k(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @f(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k_0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %a : memref<4xf32>)
    return
  }
}
