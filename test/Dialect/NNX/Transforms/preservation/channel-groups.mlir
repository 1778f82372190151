// nnx-widen-channels preserves the function, measured by execution
// (atol = rtol = 1e-5, eval mode) on small models exported from PyTorch:
// a residual block with a downsample branch (the stream, an inner conv, the
// add of conv3 and the downsample into a flatten and a Linear), a depthwise
// block, a concatenation, torchvision's SqueezeExcitation and a flatten into
// a Linear. Copies are exact; each replicated channel's input columns are
// divided by its count.
// RUN: split-file %s %t
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/res.mlir --edit "nnx-widen-channels{layer=stem width=5 seed=1}" --batch 3
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/res.mlir --edit "nnx-widen-channels{layer=conv1 width=4 seed=2}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/res.mlir --edit "nnx-widen-channels{layer=down.0 width=6 seed=3}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/dw.mlir --edit "nnx-widen-channels{layer=dw width=5 seed=4}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/cat.mlir --edit "nnx-widen-channels{layer=a width=3 seed=5}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/cat.mlir --edit "nnx-widen-channels{layer=b width=5 seed=6}" --edit "nnx-widen-channels{layer=a width=4 seed=7}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/se.mlir --edit "nnx-widen-channels{layer=conv width=4 seed=6}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/flat.mlir --edit "nnx-widen-channels{layer=conv width=3 seed=7}"
// Edits in sequence: the stream, then the inner conv, then the stream again.
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/res.mlir --edit "nnx-widen-channels{layer=stem width=3 seed=8}" --edit "nnx-widen-channels{layer=conv1 width=5 seed=9}" --edit "nnx-widen-channels{layer=conv2 width=4 seed=10}"

