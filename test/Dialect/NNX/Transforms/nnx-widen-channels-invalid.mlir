// nnx-widen-channels refusals, before anything changes: statistics over
// the channels (a LayerNorm2d's mean), the model's output channels, a
// matrix product over the channels (a Gram matrix: no weight to divide), a
// width that does not grow.
// RUN: split-file %s %t
// RUN: nnx-opt %t/edits.mlir -split-input-file -verify-diagnostics --nnx-widen-channels="layer=conv width=3" -o /dev/null
// RUN: nnx-opt %t/width.mlir -verify-diagnostics --nnx-widen-channels="layer=conv width=2" -o /dev/null

//--- edits.mlir
nnx.model @ln inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "M" {
    // expected-error @+1 {{nnx-widen-channels: target 'conv' (nnx.conv2d) would resize a dim that 'nnx.fn.mean' reduces over: its result depends on every index of it}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.module @norm class = "LayerNorm2d" {
      nnx.forward @forward(%x: tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32> {
        %p = nnx.fn.permute %x [0, 2, 3, 1] : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
        // expected-note @+1 {{the op is here}}
        %mean = nnx.fn.mean %p {dims = array<i64: 3>, keepdim} : tensor<?x2x2x2xf32> -> tensor<?x2x2x1xf32>
        %sub = nnx.fn.sub %p, %mean : tensor<?x2x2x2xf32>, tensor<?x2x2x1xf32> -> tensor<?x2x2x2xf32>
        %back = nnx.fn.permute %sub [0, 3, 1, 2] : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
        nnx.return %back : tensor<?x2x2x2xf32>
      }
    }
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<1x2x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %norm = nnx.call @norm(%conv) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %out = nnx.call @out(%norm) : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %out : tensor<?x1x2x2xf32>
    }
  }
}

// -----

nnx.model @output inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "M" {
    // expected-error @+1 {{nnx-widen-channels: target 'conv' (nnx.conv2d) would resize a dim of the model's output #0}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}

    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      // expected-note @+1 {{the op is here}}
      nnx.return %conv : tensor<?x2x2x2xf32>
    }
  }
}

// -----

nnx.model @gram inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "M" {
    // expected-error @+1 {{nnx-widen-channels: target 'conv' (nnx.conv2d) has output channels that a matrix product contracts: copies would be summed twice, and it has no weight to divide}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}

    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x4x4xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x1x2x2xf32>
      %flat = nnx.fn.reshape %conv [%n, 2, 4] : tensor<?x2x2x2xf32> -> tensor<?x2x4xf32>
      %t = nnx.fn.permute %flat [0, 2, 1] : tensor<?x2x4xf32> -> tensor<?x4x2xf32>
      // expected-note @+1 {{the op is here}}
      %g = nnx.fn.matmul %t, %flat : tensor<?x4x2xf32>, tensor<?x2x4xf32> -> tensor<?x4x4xf32>
      nnx.return %g : tensor<?x4x4xf32>
    }
  }
}

//--- width.mlir
nnx.model @width inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "M" {
    // expected-error @+1 {{nnx-widen-channels: target 'conv' (nnx.conv2d) names a group of 2 channels; option width=2 must be larger}}
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<1x2x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %out = nnx.call @out(%conv) : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %out : tensor<?x1x2x2xf32>
    }
  }
}
