// RUN: nnx-opt %s --nnx-decompose-aggregates | FileCheck %s

// linalg.softmax becomes its upstream decomposition: max over the softmax
// dimension (maxnumf from NaN, so the first element seeds it), exp(x - max)
// computed once, its sum, and the division.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<?x5xf32>
// CHECK-NOT:     linalg.softmax
// CHECK:         %[[NAN:.*]] = arith.constant 0xFFC00000 : f32
// CHECK:         %[[M0:.*]] = linalg.fill ins(%[[NAN]] : f32)
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x5xf32>) outs(%[[M0]] : tensor<?xf32>)
// CHECK:           arith.maxnumf
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<?x5xf32>, tensor<?xf32>)
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.divf
func.func @softmax(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  %e = tensor.empty(%n) : tensor<?x5xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  return %s : tensor<?x5xf32>
}
