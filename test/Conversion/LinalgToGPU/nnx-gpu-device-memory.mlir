// RUN: nnx-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(nnx-linalg-to-gpu),gpu-kernel-outlining,func.func(nnx-gpu-device-memory))' | FileCheck %s

memref.global "private" constant @w : memref<4xf32> = dense<1.0>

// The input and the weights are copied in right before their first use, the
// result buffer is a device allocation copied out into a host buffer
// allocated up front, and every device buffer is freed before returning.

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: memref<?x4xf32>) -> memref<?x4xf32>
// CHECK: %[[G:.*]] = memref.get_global @w
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[HOST:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x4xf32>
// CHECK: %[[Y:.*]] = gpu.alloc  (%[[N]]) : memref<?x4xf32>
// CHECK: %[[DX:.*]] = gpu.alloc  (%{{.*}}) : memref<?x4xf32>
// CHECK: gpu.memcpy  %[[DX]], %[[X]]
// CHECK: %[[DW:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: gpu.memcpy  %[[DW]], %[[G]]
// CHECK: gpu.launch_func  @{{.*}} args({{.*}}%[[DX]] : memref<?x4xf32>, %[[DW]] : memref<4xf32>, %[[Y]] : memref<?x4xf32>
// CHECK: gpu.memcpy  %[[HOST]], %[[Y]]
// CHECK-DAG: gpu.dealloc  %[[Y]]
// CHECK-DAG: gpu.dealloc  %[[DX]]
// CHECK-DAG: gpu.dealloc  %[[DW]]
// CHECK: return %[[HOST]]
func.func @scale(%x: memref<?x4xf32>) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %w = memref.get_global @w : memref<4xf32>
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %y = memref.alloc(%n) : memref<?x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : memref<?x4xf32>, memref<4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return %y : memref<?x4xf32>
}

// -----

// The sizes of a memref.reshape (what tensor.reshape bufferizes to) are
// written and read on the host: that buffer stays in host memory, the
// reshaped data is a view of device memory.

// CHECK-LABEL: func.func @reshape_shape_on_host
// CHECK: %[[SHAPE:.*]] = memref.alloc() : memref<2xindex>
// CHECK: memref.store %{{.*}}, %[[SHAPE]]
// CHECK: %[[DX:.*]] = gpu.alloc
// CHECK: memref.reshape %[[DX]](%[[SHAPE]])
// CHECK: gpu.launch_func
// CHECK: memref.dealloc %[[SHAPE]]
func.func @reshape_shape_on_host(%x: memref<?x?x4xf32>, %n: index) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %shape = memref.alloc() : memref<2xindex>
  memref.store %n, %shape[%c0] : memref<2xindex>
  memref.store %c4, %shape[%c1] : memref<2xindex>
  %r = memref.reshape %x(%shape) : (memref<?x?x4xf32>, memref<2xindex>) -> memref<?x4xf32>
  %y = memref.alloc(%n) : memref<?x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<?x4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %shape : memref<2xindex>
  return %y : memref<?x4xf32>
}

// -----

// One-shot bufferization frees nothing, and the CUDA pipeline runs no
// deallocation pipeline: a host shape buffer nothing frees is freed at the
// end of its block, here the return (was: one malloc per reshape per call
// leaked; LeakSanitizer in test/nnx-run/cuda-target.test, issue 20). A
// reshape in a nested block has its buffer freed at the end of that block.

// CHECK-LABEL: func.func @reshape_shape_freed
// CHECK: %[[SHAPE:.*]] = memref.alloc() : memref<2xindex>
// CHECK: scf.for
// CHECK:   %[[INNER:.*]] = memref.alloc() : memref<1xindex>
// CHECK:   memref.reshape %{{.*}}(%[[INNER]])
// CHECK:   memref.dealloc %[[INNER]]
// CHECK-NEXT: }
// CHECK: memref.reshape %{{.*}}(%[[SHAPE]])
// CHECK: gpu.launch_func
// CHECK: memref.dealloc %[[SHAPE]]
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @reshape_shape_freed(%x: memref<?x?x4xf32>, %n: index) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %shape = memref.alloc() : memref<2xindex>
  memref.store %n, %shape[%c0] : memref<2xindex>
  memref.store %c4, %shape[%c1] : memref<2xindex>
  scf.for %i = %c0 to %n step %c1 {
    %flat = memref.alloc() : memref<1xindex>
    memref.store %c4, %flat[%c0] : memref<1xindex>
    %f = memref.reshape %x(%flat) : (memref<?x?x4xf32>, memref<1xindex>) -> memref<?xf32>
  }
  %r = memref.reshape %x(%shape) : (memref<?x?x4xf32>, memref<2xindex>) -> memref<?x4xf32>
  %y = memref.alloc(%n) : memref<?x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<?x4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return %y : memref<?x4xf32>
}

// -----

// A host read of what a kernel found (the run-time index check of
// nnx.fn.gather reads the first bad index): the small device buffer is
// copied into a host stack buffer right before the read.

// CHECK-LABEL: func.func @scalar_read_on_host
// CHECK: %[[D:.*]] = gpu.alloc  () : memref<i64>
// CHECK: gpu.launch_func
// CHECK: %[[H:.*]] = memref.alloca() : memref<i64>
// CHECK: gpu.memcpy  %[[H]], %[[D]] : memref<i64>, memref<i64>
// CHECK: %[[V:.*]] = memref.load %[[H]][] : memref<i64>
// CHECK: return %[[V]]
func.func @scalar_read_on_host(%x: memref<?xi64>) -> i64 {
  %r = memref.alloc() : memref<i64>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<?xi64>) outs(%r : memref<i64>) {
  ^bb0(%a: i64, %o: i64):
    %m = arith.maxsi %a, %o : i64
    linalg.yield %m : i64
  }
  %v = memref.load %r[] : memref<i64>
  return %v : i64
}

// -----

// Functions without kernels are left alone.

// CHECK-LABEL: func.func @host_only
// CHECK-NEXT: memref.alloc
// CHECK-NOT: gpu.
func.func @host_only() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

func.func @host_read(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  // expected-error @+1 {{'memref.load' op nnx-gpu-device-memory: this host op accesses device memory; it must run inside a kernel}}
  %v = memref.load %y[%c0] : memref<4xf32>
  return %v : f32
}
