// RUN: nnx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{must hold exactly one root module}}
nnx.model @two inputs(tensor<?x4xf32>) {
  nnx.relu @a
  nnx.relu @b
}

// -----

// expected-error @+1 {{inputs must be ranked tensor types}}
nnx.model @m inputs(f32) {
  nnx.relu @a
}

// -----

// expected-error @+1 {{module '<root>' (nnx.linear) expects 4 input features, got 5}}
nnx.model @m inputs(tensor<?x5xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{see existing symbol definition here}}
    nnx.relu @a
    // expected-error @+1 {{redefinition of symbol named 'a'}}
    nnx.relu @a
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{is positional but child 1 has key '2' (expected '1')}}
  nnx.sequential @net keying = positional {
    nnx.relu @"0"
    // expected-note @+1 {{child is here}}
    nnx.relu @"2"
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{child 'b' takes 7 features but 'a' produces 8}}
  nnx.sequential @net keying = named {
    // expected-note @+1 {{producer is here}}
    nnx.linear @a {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @act
    nnx.linear @b {weight = dense<1.0> : tensor<2x7xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{child 'emb' takes integer ids but follows a module producing features}}
  nnx.sequential @net keying = named {
    // expected-note @+1 {{producer is here}}
    nnx.linear @a {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.embedding @emb {weight = dense<1.0> : tensor<10x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{may only hold modules and aliases, found 'arith.constant'}}
  nnx.sequential @net keying = named {
    %c = arith.constant 1.0 : f32
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{layers.1 is 7->2 but the params say 8->2}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      // expected-note @+1 {{layer is here}}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x7xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{has 1 layers but hidden_dims implies 2}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{has 2 per-layer activations for 1 hidden layers}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, activations = [#nnx.activation<relu>, #nnx.activation<tanh>]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+2 {{expected ::mlir::nnx::ActivationKind to be one of: relu, gelu, tanh, sigmoid, silu, leaky_relu, softmax, identity}}
  // expected-error @+1 {{failed to parse NNX_ActivationKindAttr parameter 'value'}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, activation = #nnx.activation<swish>} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{has 2 per-layer dropout_probs for 1 hidden layers}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, dropout_probs = [0.1, 0.2]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{dropout probability 1.5 is outside [0, 1]}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, dropout = 1.5} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{must hold exactly one 'nnx.module_list @layers'}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @hidden {
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    // expected-error @+1 {{is positional but child 0 has key 'a' (expected '0')}}
    nnx.module_list @layers {
      // expected-note @+1 {{child is here}}
      nnx.linear @a {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{must have exactly one 'nnx.forward' (found 0)}}
  nnx.module @block class = "Block" {
    nnx.relu @act
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{operand types do not match the forward's result types}}
      nnx.return
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = arith.addf %x, %x {nnx.source = "add_0"} : tensor<?x4xf32>
      // expected-error @+1 {{reuses source label "add_0" within one forward}}
      %b = arith.addf %a, %x {nnx.source = "add_0"} : tensor<?x4xf32>
      nnx.return %b : tensor<?x4xf32>
    }
  }
}

// -----

// nnx.forward refuses the upstream ops whose behaviour is undefined
// (nnx/Dialect/NNX/IR/UpstreamOpChecks.h) when its body is verified.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> index {
      %c = arith.constant -2 : index
      // expected-error @+1 {{'tensor.dim' op index -2 is out of range for a source of rank 2 (valid: 0 to 1)}}
      %d = tensor.dim %x, %c : tensor<?x4xf32>
      nnx.return %d : index
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x4xf32>
      // expected-error @+1 {{'tensor.extract_slice' op stride -1 of dimension 1 is not positive}}
      %s = tensor.extract_slice %x[0, 3] [%n, 2] [1, -1] : tensor<?x4xf32> to tensor<?x2xf32>
      nnx.return %s : tensor<?x2xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.relu @act
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{callee @missing is not a child of module 'block'}}
      %a = nnx.call @missing(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{result type 'tensor<?x4xf32>' does not match what callee @fc computes: 'tensor<?x8xf32>'}}
      %a = nnx.call @fc(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.module_list @h {
      nnx.relu @"0"
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{callee @h is a module_list, which has no forward}}
      %a = nnx.call @h(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @act
    // expected-error @+1 {{target @nowhere does not name a module}}
    nnx.alias @tied = @nowhere
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @act
    nnx.alias @a1 = @act
    // expected-error @+1 {{target @a1 is itself an alias; name the module}}
    nnx.alias @a2 = @a1
  }
}

// -----

// An alias whose target path runs through the alias itself.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @act
    // expected-error @+1 {{'a' = @a::@r is an alias cycle: resolving the target leads back to the alias}}
    nnx.alias @a = @a::@r
  }
}

// -----

// An alias whose path passes through another alias's cycle.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @act
    // expected-error @+1 {{'c' = @a::@act cannot be resolved: its path runs into an alias cycle at 'a'}}
    nnx.alias @c = @a::@act
    nnx.alias @a = @a::@r
  }
}

