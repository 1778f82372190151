// nnx-derive-kv-cache on the ways Hugging Face models write masks and
// positions (python/tests/corpus: hf_llama, qwen2, gpt_neox, phi). The
// causality proof reads each mask as a function of the query position i
// and the key position j, so none of these forms is matched by name.
// RUN: nnx-opt %s -split-input-file --nnx-derive-kv-cache=max-length=16 \
// RUN:   | FileCheck %s

// HF-Llama: `full(min) * ((arange(T) > cache_position.view(-1, 1)) |
// (arange(T) <= cache_position.view(-1, 1) - 6))` (causal plus a sliding
// window of 6), unsqueezed and expanded to the batch, then sliced to the
// keys' length. Decode computes the mask for all positions and keeps the
// rows of the new ones.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<?x?xi64>, %[[POS:[^:]*]]: tensor<i64>
// CHECK:         %[[P:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[T:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi64>
// CHECK:         %[[ALL:.*]] = arith.addi %[[P]], %[[T]] : index
// CHECK:         %[[MIN:.*]] = tensor.splat %{{.*}}[%[[ALL]], %[[ALL]]] : tensor<?x?xf32>
// CHECK:         %[[GT:.*]] = nnx.fn.gt
// CHECK:         %[[LE:.*]] = nnx.fn.le
// CHECK:         nnx.fn.logical_or %[[GT]], %[[LE]]
// CHECK:         %[[MASK:.*]] = nnx.fn.mul %[[MIN]]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, %[[P]], 0] [%{{.*}}, 1, %[[T]], %{{.*}}] [1, 1, 1, 1]
// CHECK:         nnx.fn.softmax
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> attributes {nnx.parameters = [dense<1.0> : tensor<4xf32>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %cache_position = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %min = arith.constant -3.40282347E+38 : f32
  %full = tensor.splat %min[%t, %t] : tensor<?x?xf32>
  %keys = nnx.fn.arange %t : tensor<?xi64>
  %rows = nnx.fn.reshape %cache_position [%t, 1] : tensor<?xi64> -> tensor<?x1xi64>
  %later = nnx.fn.gt %keys, %rows : tensor<?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %window = arith.constant dense<6> : tensor<i64>
  %first = nnx.fn.sub %rows, %window : tensor<?x1xi64>, tensor<i64> -> tensor<?x1xi64>
  %old = nnx.fn.le %keys, %first : tensor<?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %hidden = nnx.fn.logical_or %later, %old : tensor<?x?xi1>, tensor<?x?xi1> -> tensor<?x?xi1>
  %hf = arith.uitofp %hidden : tensor<?x?xi1> to tensor<?x?xf32>
  %m2 = nnx.fn.mul %full, %hf : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %m4 = nnx.fn.reshape %m2 [1, 1, %t, %t] : tensor<?x?xf32> -> tensor<1x1x?x?xf32>
  %mb = nnx.fn.expand %m4 [%b, 1, %t, %t] : tensor<1x1x?x?xf32> -> tensor<?x1x?x?xf32>
  %posf = arith.sitofp %cache_position : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %c2 = arith.constant 2 : index
  %tk = tensor.dim %k, %c2 : tensor<?x2x?x4xf32>
  %mk = tensor.extract_slice %mb[0, 0, 0, 0] [%b, 1, %t, %tk] [1, 1, 1, 1] : tensor<?x1x?x?xf32> to tensor<?x1x?x?xf32>
  %a = nnx.fn.add %s, %mk : tensor<?x2x?x?xf32>, tensor<?x1x?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// GPT-NeoX: `baddbmm` scores over batch x heads (`(B * 2) x T x T`, the
// keys merged as `B x 2 x T x 4` -> `(B * 2) x T x 4`), viewed as
// `B x 2 x T x T`, a boolean `bias` buffer sliced to T x T picking the
// scores or `finfo.min`, and Python's `if key_length > 8:` guarded. The
// cache holds `B x 2 x max x 4`; the merging reshape, the view of the
// scores and the guard read all positions; the rotary table sliced to T
// and indexed by position ids is read to all positions.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<?x?xi64>, %[[POS:[^:]*]]: tensor<i64>, %[[KC:[^:]*]]: tensor<?x2x16x4xf32>, %[[VC:[^:]*]]: tensor<?x2x16x4xf32>
// CHECK:         %[[P:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[T:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi64>
// CHECK:         %[[ALL:.*]] = arith.addi %[[P]], %[[T]] : index
// CHECK:         %[[TABLE:.*]] = tensor.extract_slice %{{.*}}[0] [%[[ALL]]] [1] : tensor<16xf32> to tensor<?xf32>
// CHECK:         nnx.fn.index_select %[[TABLE]]
// CHECK:         tensor.insert_slice %{{.*}} into %[[VC]][0, 0, %[[P]], 0]
// CHECK:         %[[K1:.*]] = tensor.insert_slice %{{.*}} into %[[KC]][0, 0, %[[P]], 0]
// CHECK:         %[[KALL:.*]] = tensor.extract_slice %[[K1]][0, 0, 0, 0] [%{{.*}}, 2, %[[ALL]], 4]
// CHECK:         nnx.fn.guard sle, %[[ALL]], %{{.*}}, "the forward assumed `key_length > 8` is False"
// CHECK:         %[[KM:.*]] = nnx.fn.reshape %[[KALL]] [%{{.*}}, %[[ALL]], 4] : tensor<?x2x?x4xf32> -> tensor<?x?x4xf32>
// CHECK:         %[[KT:.*]] = nnx.fn.permute %[[KM]] [0, 2, 1]
// CHECK:         nnx.fn.matmul %{{.*}}, %[[KT]]
// CHECK:         nnx.fn.reshape %{{.*}} [%{{.*}}, 2, %{{.*}}, %[[ALL]]] : tensor<?x?x?xf32> -> tensor<?x2x?x?xf32>
// CHECK:         %[[BIAS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%[[ALL]], %[[ALL]]] [1, 1] : tensor<16x16xi1> to tensor<?x?xi1>
// CHECK:         %[[ROWS:.*]] = tensor.extract_slice %[[BIAS]][%[[P]], 0] [%[[T]], %{{.*}}] [1, 1]
// CHECK:         nnx.fn.where %[[ROWS]]
// CHECK:         nnx.fn.softmax
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}, %rot: tensor<16xf32> {bufferization.writable = false, nnx.parameter = "rotary"}, %bias: tensor<16x16xi1> {bufferization.writable = false, nnx.parameter = "bias"}) -> tensor<?x?x8xf32> attributes {nnx.parameters = [dense<1.0> : tensor<4xf32>, dense<0.5> : tensor<16xf32>, dense<[[true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false], [true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false], [true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false], [true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false], [true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false], [true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false], [true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false], [true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false], [true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false], [true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false], [true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false], [true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false], [true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]]> : tensor<16x16xi1>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %positions = nnx.fn.arange %t : tensor<?xi64>
  %table = tensor.extract_slice %rot[0] [%t] [1] : tensor<16xf32> to tensor<?xf32>
  %cos = nnx.fn.index_select %table, %positions {dim = 0 : i64} : tensor<?xf32>, tensor<?xi64> -> tensor<?xf32>
  %h = nnx.fn.mul %f, %cos : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q4 = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q4 [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %tk = tensor.dim %k, %c2 : tensor<?x2x?x4xf32>
  nnx.fn.guard sle, %tk, %c8, "the forward assumed `key_length > 8` is False" : index
  %bh = arith.muli %b, %c2 : index
  %q = nnx.fn.reshape %k [%bh, %t, 4] : tensor<?x2x?x4xf32> -> tensor<?x?x4xf32>
  %km = nnx.fn.reshape %k [%bh, %tk, 4] : tensor<?x2x?x4xf32> -> tensor<?x?x4xf32>
  %kt = nnx.fn.permute %km [0, 2, 1] : tensor<?x?x4xf32> -> tensor<?x4x?xf32>
  %s3 = nnx.fn.matmul %q, %kt : tensor<?x?x4xf32>, tensor<?x4x?xf32> -> tensor<?x?x?xf32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%bh, %t, %tk] : tensor<?x?x?xf32>
  %scores = nnx.fn.add %zeros, %s3 : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %s4 = nnx.fn.reshape %scores [%b, 2, %t, %tk] : tensor<?x?x?xf32> -> tensor<?x2x?x?xf32>
  %causal = tensor.extract_slice %bias[0, 0] [%tk, %tk] [1, 1] : tensor<16x16xi1> to tensor<?x?xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %a = nnx.fn.where %causal, %s4, %min : tensor<?x?xi1>, tensor<?x2x?x?xf32>, tensor<f32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
