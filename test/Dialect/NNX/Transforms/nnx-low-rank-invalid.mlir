// Every low-rank refusal is an error on the offending op, before any change.
// RUN: split-file %s %t
// RUN: nnx-opt %t/main.mlir -split-input-file -verify-diagnostics --nnx-low-rank="layer=t rank=2"
// RUN: nnx-opt %t/zero.mlir -verify-diagnostics --nnx-low-rank="layer=t rank=0"
// RUN: nnx-opt %t/ancestor.mlir -verify-diagnostics --nnx-low-rank="layer=body.0 rank=1"
// RUN: nnx-opt %t/ancestor.mlir -verify-diagnostics --nnx-low-rank="layer=again.0 rank=1"
// RUN: nnx-opt %t/huge.mlir -verify-diagnostics --nnx-low-rank="layer=t rank=1"
// RUN: nnx-opt %t/ff.mlir -verify-diagnostics --nnx-low-rank="layer=layers.0 rank=1"
// RUN: nnx-opt %t/conv.mlir -split-input-file -verify-diagnostics --nnx-low-rank="layer=t rank=5"
// RUN: nnx-opt %t/cnn.mlir -verify-diagnostics --nnx-low-rank="layer=layers.1 rank=2"
// RUN: nnx-opt %t/cnn-fc.mlir -verify-diagnostics --nnx-low-rank="layer=fcs.0 rank=1"

//--- main.mlir

// The rank must be at most min(out, in).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) is 1x4; option rank=2 is outside 1..1}}
    nnx.linear @t {weight = dense<1.0> : tensor<1x4xf32>}
  }
}

// -----

// Parametrizations, prune masks, subclasses, hooks: a rebuild would drop them.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) has a 'weight_norm' parametrization on 'weight'}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, parametrizations = {weight = "weight_norm"}}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) has an unbaked prune mask on 'weight, bias'}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, bias = dense<0.0> : tensor<8xf32>, pruned = ["weight", "bias"]}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) is a subclass ('FakeQuantLinear') with its own forward}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, subclass = "FakeQuantLinear"}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) has hooks (h)}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, hooks = ["h"]}
  }
}

// -----

// An aliased Linear.
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) is registered under more than one path}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x8xf32>}
    // expected-note @+1 {{also registered here as 'u'}}
    nnx.alias @u = @t
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @l {weight = dense<1.0> : tensor<8x4xf32>}
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.relu) is not an 'nnx.linear'}}
    nnx.relu @t
  }
}

//--- zero.mlir

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) is 8x4; option rank=0 is outside 1..4}}
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>}
  }
}

//--- ff.mlir

// A feed_fwd layer: the params cannot describe a factorization.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-note @+1 {{feed_fwd is here}}
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>, output_dim = 2} {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-low-rank: target 'layers.0' (nnx.linear) is a layer of feed_fwd '<root>', whose params cannot describe a factorization}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
}

//--- ancestor.mlir

// A Linear whose container is registered twice is aliased too.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      // expected-error @+1 {{nnx-low-rank: target 'body.0' (nnx.linear) is reachable under more than one path: its container 'body' is also registered as 'again'}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<1.0> : tensor<4x4xf32>}
    }
    // expected-note @+1 {{container 'body' also registered here as 'again'}}
    nnx.alias @again = @body
  }
}

//--- huge.mlir

// A splat weight too large to decompose is refused before its values are read
// (was: std::bad_alloc).
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.linear) has tensor 'weight' of 1152921504606846976x1, whose size overflows 64 bits; a surgery pass holds at most 16 GiB per tensor (kMaxExpandedTensorBytes)}}
    nnx.linear @t {weight = dense<1.0> : tensor<1152921504606846976x1xf32>}
  }
}

//--- conv.mlir

// A grouped convolution's weight is not one matrix.
nnx.model @m inputs(tensor<?x4x5x5xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.conv2d) has groups = 4: its weight is not one matrix over every input channel; only a convolution with groups = 1 factorizes}}
    nnx.conv2d @t {in_channels = 4 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64, weight = dense<1.0> : tensor<4x1x3x3xf32>}
  }
}

// -----

// The rank is bounded by the weight as a C_out x (C_in * taps) matrix.
nnx.model @m inputs(tensor<?x3x5x5xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-low-rank: target 't' (nnx.conv2d) is 4x3x3x3 (a 4x27 matrix); option rank=5 is outside 1..4}}
    nnx.conv2d @t {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x3x3x3xf32>}
  }
}

// conv_nn: its params describe each block as one convolution and each fc
// as one Linear.
//--- cnn.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  // expected-note @+1 {{conv_nn is here}}
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      // expected-error @+1 {{nnx-low-rank: target 'layers.1' (nnx.conv2d) is a layer of conv_nn '<root>', whose params cannot describe a factorization (record it as a low_rank recipe instead)}}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}

//--- cnn-fc.mlir
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  // expected-note @+1 {{conv_nn is here}}
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      // expected-error @+1 {{nnx-low-rank: target 'fcs.0' (nnx.linear) is a layer of conv_nn '<root>', whose params cannot describe a factorization}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
