// Every widen refusal is an error on the offending op, before any change.
// RUN: split-file %s %t
// RUN: nnx-opt %t/seq.mlir -split-input-file -verify-diagnostics --nnx-widen="layer=t width=16"
// RUN: nnx-opt %t/ff.mlir -split-input-file -verify-diagnostics --nnx-widen="layer=layers.0 width=16"
// RUN: nnx-opt %t/list.mlir -split-input-file -verify-diagnostics --nnx-widen="layer=h.0 width=16"
// RUN: nnx-opt %t/ancestor.mlir -verify-diagnostics --nnx-widen="layer=body.0 width=8"
// RUN: nnx-opt %t/ancestor.mlir -verify-diagnostics --nnx-widen="layer=again.0 width=8"
// RUN: nnx-opt %t/huge.mlir -verify-diagnostics --nnx-widen="layer=t width=4611686018427387904"
// RUN: nnx-opt %t/call.mlir -split-input-file -verify-diagnostics --nnx-widen="layer=s.0 width=16"
// RUN: nnx-opt %t/dict.mlir -verify-diagnostics --nnx-widen="layer=d.fc width=16"
// RUN: nnx-opt %t/cnn-out.mlir -verify-diagnostics --nnx-widen="layer=fcs.1 width=4"
// RUN: nnx-opt %t/cnn-dropped.mlir -verify-diagnostics --nnx-widen="layer=layers.0 width=4"
// RUN: nnx-opt %t/cnn-softmax.mlir -verify-diagnostics --nnx-widen="layer=fcs.0 width=4"

//--- seq.mlir

// Width-dependent ops on the path: softmax, layer_norm, batch_norm.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @r
    // expected-error @+1 {{nnx-widen: module on the path 'sm' (nnx.softmax) is width-dependent: duplicating units through it changes the output}}
    nnx.softmax @sm
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'ln' (nnx.layer_norm) is width-dependent}}
    nnx.layer_norm @ln {normalized_shape = array<i64: 8>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'bn' (nnx.batch_norm) is width-dependent}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<8xf32>, running_var = dense<1.0> : tensor<8xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// Any other non-elementwise module on the path (here a nested container).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'inner' (nnx.sequential) is not elementwise: the consumer of 't' cannot be proven through it}}
    nnx.sequential @inner keying = positional {
      nnx.relu @"0"
    }
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// A convolution in a custom module: only a Linear's units are proven on a
// forward (nnx-widen-forward-invalid.mlir has the Linear refusals).
nnx.model @m inputs(tensor<?x1x8xf32>) {
  // expected-note @+1 {{container is here}}
  nnx.module @net class = "Block" {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.conv1d) is a child of 'nnx.module', whose registration order is not data flow; only 'nnx.sequential', the stock nets and, for a Linear, a custom module's forward prove the consumer (nnx-widen-channels and nnx-prune-channels edit a convolution's whole channel group, proven from the forward)}}
    nnx.conv1d @t {in_channels = 1 : i64, out_channels = 1 : i64, kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<1.0> : tensor<1x1x3xf32>}
    nnx.conv1d @c {in_channels = 1 : i64, out_channels = 1 : i64, kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<1.0> : tensor<1x1x3xf32>}
    nnx.forward @forward(%x: tensor<?x1x8xf32>) -> tensor<?x1x8xf32> {
      %h = nnx.call @t(%x) : (tensor<?x1x8xf32>) -> tensor<?x1x8xf32>
      %y = nnx.call @c(%h) : (tensor<?x1x8xf32>) -> tensor<?x1x8xf32>
      nnx.return %y : tensor<?x1x8xf32>
    }
  }
}

// -----

// A container subclass with its own forward.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-widen: container '<root>' (nnx.sequential) is a subclass ('GatedSeq') with its own forward}}
  nnx.sequential @net keying = named attributes {subclass = "GatedSeq"} {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// Hooks on the container.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-widen: container '<root>' (nnx.sequential) has hooks (forward_hook)}}
  nnx.sequential @net keying = named attributes {hooks = ["forward_hook"]} {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// Hooks on the path to the consumer.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.dropout @d {p = 0.1 : f64}
    // expected-error @+1 {{nnx-widen: module on the path 'r' (nnx.relu) has hooks (record)}}
    nnx.relu @r {hooks = ["record"]}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// Hooks on the target itself.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) has hooks (forward_pre_hook)}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, hooks = ["forward_pre_hook"]}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// Hooks on the consumer.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: consumer 'c' (nnx.linear) has hooks (h)}}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>, hooks = ["h"]}
  }
}

