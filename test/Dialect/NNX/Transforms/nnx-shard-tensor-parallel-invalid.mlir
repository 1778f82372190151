// nnx-shard-tensor-parallel refusals: each is reported before anything changes.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-shard-tensor-parallel="ranks=2 rank=1"
// RUN: not nnx-opt %s -split-input-file --nnx-shard-tensor-parallel="ranks=1" 2>&1 | FileCheck %s --check-prefix=OPTS
// RUN: not nnx-opt %s -split-input-file --nnx-shard-tensor-parallel="ranks=2 rank=2" 2>&1 | FileCheck %s --check-prefix=OPTS2
// OPTS: error: nnx-shard-tensor-parallel: options ranks=1 rank=0: ranks must be >= 2 and rank in 0..0
// OPTS2: error: nnx-shard-tensor-parallel: options ranks=2 rank=2: ranks must be >= 2 and rank in 0..1
// GQA: 3 kv heads (6 query heads) cannot go to 2 ranks whole.
nnx.model @gqa3 inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{nnx-shard-tensor-parallel: attention module 'attn' (nnx.module) has 3 kv heads, which 2 ranks cannot split evenly (each rank keeps whole kv groups)}}
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<12x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<6x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<6x8xf32>}
      nnx.linear @o_proj {weight = dense<0.4> : tensor<8x12xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x12xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 6, 2] : tensor<?x?x12xf32> -> tensor<?x?x6x2xf32>
        %qt = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x6x2xf32> -> tensor<?x6x?x2xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x6xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 3, 2] : tensor<?x?x6xf32> -> tensor<?x?x3x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x3x2xf32> -> tensor<?x3x?x2xf32>
        %k1 = nnx.fn.reshape %kt [%b, 3, 1, %t, 2] : tensor<?x3x?x2xf32> -> tensor<?x3x1x?x2xf32>
        %ke = nnx.fn.expand %k1 [%b, 3, 2, %t, 2] : tensor<?x3x1x?x2xf32> -> tensor<?x3x2x?x2xf32>
        %kr = nnx.fn.reshape %ke [%b, 6, %t, 2] : tensor<?x3x2x?x2xf32> -> tensor<?x6x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x6xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 3, 2] : tensor<?x?x6xf32> -> tensor<?x?x3x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x3x2xf32> -> tensor<?x3x?x2xf32>
        %v1 = nnx.fn.reshape %vt [%b, 3, 1, %t, 2] : tensor<?x3x?x2xf32> -> tensor<?x3x1x?x2xf32>
        %ve = nnx.fn.expand %v1 [%b, 3, 2, %t, 2] : tensor<?x3x1x?x2xf32> -> tensor<?x3x2x?x2xf32>
        %vr = nnx.fn.reshape %ve [%b, 6, %t, 2] : tensor<?x3x2x?x2xf32> -> tensor<?x6x?x2xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x6x?x2xf32> -> tensor<?x6x2x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x6x?x2xf32>, tensor<?x6x2x?xf32> -> tensor<?x6x?x?xf32>
        %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x6x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x6x?x?xf32>, tensor<?x6x?x2xf32> -> tensor<?x6x?x2xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x6x?x2xf32> -> tensor<?x?x6x2xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 12] : tensor<?x?x6x2xf32> -> tensor<?x?x12xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x12xf32>) -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @attn(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// 3 heads without GQA.
nnx.model @heads3 inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{nnx-shard-tensor-parallel: attention module 'attn' (nnx.module) has 3 heads, which 2 ranks cannot split evenly (each rank keeps whole heads)}}
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<6x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<6x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<6x8xf32>}
      nnx.linear @o_proj {weight = dense<0.4> : tensor<8x6xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x6xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 3, 2] : tensor<?x?x6xf32> -> tensor<?x?x3x2xf32>
        %qt = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x3x2xf32> -> tensor<?x3x?x2xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x6xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 3, 2] : tensor<?x?x6xf32> -> tensor<?x?x3x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x3x2xf32> -> tensor<?x3x?x2xf32>
        %kr = nnx.fn.permute %kt [0, 1, 2, 3] : tensor<?x3x?x2xf32> -> tensor<?x3x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x6xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 3, 2] : tensor<?x?x6xf32> -> tensor<?x?x3x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x3x2xf32> -> tensor<?x3x?x2xf32>
        %vr = nnx.fn.permute %vt [0, 1, 2, 3] : tensor<?x3x?x2xf32> -> tensor<?x3x?x2xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x3x?x2xf32> -> tensor<?x3x2x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x3x?x2xf32>, tensor<?x3x2x?xf32> -> tensor<?x3x?x?xf32>
        %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x3x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x3x?x?xf32>, tensor<?x3x?x2xf32> -> tensor<?x3x?x2xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x3x?x2xf32> -> tensor<?x?x3x2xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 6] : tensor<?x?x3x2xf32> -> tensor<?x?x6xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x6xf32>) -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @attn(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// Per-head attention probabilities are split by heads: no gather.
nnx.model @probe inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<4x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<4x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<4x8xf32>}
      nnx.linear @o_proj {weight = dense<0.4> : tensor<8x4xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %qt = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %kr = nnx.fn.permute %kt [0, 1, 2, 3] : tensor<?x2x?x2xf32> -> tensor<?x2x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %vr = nnx.fn.permute %vt [0, 1, 2, 3] : tensor<?x2x?x2xf32> -> tensor<?x2x?x2xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x2x?x2xf32> -> tensor<?x2x2x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x2x?x2xf32>, tensor<?x2x2x?xf32> -> tensor<?x2x?x?xf32>
        // expected-error @+1 {{nnx-shard-tensor-parallel: probe 'layers.0.attention_probabilities' reads a value with the heads dim, which is split across the ranks; gathering it to rank 0 needs an all_gather, which the lowering does not provide (probe a value after the output or down projection instead)}}
        %p = nnx.fn.softmax %s {dim = -1 : i64, nnx.probes = [#nnx.probe<name = "layers.0.attention_probabilities", point = output, index = 0, kind = read>]} : tensor<?x2x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x2x?x?xf32>, tensor<?x2x?x2xf32> -> tensor<?x2x?x2xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x2xf32> -> tensor<?x?x2x2xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 4] : tensor<?x?x2x2xf32> -> tensor<?x?x4xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @attn(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// An MLP of 5 units.
nnx.model @mlp5 inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    nnx.sequential @mlp keying = named {
      // expected-error @+1 {{nnx-shard-tensor-parallel: MLP Linear 'mlp.fc' (nnx.linear) has 5 units (feeding 'mlp.proj'), which 2 ranks cannot split evenly}}
      nnx.linear @fc {weight = dense<0.1> : tensor<5x8xf32>, bias = dense<0.0> : tensor<5xf32>}
      nnx.gelu @act
      nnx.linear @proj {weight = dense<0.2> : tensor<8x5xf32>}
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @mlp(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// A probe between an MLP's Linears.
nnx.model @mlpprobe inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    nnx.sequential @mlp keying = named {
      nnx.linear @fc {weight = dense<0.1> : tensor<4x8xf32>}
      // expected-error @+1 {{nnx-shard-tensor-parallel: probe 'layers.0.mlp_act' reads an MLP's hidden units, which is split across the ranks; gathering it to rank 0 needs an all_gather, which the lowering does not provide (probe a value after the output or down projection instead)}}
      nnx.gelu @act {nnx.probes = [#nnx.probe<name = "layers.0.mlp_act", point = output, index = 0, kind = read>]}
      nnx.linear @proj {weight = dense<0.2> : tensor<8x4xf32>}
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @mlp(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// Nothing to split: one Linear.
// expected-error @+1 {{nnx-shard-tensor-parallel: the model has no attention module and no MLP pair (a Linear feeding a Linear) to split; on 2 ranks every rank would do all the work}}
nnx.model @one inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    nnx.linear @fc {weight = dense<0.1> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @fc(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// Split twice.
// expected-error @+1 {{nnx-shard-tensor-parallel: the model is already split for tensor parallelism ({rank = 0 : i64, ranks = 2 : i64})}}
nnx.model @twice inputs(tensor<?x?x8xf32>) attributes {nnx.tensor_parallel = {rank = 0 : i64, ranks = 2 : i64}} {
  nnx.module @net class = "Net" {
    nnx.linear @fc {weight = dense<0.1> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @fc(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}
