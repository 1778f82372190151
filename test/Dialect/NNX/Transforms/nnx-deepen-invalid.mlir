// Every deepen refusal is an error on the offending op, before any change.
// RUN: split-file %s %t
// RUN: nnx-opt %t/seq.mlir -split-input-file -verify-diagnostics --nnx-deepen="after=r"
// RUN: nnx-opt %t/ff.mlir -split-input-file -verify-diagnostics --nnx-deepen="after=layers.0"
// RUN: nnx-opt %t/wide.mlir -verify-diagnostics --nnx-deepen="after=r"
// RUN: nnx-opt %t/other.mlir -split-input-file -verify-diagnostics --nnx-deepen="after=h.0"
// RUN: nnx-opt %t/dict.mlir -verify-diagnostics --nnx-deepen="after=d.act"
// RUN: nnx-opt %t/cnn-tanh.mlir -verify-diagnostics --nnx-deepen="after=layers.1"
// RUN: nnx-opt %t/cnn-out.mlir -verify-diagnostics --nnx-deepen="after=fcs.1"
// RUN: nnx-opt %t/cnn-dropped.mlir -verify-diagnostics --nnx-deepen="after=layers.0"
// RUN: nnx-opt %t/cnn-even.mlir -verify-diagnostics --nnx-deepen="after=layers.0 kernel-size=2"

//--- seq.mlir

// A non-ReLU site in a sequential is the distinct "type error" (the seed's
// TypeError); every other refusal is a value error.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-deepen: type error: site 'r' is 'nnx.tanh', not 'nnx.relu'}}
    nnx.tanh @r
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-deepen: type error: site 'r' is 'nnx.leaky_relu', not 'nnx.relu'}}
    nnx.leaky_relu @r
  }
}

// -----

// The ReLU must be fed by a Linear through elementwise or norm modules only.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-deepen: module before the site 'inner' (nnx.sequential) is neither elementwise nor a norm}}
    nnx.sequential @inner keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
    }
    // expected-note @+1 {{site is here}}
    nnx.relu @r
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-deepen: module before the site 'sm' (nnx.softmax) is neither elementwise nor a norm}}
    nnx.softmax @sm
    // expected-note @+1 {{site is here}}
    nnx.relu @r
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{container is here}}
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-deepen: site 'r' (nnx.relu) is not fed by an 'nnx.linear' or a convolution in its sequential '<root>'}}
    nnx.relu @r
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
  }
}

// -----

// A container subclass with its own forward.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.sequential) is a subclass ('GatedSeq') with its own forward}}
  nnx.sequential @net keying = named attributes {subclass = "GatedSeq"} {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @r
  }
}

// -----

// A container with parameters or buffers of its own.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.sequential) has parameters or buffers of its own ('scale'), which a rebuild as a plain container would drop}}
  nnx.sequential @net keying = named attributes {state = {scale = dense<1.0> : tensor<1xf32>}} {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @r
  }
}

// -----

// A container with hooks.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.sequential) has hooks (forward_hook)}}
  nnx.sequential @net keying = named attributes {hooks = ["forward_hook"]} {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @r
  }
}

// -----

// A hooked ReLU.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-deepen: site 'r' (nnx.relu) has hooks (capture)}}
    nnx.relu @r {hooks = ["capture"]}
  }
}

// -----

// A ReLU subclass with its own forward.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-deepen: site 'r' (nnx.relu) is a subclass ('ReLU6Like') with its own forward}}
    nnx.relu @r {subclass = "ReLU6Like"}
  }
}

// -----

// The path must name something.
// expected-error @+1 {{nnx-deepen: option after='r': no module 'r' in the root module (path 'r', segment 0)}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
  }
}

//--- ff.mlir