//--- res.mlir
nnx.model @res inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Res" {
    nnx.conv2d @stem {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]]], [[[0.54]]]]> : tensor<2x1x1x1xf32>}
    nnx.batch_norm @bn0 {running_mean = dense<[0.05, 0.22]> : tensor<2xf32>, running_var = dense<[1.4, 1.32]> : tensor<2xf32>, weight = dense<[0.92, 1.15]> : tensor<2xf32>, bias = dense<[-0.06, 0.39]> : tensor<2xf32>}
    nnx.conv2d @conv1 {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.58]], [[-0.52]]], [[[-0.27]], [[0.19]]]]> : tensor<2x2x1x1xf32>}
    nnx.batch_norm @bn1 {running_mean = dense<[0.46, -0.12]> : tensor<2xf32>, running_var = dense<[1.69, 1.29]> : tensor<2xf32>, weight = dense<[1.07, 1.43]> : tensor<2xf32>, bias = dense<[-0.43, -0.41]> : tensor<2xf32>}
    nnx.conv2d @conv2 {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]], [[0.56]]], [[[-0.06]], [[0.19]]]]> : tensor<2x2x1x1xf32>}
    nnx.batch_norm @bn2 {running_mean = dense<[-0.48, 0.33]> : tensor<2xf32>, running_var = dense<[1.67, 1.81]> : tensor<2xf32>, weight = dense<[1.48, 1.3]> : tensor<2xf32>, bias = dense<[-0.04, 0.28]> : tensor<2xf32>}
    nnx.sequential @down keying = positional {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.21]], [[-0.14]]], [[[-0.68]], [[-0.47]]], [[[-0.29]], [[0.03]]]]> : tensor<3x2x1x1xf32>}
      nnx.batch_norm @"1" {running_mean = dense<[-0.38, 0.14, -0.36]> : tensor<3xf32>, running_var = dense<[1.92, 1.28, 1.12]> : tensor<3xf32>, weight = dense<[0.76, 1.27, 0.96]> : tensor<3xf32>, bias = dense<[0.07, -0.48, 0.12]> : tensor<3xf32>}
    }
    nnx.conv2d @conv3 {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[0.28]], [[0.42]]], [[[-0.48]], [[-0.31]]], [[[0.26]], [[0.59]]]]> : tensor<3x2x1x1xf32>}
    nnx.linear @fc {weight = dense<[[-0.12, 0.43, -0.09]]> : tensor<1x3xf32>, bias = dense<[0.06]> : tensor<1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1xf32> {
      %stem = nnx.call @stem(%x) {nnx.source = "self_stem_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %bn0 = nnx.call @bn0(%stem) {nnx.source = "self_bn0_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %relu = nnx.fn.relu %bn0 {nnx.source = "relu_0"} : tensor<?x2x2x2xf32>
      %conv1 = nnx.call @conv1(%relu) {nnx.source = "self_conv1_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %bn1 = nnx.call @bn1(%conv1) {nnx.source = "self_bn1_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %relu_1 = nnx.fn.relu %bn1 {nnx.source = "relu_1"} : tensor<?x2x2x2xf32>
      %conv2 = nnx.call @conv2(%relu_1) {nnx.source = "self_conv2_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %bn2 = nnx.call @bn2(%conv2) {nnx.source = "self_bn2_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %add = nnx.fn.add %bn2, %relu {nnx.source = "add_0"} : tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
      %relu_2 = nnx.fn.relu %add {nnx.source = "relu_2"} : tensor<?x2x2x2xf32>
      %conv3 = nnx.call @conv3(%relu_2) {nnx.source = "self_conv3_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x3x2x2xf32>
      %down = nnx.call @down(%relu_2) {nnx.source = "self_down_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x3x2x2xf32>
      %add_1 = nnx.fn.add %conv3, %down {nnx.source = "add_1"} : tensor<?x3x2x2xf32>, tensor<?x3x2x2xf32> -> tensor<?x3x2x2xf32>
      %adaptive_avg_pool2d = nnx.fn.adaptive_avg_pool2d %add_1 {nnx.source = "adaptive_avg_pool2d_0", output_size = array<i64: 1, 1>} : tensor<?x3x2x2xf32> -> tensor<?x3x1x1xf32>
      %c0 = arith.constant 0 : index
      %adaptive_avg_pool2d_d0 = tensor.dim %adaptive_avg_pool2d, %c0 : tensor<?x3x1x1xf32>
      %flatten = nnx.fn.reshape %adaptive_avg_pool2d [%adaptive_avg_pool2d_d0, 3] {nnx.source = "flatten_0"} : tensor<?x3x1x1xf32> -> tensor<?x3xf32>
      %fc = nnx.call @fc(%flatten) {nnx.source = "self_fc_0"} : (tensor<?x3xf32>) -> tensor<?x1xf32>
      nnx.return %fc : tensor<?x1xf32>
    }
  }
}

//--- dw.mlir
nnx.model @dw inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "DW" {
    nnx.conv2d @expand {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]]], [[[0.54]]]]> : tensor<2x1x1x1xf32>, bias = dense<[-0.82, -0.74]> : tensor<2xf32>}
    nnx.conv2d @dw {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight = dense<[[[[-0.13, 0.09, -0.01], [0.26, -0.03, 0.09], [-0.1, -0.07, -0.32]]], [[[-0.22, -0.14, 0.01], [0.13, 0.2, -0.23], [-0.15, 0.12, 0.28]]]]> : tensor<2x1x3x3xf32>, bias = dense<[-0.07, 0.25]> : tensor<2xf32>}
    nnx.conv2d @project {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.11]], [[0.07]]]]> : tensor<1x2x1x1xf32>, bias = dense<[0.64]> : tensor<1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %expand = nnx.call @expand(%x) {nnx.source = "self_expand_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %relu = nnx.fn.relu %expand {nnx.source = "relu_0"} : tensor<?x2x2x2xf32>
      %dw = nnx.call @dw(%relu) {nnx.source = "self_dw_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %relu_1 = nnx.fn.relu %dw {nnx.source = "relu_1"} : tensor<?x2x2x2xf32>
      %project = nnx.call @project(%relu_1) {nnx.source = "self_project_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %project : tensor<?x1x2x2xf32>
    }
  }
}

