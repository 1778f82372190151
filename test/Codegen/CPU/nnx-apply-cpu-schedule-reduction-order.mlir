// RUN: nnx-opt %s -split-input-file --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s

// A channels-last global average pool (the sum part), ReLU fused before it,
// into an NCHW result: the loops ran in the iterators' order, the reduced
// spatial ones inside the channel loop, reading the input 16 floats apart.
// The channel loop, parallel and the input's contiguous dim, moves
// innermost (ReductionLoopOrder.cpp); the reduced loops keep their order.
// CHECK-DAG:   #[[$IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @pool_sum(
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:        ins(%{{.*}} : tensor<?x3x3x16xf32>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK:           arith.maximumf
// CHECK:           arith.addf
func.func @pool_sum(%x: tensor<?x3x3x16xf32>, %init: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (n, c)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<?x3x3x16xf32>) outs(%init : tensor<?x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %relu = arith.maximumf %in, %zero : f32
    %sum = arith.addf %relu, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// A sum over the input's contiguous dim (a row sum) keeps its order: the
// innermost loop already walks the rows, and a reduced loop never moves.
// CHECK-LABEL: func.func @row_sum(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @row_sum(%x: tensor<?x16xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x16xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A column sum: the parallel column loop, the input's contiguous dim, moves
// inside the reduced row loop, so that each row is read as a vector.
// CHECK-DAG:   #[[$X:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$COLS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @column_sum(
// CHECK:         linalg.generic {indexing_maps = [#[[$X]], #[[$COLS]]], iterator_types = ["reduction", "parallel"]}
func.func @column_sum(%x: tensor<?x16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
