// RUN: nnx-opt %s --nnx-public-results-to-out-params | FileCheck %s

// The public function's result becomes a trailing argument it copies into;
// the private kernel keeps its dynamically shaped result (a caller could
// not allocate it: upstream's pass fails on it), and the call still
// returns it.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>) {
// CHECK:         %[[R:.*]] = call @kernel(%[[X]]) : (memref<?xf32>) -> memref<?xf32>
// CHECK:         memref.copy %[[R]], %[[OUT]]
// CHECK:         return{{$}}
// CHECK:       func.func private @kernel(%{{.*}}: memref<?xf32>) -> memref<?xf32>
// CHECK:         return %{{.*}} : memref<?xf32>
func.func @forward(%x: memref<?xf32>) -> memref<?xf32> {
  %r = call @kernel(%x) : (memref<?xf32>) -> memref<?xf32>
  return %r : memref<?xf32>
}
func.func private @kernel(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %y : memref<?xf32> to memref<?xf32>
  return %y : memref<?xf32>
}
