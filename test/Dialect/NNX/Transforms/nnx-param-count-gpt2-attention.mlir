// docs/Surgery.md's attention rows for GPT-2 small (d = 768, 12 heads of
// 64, biases; the separate q/k/v projections hold what the fused c_attn
// holds): the parameter count of one attention before and after each edit.
// RUN: nnx-opt %s --nnx-param-count -o %t | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn heads=16" --nnx-param-count -o %t | FileCheck %s --check-prefix=HEADS
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn head-dim=80" --nnx-param-count -o %t | FileCheck %s --check-prefix=DIM
// RUN: nnx-opt %s --nnx-prune="layer=attn heads=8" --nnx-param-count -o %t | FileCheck %s --check-prefix=PRUNE
// BEFORE: total 2362368
// HEADS: total 3149568
// DIM: total 2952768
// PRUNE: total 1575168
nnx.model @gpt2_small_attention inputs(tensor<?x?x768xf32>) {
  nnx.module @net class = "Net" {
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.0> : tensor<768x768xf32>, bias = dense<0.0> : tensor<768xf32>}
      nnx.linear @k_proj {weight = dense<0.0> : tensor<768x768xf32>, bias = dense<0.0> : tensor<768xf32>}
      nnx.linear @v_proj {weight = dense<0.0> : tensor<768x768xf32>, bias = dense<0.0> : tensor<768xf32>}
      nnx.linear @o_proj {weight = dense<0.0> : tensor<768x768xf32>, bias = dense<0.0> : tensor<768xf32>}
      nnx.forward @forward(%x: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x768xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x768xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 12, 64] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
        %qt = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 12, 64] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
        %kr = nnx.fn.dropout %kt {p = 0.0 : f64} : tensor<?x12x?x64xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 12, 64] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
        %vr = nnx.fn.dropout %vt {p = 0.0 : f64} : tensor<?x12x?x64xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x12x?x64xf32> -> tensor<?x12x64x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x12x?x64xf32>, tensor<?x12x64x?xf32> -> tensor<?x12x?x?xf32>
        %scale = arith.constant dense<0.125> : tensor<f32>
        %ss = nnx.fn.mul %s, %scale : tensor<?x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
        %p = nnx.fn.softmax %ss {dim = -1 : i64} : tensor<?x12x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x12x?x?xf32>, tensor<?x12x?x64xf32> -> tensor<?x12x?x64xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 768] : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
        nnx.return %y : tensor<?x?x768xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
      %y = nnx.call @attn(%x) : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
      nnx.return %y : tensor<?x?x768xf32>
    }
  }
}
