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

// A per-channel producer that divides and takes a square root (BatchNorm's
// scale, w / sqrt(var + eps)) is not fused into the N x C x H x W generic
// that broadcasts it: fused, it would be computed once per element. A
// cheap one (a single add: the bias) is.
// CHECK-LABEL: func.func @costly_broadcast(
// CHECK:         %[[SCALE:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK:           math.sqrt
// CHECK:           arith.divf
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[SCALE]], %{{.*}} : tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT:       math.sqrt
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         return
func.func @costly_broadcast(%x: tensor<2x8x4x4xf32>, %w: tensor<8xf32>, %var: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8x4x4xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %scale = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%w, %var : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %s = arith.addf %v, %eps : f32
    %r = math.sqrt %s : f32
    %d = arith.divf %a, %r : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %shift = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<2x8x4x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %scale, %shift : tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<2x8x4x4xf32>) {
  ^bb0(%v: f32, %k: f32, %t: f32, %o: f32):
    %m = arith.mulf %v, %k : f32
    %a = arith.addf %m, %t : f32
    linalg.yield %a : f32
  } -> tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}
