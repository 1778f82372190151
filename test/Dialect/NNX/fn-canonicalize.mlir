// RUN: nnx-opt %s --canonicalize | FileCheck %s
// RUN: nnx-opt %s --resolve-shaped-type-result-dims --canonicalize | FileCheck %s --check-prefix=DIMS

// A permute swapping the last two dims of rhs folds into transpose_b.
// CHECK-LABEL: func.func @permute_into_matmul(
// CHECK-SAME:      %[[Q:.*]]: tensor<?x4x?x16xf32>, %[[K:.*]]: tensor<?x4x?x16xf32>
// CHECK-NEXT:    %[[S:.*]] = nnx.fn.matmul %[[Q]], %[[K]] {transpose_b} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
// CHECK-NEXT:    return %[[S]]
func.func @permute_into_matmul(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32> {
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32>
  %s = nnx.fn.matmul %q, %kt : tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32> -> tensor<?x4x?x?xf32>
  return %s : tensor<?x4x?x?xf32>
}

// With transpose_b already set, the two transpositions cancel.
// CHECK-LABEL: func.func @permute_into_transposed(
// CHECK-SAME:      %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x2xf32>
// CHECK-NEXT:    nnx.fn.matmul %[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
func.func @permute_into_transposed(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %bt = nnx.fn.permute %b [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %c = nnx.fn.matmul %a, %bt {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  return %c : tensor<3x2xf32>
}

// Not folded: the permute has another use, or moves other dims.
// CHECK-LABEL: func.func @not_folded(
// CHECK:         nnx.fn.permute %{{.*}} [0, 1, 3, 2]
// CHECK:         nnx.fn.matmul %{{.*}}, %{{.*}} : tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>
// CHECK:         nnx.fn.permute %{{.*}} [1, 0, 3, 2]
// CHECK:         nnx.fn.matmul %{{.*}}, %{{.*}} : tensor<4x4x?x16xf32>, tensor<4x4x16x?xf32>
func.func @not_folded(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>,
                      %q4: tensor<4x4x?x16xf32>, %k4: tensor<4x4x?x16xf32>)
    -> (tensor<?x4x?x?xf32>, tensor<?x4x16x?xf32>, tensor<4x4x?x?xf32>) {
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32>
  %s = nnx.fn.matmul %q, %kt : tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32> -> tensor<?x4x?x?xf32>
  %k2 = nnx.fn.permute %k4 [1, 0, 3, 2] : tensor<4x4x?x16xf32> -> tensor<4x4x16x?xf32>
  %s2 = nnx.fn.matmul %q4, %k2 : tensor<4x4x?x16xf32>, tensor<4x4x16x?xf32> -> tensor<4x4x?x?xf32>
  return %s, %kt, %s2 : tensor<?x4x?x?xf32>, tensor<?x4x16x?xf32>, tensor<4x4x?x?xf32>
}

// Dropout without train, or with p = 0, folds to its input.
// CHECK-LABEL: func.func @dropout(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK-NEXT:    %[[D:.*]] = nnx.fn.dropout %[[X]] {p = 1.000000e-01 : f64, train}
// CHECK-NEXT:    return %[[X]], %[[X]], %[[D]]
func.func @dropout(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %a = nnx.fn.dropout %x {p = 1.000000e-01 : f64} : tensor<?x8xf32>
  %b = nnx.fn.dropout %x {p = 0.0 : f64, train} : tensor<?x8xf32>
  %c = nnx.fn.dropout %x {p = 1.000000e-01 : f64, train} : tensor<?x8xf32>
  return %a, %b, %c : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// Shapes of results resolve from the operands.
// DIMS-LABEL: func.func @dims(
// DIMS-SAME:      %[[A:.*]]: tensor<?x?x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[N:.*]]: index
// DIMS-DAG:     %[[C1:.*]] = arith.constant 1 : index
// DIMS-DAG:     %[[D1:.*]] = tensor.dim %[[A]], %[[C1]]
// DIMS:         return %[[D1]], %[[N]]
func.func @dims(%a: tensor<?x?x8xf32>, %b: tensor<8xf32>, %n: index) -> (index, index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %r = nnx.fn.add %a, %b : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %d = tensor.dim %r, %c1 : tensor<?x?x8xf32>
  %i = nnx.fn.arange %n : tensor<?xi64>
  %e = tensor.dim %i, %c0 : tensor<?xi64>
  return %d, %e : index, index
}

// A guard that holds for every run folds away: constants for which the
// predicate holds, one value against itself under a reflexive predicate.
// One that may fail stays, and so does one that always fails (every call
// then reports it).
// CHECK-LABEL: func.func @guards(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK:         %[[B:.*]] = tensor.dim %[[X]]
// CHECK-NEXT:    nnx.fn.guard sgt, %[[B]], %{{.*}}, "may fail" : index
// CHECK-NEXT:    nnx.fn.guard slt, %{{.*}}, %{{.*}}, "always fails" : index
// CHECK-NEXT:    nnx.fn.guard slt, %[[B]], %[[B]], "fails on itself" : index
// CHECK-NEXT:    return
func.func @guards(%x: tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  nnx.fn.guard sgt, %b, %c3, "may fail" : index
  nnx.fn.guard slt, %c3, %c4, "holds" : index
  nnx.fn.guard slt, %c4, %c3, "always fails" : index
  nnx.fn.guard sge, %b, %b, "holds on itself" : index
  nnx.fn.guard slt, %b, %b, "fails on itself" : index
  return
}
