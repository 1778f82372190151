// nnx-shard-tensor-parallel keeps rank R's block of heads and MLP units; the
// Linears after them sum over the ranks (nnx.partial_sum). A weight of the
// file becomes the slice the rank binds.
// RUN: nnx-opt %s -split-input-file --nnx-shard-tensor-parallel="ranks=2 rank=1" | FileCheck %s --check-prefix=R1
// RUN: nnx-opt %s -split-input-file --nnx-shard-tensor-parallel="ranks=2 rank=0" | FileCheck %s --check-prefix=R0
// Fused q/k/v (GPT-2's c_attn, 3 x 4 heads x 8): rank 1 binds rows 16..31
// of each third.
// RUN: nnx-opt %nnx_src/examples/families/gpt2.mlir --nnx-externalize-weights=file=%t.safetensors --nnx-shard-tensor-parallel="ranks=2 rank=1" | FileCheck %s --check-prefix=GPT2
// GPT2: nnx.model @gpt2 {{.*}}nnx.tensor_parallel = {rank = 1 : i64, ranks = 2 : i64}
// GPT2: nnx.linear @c_attn {bias = #nnx.external<"transformer.h.0.attn.c_attn.bias", slices = [array<i64: 16, 16, 48, 16, 80, 16>]> : tensor<48xf32>, weight = #nnx.external<"transformer.h.0.attn.c_attn.weight", slices = [array<i64: 16, 16, 48, 16, 80, 16>, array<i64>]> : tensor<48x32xf32>}
// GPT2: nnx.linear @c_proj {bias = #nnx.external<"transformer.h.0.attn.c_proj.bias"> : tensor<32xf32>, nnx.partial_sum = {ranks = 2 : i64}, weight = #nnx.external<"transformer.h.0.attn.c_proj.weight", slices = [array<i64>, array<i64: 16, 16>]> : tensor<32x16xf32>}
// GPT2: nnx.fn.reshape %{{.*}} [%{{.*}}, %{{.*}}, 2, 8] {nnx.source = "view_0"} : tensor<?x?x16xf32> -> tensor<?x?x2x8xf32>
// GPT2: nnx.linear @c_fc {{.*}}slices = [array<i64: 64, 64>, array<i64>]> : tensor<64x32xf32>
// GPT2: nnx.linear @c_proj {{.*}}nnx.partial_sum = {ranks = 2 : i64}, weight = #nnx.external<"transformer.h.0.mlp.c_proj.weight", slices = [array<i64>, array<i64: 64, 64>]> : tensor<32x64xf32>
// GPT2: nnx.linear @lm_head {weight = #nnx.external<"lm_head.weight"> : tensor<32x32xf32>}

// An MLP in a sequential: rank R keeps units 2R, 2R + 1 of `fc` (rows and
// bias) and the same columns of `proj`, which sums over the ranks; `head`
// stays whole.
// R1-LABEL: nnx.model @mlp
// R1-SAME: nnx.tensor_parallel = {rank = 1 : i64, ranks = 2 : i64}
// R1: nnx.linear @fc {bias = dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>, weight = dense<{{\[}}[5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>}
// R1: nnx.linear @proj {nnx.partial_sum = {ranks = 2 : i64}, weight = dense<{{\[}}[3.000000e+00, 4.000000e+00]]> : tensor<1x2xf32>}
// R1: nnx.linear @head {weight = dense<5.000000e-01> : tensor<1x1xf32>}
// R0-LABEL: nnx.model @mlp
// R0: nnx.linear @fc {bias = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, weight = dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// R0: nnx.linear @proj {nnx.partial_sum = {ranks = 2 : i64}, weight = dense<{{\[}}[1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>}
nnx.model @mlp inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>, bias = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
    nnx.relu @act
    nnx.linear @proj {weight = dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>}
    nnx.linear @head {weight = dense<0.5> : tensor<1x1xf32>}
  }
}

// -----

