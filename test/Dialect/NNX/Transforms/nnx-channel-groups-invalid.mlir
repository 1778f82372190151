// nnx-channel-groups refusals: where the data flow does not prove the
// group, the error names the target and a note points at the op.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-channel-groups=layer=conv -o /dev/null

// A reshape that mixes the channels with space: (4, 2, 2) -> (2, 8) splits
// the 4 channels into 2 x 2 that no grouped conv or per-group norm defines.
nnx.model @mix inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Mix" {
    // expected-error @+1 {{nnx-channel-groups: target 'conv' (nnx.conv2d) has output channels that 'nnx.fn.reshape' splits into 2 factors that no grouped convolution or per-group norm defines (it mixes them with another dim; attention heads have their own passes): the channels are no one axis}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<4x1x1x1xf32>}
    nnx.linear @fc {weight = dense<0.5> : tensor<1x8xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x2x1xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x4x2x2xf32>
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x1x2x2xf32>
      // expected-note @+1 {{the op is here}}
      %r = nnx.fn.reshape %conv [%n, 2, 8] : tensor<?x4x2x2xf32> -> tensor<?x2x8xf32>
      %fc = nnx.call @fc(%r) : (tensor<?x2x8xf32>) -> tensor<?x2x1xf32>
      nnx.return %fc : tensor<?x2x1xf32>
    }
  }
}

// -----

// The same reshape, and a mean over both dims reduces over both
// factors: no factor can be edited the same way in every part.
nnx.model @mix inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Mix" {
    // expected-error @+1 {{nnx-channel-groups: target 'conv' (nnx.conv2d) has output channels that 'nnx.fn.reshape' splits into 2 factors, each pinned or reduced over: no factor can be edited the same way in every part}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<4x1x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x1xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x4x2x2xf32>
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x1x2x2xf32>
      // expected-note @+1 {{the op is here}}
      %r = nnx.fn.reshape %conv [%n, 2, 8] : tensor<?x4x2x2xf32> -> tensor<?x2x8xf32>
      %m = nnx.fn.mean %r {dims = array<i64: 1, 2>, keepdim} : tensor<?x2x8xf32> -> tensor<?x1x1xf32>
      nnx.return %m : tensor<?x1x1xf32>
    }
  }
}

// -----

// A layer the analysis does not follow: a softmax over the channels mixes
// them.
nnx.model @softmax inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Softmax" {
    // expected-error @+1 {{nnx-channel-groups: target 'conv' (nnx.conv2d) has output channels that 'nnx.call' uses in a way the analysis does not follow: the channel group cannot be proven}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.softmax @sm {dim = 1 : i64}
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<1x2x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      // expected-note @+1 {{the op is here}}
      %sm = nnx.call @sm(%conv) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %out = nnx.call @out(%sm) : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %out : tensor<?x1x2x2xf32>
    }
  }
}

// -----

// Inside a sequential, the child the analysis does not follow is named.
nnx.model @seq inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Seq" {
    // expected-error @+1 {{nnx-channel-groups: target 'conv' (nnx.conv2d) has output channels that 'nnx.softmax' uses in a way the analysis does not follow: the channel group cannot be proven}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.sequential @body keying = positional {
      nnx.relu @"0"
      // expected-note @+1 {{the op is here}}
      nnx.softmax @"1" {dim = 1 : i64}
    }
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %body = nnx.call @body(%conv) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      nnx.return %body : tensor<?x2x2x2xf32>
    }
  }
}

// -----

// The target must write channels: a Linear or a convolution.
nnx.model @relu inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Relu" {
    // expected-error @+1 {{nnx-channel-groups: target 'conv' (nnx.relu) is not a Linear or a convolution: a channel group is named by the layer that writes it}}
    nnx.relu @conv
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %r = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %r : tensor<?x1x2x2xf32>
    }
  }
}

// -----

// A convolution the forward never runs has no data flow.
nnx.model @unused inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Unused" {
    // expected-error @+1 {{nnx-channel-groups: target 'conv' (nnx.conv2d) is never run by the model's forward: there is no data flow to prove}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      nnx.return %x : tensor<?x1x2x2xf32>
    }
  }
}

// -----

// The model's top module must be a module with a forward.
// expected-error @+1 {{nnx-channel-groups: model '@top' is not one custom module with a forward (an exported model): its channels are traced through its forward}}
nnx.model @top inputs(tensor<?x1x2x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
  }
}
