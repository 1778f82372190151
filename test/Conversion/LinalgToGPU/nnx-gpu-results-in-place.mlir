// RUN: nnx-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(nnx-gpu-results-in-place))' | FileCheck %s

// A device result's host buffer: the copy out of the device writes the
// out-param, and nothing is left to free.
// CHECK-LABEL: func.func @device_result
// CHECK-SAME: (%[[DEV:[^:]*]]: memref<?x3xf32>, %[[OUT:[^:]*]]: memref<?x3xf32>)
// CHECK-NOT: memref.alloc
// CHECK: gpu.memcpy %[[OUT]], %[[DEV]]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @device_result(%dev: memref<?x3xf32>, %out: memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %dev, %c0 : memref<?x3xf32>
  %h = memref.alloc(%n) {alignment = 64 : i64} : memref<?x3xf32>
  gpu.memcpy %h, %dev : memref<?x3xf32>, memref<?x3xf32>
  memref.copy %h, %out : memref<?x3xf32> to memref<?x3xf32>
  return
}

// -----

// A result-shapes function: the sizes are stored into the out-param.
// CHECK-LABEL: func.func @sizes
// CHECK-SAME: %[[OUT:[^:]*]]: memref<1xi64>
// CHECK-NOT: memref.alloc
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: memref.copy
func.func @sizes(%x: memref<?x3xf32>, %out: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x3xf32>
  %i = arith.index_cast %n : index to i64
  %a = memref.alloc() {alignment = 64 : i64} : memref<1xi64>
  memref.store %i, %a[%c0] : memref<1xi64>
  memref.copy %a, %out : memref<1xi64> to memref<1xi64>
  return
}

// -----

// One buffer returned twice: the second out-param becomes the buffer, the
// first is copied from it.
// CHECK-LABEL: func.func @twice
// CHECK-SAME: %[[O1:[^:]*]]: memref<2xf32>, %[[O2:[^:]*]]: memref<2xf32>
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.*}} outs(%[[O2]]
// CHECK: memref.copy %[[O2]], %[[O1]]
func.func @twice(%o1: memref<2xf32>, %o2: memref<2xf32>) {
  %z = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2xf32>
  linalg.fill ins(%z : f32) outs(%a : memref<2xf32>)
  memref.copy %a, %o1 : memref<2xf32> to memref<2xf32>
  memref.copy %a, %o2 : memref<2xf32> to memref<2xf32>
  return
}

// -----

// Left alone: a buffer read after the copy, one freed, one of another type,
// an out-param with other uses, a copy from an argument.
// CHECK-LABEL: func.func @kept
// CHECK: memref.alloc
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.cast
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.copy
func.func @kept(%in: memref<2xf32>, %o1: memref<2xf32>, %o2: memref<2xf32>,
                %o3: memref<?xf32>, %o4: memref<2xf32>, %o5: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2xf32>
  memref.copy %a, %o1 : memref<2xf32> to memref<2xf32>
  %v = memref.load %a[%c0] : memref<2xf32>
  %b = memref.alloc() : memref<2xf32>
  memref.copy %b, %o2 : memref<2xf32> to memref<2xf32>
  memref.dealloc %b : memref<2xf32>
  %c = memref.alloc() : memref<2xf32>
  %cc = memref.cast %c : memref<2xf32> to memref<?xf32>
  memref.copy %cc, %o3 : memref<?xf32> to memref<?xf32>
  memref.copy %in, %o4 : memref<2xf32> to memref<2xf32>
  memref.store %v, %o5[%c0] : memref<2xf32>
  memref.copy %in, %o5 : memref<2xf32> to memref<2xf32>
  return %v : f32
}
