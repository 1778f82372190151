// Every refusal of nnx-deepen that is about convolutions.
// RUN: split-file %s %t
// RUN: nnx-opt %t/even.mlir -verify-diagnostics --nnx-deepen="after=r kernel-size=2"
// RUN: nnx-opt %t/linear.mlir -verify-diagnostics --nnx-deepen="after=r kernel-size=3"
// RUN: nnx-opt %t/pool.mlir -verify-diagnostics --nnx-deepen="after=r"

//--- even.mlir
// An even window has no centre tap.
nnx.model @m inputs(tensor<?x1x4x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.conv2d @c {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<2x1x1x1xf32>}
    // expected-error @+1 {{nnx-deepen: site 'r' (nnx.relu) needs an identity convolution with a centre tap; option kernel-size=2 must be odd and positive}}
    nnx.relu @r
  }
}

//--- linear.mlir
// kernel-size is for a site a convolution feeds.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{nnx-deepen: site 'r' (nnx.relu) is fed by an 'nnx.linear'; option kernel-size=3 applies to a site a convolution feeds}}
    nnx.relu @r
  }
}

//--- pool.mlir
// Pooling passes a convolution's channels, not a Linear's features.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{nnx-deepen: module before the site 'p' (nnx.max_pool2d) pools channels, but the ReLU is not fed by a convolution}}
    nnx.max_pool2d @p {kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    // expected-note @+1 {{site is here}}
    nnx.relu @r
  }
}