// Grouped-query attention, 2 kv heads x 2: each rank keeps one kv head and
// its 2 query heads; every size of the forward follows.
// R1-LABEL: nnx.model @gqa
// R1: nnx.linear @q_proj {weight = #nnx.external<"attn.q_proj.weight", slices = [array<i64: 4, 4>, array<i64>]> : tensor<4x8xf32>}
// R1: nnx.linear @k_proj {weight = #nnx.external<"attn.k_proj.weight", slices = [array<i64: 2, 2>, array<i64>]> : tensor<2x8xf32>}
// R1: nnx.linear @v_proj {weight = #nnx.external<"attn.v_proj.weight", slices = [array<i64: 2, 2>, array<i64>]> : tensor<2x8xf32>}
// R1: nnx.linear @o_proj {nnx.partial_sum = {ranks = 2 : i64}, weight = #nnx.external<"attn.o_proj.weight", slices = [array<i64>, array<i64: 4, 4>]> : tensor<8x4xf32>}
// R1: nnx.fn.expand %{{.*}} [%{{.*}}, 1, 2, %{{.*}}, 2] : tensor<?x1x1x?x2xf32> -> tensor<?x1x2x?x2xf32>
// R1: nnx.fn.softmax %{{.*}} {dim = -1 : i64} : tensor<?x2x?x?xf32>
// R1: nnx.call @o_proj(%{{.*}}) : (tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
// R0-LABEL: nnx.model @gqa
// R0: nnx.linear @q_proj {weight = #nnx.external<"attn.q_proj.weight", slices = [array<i64: 0, 4>, array<i64>]> : tensor<4x8xf32>}
// R0: nnx.linear @o_proj {nnx.partial_sum = {ranks = 2 : i64}, weight = #nnx.external<"attn.o_proj.weight", slices = [array<i64>, array<i64: 0, 4>]> : tensor<8x4xf32>}
nnx.model @gqa inputs(tensor<?x?x8xf32>) attributes {weights = "gqa.safetensors"} {
  nnx.module @net class = "Net" {
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = #nnx.external<"attn.q_proj.weight"> : tensor<8x8xf32>}
      nnx.linear @k_proj {weight = #nnx.external<"attn.k_proj.weight"> : tensor<4x8xf32>}
      nnx.linear @v_proj {weight = #nnx.external<"attn.v_proj.weight"> : tensor<4x8xf32>}
      nnx.linear @o_proj {weight = #nnx.external<"attn.o_proj.weight"> : tensor<8x8xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %qt = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %k1 = nnx.fn.reshape %kt [%b, 2, 1, %t, 2] : tensor<?x2x?x2xf32> -> tensor<?x2x1x?x2xf32>
        %ke = nnx.fn.expand %k1 [%b, 2, 2, %t, 2] : tensor<?x2x1x?x2xf32> -> tensor<?x2x2x?x2xf32>
        %kr = nnx.fn.reshape %ke [%b, 4, %t, 2] : tensor<?x2x2x?x2xf32> -> tensor<?x4x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %v1 = nnx.fn.reshape %vt [%b, 2, 1, %t, 2] : tensor<?x2x?x2xf32> -> tensor<?x2x1x?x2xf32>
        %ve = nnx.fn.expand %v1 [%b, 2, 2, %t, 2] : tensor<?x2x1x?x2xf32> -> tensor<?x2x2x?x2xf32>
        %vr = nnx.fn.reshape %ve [%b, 4, %t, 2] : tensor<?x2x2x?x2xf32> -> tensor<?x4x?x2xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x4x?x2xf32> -> tensor<?x4x2x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x4x?x2xf32>, tensor<?x4x2x?xf32> -> tensor<?x4x?x?xf32>
        %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x4x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x4x?x?xf32>, tensor<?x4x?x2xf32> -> tensor<?x4x?x2xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x4x?x2xf32> -> tensor<?x?x4x2xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 8] : tensor<?x?x4x2xf32> -> tensor<?x?x8xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @attn(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}
