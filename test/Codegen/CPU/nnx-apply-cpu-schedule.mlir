// RUN: nnx-opt %s --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=256" | FileCheck %s --check-prefix=TILE
// RUN: nnx-opt %s --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512" | FileCheck %s --check-prefix=AVX512
// RUN: nnx-opt %s --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=256 parallel=true" | FileCheck %s --check-prefix=PAR
// RUN: nnx-opt %s --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=256" \
// RUN: | mlir-opt --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN: | nnx-opt --nnx-apply-cpu-schedule=stage=lower-vectors | FileCheck %s --check-prefix=LOWER
// RUN: nnx-opt %s --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512" \
// RUN: | mlir-opt --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN: | nnx-opt --nnx-apply-cpu-schedule="stage=lower-vectors vector-bits=512" | FileCheck %s --check-prefix=ROWS
// Without vector-bits, the tiles follow the module's #nnx.target (the
// default target, 128 bits, without one), never the host.
// RUN: nnx-opt %s --nnx-set-target=vector-bits=256 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=TILE
// RUN: nnx-opt %s --nnx-set-target="vector-bits=512 max-isa=avx2" --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=TILE
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=AVX512
// RUN: nnx-opt %s --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=DEFAULT
// RUN: not nnx-opt %s --nnx-apply-cpu-schedule=stage=bogus 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not nnx-opt %s --nnx-apply-cpu-schedule=vector-bits=384 2>&1 | FileCheck %s --check-prefix=BADBITS

// tile-matmul, AVX2 tiles: cache tiles (K 128, M 48; N 128 is one tile
// here) and register tiles 6 x 16 x 1, the N register loop outside the M
// one (a 128 x 16 panel of B stays in L1 while the rows stream by); the
// register loops are peeled, the static main tile becomes a
// vector.contract whose accumulator is hoisted out of the K loop (carried
// as an iter_arg, written after). The K block is summed from zero and
// added to C's tile after the loop (one chain of roundings per block of
// K, not one over the whole K).
// TILE-LABEL: func.func @mm(
// TILE-SAME:      %[[A:.*]]: tensor<?x256xf32>, %[[B:.*]]: tensor<256x40xf32>
// (N = 40 fits one cache tile: no N loop)
// TILE:         scf.for %{{.*}} = %c0 to %c256 step %c128
// TILE:           scf.for %{{.*}} = %c0 to %{{.*}} step %c48
// main N tiles of 16 columns
// TILE:             scf.for %{{.*}} = %c0 to %c32 step %c16
// TILE:               %[[MAIN:.*]] = affine.apply
// main M tiles of 6 rows
// TILE:               scf.for %{{.*}} = %c0 to %[[MAIN]] step %c6
// TILE:                 %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// TILE:                 %[[K:.*]]:2 = scf.for %{{.*}} = %c0 to %c128 step %c1 iter_args({{.*}}, %[[ACC:.*]] = %[[Z]])
// TILE:                   %[[VA:.*]] = vector.transfer_read {{.*}} : tensor<6x1xf32>, vector<6x1xf32>
// TILE:                   %[[VB:.*]] = vector.transfer_read {{.*}} : tensor<1x16xf32>, vector<1x16xf32>
// TILE:                   %[[R:.*]] = vector.contract {{.*}} %[[VA]], %[[VB]], %[[ACC]] : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// TILE:                   scf.yield %{{.*}}, %[[R]]
// C's tile is read after the loop, where it is added (not held in
// registers beside the accumulators through it).
// TILE-NEXT:            }
// TILE-NEXT:            %[[C0:.*]] = vector.transfer_read {{.*}} : tensor<6x16xf32>, vector<6x16xf32>
// TILE-NEXT:            %[[SUM:.*]] = arith.addf %[[C0]], %[[K]]#1 : vector<6x16xf32>
// TILE:                 vector.transfer_write %[[SUM]], %[[K]]#0
// M remainder (dynamic, fewer than 6 rows): static blocks of 4, then 2,
// then 1 rows (splitRowRemainders), each register-tiled and vectorized with
// its accumulator hoisted, so that B is read once per block, not per row.
// TILE:               scf.for %{{.*}} = %[[MAIN]] to %{{.*}} step %c6
// TILE:                 %[[R:.*]] = affine.apply
// TILE:                 %[[Q4:.*]] = arith.divui %[[R]], %c4
// TILE:                 %[[N4:.*]] = arith.muli %[[Q4]], %c4
// TILE:                 %[[E4:.*]] = scf.for %{{.*}} = %c0 to %[[N4]] step %c4
// TILE:                   scf.for %{{.*}} = %c0 to %c128 step %c1 iter_args(
// TILE:                     vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// TILE:                   vector.transfer_read {{.*}} : tensor<4x16xf32>, vector<4x16xf32>
// TILE:                 arith.divui %{{.*}}, %c2
// TILE:                 scf.for %{{.*}} = %[[N4]] to %{{.*}} step %c2
// TILE:                   vector.contract {{.*}} : vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
// TILE:                 scf.for %{{.*}} step %c1
// TILE:                   vector.contract {{.*}} : vector<1x1xf32>, vector<1x16xf32> into vector<1x16xf32>
// N remainder (40 = 2 * 16 + 8, one iteration, inlined): static 6 x 8
// tiles, vectorized too, and its M remainder likewise.
// TILE:             scf.for %{{.*}} step %c6
// TILE:               scf.for %{{.*}} = %c0 to %c128 step %c1
// TILE:                 vector.contract {{.*}} : vector<6x1xf32>, vector<1x8xf32> into vector<6x8xf32>
// TILE:             scf.for %{{.*}} step %c6
// TILE:               vector.contract {{.*}} : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
// TILE:               vector.contract {{.*}} : vector<2x1xf32>, vector<1x8xf32> into vector<2x8xf32>
// TILE:               vector.contract {{.*}} : vector<1x1xf32>, vector<1x8xf32> into vector<1x8xf32>
// TILE-NOT:     linalg.matmul