// -----

// Two aliases whose target paths run through each other: a -> b -> a.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @act
    // expected-error @+1 {{'a' = @b::@x is an alias cycle: resolving the target leads back to the alias}}
    nnx.alias @a = @b::@x
    nnx.alias @b = @a::@y
  }
}

// -----

// An alias of its own ancestor: 'sub' would contain itself.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @sub keying = named {
      nnx.relu @act
      // expected-error @+1 {{'sub.up' = @sub names its own ancestor 'sub': the module would contain itself}}
      nnx.alias @up = @sub
    }
  }
}

// -----

// Containment through aliases: a holds b, b holds a.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module 'a' is here}}
    nnx.sequential @a keying = named {
      nnx.relu @act
      // expected-error @+1 {{'a.x' = @b closes a cycle: 'b' reaches 'a', which holds this alias, through aliases: the module would contain itself}}
      nnx.alias @x = @b
    }
    nnx.sequential @b keying = named {
      nnx.relu @act
      nnx.alias @y = @a
    }
  }
}

// -----

// A forward that calls its own module through an alias of it.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.module @block class = "Block" {
      // expected-error @+1 {{'block.up' = @block names its own ancestor 'block': the module would contain itself}}
      nnx.alias @up = @block
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %a = nnx.call @up(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        nnx.return %a : tensor<?x4xf32>
      }
    }
  }
}

// -----

// A forward that calls a module which leads back to its caller through
// another alias.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module 'block' is here}}
    nnx.module @block class = "Block" {
      // expected-error @+1 {{'block.helper' = @other closes a cycle: 'other' reaches 'block', which holds this alias, through aliases: the module would contain itself}}
      nnx.alias @helper = @other
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %a = nnx.call @helper(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        nnx.return %a : tensor<?x4xf32>
      }
    }
    nnx.sequential @other keying = named {
      nnx.alias @back = @block
    }
  }
}

// -----

