// RUN: nnx-opt %s --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule="stage=tile-matmul parallel=true" | FileCheck %s
// RUN: nnx-opt %s --nnx-set-target=vector-bits=256 --nnx-apply-cpu-schedule="stage=tile-matmul parallel=true" | FileCheck %s
// RUN: nnx-opt %s --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule="stage=tile-matmul parallel=false" | FileCheck %s --check-prefix=SERIAL

// With threads, a large elementwise generic at a function's top level is
// split among them (ParallelElementwise.cpp): an scf.forall over blocks of
// its outer loops, each block at least 2^14 elements (here images one by
// one, 8 rows of 64 x 32 at a time), the same arithmetic per element. A
// small one (4 x 32) and any without threads keep their loops.
// CHECK-LABEL: func.func @relu_bias(
// CHECK:         scf.forall (%[[N:.*]], %[[H:.*]]) = (0, 0) to (%{{.*}}, 64) step (1, 8)
// CHECK:           tensor.extract_slice %{{.*}}[%[[N]], %[[H]], 0, 0] [1, 8, 64, 32] [1, 1, 1, 1]
// CHECK:           linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8x64x32xf32>)
// CHECK:             arith.maximumf
// CHECK:           tensor.parallel_insert_slice
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x32xf32>)
// SERIAL-NOT:    scf.forall
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @relu_bias(%x: tensor<?x64x64x32xf32>, %b: tensor<32xf32>, %out: tensor<?x64x64x32xf32>) -> tensor<?x64x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #c, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<?x64x64x32xf32>, tensor<32xf32>) outs(%out : tensor<?x64x64x32xf32>) {
  ^bb0(%v: f32, %k: f32, %o: f32):
    %a = arith.addf %v, %k : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x64x64x32xf32>
  return %r : tensor<?x64x64x32xf32>
}
func.func @small(%x: tensor<4x32xf32>, %out: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf32>) outs(%out : tensor<4x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}