//--- cat.mlir
nnx.model @cat inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Cat" {
    nnx.conv2d @a {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]]], [[[0.54]]]]> : tensor<2x1x1x1xf32>, bias = dense<[-0.82, -0.74]> : tensor<2xf32>}
    nnx.conv2d @b {in_channels = 1 : i64, out_channels = 3 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.39]]], [[[0.27]]], [[[-0.02]]]]> : tensor<3x1x1x1xf32>, bias = dense<[0.79, -0.09, 0.26]> : tensor<3xf32>}
    nnx.conv2d @c {in_channels = 5 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.14]], [[-0.09]], [[-0.43]], [[-0.3]], [[-0.18]]]]> : tensor<1x5x1x1xf32>, bias = dense<[0.02]> : tensor<1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %a = nnx.call @a(%x) {nnx.source = "self_a_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %b = nnx.call @b(%x) {nnx.source = "self_b_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x3x2x2xf32>
      %cat = tensor.concat dim(1) %a, %b {nnx.source = "cat_0"} : (tensor<?x2x2x2xf32>, tensor<?x3x2x2xf32>) -> tensor<?x5x2x2xf32>
      %c = nnx.call @c(%cat) {nnx.source = "self_c_0"} : (tensor<?x5x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %c : tensor<?x1x2x2xf32>
    }
  }
}

//--- se.mlir
nnx.model @se inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "SE" {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]]], [[[0.54]]]]> : tensor<2x1x1x1xf32>, bias = dense<[-0.82, -0.74]> : tensor<2xf32>}
    nnx.module @se class = "SqueezeExcitation" {
      nnx.adaptive_avg_pool2d @avgpool {output_size = array<i64: 1, 1>}
      nnx.conv2d @fc1 {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.27]], [[0.19]]]]> : tensor<1x2x1x1xf32>, bias = dense<[-0.01]> : tensor<1xf32>}
      nnx.conv2d @fc2 {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[0.79]]], [[[-0.09]]]]> : tensor<2x1x1x1xf32>, bias = dense<[0.26, -0.3]> : tensor<2xf32>}
      nnx.relu @activation
      nnx.sigmoid @scale_activation
      nnx.forward @forward(%input: tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32> {
        %avgpool = nnx.call @avgpool(%input) {nnx.source = "self_avgpool_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x1x1xf32>
        %fc1 = nnx.call @fc1(%avgpool) {nnx.source = "self_fc1_0"} : (tensor<?x2x1x1xf32>) -> tensor<?x1x1x1xf32>
        %activation = nnx.call @activation(%fc1) {nnx.source = "self_activation_0"} : (tensor<?x1x1x1xf32>) -> tensor<?x1x1x1xf32>
        %fc2 = nnx.call @fc2(%activation) {nnx.source = "self_fc2_0"} : (tensor<?x1x1x1xf32>) -> tensor<?x2x1x1xf32>
        %scale_activation = nnx.call @scale_activation(%fc2) {nnx.source = "self_scale_activation_0"} : (tensor<?x2x1x1xf32>) -> tensor<?x2x1x1xf32>
        %mul = nnx.fn.mul %scale_activation, %input {nnx.source = "mul_0"} : tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
        nnx.return %mul : tensor<?x2x2x2xf32>
      }
    }
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.14]], [[-0.68]]]]> : tensor<1x2x1x1xf32>, bias = dense<[-0.47]> : tensor<1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %conv = nnx.call @conv(%x) {nnx.source = "self_conv_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %se = nnx.call @se(%conv) {nnx.source = "self_se_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %out = nnx.call @out(%se) {nnx.source = "self_out_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %out : tensor<?x1x2x2xf32>
    }
  }
}

//--- flat.mlir
nnx.model @flat inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Flat" {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]]], [[[0.54]]]]> : tensor<2x1x1x1xf32>, bias = dense<[-0.82, -0.74]> : tensor<2xf32>}
    nnx.linear @fc {weight = dense<[[-0.14, 0.09, -0.01, 0.28, -0.03, 0.09, -0.11, -0.07]]> : tensor<1x8xf32>, bias = dense<[-0.34]> : tensor<1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1xf32> {
      %conv = nnx.call @conv(%x) {nnx.source = "self_conv_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %relu = nnx.fn.relu %conv {nnx.source = "relu_0"} : tensor<?x2x2x2xf32>
      %c0 = arith.constant 0 : index
      %relu_d0 = tensor.dim %relu, %c0 : tensor<?x2x2x2xf32>
      %flatten = nnx.fn.reshape %relu [%relu_d0, 8] {nnx.source = "flatten_0"} : tensor<?x2x2x2xf32> -> tensor<?x8xf32>
      %fc = nnx.call @fc(%flatten) {nnx.source = "self_fc_0"} : (tensor<?x8xf32>) -> tensor<?x1xf32>
      nnx.return %fc : tensor<?x1xf32>
    }
  }
}