// A callee whose path runs through a cyclic alias that is verified later.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.module @block class = "Block" {
      nnx.alias @helper = @other
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        // expected-error @+1 {{callee @helper::@loop::@act cannot be resolved: its path runs into an alias cycle at 'other.loop'}}
        %a = nnx.call @helper::@loop::@act(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        nnx.return %a : tensor<?x4xf32>
      }
    }
    nnx.sequential @other keying = named {
      nnx.relu @act
      nnx.alias @loop = @other::@loop::@act
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{callee @forward names the module's own forward: a forward cannot call itself}}
      %a = nnx.call @forward(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    // expected-error @+1 {{at 'forward': the key 'forward' is reserved in an 'nnx.module' for its 'nnx.forward' (PyTorch reserves it too)}}
    nnx.relu @forward
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.relu @act
    // expected-error @+1 {{the key 'forward' is reserved in an 'nnx.module' for its 'nnx.forward'}}
    nnx.alias @forward = @act
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    // expected-error @+1 {{must be named @forward, not @fwd}}
    nnx.forward @fwd(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    // expected-error @+1 {{has no visibility: it is always its module's forward}}
    nnx.forward private @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'weight' must be a 2-D float tensor (out x in)}}
    nnx.linear @fc {weight = dense<1.0> : tensor<8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{at 'fc': 'bias' has shape 4 but the layer needs 8}}
    nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>, bias = dense<0.0> : tensor<4xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{tensors mix element types 'f32' and 'f16'}}
    nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>, bias = dense<0.0> : tensor<8xf16>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{needs a 'weight' (or 'lazy')}}
    nnx.linear @fc
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{is an uninitialized lazy layer and cannot hold tensors}}
    nnx.linear @fc {lazy, out_features = 8, weight = dense<1.0> : tensor<8x4xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{lazy layer needs 'out_features'}}
    nnx.linear @fc {lazy}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{padding_idx 10 is outside the table of 10 rows}}
    nnx.embedding @emb {weight = dense<1.0> : tensor<10x8xf32>, padding_idx = 10}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{frozen_rows has 2 entries for 3 rows}}
    nnx.embedding @emb {weight = dense<1.0> : tensor<3x8xf32>, frozen_rows = array<i1: true, false>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'weight' has shape 8 but the layer needs 4}}
    nnx.layer_norm @ln {normalized_shape = array<i64: 4>, weight = dense<1.0> : tensor<8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{eps must be positive}}
    nnx.rms_norm @rms {normalized_shape = array<i64: 4>, eps = 0.0 : f64}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'running_var' has shape 3 but the layer needs 4}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<3xf32>}
  }
}

// -----

// expected-error @+1 {{module 'bn' (nnx.batch_norm) expects 4 channels, got 6}}
nnx.model @m inputs(tensor<?x6xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'weight' has shape 8x4x3x3 but the layer needs 8x2x3x3}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{groups = 3 must divide in_channels = 4 and out_channels = 8}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 3 : i64, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'bias' has shape 4 but the layer needs 8}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>, bias = dense<0.0> : tensor<4xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'stride' must be two sizes (H, W), each at least 1}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 0, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'padding' must be two sizes (H, W), each at least 0}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{channel counts must be positive, got 4 in and 0 out}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 0 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<0x4x3x3xf32>}
  }
}

// -----

// expected-error @+1 {{module 'c' (nnx.conv2d) expects 4 input channels, got 3}}
nnx.model @m inputs(tensor<?x3x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

// expected-error @+1 {{module 'c' (nnx.conv2d) takes (N, C, H, W) input, got tensor<?x4xf32>}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

// expected-error @+1 {{module 'c' (nnx.conv2d) has a window (3) larger than the padded input (1 + 2 * 0 in dim 2)}}
nnx.model @m inputs(tensor<?x4x1x5xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

// expected-error @+1 {{module 'bn' (nnx.batch_norm) takes (N, C), (N, C, L) or (N, C, H, W) input}}
nnx.model @m inputs(tensor<?x4x2x2x2xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+2 {{expected ::mlir::nnx::GeluApproximation to be one of: none, tanh}}
    // expected-error @+1 {{failed to parse NNX_GeluApproximationAttr parameter 'value'}}
    nnx.gelu @g {approximate = #nnx.gelu_approximation<fast>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{p = 1.5 is outside [0, 1]}}
    nnx.dropout @d {p = 1.5 : f64}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'requires_grad' names 'bias', which is not a tensor of this module}}
    nnx.relu @act {requires_grad = {bias = false}}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'requires_grad' of 'weight' must be a bool}}
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>, requires_grad = {weight = 1 : i32}}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'parametrizations' names 'scale', which is not a tensor of this module}}
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>, parametrizations = {scale = "weight_norm"}}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'pruned' names 'gamma', which is not a tensor of this module}}
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>, pruned = ["gamma"]}
  }
}

// -----

// expected-error @+1 {{module 'sm' (nnx.softmax) dim 2 is out of range for rank 2}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.softmax @sm {dim = 2}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{attribute 'approximate' failed to satisfy constraint}}
    nnx.gelu @g {approximate = 1 : i64}
  }
}

// -----

// The string spelling of earlier versions (upgraded on load) holds a value
// that never was one.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{attribute 'approximate' is "fast", which is not a GELU approximation (none, tanh)}}
    nnx.gelu @g {approximate = "fast"}
  }
}

