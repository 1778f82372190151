// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=lower-vectors vector-bits=512" | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=lower-vectors vector-bits=256" | FileCheck %s --check-prefix=AVX2

// An elementwise generic computing on bf16 (NarrowFloatVectors.cpp) becomes
// its loop vectorized along the innermost dim: LLVM narrows the f32 ops
// between bf16 conversions back to bf16 and keeps that loop scalar. Loops
// over the outer dims, then the innermost in steps of the lanes (16 f32 at
// 512 bits, 8 at 256); an operand along it is a vector load, one that does
// not vary along it (a per-row scale) a broadcast element; the body's own
// ops on vectors; the result stored.
// CHECK-LABEL: func.func @max_scaled(
// CHECK-SAME:      %[[A:.*]]: memref<?x64xbf16>, %[[B:.*]]: memref<?x64xbf16, strided<[128, 1]>>, %[[S:.*]]: memref<?xbf16>, %[[OUT:.*]]: memref<?x64xbf16>
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK:           scf.for %[[J:.*]] = %c0 to %[[C64]] step %[[C16]] {
// CHECK-DAG:         %[[VA:.*]] = vector.load %[[A]][%[[I]], %[[J]]] : memref<?x64xbf16>, vector<16xbf16>
// CHECK-DAG:         %[[VB:.*]] = vector.load %[[B]][%[[I]], %[[J]]] : memref<?x64xbf16, strided<[128, 1]>>, vector<16xbf16>
// CHECK-DAG:         %[[SE:.*]] = memref.load %[[S]][%[[I]]] : memref<?xbf16>
// CHECK-DAG:         %[[VS:.*]] = vector.broadcast %[[SE]] : bf16 to vector<16xbf16>
// CHECK:             %[[M:.*]] = arith.maximumf %[[VA]], %[[VB]] : vector<16xbf16>
// CHECK:             %[[R:.*]] = arith.mulf %[[M]], %[[VS]] : vector<16xbf16>
// CHECK:             vector.store %[[R]], %[[OUT]][%[[I]], %[[J]]] : memref<?x64xbf16>, vector<16xbf16>
// CHECK-NOT:     linalg.generic
// AVX2-LABEL: func.func @max_scaled(
// AVX2:           scf.for %{{.*}} = %c0 to %c64 step %c8 {
// AVX2:             arith.maximumf %{{.*}} : vector<8xbf16>
func.func @max_scaled(%a: memref<?x64xbf16>, %b: memref<?x64xbf16, strided<[128, 1]>>, %s: memref<?xbf16>, %out: memref<?x64xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %s : memref<?x64xbf16>, memref<?x64xbf16, strided<[128, 1]>>, memref<?xbf16>) outs(%out : memref<?x64xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %o: bf16):
    %m = arith.maximumf %x, %y : bf16
    %r = arith.mulf %m, %z : bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// What stays for LLVM: f32 arithmetic (its vectorizer does well), an
// innermost dim that is not a multiple of the lanes, and one read across
// the innermost dim (a transpose).
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     vector.load
func.func @left_alone(%a: memref<?x64xf32>, %b: memref<?x12xbf16>, %c: memref<64x64xbf16>, %o32: memref<?x64xf32>, %o12: memref<?x12xbf16>, %ot: memref<64x64xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x64xf32>) outs(%o32 : memref<?x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %o : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<?x12xbf16>) outs(%o12 : memref<?x12xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %m = arith.maximumf %x, %o : bf16
    linalg.yield %m : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xbf16>) outs(%ot : memref<64x64xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    linalg.yield %x : bf16
  }
  return
}
