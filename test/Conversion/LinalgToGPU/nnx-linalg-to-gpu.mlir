// RUN: nnx-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(nnx-linalg-to-gpu))' | FileCheck %s
// RUN: not nnx-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(nnx-linalg-to-gpu{tile-m=24}))' 2>&1 | FileCheck %s --check-prefix=BAD

// A Linear on buffers (weight stored N x K): the shared-memory tiled kernel.
// 64x64 output tile per 16x16 block, K staged 16 at a time in two padded
// workgroup tiles between barriers, a 4x4 register tile per thread with the
// payload fused into FMA-able (contract) multiply-adds.

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: memref<?x32xf32>, %[[W:.*]]: memref<48x32xf32>, %[[Y:.*]]: memref<?x48xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c16{{.*}}, %{{.*}} = %c1
// CHECK-SAME: workgroup(%[[TA:.*]] : memref<64x17xf32, #gpu.address_space<workgroup>>, %[[TB:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>)
// Accumulators start from the output.
// CHECK-COUNT-16: memref.load %[[Y]]
// CHECK: %[[KT:.*]] = arith.ceildivui %c32{{.*}}, %c16
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[KT]] step %{{.*}} iter_args(
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TA]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TB]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[KK:.*]] = %{{.*}} to %c16{{.*}} step
// CHECK-COUNT-4: memref.load %[[TA]][%{{.*}}, %[[KK]]]
// CHECK-COUNT-4: memref.load %[[TB]][%[[KK]], %{{.*}}]
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: gpu.barrier
// CHECK-COUNT-16: memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.terminator
func.func @linear(%x: memref<?x32xf32>, %w: memref<48x32xf32>, %y: memref<?x48xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x32xf32>, memref<48x32xf32>) outs(%y : memref<?x48xf32>)
  return
}

// -----

// Batched products (attention scores): the batch dimensions go to gridDim.z.

// CHECK-LABEL: func.func @scores
// CHECK-NOT: linalg.generic
// CHECK: %[[BH:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK: %[[GZ:.*]] = arith.maxui %[[BH]], %c1{{.*}} : index
// CHECK: gpu.launch blocks(%{{[^,]*}}, %{{[^,]*}}, %[[BZ:[^)]*]])
// CHECK-SAME: %{{.*}} = %[[GZ]]) threads
// CHECK-SAME: workgroup(
// CHECK: arith.remui %[[BZ]], %c2
// CHECK: gpu.barrier
func.func @scores(%q: memref<?x2x4x8xf32>, %k: memref<?x2x4x8xf32>, %s: memref<?x2x4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>,
                                   affine_map<(b, h, i, j, d) -> (b, h, j, d)>,
                                   affine_map<(b, h, i, j, d) -> (b, h, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<?x2x4x8xf32>, memref<?x2x4x8xf32>) outs(%s : memref<?x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Everything else: one thread per parallel point, 256 per block, a guard on
// the linearized index, scf.for over the reduction dimensions.

// CHECK-LABEL: func.func @row_sum
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[T:.*]] = arith.muli %{{.*}}, %[[N]]
// CHECK: %[[G:.*]] = arith.ceildivui %[[T]], %c256{{.*}}
// CHECK: %[[G1:.*]] = arith.maxui %[[G]], %c1
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G1]], {{.*}} threads({{.*}}) in (%{{.*}} = %c256
// CHECK-NOT: workgroup
// CHECK: %[[LIN:.*]] = arith.addi
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %[[T]]
// CHECK: scf.if %[[IN]]
// CHECK: scf.for %[[R:.*]] = %c0{{.*}} to %c8
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[R]]]
// CHECK: arith.addf
// CHECK: memref.store
func.func @row_sum(%x: memref<?x8xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x8xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// memref.copy and linalg.fill become kernels too; linalg.index reads the
// thread's point.

// CHECK-LABEL: func.func @copy_fill_index
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: arith.index_cast
func.func @copy_fill_index(%a: memref<16xf32>, %b: memref<16xf32>, %c: memref<16xi32>) {
  %z = arith.constant 0.0 : f32
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  linalg.fill ins(%z : f32) outs(%a : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%c : memref<16xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i32
    linalg.yield %v : i32
  }
  return
}

// -----

// BAD: error: nnx-linalg-to-gpu: tile-m and tile-n must be positive multiples of 16 and tile-m*tile-k, tile-k*tile-n multiples of 256; got tile-m=24 tile-n=64 tile-k=16
func.func @bad_tiles(%x: memref<4x4xf32>) {
  return
}