// -----

// expected-error @+1 {{attribute 'activations' is "swish", which is not an activation (relu, gelu, tanh, sigmoid, silu, leaky_relu, softmax, identity)}}
nnx.feed_fwd @net attributes {input_dim = 2, hidden_dims = array<i64: 2>, output_dim = 1,
    activations = ["relu", "swish"]} {
}

// -----

// The discardable attributes of the dialect are typed and verified.

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+2 {{expected ::mlir::nnx::ProbePoint to be one of: input, output}}
  // expected-error @+1 {{failed to parse NNX_ProbeAttr parameter 'point'}}
  nnx.relu @r {nnx.probes = [#nnx.probe<name = "x", point = middle, index = 0, kind = read>]}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+2 {{expected ::mlir::nnx::ProbeKind to be one of: read, write}}
  // expected-error @+1 {{failed to parse NNX_ProbeAttr parameter 'kind'}}
  nnx.relu @r {nnx.probes = [#nnx.probe<name = "x", point = output, index = 0, kind = peek>]}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{probe 'x' has index -1, which is negative}}
  nnx.relu @r {nnx.probes = [#nnx.probe<name = "x", point = output, index = -1, kind = read>]}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{a probe needs a non-empty name}}
  nnx.relu @r {nnx.probes = [#nnx.probe<name = "", point = output, index = 0, kind = read>]}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.relu' op 'nnx.probes' must be an array of #nnx.probe, got "everything"}}
  nnx.relu @r {nnx.probes = "everything"}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.probes' must be an array of #nnx.probe, got [{index = 0 : i64, kind = "read", name = "x", point = "output"}]}}
  nnx.relu @r {nnx.probes = [{name = "x", point = "output", index = 0 : i64, kind = "read"}]}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.relu' op 'nnx.probe_list' is not an attribute of the nnx dialect}}
  nnx.relu @r {nnx.probe_list = []}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    // expected-error @+1 {{'nnx.forward' op 'nnx.output_names' names 2 results, but the forward has 1}}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.output_names = ["0", "1"]} {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    // expected-error @+1 {{'nnx.forward' op 'nnx.output_names' must be an array of strings, got [0]}}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.output_names = [0]} {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.relu' op 'nnx.output_names' must be on an 'nnx.forward'}}
  nnx.relu @r {nnx.output_names = ["0"]}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    // expected-error @+1 {{'nnx.forward' op 'nnx.input_names' names 2 arguments, but the forward has 1}}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.input_names = ["0.0", "0.1"]} {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'arith.addf' op 'nnx.source' must be a string}}
      %y = arith.addf %x, %x {nnx.source = 3 : i64} : tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'arith.addf' op 'nnx.in_place' = 2 names no operand of this op (it has 2 operands and 1 results)}}
      %y = arith.addf %x, %x {nnx.source = "iadd_0", nnx.in_place = 2 : i64} : tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    nnx.relu @act
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'nnx.call' op 'nnx.kwargs' must be an array of strings, got [1]}}
      %y = nnx.call @act(%x) {nnx.kwargs = [1]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{an external tensor needs a non-empty key}}
  nnx.linear @fc {weight = #nnx.external<""> : tensor<2x4xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight' needs a static shape, got 'tensor<?x4xf32>'}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<?x4xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{'nnx.linear' op at '<root>': 'weight' must be a 2-D float tensor (out x in)}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<8xf32>}
}

// -----

// expected-error @+1 {{'func.func' op 'nnx.parameters' must be an array of tensor attributes, got [1]}}
func.func @f() attributes {nnx.parameters = [1]} {
  return
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.linear' op at '<root>': tensor 'weight' of type 'tensor<4611686018427387904x4xf32>' holds more bytes than 64 bits can count}}
  nnx.linear @fc {weight = dense<1.0> : tensor<4611686018427387904x4xf32>}
}

// -----

nnx.model @state_missing inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" attributes {state = {scale = dense<2.0> : tensor<4xf32>}} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'nnx.state' op reads 'inv_freq', which is not a tensor in the 'state' of the enclosing module}}
      %f = nnx.state "inv_freq" : tensor<4xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @state_type inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" attributes {state = {scale = dense<2.0> : tensor<4xf32>}} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{result type 'tensor<8xf32>' differs from the type of state tensor 'scale', 'tensor<4xf32>'}}
      %f = nnx.state "scale" : tensor<8xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

func.func @state_outside_forward() -> tensor<4xf32> {
  // expected-error @+1 {{expects parent op 'nnx.forward'}}
  %f = nnx.state "scale" : tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// nnx.index_checks: each entry a dictionary with its layer, op and bound.
// expected-error @+1 {{'nnx.index_checks' entry 0 must be {layer = "...", op = "...", bound = N > 0 [, input = K >= 0]}, got {layer = "wte", op = "nnx.embedding"}}}
func.func @f() attributes {nnx.index_checks = [{layer = "wte", op = "nnx.embedding"}]} {
  return
}

// -----

// expected-error @+1 {{'nnx.index_checks' entry 1 must be {layer = "...", op = "...", bound = N > 0 [, input = K >= 0]}, got {bound = 16 : i64, input = -1 : i64, layer = "wte", op = "nnx.embedding"}}}
func.func @f() attributes {nnx.index_checks = [{bound = 16 : i64, layer = "wte", op = "nnx.embedding"}, {bound = 16 : i64, input = -1 : i64, layer = "wte", op = "nnx.embedding"}]} {
  return
}

// -----

// nnx.shape_checks (nnx-prepare-forward's @forward_shape_checks): each entry
// names the op and the operand dims, arguments -1 or more.
// expected-error @+1 {{'nnx.shape_checks' entry 0 must be {op = "...", operand, dim, source_operand, source_dim >= 0, argument, source_argument >= -1}, got {argument = -2 : i64, dim = 0 : i64, op = "add", operand = 1 : i64, source_argument = 0 : i64, source_dim = 0 : i64, source_operand = 0 : i64}}}
func.func @f() attributes {nnx.shape_checks = [{op = "add", operand = 1, dim = 0, source_operand = 0, source_dim = 0, argument = -2, source_argument = 0}]} {
  return
}

// -----

// expected-error @+1 {{'nnx.shape_checks' must be an array of dictionaries}}
func.func @f() attributes {nnx.shape_checks = {op = "add"}} {
  return
}

// -----

// expected-error @+1 {{'nnx.index_checks' must be an array of dictionaries}}
func.func @f() attributes {nnx.index_checks = "wte"} {
  return
}

// -----

// A module_dict has no forward: it may not hold one.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.module_dict @d {
      nnx.relu @act
      // expected-error @+1 {{'nnx.forward' op expects parent op 'nnx.module'}}
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        nnx.return %x : tensor<?x4xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    // expected-error @+1 {{'nnx.module_dict' op at 'd': may only hold modules and aliases, found 'arith.constant'}}
    nnx.module_dict @d {
      nnx.relu @act
      %c = arith.constant 1.0 : f32
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.module_dict @d {
      nnx.relu @act
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{callee @d is a module_dict, which has no forward}}
      %a = nnx.call @d(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.module_dict @d {
      nnx.relu @act
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{callee @d::@nope is not a child of module 'block'}}
      %a = nnx.call @d::@nope(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

// expected-error @+1 {{module '<root>' (nnx.module_dict) is a module_dict, which has no forward of its own}}
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{module defined here}}
  nnx.module_dict @d {
    nnx.relu @act
  }
}

// -----

// expected-error @+1 {{module 'd' (nnx.module_dict) is a module_dict, which has no forward of its own}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @s keying = named {
    nnx.relu @act
    // expected-note @+1 {{module defined here}}
    nnx.module_dict @d {
      nnx.relu @act
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.module_dict @d {
      // expected-note @+1 {{see existing symbol definition here}}
      nnx.relu @act
      // expected-error @+1 {{redefinition of symbol named 'act'}}
      nnx.relu @act
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    // expected-error @+1 {{'nnx.module_dict' op at 'd': 'requires_grad' names 'v', which is not a tensor of this module}}
    nnx.module_dict @d attributes {state = {w = dense<1.0> : tensor<4xf32>}, requires_grad = {v = false}} {
      nnx.relu @act
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{padding 2 in dim 2 is more than half the kernel size 2}}
    nnx.max_pool2d @p {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 2, 0>, dilation = array<i64: 1, 1>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'kernel_size' must be two sizes (H, W), each at least 1}}
    nnx.max_pool2d @p {kernel_size = array<i64: 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'stride' must be two sizes (H, W), each at least 1}}
    nnx.avg_pool2d @p {kernel_size = array<i64: 2, 2>, stride = array<i64: 0, 2>, padding = array<i64: 0, 0>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'output_size' must be two sizes (H, W), each at least 1}}
    nnx.adaptive_avg_pool2d @p {output_size = array<i64: 0, 1>}
  }
}

// -----

nnx.model @m inputs(tensor<?x3x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'weight' has shape 4x3x2 but the layer needs 4x3x3}}
    nnx.conv1d @c {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<0.1> : tensor<4x3x2xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x3x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'kernel_size' must be one size (L), each at least 1}}
    nnx.conv1d @c {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<0.1> : tensor<4x3x3xf32>}
  }
}

