// Every refusal of nnx-widen on a convolution, before any change.
// RUN: split-file %s %t
// RUN: nnx-opt %t/main.mlir -split-input-file -verify-diagnostics --nnx-widen="layer=t width=8"
// RUN: nnx-opt %t/bn.mlir -split-input-file -verify-diagnostics --nnx-widen="layer=t width=8 through-batchnorm=true"

//--- main.mlir

// Only a groups-1 convolution widens.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.conv2d) has groups = 2: changing its output channels would change its grouping; only a convolution with groups = 1 is widened or pruned}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight = dense<1.0> : tensor<4x1x1x1xf32>}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<1x4x1x1xf32>}
  }
}
// -----

// A batch norm stays a boundary without the option.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'bn' (nnx.batch_norm) is width-dependent: duplicating units through it changes the output (option through-batchnorm=true copies the statistics of each replicated channel, in eval mode)}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<1x4x1x1xf32>}
  }
}
// -----

// A Linear right after a conv reads the last dim (W), not the channels.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    nnx.relu @r
    // expected-error @+1 {{nnx-widen: consumer 'fc' (nnx.linear) reads the last dim of the output of 't', not its channels (dim 1); an 'nnx.flatten' of dims 1 to -1 between them makes the channels its input features}}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}
// -----

// A depthwise consumer groups its input channels.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    // expected-error @+1 {{nnx-widen: consumer 'dw' (nnx.conv2d) has groups = 4: each filter reads one group of the input channels, so replicated channels cannot be rescaled within it}}
    nnx.conv2d @dw {in_channels = 4 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64, weight = dense<1.0> : tensor<4x1x3x3xf32>}
  }
}
// -----

// A flatten that keeps the channels apart from the positions.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'f' (nnx.flatten) flattens dims 2 to -1 of a rank-4 input; only dims 1 to -1 keep each channel of 't' one block of features}}
    nnx.flatten @f {start_dim = 2 : i64}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x16xf32>}
  }
}
// -----

// Softmax over the channels mixes them.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'sm' (nnx.softmax) is width-dependent}}
    nnx.softmax @sm {dim = 1 : i64}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<1x4x1x1xf32>}
  }
}
// -----

// No consumer after the last conv.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  // expected-note @+1 {{container is here}}
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-widen: target 't' (nnx.conv2d) has no consumer: no 'nnx.linear' or convolution follows it in its sequential '<root>'}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    nnx.relu @r
  }
}
// -----

// A Linear's units do not pass pooling (it pools the last two dims).
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'p' (nnx.max_pool2d) is not elementwise: the consumer of 't' cannot be proven through it}}
    nnx.max_pool2d @p {kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

//--- bn.mlir

// A train-mode batch norm normalizes by the batch's statistics.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.conv2d @t {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<4x2x1x1xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'bn' (nnx.batch_norm) is in train mode: it normalizes by the batch's statistics, which replicated units change; option through-batchnorm=true needs eval mode}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>, train}
    nnx.conv2d @c {in_channels = 4 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<1x4x1x1xf32>}
  }
}
// -----

// The option is for a convolution's channels: after a Linear a batch norm stays a boundary.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-note @+1 {{target is here}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{nnx-widen: module on the path 'bn' (nnx.batch_norm) is width-dependent: duplicating units through it changes the output}}
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}
