// docs/Surgery.md's attention rows for a Llama-shaped model (TinyLlama-1.1B:
// d = 2048, 32 query and 4 kv heads of 64, no biases): the parameter count
// of one attention before and after each edit.
// RUN: nnx-opt %s --nnx-param-count -o %t | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn heads=48" --nnx-param-count -o %t | FileCheck %s --check-prefix=HEADS
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn heads=48 kv-heads=6" --nnx-param-count -o %t | FileCheck %s --check-prefix=KV
// RUN: nnx-opt %s --nnx-grow-attention="layer=attn head-dim=80" --nnx-param-count -o %t | FileCheck %s --check-prefix=DIM
// RUN: nnx-opt %s --nnx-prune="layer=attn heads=16" --nnx-param-count -o %t | FileCheck %s --check-prefix=PRUNE
// BEFORE: total 9437184
// HEADS: total 13631488
// KV: total 14155776
// DIM: total 11796480
// PRUNE: total 4718592
nnx.model @llama_shaped_attention inputs(tensor<?x?x2048xf32>) {
  nnx.module @net class = "Net" {
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.0> : tensor<2048x2048xf32>}
      nnx.linear @k_proj {weight = dense<0.0> : tensor<256x2048xf32>}
      nnx.linear @v_proj {weight = dense<0.0> : tensor<256x2048xf32>}
      nnx.linear @o_proj {weight = dense<0.0> : tensor<2048x2048xf32>}
      nnx.forward @forward(%x: tensor<?x?x2048xf32>) -> tensor<?x?x2048xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x2048xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x2048xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x2048xf32>) -> tensor<?x?x2048xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 32, 64] : tensor<?x?x2048xf32> -> tensor<?x?x32x64xf32>
        %qt = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x32x64xf32> -> tensor<?x32x?x64xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x2048xf32>) -> tensor<?x?x256xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 4, 64] : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
        %k1 = nnx.fn.reshape %kt [%b, 4, 1, %t, 64] : tensor<?x4x?x64xf32> -> tensor<?x4x1x?x64xf32>
        %ke = nnx.fn.expand %k1 [%b, 4, 8, %t, 64] : tensor<?x4x1x?x64xf32> -> tensor<?x4x8x?x64xf32>
        %kr = nnx.fn.reshape %ke [%b, 32, %t, 64] : tensor<?x4x8x?x64xf32> -> tensor<?x32x?x64xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x2048xf32>) -> tensor<?x?x256xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 4, 64] : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
        %v1 = nnx.fn.reshape %vt [%b, 4, 1, %t, 64] : tensor<?x4x?x64xf32> -> tensor<?x4x1x?x64xf32>
        %ve = nnx.fn.expand %v1 [%b, 4, 8, %t, 64] : tensor<?x4x1x?x64xf32> -> tensor<?x4x8x?x64xf32>
        %vr = nnx.fn.reshape %ve [%b, 32, %t, 64] : tensor<?x4x8x?x64xf32> -> tensor<?x32x?x64xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x32x?x64xf32> -> tensor<?x32x64x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x32x?x64xf32>, tensor<?x32x64x?xf32> -> tensor<?x32x?x?xf32>
        %scale = arith.constant dense<0.125> : tensor<f32>
        %ss = nnx.fn.mul %s, %scale : tensor<?x32x?x?xf32>, tensor<f32> -> tensor<?x32x?x?xf32>
        %p = nnx.fn.softmax %ss {dim = -1 : i64} : tensor<?x32x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x32x?x?xf32>, tensor<?x32x?x64xf32> -> tensor<?x32x?x64xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x32x?x64xf32> -> tensor<?x?x32x64xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 2048] : tensor<?x?x32x64xf32> -> tensor<?x?x2048xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x2048xf32>) -> tensor<?x?x2048xf32>
        nnx.return %y : tensor<?x?x2048xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x2048xf32>) -> tensor<?x?x2048xf32> {
      %y = nnx.call @attn(%x) : (tensor<?x?x2048xf32>) -> tensor<?x?x2048xf32>
      nnx.return %y : tensor<?x?x2048xf32>
    }
  }
}