// Windows whose output-size arithmetic would leave int64: a stride above
// 2^62, an extent 2 p + d (k - 1) + 1 above 2^60 (or past int64), a static
// input size above 2^60. (A stride of 2^62 itself is taken.)
nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{stride 9223372036854775807 in dim 3 is more than 2^62 (4611686018427387904)}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 4611686018427387904, 9223372036854775807>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x3x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{window in dim 2 spans more than 2^60 (1152921504606846976) with its padding: 2 * padding 0 + dilation 4611686018427387904 * (kernel_size 3 - 1) + 1}}
    nnx.conv1d @c {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 4611686018427387904>, weight = dense<0.1> : tensor<4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{window in dim 2 spans more than 2^60 (1152921504606846976) with its padding: 2 * padding 4611686018427387904 + dilation 1 * (kernel_size 3 - 1) + 1}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 4611686018427387904, 0>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

// expected-error @+1 {{module 'c' (nnx.conv2d) takes an input of size 2305843009213693952 in dim 3, more than 2^60 (1152921504606846976)}}
nnx.model @m inputs(tensor<?x4x8x2305843009213693952xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{module defined here}}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x4x3x3xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{stride 4611686018427387905 in dim 2 is more than 2^62 (4611686018427387904)}}
    nnx.max_pool2d @p {kernel_size = array<i64: 2, 2>, stride = array<i64: 4611686018427387905, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode}
  }
}

