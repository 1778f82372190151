// RUN: nnx-opt %s -split-input-file --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s

// tile-matmul first puts B of an A * B^T matmul (a Linear's weight, N x K) in
// the K x N layout the register tiles read: a constant B is transposed at
// compile time, no transpose is left to run.
// CHECK-LABEL: func.func @constant_weight(
// CHECK:         arith.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @constant_weight(%a: tensor<?x3xf32>, %c: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x3xf32>, tensor<2x3xf32>)
         outs(%c : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// A B that is not a constant (a runtime weight) is transposed by a
// linalg.transpose ahead of the matmul.
// CHECK-LABEL: func.func @runtime_weight(
// CHECK-SAME:      %{{.*}}: tensor<?x3xf32>, %[[W:.*]]: tensor<2x3xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<3x2xf32>
// CHECK:         linalg.transpose ins(%[[W]] : tensor<2x3xf32>) outs(%[[E]] : tensor<3x2xf32>) permutation = [1, 0]
func.func @runtime_weight(%a: tensor<?x3xf32>, %w: tensor<2x3xf32>, %c: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x3xf32>, tensor<2x3xf32>)
         outs(%c : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// A table tied to the head: the embedding's element reads follow the K x N
// layout (W[i, j] is element (j, i)), so the parameter is transposed once
// at bind time, not per call.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME:      %[[W:[a-z0-9]+]]: tensor<3x5xf32> {nnx.parameter = "wte.weight"}
// CHECK-SAME:      nnx.parameter_layouts = {wte.weight = array<i64: 1, 0>}
// CHECK:         %[[J:.*]] = linalg.index 1 : index
// CHECK:         tensor.extract %[[W]][%[[J]], %{{.*}}] : tensor<3x5xf32>
// CHECK-NOT:     linalg.transpose
func.func @tied(%ids: tensor<2xindex>, %w: tensor<5x3xf32> {nnx.parameter = "wte.weight"}, %c: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %rows = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<2xindex>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%id: index, %out: f32):
    %j = linalg.index 1 : index
    %v = tensor.extract %w[%id, %j] : tensor<5x3xf32>
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%rows, %w : tensor<2x3xf32>, tensor<5x3xf32>)
         outs(%c : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}
