// RUN: nnx-opt %s --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=TILE
// RUN: nnx-opt %s --nnx-apply-cpu-schedule=stage=tile-matmul \
// RUN: | mlir-opt --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN: | nnx-opt --nnx-apply-cpu-schedule=stage=lower-vectors | FileCheck %s --check-prefix=LOWER
// RUN: not nnx-opt %s --nnx-apply-cpu-schedule=stage=bogus 2>&1 | FileCheck %s --check-prefix=BAD

// tile-matmul: cache tiles (48 x 128 x 128, loops N, K, M) and register
// tiles (6 x 16 x 4); the register loops are peeled, the static main tile
// becomes a vector.contract whose accumulator is hoisted out of the K loop
// (read before, carried as an iter_arg, written after); the batch remainder
// stays a linalg.matmul.
// TILE-LABEL: func.func @mm(
// TILE-SAME:      %[[A:.*]]: tensor<?x256xf32>, %[[B:.*]]: tensor<256x40xf32>
// (N = 40 fits one cache tile: no N loop)
// TILE:         scf.for %{{.*}} = %c0 to %c256 step %c128
// TILE:           scf.for %{{.*}} = %c0 to %{{.*}} step %c48
// TILE:             %[[MAIN:.*]] = affine.apply
// main M tiles of 6 rows
// TILE:             scf.for %{{.*}} = %c0 to %[[MAIN]] step %c6
// TILE:               scf.for %{{.*}} = %c0 to %c32 step %c16
// TILE:                 %[[C0:.*]] = vector.transfer_read {{.*}} : tensor<6x16xf32>, vector<6x16xf32>
// TILE:                 %[[K:.*]]:3 = scf.for %{{.*}} = %c0 to %c128 step %c4 iter_args({{.*}}, %[[ACC:.*]] = %[[C0]])
// TILE:                   %[[VA:.*]] = vector.transfer_read {{.*}} : tensor<6x4xf32>, vector<6x4xf32>
// TILE:                   %[[VB:.*]] = vector.transfer_read {{.*}} : tensor<4x16xf32>, vector<4x16xf32>
// TILE:                   %[[R:.*]] = vector.contract {{.*}} %[[VA]], %[[VB]], %[[ACC]] : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
// TILE:                   scf.yield %{{.*}}, %{{.*}}, %[[R]]
// TILE:                 vector.transfer_write %[[K]]#2, %[[K]]#1
// N remainder (40 = 2 * 16 + 8, one iteration, inlined): static 6 x 8
// tiles, vectorized too
// TILE:               scf.for %{{.*}} = %c0 to %c128 step %c4
// TILE:                 vector.contract {{.*}} : vector<6x4xf32>, vector<4x8xf32> into vector<6x8xf32>
// M remainder (dynamic): scalar linalg.matmul
// TILE:             scf.for %{{.*}} = %[[MAIN]] to %{{.*}} step %c6
// TILE:                   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<?x16xf32>)

// lower-vectors: the contraction becomes rows of vector FMAs on rank-1
// loads/stores; the K loop loads only A and B, the accumulator rows stay in
// registers.
// LOWER-LABEL: func.func @mm(
// LOWER:         scf.for %{{.*}} = %c0 to %c32 step %c16
// LOWER-COUNT-6:   vector.load %{{.*}} : memref<6x16xf32, strided<[40, 1], offset: ?>>, vector<16xf32>
// LOWER:           scf.for %{{.*}} = %c0 to %c128 step %c4 iter_args(
// LOWER-COUNT-6:     vector.load %{{.*}} : memref<6x4xf32, strided<[256, 1], offset: ?>>, vector<4xf32>
// LOWER-COUNT-4:     vector.load %{{.*}} : memref<4x16xf32, strided<[40, 1], offset: ?>>, vector<16xf32>
// LOWER-COUNT-24:    vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// LOWER:             scf.yield
// LOWER-COUNT-6:   vector.store %{{.*}}, %{{.*}} : memref<6x16xf32, strided<[40, 1], offset: ?>>, vector<16xf32>
// LOWER-NOT:     vector.contract

// BAD: nnx-apply-cpu-schedule: unknown stage 'bogus' (expected 'tile-matmul' or 'lower-vectors')

func.func @mm(%a: tensor<?x256xf32>, %b: tensor<256x40xf32>, %c: tensor<?x40xf32>) -> tensor<?x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x256xf32>, tensor<256x40xf32>) outs(%c : tensor<?x40xf32>) -> tensor<?x40xf32>
  return %r : tensor<?x40xf32>
}
