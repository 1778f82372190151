// Every refusal of nnx-grow-attention: an error at the attention module
// naming what breaks the proof, a note at the op, and the IR unchanged.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-grow-attention="layer=attn heads=5 head-dim=4"

// The GQA ratio: 5 query heads over 2 kv heads.
nnx.model @ratio inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{target 'attn' (nnx.module) would have 5 query heads over 2 kv heads: num_heads / num_kv_heads must stay an integer}}
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
        // expected-note @+1 {{repeat_kv's expand is here: it repeats each of the 2 kv heads 2 times}}
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

// -----

// A norm over the head dim (a qk-norm): its statistics would change.
nnx.model @qk_norm inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{target 'attn' (nnx.module) would resize a dim that 'nnx.call' reduces over: its result depends on every index of it}}
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<8x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<8x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<8x8xf32>}
      nnx.linear @o_proj {weight = dense<0.4> : tensor<8x8xf32>}
      nnx.rms_norm @q_norm {normalized_shape = array<i64: 2>, weight = dense<1.0> : tensor<2xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %qt0 = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        // expected-note @+1 {{the op is here}}
        %qt = nnx.call @q_norm(%qt0) : (tensor<?x4x?x2xf32>) -> tensor<?x4x?x2xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %kr = nnx.fn.dropout %kt {p = 0.0 : f64} : tensor<?x4x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %vr = nnx.fn.dropout %vt {p = 0.0 : f64} : tensor<?x4x?x2xf32>
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

// -----

// The forward reads the head dim (e.g. to compute its scale).
nnx.model @scale_from_dim inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{target 'attn' (nnx.module) would resize a dim whose size the forward reads with 'tensor.dim': it computes with the number the edit changes}}
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<8x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<8x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<8x8xf32>}
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
        %c3 = arith.constant 3 : index
        // expected-note @+1 {{the op is here}}
        %hd = tensor.dim %qt, %c3 : tensor<?x4x?x2xf32>
        %hdi = arith.index_cast %hd : index to i64
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %kr = nnx.fn.dropout %kt {p = 0.0 : f64} : tensor<?x4x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %vr = nnx.fn.dropout %vt {p = 0.0 : f64} : tensor<?x4x?x2xf32>
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

// -----

// Not a custom module.
nnx.model @linear inputs(tensor<?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{target 'attn' (nnx.linear) is not a custom module ('nnx.module') with a forward: only an attention module's forward shows its heads}}
    nnx.linear @attn {weight = dense<0.1> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %y = nnx.call @attn(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      nnx.return %y : tensor<?x8xf32>
    }
  }
}

// -----

// No attention core: no softmax between two matmuls.
nnx.model @mlp inputs(tensor<?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{target 'attn' (nnx.module) has 0 attention cores (`softmax(q @ k^T) @ v` in its forward or the forwards it calls); the pass edits exactly one}}
    nnx.module @attn class = "NotAttention" {
      nnx.linear @fc {weight = dense<0.1> : tensor<8x8xf32>}
      nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
        %y = nnx.call @fc(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
        nnx.return %y : tensor<?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %y = nnx.call @attn(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      nnx.return %y : tensor<?x8xf32>
    }
  }
}