// The default target's 128-bit tiles: 4 x 8 x 1.
// DEFAULT-LABEL: func.func @mm(
// DEFAULT:         vector.contract {{.*}} : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
// DEFAULT-NOT:     vector<1x16xf32>

// AVX-512 tiles: 6 x 64 register tiles (24 accumulators of 16 lanes); N =
// 40 is less than one register tile, and not a power of two: columns 32 and
// 8 as two matmuls (splitColumnRemainders), static 6 x 32 and 6 x 8 tiles.
// AVX512-LABEL: func.func @mm(
// AVX512:         scf.for %{{.*}} step %c6
// AVX512:           scf.for %{{.*}} = %c0 to %c128 step %c1 iter_args(
// AVX512:             vector.contract {{.*}} : vector<6x1xf32>, vector<1x32xf32> into vector<6x32xf32>
// AVX512:         scf.for %{{.*}} step %c6
// AVX512:           scf.for %{{.*}} = %c0 to %c128 step %c1 iter_args(
// AVX512:             vector.contract {{.*}} : vector<6x1xf32>, vector<1x8xf32> into vector<6x8xf32>
// AVX512-NOT:     vector<6x40xf32>
// AVX512-NOT:     linalg.matmul

// parallel=true: the N cache tiles are an scf.forall (one thread owns whole
// columns of the result).
// PAR-LABEL: func.func @wide(
// PAR:         scf.forall (%{{.*}}) in (2)
// (K = 64 is one cache tile: no K loop)
// PAR:           scf.for %{{.*}} = %c0 to %{{.*}} step %c48
// PAR:             vector.contract
// PAR:         scf.forall.in_parallel
// PAR:           tensor.parallel_insert_slice

// lower-vectors: the contraction becomes rows of vector FMAs on rank-1
// loads/stores; the K loop loads only A and B, and carries the accumulator
// rows as six vectors (splitAccumulatorRows), each FMA yielded as it is:
// no 6 x 16 value is taken apart or rebuilt per K step. After the loop,
// C's rows are loaded, added and stored row by row.
// LOWER-LABEL: func.func @mm(
// LOWER:         scf.for %{{.*}} = %c0 to %c32 step %c16
// LOWER:           %[[ACCS:.*]]:6 = scf.for %{{.*}} = %c0 to %c128 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// LOWER-COUNT-6:     vector.load %{{.*}} : memref<6x1xf32, strided<[256, 1], offset: ?>>, vector<1xf32>
// LOWER:             vector.load %{{.*}} : memref<1x16xf32, strided<[40, 1], offset: ?>>, vector<16xf32>
// LOWER-COUNT-6:     %{{.*}} = vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// LOWER-NEXT:        scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>,
// LOWER-NEXT:      }
// LOWER-COUNT-6:   vector.load %{{.*}} : memref<6x16xf32, strided<[40, 1], offset: ?>>, vector<16xf32>
// LOWER:           arith.addf %{{.*}}, %[[ACCS]]#0 : vector<16xf32>
// LOWER-COUNT-6:   vector.store %{{.*}}, %{{.*}} : memref<6x16xf32, strided<[40, 1], offset: ?>>, vector<16xf32>
// Every function, AVX-512 tiles (6 x 32 here, 6 x 64 in wider matmuls)
// included: nothing 2-D is left, no lane is taken apart.
// ROWS-NOT:      vector.to_elements
// ROWS-NOT:      vector.from_elements
// ROWS-NOT:      vector<{{[0-9]+}}x{{[0-9]+}}xf32>
// the one-row remainder tiles: one FMA per K step
// LOWER:         scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// LOWER:           vector.load %{{.*}} : memref<1x1xf32, strided<[256, 1], offset: ?>>, vector<1xf32>
// LOWER:           vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// LOWER-NOT:     vector.contract

// BAD: for the --stage option: Cannot find option named 'bogus'!
// BADBITS: nnx-apply-cpu-schedule: vector-bits=384 is not a vector width the schedule knows (expected 0 for the module's target, 128, 256 or 512)

func.func @mm(%a: tensor<?x256xf32>, %b: tensor<256x40xf32>, %c: tensor<?x40xf32>) -> tensor<?x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x256xf32>, tensor<256x40xf32>) outs(%c : tensor<?x40xf32>) -> tensor<?x40xf32>
  return %r : tensor<?x40xf32>
}

func.func @wide(%a: tensor<?x64xf32>, %b: tensor<64x256xf32>, %c: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x256xf32>) outs(%c : tensor<?x256xf32>) -> tensor<?x256xf32>
  return %r : tensor<?x256xf32>
}