// -----

// No consumer.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{container is here}}
  nnx.sequential @net keying = named {
    nnx.linear @a {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @r
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) has no consumer: no 'nnx.linear' follows it in its sequential '<root>'}}
    nnx.linear @t {weight = dense<1.0> : tensor<2x8xf32>}
    nnx.tanh @out
  }
}

// -----

// An aliased target.
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) is registered under more than one path (2 slots)}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.relu @r
    nnx.linear @c {weight = dense<1.0> : tensor<8x8xf32>}
    // expected-note @+1 {{also registered here as 'again'}}
    nnx.alias @again = @t
  }
}

// -----

// An aliased module on the path.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'r' (nnx.relu) is registered under more than one path}}
    nnx.relu @r
    // expected-note @+1 {{also registered here as 'r2'}}
    nnx.alias @r2 = @r
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// An alias slot on the path (its module lives elsewhere).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @pre keying = named {
      // expected-note @+1 {{the module is registered here}}
      nnx.gelu @act
    }
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'a' (nnx.alias) registers module @pre::@act under a second path}}
    nnx.alias @a = @pre::@act
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// An aliased consumer.
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x8xf32>}
    // expected-error @+1 {{nnx-widen: consumer 'c' (nnx.linear) is registered under more than one path}}
    nnx.linear @c {weight = dense<1.0> : tensor<8x8xf32>}
    // expected-note @+1 {{also registered here as 'c2'}}
    nnx.alias @c2 = @c
  }
}

// -----

// A Linear with no output unit has nothing to replicate (was: SIGFPE).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) has out_features = 0: there is no unit to edit}}
    nnx.linear @t {weight = dense<1.0> : tensor<0x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x0xf32>}
  }
}

// -----

// The new width is not larger than the old.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) has out_features = 16; option width=16 must be larger}}
    nnx.linear @t {weight = dense<1.0> : tensor<16x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x16xf32>}
  }
}

// -----

// Parametrizations, prune masks, subclasses: target, consumer, path.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) has a 'weight_norm' parametrization on 'weight', which a rebuilt plain module would drop}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, parametrizations = {weight = "weight_norm"}}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) has an unbaked prune mask on 'weight'}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, pruned = ["weight"]}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) is a subclass ('QATLinear') with its own forward}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, subclass = "QATLinear"}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: consumer 'c' (nnx.linear) has a 'spectral_norm' parametrization on 'weight'}}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>, parametrizations = {weight = "spectral_norm"}}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: consumer 'c' (nnx.linear) has an unbaked prune mask on 'weight'}}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>, pruned = ["weight"]}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: consumer 'c' (nnx.linear) is a subclass ('QATLinear') with its own forward}}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>, subclass = "QATLinear"}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'r' (nnx.relu) is a subclass ('ClampedReLU') with its own forward}}
    nnx.relu @r {subclass = "ClampedReLU"}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

// The path must name a Linear.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @a {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-widen: target 't' (nnx.relu) is not an 'nnx.linear'}}
    nnx.relu @t
  }
}

// -----

// The path must name something.
// expected-error @+1 {{nnx-widen: option layer='t': no module 't' in the root module (path 't', segment 0)}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @a {weight = dense<1.0> : tensor<8x4xf32>}
  }
}

//--- ff.mlir

// The effective activation_for(0) is a per-layer softmax override.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-widen: container '<root>' (nnx.feed_fwd) applies activation_for(0) = 'softmax' after 'layers.0', which is width-dependent}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8, 8>, output_dim = 2, activation = #nnx.activation<relu>, activations = [#nnx.activation<softmax>, #nnx.activation<relu>]} {
    nnx.module_list @layers {
      // expected-note @+1 {{target is here}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<8x8xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-widen: container '<root>' (nnx.feed_fwd) has hooks (h)}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, hooks = ["h"]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-widen: container '<root>' (nnx.feed_fwd) is a subclass ('MyFFN') with its own forward}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, subclass = "MyFFN"} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    // expected-error @+1 {{nnx-widen: container 'layers' (nnx.module_list) has hooks (h)}}
    nnx.module_list @layers attributes {hooks = ["h"]} {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

// The output layer has no consumer.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{container is here}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-widen: target 'layers.0' (nnx.linear) has no consumer: it is the output layer of feed_fwd '<root>'}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x4xf32>}
    }
  }
}

