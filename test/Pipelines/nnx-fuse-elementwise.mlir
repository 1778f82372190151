// nnx-fuse-elementwise (the fusion of nnx-cpu-pipeline and
// nnx-cuda-pipeline) folds a tensor.expand_shape into the generic that
// produces its source only when the expanded sizes provably split the
// source's dims. Sizes it cannot prove are checked at run time beside the
// reshape; folded, the producer would compute in the claimed shape, and
// write past its buffer, before the check (a wrongly exported
// `view(b, b, h, d)` of a `(b, t, h * d)` projection did).
// RUN: nnx-opt %s --pass-pipeline='builtin.module(func.func(nnx-fuse-elementwise))' | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The sizes are the source's own dims: the generic computes in 4 x 8.
// CHECK-LABEL: func.func @proven(
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?x?x4x8xf32>)
// CHECK:         } -> tensor<?x?x4x8xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @proven(%x: tensor<?x?x32xf32>) -> tensor<?x?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %e = tensor.empty(%b, %t) : tensor<?x?x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x32xf32>) outs(%e : tensor<?x?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<?x?x32xf32>
  %v = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [%b, %t, 4, 8] : tensor<?x?x32xf32> into tensor<?x?x4x8xf32>
  return %v : tensor<?x?x4x8xf32>
}

// Dim 1 claimed to be dim 0's size: the generic stays in the source's
// shape and the reshape after it.
// CHECK-LABEL: func.func @unproven(
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?x?x32xf32>)
// CHECK:         } -> tensor<?x?x32xf32>
// CHECK-NEXT:    %[[V:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 4, 8]
// CHECK:         return %[[V]]
func.func @unproven(%x: tensor<?x?x32xf32>) -> tensor<?x?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %e = tensor.empty(%b, %t) : tensor<?x?x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x32xf32>) outs(%e : tensor<?x?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<?x?x32xf32>
  %v = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [%b, %b, 4, 8] : tensor<?x?x32xf32> into tensor<?x?x4x8xf32>
  return %v : tensor<?x?x4x8xf32>
}