// -----

nnx.model @m inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{window in dim 3 spans more than 2^60 (1152921504606846976) with its padding: 2 * padding 4611686018427387904 + dilation 1 * (kernel_size 2 - 1) + 1}}
    nnx.avg_pool2d @p {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 4611686018427387904>}
  }
}

// -----

// nnx.conv_nn: the params and the layers they describe.
// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{must hold exactly 'nnx.module_list @layers' then 'nnx.module_list @fcs'}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has no conv blocks (channels is empty)}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x3xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has 2 per-layer activations for 1 hidden sites}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, activations = [#nnx.activation<relu>, #nnx.activation<tanh>]} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has 2 per-layer dropout_probs for 1 hidden sites}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, dropout_probs = [0.1, 0.2]} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{dropout probability 1.5 is outside [0, 1]}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, dropout = 1.5 : f64} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has 2 kernel_sizes for 1 conv blocks}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, kernel_sizes = array<i64: 3, 3>} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has 2 pools for 1 conv blocks}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, pools = array<i64: 2, 0>} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{kernel_for(0) = 4 must be odd and positive ("same" padding)}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, kernel_size = 4} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{pool_for(0) = -1 is negative}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, pool = -1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has 2 conv blocks but channels implies 1}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
      nnx.conv2d @"1" {in_channels = 4 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x4x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{has 2 fcs but hidden_dims implies 1}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
      nnx.linear @"1" {weight = dense<0.1> : tensor<2x2xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{layers.0 must be an 'nnx.conv2d' (or the 'nnx.identity' of a dropped block), found 'nnx.relu'}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-note @+1 {{layer is here}}
      nnx.relu @"0"
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{layers.0 is an 'nnx.identity' but the params say 3->4}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-note @+1 {{layer is here}}
      nnx.identity @"0"
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{layers.0 is 3->5 channels but the params say 3->4}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-note @+1 {{layer is here}}
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 5 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<5x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{layers.0 must be a 3x3 convolution with stride 1, dilation 1, padding 1 and groups 1, as the params say}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-note @+1 {{layer is here}}
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{layers.0 must be a 5x5 convolution with stride 1, dilation 1, padding 2 and groups 1, as the params say}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2, kernel_size = 5} {
    nnx.module_list @layers {
      // expected-note @+1 {{layer is here}}
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{layers.0 must be a 3x3 convolution with stride 1, dilation 1, padding 1 and groups 1, as the params say}}
  nnx.conv_nn @net attributes {in_channels = 4, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-note @+1 {{layer is here}}
      nnx.conv2d @"0" {in_channels = 4 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight = dense<0.1> : tensor<4x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{fcs.0 is 5->2 but the params say 4->2}}
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      // expected-note @+1 {{layer is here}}
      nnx.linear @"0" {weight = dense<0.1> : tensor<2x5xf32>}
    }
  }
}


