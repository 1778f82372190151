// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule=stage=lower-vectors | FileCheck %s

// lower-vectors carries a loop's n-D vector values as their rows
// (splitAccumulatorRows, BlockedAccumulation.cpp): each row is an iter_arg
// of its own, an n-D elementwise op is computed row by row, and a use that
// needs the whole value (the shape_cast) gets it reassembled from the rows.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME:      %[[M:[^:]*]]: memref<2x4xf32>, %[[N:[^:]*]]: index, %[[V:[^:]*]]: memref<8xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-DAG:     %[[C0:.*]] = vector.load %[[M]][%c0, %c0] : memref<2x4xf32>, vector<4xf32>
// CHECK-DAG:     %[[C1:.*]] = vector.load %[[M]][%c1, %c0] : memref<2x4xf32>, vector<4xf32>
// CHECK:         %[[R:.*]]:2 = scf.for %{{.*}} = %c0 to %[[N]] step %c1 iter_args(%[[A0:.*]] = %[[ZERO]], %[[A1:.*]] = %[[ZERO]]) -> (vector<4xf32>, vector<4xf32>) {
// CHECK-DAG:       %[[S0:.*]] = arith.addf %[[A0]], %[[ONE]] : vector<4xf32>
// CHECK-DAG:       %[[S1:.*]] = arith.addf %[[A1]], %[[ONE]] : vector<4xf32>
// CHECK-DAG:       %[[W0:.*]] = vector.insert_strided_slice %[[A0]], %{{.*}} {offsets = [0], strides = [1]} : vector<4xf32> into vector<8xf32>
// CHECK-DAG:       %[[W1:.*]] = vector.insert_strided_slice %[[A1]], %[[W0]] {offsets = [4], strides = [1]} : vector<4xf32> into vector<8xf32>
// CHECK:           vector.store %[[W1]], %[[V]][%c0] : memref<8xf32>, vector<8xf32>
// CHECK:           scf.yield %[[S0]], %[[S1]] : vector<4xf32>, vector<4xf32>
// CHECK:         }
// CHECK-DAG:     %[[T0:.*]] = arith.addf %[[C0]], %[[R]]#0 : vector<4xf32>
// CHECK-DAG:     %[[T1:.*]] = arith.addf %[[C1]], %[[R]]#1 : vector<4xf32>
// CHECK-DAG:     vector.store %[[T0]], %[[M]][%c0, %c0] : memref<2x4xf32>, vector<4xf32>
// CHECK-DAG:     vector.store %[[T1]], %[[M]][%c1, %c0] : memref<2x4xf32>, vector<4xf32>
// CHECK-NOT:     vector<2x4xf32>
func.func @rows(%m: memref<2x4xf32>, %n: index, %v: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<2x4xf32>
  %one = arith.constant dense<1.0> : vector<2x4xf32>
  %c = vector.transfer_read %m[%c0, %c0], %p {in_bounds = [true, true]} : memref<2x4xf32>, vector<2x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (vector<2x4xf32>) {
    %s = arith.addf %acc, %one : vector<2x4xf32>
    %flat = vector.shape_cast %acc : vector<2x4xf32> to vector<8xf32>
    vector.transfer_write %flat, %v[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
    scf.yield %s : vector<2x4xf32>
  }
  %sum = arith.addf %c, %r : vector<2x4xf32>
  vector.transfer_write %sum, %m[%c0, %c0] {in_bounds = [true, true]} : vector<2x4xf32>, memref<2x4xf32>
  return
}

// -----

// Values that are not n-D vectors (an index, a 1-D vector) stay as they
// are, in their places among the rows.
// CHECK-LABEL: func.func @mixed(
// CHECK:         %{{.*}}:4 = scf.for %{{.*}} iter_args(%[[I:.*]] = %c0, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[W:.*]] = %{{.*}}) -> (index, vector<8xf32>, vector<8xf32>, vector<4xf32>) {
// CHECK:           arith.addi %[[I]], %c1 : index
// CHECK:           arith.mulf %[[W]], %[[W]] : vector<4xf32>
// the n-D result, reassembled for the return
// CHECK:         %[[WHOLE:.*]] = vector.from_elements {{.*}} : vector<2x8xf32>
// CHECK:         return %{{.*}}#0, %[[WHOLE]], %{{.*}}#3
func.func @mixed(%n: index, %a: vector<2x8xf32>, %w: vector<4xf32>) -> (index, vector<2x8xf32>, vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%k = %c0, %acc = %a, %x = %w) -> (index, vector<2x8xf32>, vector<4xf32>) {
    %k1 = arith.addi %k, %c1 : index
    %acc1 = arith.mulf %acc, %acc : vector<2x8xf32>
    %x1 = arith.mulf %x, %x : vector<4xf32>
    scf.yield %k1, %acc1, %x1 : index, vector<2x8xf32>, vector<4xf32>
  }
  return %r#0, %r#1, %r#2 : index, vector<2x8xf32>, vector<4xf32>
}
