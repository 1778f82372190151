// The proofs that break in the representative torchvision models, cut
// down to a few channels (nnx-prune-channels and nnx-widen-channels refuse
// before anything changes, naming the op):
// - resnet18, mobilenet_v2, densenet121, efficientnet_b0: the classifier's
//   units are the model's output (every other group of theirs is edited in
//   python/tests/test_channel_groups_all.py);
// - convnext_tiny: a stage's stream is normalized over its channels, by
//   each block's LayerNorm after the permute (and by LayerNorm2d's means).
// RUN: split-file %s %t
// RUN: nnx-opt %t/head.mlir -verify-diagnostics --nnx-prune-channels="layer=fc keep=2" -o /dev/null
// RUN: nnx-opt %t/head.mlir -verify-diagnostics --nnx-widen-channels="layer=fc width=4" -o /dev/null
// RUN: nnx-opt %t/ln.mlir -verify-diagnostics --nnx-prune-channels="layer=conv keep=1" -o /dev/null
// RUN: nnx-opt %t/ln.mlir -verify-diagnostics --nnx-widen-channels="layer=conv width=3" -o /dev/null

//--- head.mlir
// Global pooling, a flatten and the classifier, as resnet18's head.
nnx.model @head inputs(tensor<?x2x2x2xf32>) {
  nnx.module @net class = "ResNet" {
    nnx.conv2d @conv {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<0.5> : tensor<2x2x1x1xf32>}
    nnx.adaptive_avg_pool2d @avgpool {output_size = array<i64: 1, 1>}
    // expected-error @+1 {{target 'fc' (nnx.linear) would resize a dim of the model's output #0}}
    nnx.linear @fc {weight = dense<[[1.0, 0.5], [-0.5, 0.25], [0.75, 2.0]]> : tensor<3x2xf32>, bias = dense<0.1> : tensor<3xf32>}
    nnx.forward @forward(%x: tensor<?x2x2x2xf32>) -> tensor<?x3xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %pool = nnx.call @avgpool(%conv) : (tensor<?x2x2x2xf32>) -> tensor<?x2x1x1xf32>
      %c0 = arith.constant 0 : index
      %n = tensor.dim %pool, %c0 : tensor<?x2x1x1xf32>
      %flat = nnx.fn.reshape %pool [%n, 2] : tensor<?x2x1x1xf32> -> tensor<?x2xf32>
      %fc = nnx.call @fc(%flat) : (tensor<?x2xf32>) -> tensor<?x3xf32>
      // expected-note @+1 {{the op is here}}
      nnx.return %fc : tensor<?x3xf32>
    }
  }
}

//--- ln.mlir
// A ConvNeXt block's start: the depthwise conv writes the stream, the
// permute puts the channels last and the LayerNorm normalizes over them.
nnx.model @ln inputs(tensor<?x2x2x2xf32>) {
  nnx.module @net class = "CNBlock" {
    // expected-error @+1 {{target 'conv' (nnx.conv2d) would resize a dim that 'nnx.call' reduces over: its result depends on every index of it}}
    nnx.conv2d @conv {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight = dense<[[[[0.5]]], [[[-1.5]]]]> : tensor<2x1x1x1xf32>}
    nnx.layer_norm @norm {normalized_shape = array<i64: 2>, eps = 1.0e-06 : f64, weight = dense<[1.0, 0.5]> : tensor<2xf32>, bias = dense<[0.1, 0.2]> : tensor<2xf32>}
    nnx.linear @fc {weight = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}
    nnx.forward @forward(%x: tensor<?x2x2x2xf32>) -> tensor<?x2x2x1xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %p = nnx.fn.permute %conv [0, 2, 3, 1] : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
      // expected-note @+1 {{the op is here}}
      %n = nnx.call @norm(%p) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %fc = nnx.call @fc(%n) : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x1xf32>
      nnx.return %fc : tensor<?x2x2x1xf32>
    }
  }
}