// -----

// A dropped (identity) slot is no consumer.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8, 8>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-widen: target 'layers.0' (nnx.linear) has no consumer: 'layers.1' is not an 'nnx.linear'}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      // expected-note @+1 {{'layers.1' is here}}
      nnx.identity @"1"
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      // expected-error @+1 {{nnx-widen: consumer 'layers.1' (nnx.linear) has an unbaked prune mask on 'weight'}}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>, pruned = ["weight"]}
    }
  }
}

//--- list.mlir

// A module_list that is not a stock feed_fwd's layers.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Stack" {
    // expected-note @+1 {{container is here}}
    nnx.module_list @h {
      // expected-error @+1 {{nnx-widen: target 'h.0' (nnx.linear) is in an 'nnx.module_list' that is not the 'layers' of a stock 'nnx.feed_fwd'}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<4x4xf32>}
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = nnx.call @h::@"0"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %b = nnx.call @h::@"1"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %b : tensor<?x4xf32>
    }
  }
}

//--- call.mlir

// The consumer is also run by a call outside the sequential's order.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @blk class = "Block" {
    nnx.sequential @s keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
      nnx.relu @"1"
      // expected-error @+1 {{nnx-widen: consumer 's.2' (nnx.linear) is also run by an 'nnx.call' outside its container's order}}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x2xf32>}
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %a = nnx.call @s(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      // expected-note @+1 {{call is here}}
      %b = nnx.call @s::@"2"(%a) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %b : tensor<?x2xf32>
    }
  }
}

// -----

// So is the target.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @blk class = "Block" {
    nnx.sequential @s keying = positional {
      // expected-error @+1 {{nnx-widen: target 's.0' (nnx.linear) is also run by an 'nnx.call' outside its container's order}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x2xf32>}
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      // expected-note @+1 {{call is here}}
      %a = nnx.call @s::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %b = nnx.call @s(%a) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %b : tensor<?x2xf32>
    }
  }
}

//--- ancestor.mlir

// A target whose container is registered twice is reachable under two paths.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      // expected-error @+1 {{nnx-widen: target 'body.0' (nnx.linear) is reachable under more than one path: its container 'body' is also registered as 'again'}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<1.0> : tensor<4x4xf32>}
    }
    // expected-note @+1 {{container 'body' also registered here as 'again'}}
    nnx.alias @again = @body
  }
}

//--- huge.mlir

// A width whose weight cannot be held is refused before allocating.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.linear) option width=4611686018427387904 would grow its weight to 4611686018427387904x4, whose size overflows 64 bits}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

//--- dict.mlir

// A module_dict's order is not data flow: no consumer is proven.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Net" {
    // expected-note @+1 {{container is here}}
    nnx.module_dict @d {
      // expected-error @+1 {{nnx-widen: target 'd.fc' (nnx.linear) is a child of 'nnx.module_dict', whose registration order is not data flow}}
      nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.linear @out {weight = dense<1.0> : tensor<4x4xf32>}
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = nnx.call @d::@fc(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %b = nnx.call @d::@out(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %b : tensor<?x4xf32>
    }
  }
}

// conv_nn: the output fc has no consumer.
//--- cnn-out.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  // expected-note @+1 {{container is here}}
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      // expected-error @+1 {{nnx-widen: target 'fcs.1' (nnx.linear) has no consumer: it is the output layer of conv_nn '<root>'}}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}

// conv_nn: a dropped block (an identity) is no consumer.
//--- cnn-dropped.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 2>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-widen: target 'layers.0' (nnx.conv2d) has no consumer: 'layers.1' is not an 'nnx.linear' or a convolution}}
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      // expected-note @+1 {{'layers.1' is here}}
      nnx.identity @"1"
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}

// conv_nn: a softmax after a hidden fc mixes its units.
//--- cnn-softmax.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  // expected-error @+1 {{nnx-widen: container '<root>' (nnx.conv_nn) applies activation_for(2) = 'softmax' after 'fcs.0', which is width-dependent}}
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, activations = [#nnx.activation<relu>, #nnx.activation<relu>, #nnx.activation<softmax>], output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      // expected-note @+1 {{target is here}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