// -----

// A conv_nn's output features (output_dim) chain into the next child.
nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{child 'head' takes 5 features but 'net' produces 2}}
  nnx.sequential @s keying = named {
    // expected-note @+1 {{producer is here}}
    nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
      nnx.module_list @layers {
        nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
      }
      nnx.module_list @fcs {
        nnx.linear @"0" {weight = dense<0.1> : tensor<2x4xf32>}
      }
    }
    nnx.linear @head {weight = dense<0.1> : tensor<1x5xf32>}
  }
}

// -----

// `nnx.buffers` names only entries of the container's `state`.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.module' op at '<root>': 'nnx.buffers' names "freq", which is not an entry of its 'state'}}
  nnx.module @rotary class = "Rotary" attributes {state = {inv_freq = dense<0.5> : tensor<2xf32>}, nnx.buffers = ["freq"]} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

// ... and is a list of strings.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.buffers' must be an array of strings}}
  nnx.module @rotary class = "Rotary" attributes {state = {inv_freq = dense<0.5> : tensor<2xf32>}, nnx.buffers = [1]} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

// ... on a container.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    // expected-error @+1 {{'nnx.buffers' is only for a container's 'state'}}
    nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>, nnx.buffers = ["weight"]}
  }
}

// -----

// Channels chain through a pool (it keeps dim 1).
nnx.model @m inputs(tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{child 'bn' takes 8 channels but 'conv' produces 16}}
  nnx.sequential @net keying = named {
    // expected-note @+1 {{producer is here}}
    nnx.conv2d @conv {in_channels = 3 : i64, out_channels = 16 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<16x3x1x1xf32>}
    nnx.relu @act
    nnx.max_pool2d @pool {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<8xf32>, running_var = dense<1.0> : tensor<8xf32>}
  }
}

// -----

// A custom module's forward types state its channels exactly.
nnx.model @m inputs(tensor<?x16x4x4xf32>) {
  // expected-error @+1 {{child 'bn' takes 16 channels but 'block' produces 32}}
  nnx.sequential @net keying = named {
    // expected-note @+1 {{producer is here}}
    nnx.module @block class = "Block" {
      nnx.forward @forward(%x: tensor<?x16x4x4xf32>) -> tensor<?x32x4x4xf32> {
        %0 = tensor.concat dim(1) %x, %x : (tensor<?x16x4x4xf32>, tensor<?x16x4x4xf32>) -> tensor<?x32x4x4xf32>
        nnx.return %0 : tensor<?x32x4x4xf32>
      }
    }
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<16xf32>, running_var = dense<1.0> : tensor<16xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{has both momentum = 5.000000e-01 and 'cumulative_average' (PyTorch's momentum=None); keep one}}
  nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>, momentum = 0.5 : f64, cumulative_average}
}
