// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-build-forward=parameters=constants | FileCheck %s

// A Linear of one tensor-parallel rank (nnx.partial_sum): the matmul into
// zeros, its sum over the ranks of the 1-D grid @tensor_parallel (created
// once beside the function), then the bias added once.
// CHECK:       shard.grid @tensor_parallel(shape = 2)
// CHECK-NOT:   shard.grid
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>) -> tensor<?x2xf32>
// CHECK:         %[[B:.*]] = arith.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:         %[[P:.*]] = linalg.matmul {{.*}} ins(%[[X]], %{{.*}} : tensor<?x4xf32>, tensor<2x4xf32>) outs(%[[Z]] : tensor<?x2xf32>)
// CHECK:         %[[S:.*]] = shard.all_reduce %[[P]] on @tensor_parallel grid_axes = [0] : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[B]] : tensor<?x2xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:           arith.addf
// A second partial Linear, without bias, shares the grid.
// CHECK:         %[[P2:.*]] = linalg.matmul
// CHECK:         %[[S2:.*]] = shard.all_reduce %[[P2]] on @tensor_parallel
// CHECK:         return %[[S2]] : tensor<?x2xf32>
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<1.0> : tensor<2x4xf32>,
                     bias = dense<[0.5, -0.5]> : tensor<2xf32>,
                     nnx.partial_sum = {ranks = 2 : i64}}
    nnx.linear @"1" {weight = dense<1.0> : tensor<2x2xf32>,
                     nnx.partial_sum = {ranks = 2 : i64}}
  }
}

// -----

// bf16: the f32 accumulator is summed, the bf16 bias added in f32, one
// rounding.
// CHECK-LABEL: func.func @forward(
// CHECK:         %[[P:.*]] = linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:         %[[S:.*]] = shard.all_reduce %[[P]] on @tensor_parallel grid_axes = [0] : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<?x2xf32>, tensor<2xbf16>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:           arith.extf
// CHECK:           arith.addf
// CHECK:         arith.truncf %[[Y]] : tensor<?x2xf32> to tensor<?x2xbf16>
nnx.model @m inputs(tensor<?x4xbf16>) {
  nnx.linear @fc {weight = dense<1.0> : tensor<2x4xbf16>,
                  bias = dense<1.0> : tensor<2xbf16>,
                  nnx.partial_sum = {ranks = 4 : i64}}
}

// -----

// Two Linears that disagree on the number of ranks.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    // expected-note @+1 {{defined here}}
    nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>,
                     nnx.partial_sum = {ranks = 2 : i64}}
    // expected-error @+1 {{'nnx.linear' op at '1': sums over 4 ranks ('nnx.partial_sum'), but '@tensor_parallel' is already defined otherwise}}
    nnx.linear @"1" {weight = dense<1.0> : tensor<4x4xf32>,
                     nnx.partial_sum = {ranks = 4 : i64}}
  }
}
