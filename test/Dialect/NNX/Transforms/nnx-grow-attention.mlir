// nnx-grow-attention on a grouped-query attention (2 kv heads, 2 query
// heads each, head dim 2): every size that describes the heads or the head
// dim follows. The logits of the exported families are checked by executing
// them (preservation/transformer-surgery.test).
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn heads=8" | FileCheck %s --check-prefix=HEADS
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn heads=8 kv-heads=4" | FileCheck %s --check-prefix=KV
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn head-dim=4" | FileCheck %s --check-prefix=DIM
// A size no pass can hold is refused before anything is allocated:
// RUN: not nnx-opt %s --nnx-grow-attention="layer=attn heads=4000000000000" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not nnx-opt %s --nnx-grow-attention="layer=attn head-dim=9223372036854775806" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: nnx-grow-attention: edited layer 'attn.q_proj' (nnx.linear) would grow its 'weight' to

// More query heads per kv head: the repeat_kv expand repeats 4 times.
// HEADS: nnx.linear @q_proj {{.*}} : tensor<16x8xf32>
// HEADS: nnx.linear @k_proj {{.*}} : tensor<4x8xf32>
// HEADS: nnx.linear @o_proj {{.*}} : tensor<8x16xf32>
// HEADS: nnx.fn.reshape {{.*}} [%{{.*}}, %{{.*}}, 8, 2] : tensor<?x?x16xf32> -> tensor<?x?x8x2xf32>
// HEADS: nnx.fn.expand {{.*}} [%{{.*}}, 2, 4, %{{.*}}, 2] : tensor<?x2x1x?x2xf32> -> tensor<?x2x4x?x2xf32>
// HEADS: nnx.fn.softmax {{.*}} : tensor<?x8x?x?xf32>
// HEADS: nnx.fn.reshape {{.*}} [%{{.*}}, %{{.*}}, 16] : tensor<?x?x8x2xf32> -> tensor<?x?x16xf32>

// New kv heads with their groups: the group stays 2.
// KV: nnx.linear @k_proj {{.*}} : tensor<8x8xf32>
// KV: nnx.fn.expand {{.*}} [%{{.*}}, 4, 2, %{{.*}}, 2] : tensor<?x4x1x?x2xf32> -> tensor<?x4x2x?x2xf32>

// A wider head dim: queries, keys and values; the constant scale stays.
// DIM: nnx.linear @q_proj {{.*}} : tensor<16x8xf32>
// DIM: nnx.linear @v_proj {{.*}} : tensor<8x8xf32>
// DIM: nnx.fn.matmul {{.*}} : tensor<?x4x?x4xf32>, tensor<?x4x4x?xf32> -> tensor<?x4x?x?xf32>
// DIM: arith.constant dense<0.7070{{[0-9]*}}> : tensor<f32>

nnx.model @gqa inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<8x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<4x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<4x8xf32>}
      nnx.linear @o_proj {weight = dense<0.4> : tensor<8x8xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %qt0 = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %qt = nnx.fn.dropout %qt0 {p = 0.0 : f64} : tensor<?x4x?x2xf32>
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
        %scale = arith.constant dense<0.7071> : tensor<f32>
        %ss = nnx.fn.mul %s, %scale : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
        %p = nnx.fn.softmax %ss {dim = -1 : i64} : tensor<?x4x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x4x?x?xf32>, tensor<?x4x?x2xf32> -> tensor<?x4x?x2xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x4x?x2xf32> -> tensor<?x?x4x2xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 8] : tensor<?x?x4x2xf32> -> tensor<?x?x8xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y = nnx.call @attn(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y : tensor<?x?x8xf32>
    }
  }
}
