// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512" | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=256" | FileCheck %s --check-prefix=AVX2

// A batched contraction (nnx.fn.matmul of rank 4: attention's Q * K^T with
// K read transposed) becomes an scf.forall over (batch, heads) whose body is
// one 2-D linalg.matmul of slices; that matmul gets the register tiles of
// any other (vector.contract), and B, read transposed, is transposed per
// slice first.
// CHECK-LABEL: func.func @scores(
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]]) in (%{{.*}}, 4) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK:           %[[Q:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 64] [1, 1, 1, 1] : tensor<?x4x?x64xf32> to tensor<?x64xf32>
// CHECK:           %[[K:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 64] [1, 1, 1, 1] : tensor<?x4x?x64xf32> to tensor<?x64xf32>
// CHECK:           linalg.transpose ins(%[[K]] : tensor<?x64xf32>)
// CHECK:           vector.contract {{.*}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
// CHECK:         scf.forall.in_parallel
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<?x?xf32> into tensor<?x4x?x?xf32>
// CHECK-NOT:     linalg.generic
#q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#k = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#o = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
func.func @scores(%q: tensor<?x4x?x64xf32>, %kt: tensor<?x4x?x64xf32>, %init: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %r = linalg.generic {indexing_maps = [#q, #k, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>) outs(%init : tensor<?x4x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4x?x?xf32>
  return %r : tensor<?x4x?x?xf32>
}

// -----

// A broadcast operand (one matrix for every batch, read at index 0 of a
// size-1 dim) is sliced at 0.
// CHECK-LABEL: func.func @broadcast_b(
// CHECK:         scf.forall (%[[I:.*]]) in (3)
// CHECK:           tensor.extract_slice %{{.*}}[%[[I]], 0, 0] [1, 16, 64]
// CHECK:           tensor.extract_slice %{{.*}}[0, 0, 0] [1, 64, 32]
// CHECK:           vector.contract
#a3 = affine_map<(b, m, n, k) -> (b, m, k)>
#b3 = affine_map<(b, m, n, k) -> (0, k, n)>
#o3 = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @broadcast_b(%a: tensor<3x16x64xf32>, %w: tensor<1x64x32xf32>, %init: tensor<3x16x32xf32>) -> tensor<3x16x32xf32> {
  %r = linalg.generic {indexing_maps = [#a3, #b3, #o3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<3x16x64xf32>, tensor<1x64x32xf32>) outs(%init : tensor<3x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x16x32xf32>
  return %r : tensor<3x16x32xf32>
}

// -----

// Not a plain batched contraction (the output transposes the batch): left
// alone.
// CHECK-LABEL: func.func @not_batched(
// CHECK:         linalg.generic
// CHECK-NOT:     scf.forall
#a4 = affine_map<(b, m, n, k) -> (b, m, k)>
#b4 = affine_map<(b, m, n, k) -> (b, k, n)>
#o4 = affine_map<(b, m, n, k) -> (m, b, n)>
func.func @not_batched(%a: tensor<3x16x64xf32>, %w: tensor<3x64x32xf32>, %init: tensor<16x3x32xf32>) -> tensor<16x3x32xf32> {
  %r = linalg.generic {indexing_maps = [#a4, #b4, #o4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<3x16x64xf32>, tensor<3x64x32xf32>) outs(%init : tensor<16x3x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x3x32xf32>
  return %r : tensor<16x3x32xf32>
}

// -----

// A contraction whose M and N are several loops (Swin's qkv Linear with its
// output read as (batch, tokens, 3, heads, dim), the weight's rows split
// alike) is one 2-D matmul of its operands collapsed: M = batch x tokens,
// N = 3 x heads x dim, B read transposed; the result expanded back.
// CHECK-LABEL: func.func @grouped_m_n(
// CHECK-DAG:     tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x49x96xf32> into tensor<?x96xf32>
// CHECK-DAG:     tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<3x3x32x96xf32> into tensor<288x96xf32>
// CHECK-DAG:     tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2, 3, 4]] : tensor<?x49x3x3x32xf32> into tensor<?x288xf32>
// CHECK:         vector.contract
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3, 4]] output_shape [%{{.*}}, 49, 3, 3, 32] : tensor<?x288xf32> into tensor<?x49x3x3x32xf32>
// CHECK-NOT:     linalg.generic
// The same at 256 bits (AVX2-capped): the matmul's tiles are 6 x 16.
// AVX2-LABEL: func.func @grouped_m_n(
// AVX2:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<3x3x32x96xf32> into tensor<288x96xf32>
// AVX2:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2:         tensor.expand_shape %{{.*}} : tensor<?x288xf32> into tensor<?x49x3x3x32xf32>
// AVX2-NOT:     linalg.generic
#x5 = affine_map<(b, t, s, h, d, k) -> (b, t, k)>
#w5 = affine_map<(b, t, s, h, d, k) -> (s, h, d, k)>
#o5 = affine_map<(b, t, s, h, d, k) -> (b, t, s, h, d)>
func.func @grouped_m_n(%x: tensor<?x49x96xf32>, %w: tensor<3x3x32x96xf32>, %init: tensor<?x49x3x3x32xf32>) -> tensor<?x49x3x3x32xf32> {
  %r = linalg.generic {indexing_maps = [#x5, #w5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x49x96xf32>, tensor<3x3x32x96xf32>) outs(%init : tensor<?x49x3x3x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x49x3x3x32xf32>
  return %r : tensor<?x49x3x3x32xf32>
}

// -----

// A Linear on a (seq, batch, features) input (nn.MultiheadAttention's
// in_proj with batch_first=False) is one matmul of seq x batch rows, not a
// forall over the 197 positions of one-row matmuls.
// CHECK-LABEL: func.func @sequence_first(
// AVX2-LABEL: func.func @sequence_first(
// AVX2:         vector.contract {{.*}} into vector<6x16xf32>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<197x?x64xf32> into tensor<?x64xf32>
// CHECK-NOT:     scf.forall
// CHECK:         vector.contract
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [197, %{{.*}}, 128] : tensor<?x128xf32> into tensor<197x?x128xf32>
#xs = affine_map<(s, b, n, k) -> (s, b, k)>
#ws = affine_map<(s, b, n, k) -> (k, n)>
#os = affine_map<(s, b, n, k) -> (s, b, n)>
func.func @sequence_first(%x: tensor<197x?x64xf32>, %w: tensor<64x128xf32>, %init: tensor<197x?x128xf32>) -> tensor<197x?x128xf32> {
  %r = linalg.generic {indexing_maps = [#xs, #ws, #os], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<197x?x64xf32>, tensor<64x128xf32>) outs(%init : tensor<197x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<197x?x128xf32>
  return %r : tensor<197x?x128xf32>
}

// -----

// Two dynamic loops in M (batch and sequence) would need an expand_shape of
// two dynamic dims: the contraction stays a batch of matmuls over its first
// loop.
// CHECK-LABEL: func.func @two_dynamic_m(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         scf.forall
// CHECK:           vector.contract
#xd = affine_map<(s, b, n, k) -> (s, b, k)>
#wd = affine_map<(s, b, n, k) -> (k, n)>
#od = affine_map<(s, b, n, k) -> (s, b, n)>
func.func @two_dynamic_m(%x: tensor<?x?x64xf32>, %w: tensor<64x128xf32>, %init: tensor<?x?x128xf32>) -> tensor<?x?x128xf32> {
  %r = linalg.generic {indexing_maps = [#xd, #wd, #od], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xf32>, tensor<64x128xf32>) outs(%init : tensor<?x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x128xf32>
  return %r : tensor<?x?x128xf32>
}
