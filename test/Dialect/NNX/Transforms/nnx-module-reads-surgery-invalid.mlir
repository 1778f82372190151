// Surgery that would resize, retype or remove a tensor another module's
// forward reads directly (`nnx.state` with `nnx.of`: an attention pool's
// `torch.cat([self.q_proj.bias, ...])`, a head tied by
// `F.linear(x, self.wte.weight)`) refuses, naming the reader.
// RUN: split-file %s %t
// RUN: nnx-opt %t/pool.mlir -verify-diagnostics --nnx-widen="layer=q_proj width=6"
// RUN: nnx-opt %t/pool.mlir -verify-diagnostics --nnx-prune="layer=q_proj keep=2"
// RUN: nnx-opt %t/pool.mlir -verify-diagnostics --nnx-low-rank="layer=q_proj rank=2"
// RUN: nnx-opt %t/seq-fc.mlir -verify-diagnostics --nnx-drop-layer="layer=body.fc"
// RUN: nnx-opt %t/seq-body.mlir -verify-diagnostics --nnx-drop-layer="layer=body"
// RUN: nnx-opt %t/tied.mlir -verify-diagnostics --nnx-expand-embedding="layer=wte num=8"
// A read from inside the edited module itself is no obstacle.
// RUN: nnx-opt %t/inside.mlir --nnx-drop-layer="layer=blk" | FileCheck %s --check-prefix=INSIDE

// INSIDE: nnx.identity @blk

//--- pool.mlir
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @pool class = "AttentionPool" {
    // expected-error @+1 {{target 'q_proj' (nnx.linear) has tensor 'bias' read directly by the forward of '<root>' (cat_0); the edit would change the tensor under that read}}
    nnx.linear @q_proj {weight = dense<1.0> : tensor<4x4xf32>, bias = dense<0.5> : tensor<4xf32>}
    nnx.linear @k_proj {weight = dense<1.0> : tensor<4x4xf32>, bias = dense<0.25> : tensor<4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
      %q = nnx.call @q_proj(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %k = nnx.call @k_proj(%q) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{read here}}
      %qb = nnx.state "bias" {nnx.of = @q_proj, nnx.source = "cat_0"} : tensor<4xf32>
      %kb = nnx.state "bias" {nnx.of = @k_proj} : tensor<4xf32>
      %b = tensor.concat dim(0) %qb, %kb : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
      %k2 = tensor.concat dim(1) %k, %k : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
      %y = nnx.fn.add %k2, %b : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
      nnx.return %y : tensor<?x8xf32>
    }
  }
}

//--- seq-fc.mlir
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Net" {
    nnx.sequential @body keying = named {
      // expected-error @+1 {{nnx-drop-layer: layer 'body.fc' (nnx.linear) has tensor 'weight' read directly by the forward of '<root>'; the edit would change the tensor under that read}}
      nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.relu @r
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @body(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{read here}}
      %w = nnx.state "weight" {nnx.of = @body::@fc} : tensor<4x4xf32>
      %y = nnx.fn.matmul %h, %w : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

//--- seq-body.mlir
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Net" {
    // expected-error @+1 {{has tensor 'weight' (of 'body.fc') read directly by the forward of '<root>'}}
    nnx.sequential @body keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.relu @r
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @body(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{read here}}
      %w = nnx.state "weight" {nnx.of = @body::@fc} : tensor<4x4xf32>
      %y = nnx.fn.matmul %h, %w : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

//--- tied.mlir
nnx.model @m inputs(tensor<?xi64>) {
  nnx.module @lm class = "LM" {
    // expected-error @+1 {{nnx-expand-embedding: target 'wte' (nnx.embedding) has its weight read directly by the forward of '<root>'; growing the vocabulary would resize the tensor under that read}}
    nnx.embedding @wte {weight = dense<1.0> : tensor<4x2xf32>}
    nnx.forward @forward(%ids: tensor<?xi64>) -> tensor<?x4xf32> {
      %h = nnx.call @wte(%ids) : (tensor<?xi64>) -> tensor<?x2xf32>
      // expected-note @+1 {{read here}}
      %w = nnx.state "weight" {nnx.of = @wte} : tensor<4x2xf32>
      %t = nnx.fn.permute %w [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
      %y = nnx.fn.matmul %h, %t : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

//--- inside.mlir
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.module @blk class = "Block" {
      nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>, bias = dense<0.5> : tensor<4xf32>}
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %h = nnx.call @fc(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        %b = nnx.state "bias" {nnx.of = @fc} : tensor<4xf32>
        %y = nnx.fn.add %h, %b : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
        nnx.return %y : tensor<?x4xf32>
      }
    }
    nnx.linear @head {weight = dense<1.0> : tensor<2x4xf32>}
  }
}