// feed_fwd: the effective activation at the site must be ReLU, default ...
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.feed_fwd) applies activation_for(0) = 'tanh' after 'layers.0' (the default); deepen only preserves the function after a ReLU}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2, activation = #nnx.activation<tanh>} {
    nnx.module_list @layers {
      // expected-note @+1 {{site is here}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

// ... or a per-layer override that wins over a ReLU default.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.feed_fwd) applies activation_for(0) = 'gelu' after 'layers.0' (per-layer override)}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8, 8>, output_dim = 2, activation = #nnx.activation<relu>, activations = [#nnx.activation<gelu>, #nnx.activation<relu>]} {
    nnx.module_list @layers {
      // expected-note @+1 {{site is here}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<8x8xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

// The output layer has no activation.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{feed_fwd is here}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-deepen: site 'layers.0' (nnx.linear) is the output layer of feed_fwd '<root>': no activation follows it}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x4xf32>}
    }
  }
}

// -----

// A dropped slot: the ReLU is not fed by a Linear.
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 8, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-deepen: site 'layers.0' (nnx.identity) is not an 'nnx.linear': the ReLU is not fed by a Linear}}
      nnx.identity @"0"
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.feed_fwd) is a subclass ('MyFFN') with its own forward}}
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
    // expected-error @+1 {{nnx-deepen: container 'layers' (nnx.module_list) has hooks (h)}}
    nnx.module_list @layers attributes {hooks = ["h"]} {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

//--- other.mlir

// A module_list that is not a stock feed_fwd's layers.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Stack" {
    // expected-note @+1 {{container is here}}
    nnx.module_list @h {
      // expected-error @+1 {{nnx-deepen: site 'h.0' (nnx.relu) is in an 'nnx.module_list' that is not the 'layers' of a stock 'nnx.feed_fwd'}}
      nnx.relu @"0"
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = nnx.call @h::@"0"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// -----

// Any other container: registration order is not data flow.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @s keying = named {
    // expected-note @+1 {{container is here}}
    nnx.module @h class = "Block" {
      nnx.linear @l {weight = dense<1.0> : tensor<4x4xf32>}
      // expected-error @+1 {{nnx-deepen: site 'h.0' (nnx.relu) is a child of 'nnx.module': only 'nnx.sequential' and a feed_fwd's 'layers' are rebuilt}}
      nnx.relu @"0"
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %a = nnx.call @l(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        %b = nnx.call @"0"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        nnx.return %b : tensor<?x4xf32>
      }
    }
  }
}

//--- wide.mlir

// The identity after a 1e8-wide layer cannot be held (was: built a 1e8x1e8
// identity).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<100000000x4xf32>}
    // expected-error @+1 {{nnx-deepen: site 'r' (nnx.relu) would insert an identity Linear of 100000000x100000000, which takes 80000000000000000 bytes as doubles; a surgery pass holds at most 16 GiB per tensor (kMaxExpandedTensorBytes)}}
    nnx.relu @r
  }
}

//--- dict.mlir

// A module_dict's order is not data flow: its owner calls the children.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Net" {
    // expected-note @+1 {{container is here}}
    nnx.module_dict @d {
      // expected-error @+1 {{nnx-deepen: site 'd.act' (nnx.relu) is a child of 'nnx.module_dict': only 'nnx.sequential' and a feed_fwd's 'layers' are rebuilt}}
      nnx.relu @act
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = nnx.call @d::@act(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

// conv_nn: the per-site override at the site is not a ReLU.
//--- cnn-tanh.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  // expected-error @+1 {{nnx-deepen: container '<root>' (nnx.conv_nn) applies activation_for(1) = 'tanh' after 'layers.1' (per-layer override); deepen only preserves the function after a ReLU}}
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>, #nnx.activation<relu>], output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      // expected-note @+1 {{site is here}}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}

// conv_nn: no activation follows the output fc.
//--- cnn-out.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  // expected-note @+1 {{conv_nn is here}}
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      // expected-error @+1 {{nnx-deepen: site 'fcs.1' (nnx.linear) is the output layer of conv_nn '<root>': no activation follows it}}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}

// conv_nn: a dropped block feeds no ReLU.
//--- cnn-dropped.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 2>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-deepen: site 'layers.0' (nnx.identity) is not an 'nnx.linear' or a convolution: the ReLU is not fed by one}}
      nnx.identity @"0"
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}

// conv_nn: an even identity kernel has no centre tap.
//--- cnn-even.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      // expected-error @+1 {{option kernel-size=2 must be odd and positive}}
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
