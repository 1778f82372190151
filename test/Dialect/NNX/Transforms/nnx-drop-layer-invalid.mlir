// Every drop-layer refusal is an error on the offending op, before any change.
// RUN: split-file %s %t
// RUN: nnx-opt %t/main.mlir -split-input-file -verify-diagnostics --nnx-drop-layer="layer=t"
// RUN: nnx-opt %t/ff.mlir -split-input-file -verify-diagnostics --nnx-drop-layer="layer=layers.0"
// RUN: nnx-opt %t/ancestor.mlir -verify-diagnostics --nnx-drop-layer="layer=body.0"
// RUN: nnx-opt %t/ancestor.mlir -verify-diagnostics --nnx-drop-layer="layer=again.0"
// RUN: nnx-opt %t/noopt.mlir -verify-diagnostics --nnx-drop-layer
// RUN: nnx-opt %t/list.mlir -verify-diagnostics --nnx-drop-layer="layer=layers"
// RUN: nnx-opt %t/dict.mlir -verify-diagnostics --nnx-drop-layer="layer=d"
// RUN: nnx-opt %t/conv.mlir -split-input-file -verify-diagnostics --nnx-drop-layer="layer=t"
// RUN: nnx-opt %t/cnn.mlir -verify-diagnostics --nnx-drop-layer="layer=layers.1"

//--- main.mlir

// An identity in place of a width-changing module would break the chain.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.linear) maps 4 to 8 features; an identity in its place would break the chain}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<2x8xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.embedding) takes integer ids; an identity in its place would break the chain}}
    nnx.embedding @t {weight = dense<1.0> : tensor<5x4xf32>}
    nnx.relu @r
  }
}

// -----

// A module registered under several paths: the other slot would dangle.
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.linear) is registered under more than one path (2 slots)}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x8xf32>}
    // expected-note @+1 {{also registered here as 'again'}}
    nnx.alias @again = @t
  }
}

// -----

// Another reference reaches into the dropped subtree.
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.sequential) contains 't.fc', which is referenced from outside it}}
    nnx.sequential @t keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<8x8xf32>}
    }
    // expected-note @+1 {{reference is here}}
    nnx.alias @shared = @t::@fc
  }
}

// -----

// A call of the slot whose types an identity cannot produce.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Outer" {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.module) is called with types an identity cannot produce}}
    nnx.module @t class = "Half" {
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf16> {
        %h = arith.truncf %x : tensor<?x4xf32> to tensor<?x4xf16>
        nnx.return %h : tensor<?x4xf16>
      }
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf16> {
      // expected-note @+1 {{call is here}}
      %y = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf16>
      nnx.return %y : tensor<?x4xf16>
    }
  }
}

// -----

// expected-error @+1 {{nnx-drop-layer: option layer='t': no module 't' in the root module (path 't', segment 0)}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @r
  }
}

//--- ff.mlir

// A feed_fwd slot keeps its params: they must allow an identity.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-drop-layer: layer 'layers.0' (nnx.linear) maps 4 to 8 features; an identity in its place would break the chain}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

//--- noopt.mlir

// expected-error @+1 {{nnx-drop-layer: option 'layer' is required (a dotted module path)}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.relu @r
  }
}

//--- list.mlir

// A module_list has no forward: an identity cannot stand in for it.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{owner is here}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 4>, output_dim = 4} {
    // expected-error @+1 {{nnx-drop-layer: layer 'layers' (nnx.module_list) is a module_list, which has no forward of its own}}
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<4x4xf32>}
    }
  }
}

//--- ancestor.mlir

// A module whose container is registered twice is reachable under two paths.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      // expected-error @+1 {{nnx-drop-layer: layer 'body.0' (nnx.linear) is reachable under more than one path: its container 'body' is also registered as 'again'}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<1.0> : tensor<4x4xf32>}
    }
    // expected-note @+1 {{container 'body' also registered here as 'again'}}
    nnx.alias @again = @body
  }
}

//--- dict.mlir

// A module_dict has no forward either: its owner calls its children by path.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{owner is here}}
  nnx.module @net class = "Net" {
    // expected-error @+1 {{nnx-drop-layer: layer 'd' (nnx.module_dict) is a module_dict, which has no forward of its own}}
    nnx.module_dict @d {
      nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = nnx.call @d::@fc(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %a : tensor<?x4xf32>
    }
  }
}

//--- conv.mlir

// A strided conv keeps its channels but halves the image.
nnx.model @m inputs(tensor<?x2x8x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.conv2d) changes the size of spatial dim 2 (a window that is not stride 1 with "same" padding); an identity in its place would break the chain}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<2x2x3x3xf32>}
    nnx.flatten @f
    nnx.linear @fc {weight = dense<1.0> : tensor<3x32xf32>}
  }
}

// -----

// Unpadded: 8 -> 6 in dim 3 only.
nnx.model @m inputs(tensor<?x2x8x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{changes the size of spatial dim 3}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<2x2x3x3xf32>}
  }
}

// -----

// A block (conv, bn, relu, pool) whose pool downsamples.
nnx.model @m inputs(tensor<?x2x8x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.sequential) contains 't.p' (nnx.max_pool2d), which changes the size of spatial dim 2 (a window that is not stride 1 with "same" padding); an identity in its place would break the chain}}
    nnx.sequential @t keying = named {
      nnx.conv2d @c {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<2x2x3x3xf32>}
      nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<2xf32>, running_var = dense<1.0> : tensor<2xf32>}
      nnx.relu @r
      nnx.max_pool2d @p {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    }
  }
}

// -----

// A custom module's forward states what it maps: here half the image, with
// no window the tree could show.
nnx.model @m inputs(tensor<?x2x8x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.module) has a forward from 'tensor<?x2x8x8xf32>' to 'tensor<?x2x4x4xf32>'; an identity in its place would break the chain}}
    nnx.module @t class = "Down" {
      // expected-note @+1 {{forward is here}}
      nnx.forward @forward(%x: tensor<?x2x8x8xf32>) -> tensor<?x2x4x4xf32> {
        %c0 = arith.constant 0 : index
        %n = tensor.dim %x, %c0 : tensor<?x2x8x8xf32>
        %s = tensor.extract_slice %x[0, 0, 0, 0] [%n, 2, 4, 4] [1, 1, 2, 2] : tensor<?x2x8x8xf32> to tensor<?x2x4x4xf32>
        nnx.return %s : tensor<?x2x4x4xf32>
      }
    }
  }
}

// -----

// A flatten changes the rank.
nnx.model @m inputs(tensor<?x2x8x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.flatten) flattens its input; an identity in its place would break the chain}}
    nnx.flatten @t
  }
}

// -----

// An adaptive pool fixes the output size.
nnx.model @m inputs(tensor<?x2x8x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-drop-layer: layer 't' (nnx.adaptive_avg_pool2d) pools its input to a fixed size; an identity in its place would break the chain}}
    nnx.adaptive_avg_pool2d @t {output_size = array<i64: 1, 1>}
  }
}

// conv_nn: a block that changes the channels.
//--- cnn.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      // expected-error @+1 {{nnx-drop-layer: layer 'layers.1' (nnx.conv2d) maps 2 to 3 features; an identity in its place would break the chain}}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
