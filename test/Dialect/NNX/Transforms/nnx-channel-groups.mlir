// nnx-channel-groups: the channel group of a convolution's output
// channels, proven by the data flow of the exported forward (small models
// exported from PyTorch by nnx.torch_export: a residual block with a
// downsample branch, a depthwise block, a concatenation, torchvision's
// SqueezeExcitation and LayerNorm2d, a flatten into a Linear).
// RUN: split-file %s %t
// RUN: nnx-opt %t/res.mlir --nnx-channel-groups=layer=stem -o /dev/null | FileCheck %t/res.mlir --check-prefix=STEM
// RUN: nnx-opt %t/res.mlir --nnx-channel-groups=layer=conv1 -o /dev/null | FileCheck %t/res.mlir --check-prefix=INNER
// RUN: nnx-opt %t/res.mlir --nnx-channel-groups=layer=conv3 -o /dev/null | FileCheck %t/res.mlir --check-prefix=DOWN
// RUN: nnx-opt %t/dw.mlir --nnx-channel-groups=layer=expand -o /dev/null | FileCheck %t/dw.mlir --check-prefix=DW
// RUN: nnx-opt %t/cat.mlir --nnx-channel-groups=layer=a -o /dev/null | FileCheck %t/cat.mlir --check-prefix=CAT
// RUN: nnx-opt %t/cat.mlir --nnx-channel-groups=layer=b -o /dev/null | FileCheck %t/cat.mlir --check-prefix=CATB
// RUN: nnx-opt %t/se.mlir --nnx-channel-groups=layer=conv -o /dev/null | FileCheck %t/se.mlir --check-prefix=SE
// RUN: nnx-opt %t/ln.mlir --nnx-channel-groups=layer=conv -o /dev/null | FileCheck %t/ln.mlir --check-prefix=LN
// RUN: nnx-opt %t/flat.mlir --nnx-channel-groups=layer=conv -o /dev/null | FileCheck %t/flat.mlir --check-prefix=FLAT

//--- res.mlir
// The stem's channels are the residual stream: the stem's batch norm, the
// block's second conv and batch norm (the add), read by conv1, conv3 and the
// downsample conv.
// STEM-LABEL: channel group of 'stem' (nnx.conv2d): 2 channels
// STEM-NEXT:  tensor stem.weight dim 0
// STEM-NEXT:  tensor bn0.weight dim 0
// STEM-NEXT:  tensor bn0.bias dim 0
// STEM-NEXT:  tensor bn0.running_mean dim 0
// STEM-NEXT:  tensor bn0.running_var dim 0
// STEM-NEXT:  tensor conv1.weight dim 1 (reads)
// STEM-NEXT:  tensor conv2.weight dim 0
// STEM-NEXT:  tensor bn2.weight dim 0
// STEM-NEXT:  tensor bn2.bias dim 0
// STEM-NEXT:  tensor bn2.running_mean dim 0
// STEM-NEXT:  tensor bn2.running_var dim 0
// STEM-NEXT:  tensor conv3.weight dim 1 (reads)
// STEM-NEXT:  tensor down.0.weight dim 1 (reads)
// STEM-NEXT:  value <root>:self_stem_0 dim 1
// STEM-NEXT:  value <root>:self_bn0_0 dim 1
// STEM-NEXT:  value <root>:relu_0 dim 1
// STEM-NEXT:  value <root>:self_conv2_0 dim 1
// STEM-NEXT:  value <root>:self_bn2_0 dim 1
// STEM-NEXT:  value <root>:add_0 dim 1
// STEM-NEXT:  value <root>:relu_2 dim 1
// STEM-NOT: {{.}}
// An inner conv of the block: its batch norm, read by conv2; the add is not
// reached.
// INNER-LABEL: channel group of 'conv1' (nnx.conv2d): 2 channels
// INNER-NEXT:  tensor conv1.weight dim 0
// INNER-NEXT:  tensor bn1.weight dim 0
// INNER-NEXT:  tensor bn1.bias dim 0
// INNER-NEXT:  tensor bn1.running_mean dim 0
// INNER-NEXT:  tensor bn1.running_var dim 0
// INNER-NEXT:  tensor conv2.weight dim 1 (reads)
// INNER-NEXT:  value <root>:self_conv1_0 dim 1
// INNER-NEXT:  value <root>:self_bn1_0 dim 1
// INNER-NEXT:  value <root>:relu_1 dim 1
// INNER-NOT: {{.}}
// The add of conv3 and the downsample sequential (conv, batch norm): both
// write the group; the pooled, flattened channels are the Linear's columns.
// DOWN-LABEL: channel group of 'conv3' (nnx.conv2d): 3 channels
// DOWN-NEXT:  tensor conv3.weight dim 0
// DOWN-NEXT:  tensor down.0.weight dim 0
// DOWN-NEXT:  tensor down.1.weight dim 0
// DOWN-NEXT:  tensor down.1.bias dim 0
// DOWN-NEXT:  tensor down.1.running_mean dim 0
// DOWN-NEXT:  tensor down.1.running_var dim 0
// DOWN-NEXT:  tensor fc.weight dim 1 (reads)
// DOWN-NEXT:  value <root>:self_conv3_0 dim 1
// DOWN-NEXT:  value <root>:self_down_0 dim 1
// DOWN-NEXT:  value <root>:add_1 dim 1
// DOWN-NEXT:  value <root>:adaptive_avg_pool2d_0 dim 1
// DOWN-NEXT:  value <root>:flatten_0 dim 1
// DOWN-NOT: {{.}}
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
// A depthwise conv (groups = channels) carries its input channels to its
// output: its filters and bias are per channel; the 1x1 project reads them.
// DW-LABEL: channel group of 'expand' (nnx.conv2d): 2 channels
// DW-NEXT:  tensor expand.weight dim 0
// DW-NEXT:  tensor expand.bias dim 0
// DW-NEXT:  tensor dw.weight dim 0
// DW-NEXT:  tensor dw.bias dim 0
// DW-NEXT:  tensor project.weight dim 1 (reads)
// DW-NEXT:  value <root>:self_expand_0 dim 1
// DW-NEXT:  value <root>:relu_0 dim 1
// DW-NEXT:  value <root>:self_dw_0 dim 1
// DW-NEXT:  value <root>:relu_1 dim 1
// DW-NOT: {{.}}
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
// A concatenation of 2 + 3 channels: 'a' is the part at offset 0 of the
// result, 'b' the part at offset 2; 'c' reads both.
// CAT-LABEL: channel group of 'a' (nnx.conv2d): 2 channels
// CAT-NEXT:  tensor a.weight dim 0
// CAT-NEXT:  tensor a.bias dim 0
// CAT-NEXT:  tensor c.weight dim 1 (reads)
// CAT-NEXT:  value <root>:self_a_0 dim 1
// CAT-NEXT:  value <root>:cat_0 dim 1
// CAT-NOT: {{.}}
// CATB-LABEL: channel group of 'b' (nnx.conv2d): 3 channels
// CATB-NEXT:  tensor b.weight dim 0
// CATB-NEXT:  tensor b.bias dim 0
// CATB-NEXT:  tensor c.weight dim 1 at 2 (reads)
// CATB-NEXT:  value <root>:self_b_0 dim 1
// CATB-NEXT:  value <root>:cat_0 dim 1
// CATB-NOT: {{.}}
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
// A squeeze-excitation gate: the pooled channels are read by fc1, fc2
// writes the gate, which multiplies the channels back.
// SE-LABEL: channel group of 'conv' (nnx.conv2d): 2 channels
// SE-NEXT:  tensor conv.weight dim 0
// SE-NEXT:  tensor conv.bias dim 0
// SE-NEXT:  tensor se.fc1.weight dim 1 (reads)
// SE-NEXT:  tensor se.fc2.weight dim 0
// SE-NEXT:  tensor se.fc2.bias dim 0
// SE-NEXT:  tensor out.weight dim 1 (reads)
// SE-NEXT:  value <root>:self_conv_0 dim 1
// SE-NEXT:  value <root>:self_se_0 dim 1
// SE-NEXT:  value se:self_avgpool_0 dim 1
// SE-NEXT:  value se:self_fc2_0 dim 1
// SE-NEXT:  value se:self_scale_activation_0 dim 1
// SE-NEXT:  value se:mul_0 dim 1
// SE-NEXT:  value se:argument #0 dim 1
// SE-NOT: {{.}}
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

//--- ln.mlir
// LayerNorm2d (torchvision's: permute, layer norm over the last dim,
// permute back): its affine state is per channel, and its means reduce over
// the channels.
// LN-LABEL: channel group of 'conv' (nnx.conv2d): 2 channels
// LN-NEXT:  tensor conv.weight dim 0
// LN-NEXT:  tensor conv.bias dim 0
// LN-NEXT:  tensor norm.state.weight dim 0
// LN-NEXT:  tensor norm.state.bias dim 0
// LN-NEXT:  tensor out.weight dim 1 (reads)
// LN-NEXT:  value <root>:self_conv_0 dim 1
// LN-NEXT:  value <root>:self_norm_0 dim 1
// LN-NEXT:  value norm:permute_0 dim 3
// LN-NEXT:  value norm:nnx.fn.sub dim 3
// LN-NEXT:  value norm:nnx.fn.mul dim 3
// LN-NEXT:  value norm:nnx.fn.mul dim 3
// LN-NEXT:  value norm:nnx.state dim 0
// LN-NEXT:  value norm:nnx.fn.mul dim 3
// LN-NEXT:  value norm:nnx.state dim 0
// LN-NEXT:  value norm:layer_norm_0 dim 3
// LN-NEXT:  value norm:permute_1 dim 1
// LN-NEXT:  value norm:argument #0 dim 1
// LN-NEXT:  reduced by norm:nnx.fn.mean (nnx.fn.mean)
// LN-NEXT:  reduced by norm:nnx.fn.mean (nnx.fn.mean)
// LN-NOT: {{.}}
nnx.model @ln inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "LN" {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.01]]], [[[0.54]]]]> : tensor<2x1x1x1xf32>, bias = dense<[-0.82, -0.74]> : tensor<2xf32>}
    nnx.module @norm class = "LayerNorm2d" attributes {state = {weight = dense<[1.05, 1.22]> : tensor<2xf32>, bias = dense<[0.1, 0.04]> : tensor<2xf32>}} {
      nnx.forward @forward(%x: tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32> {
        %permute = nnx.fn.permute %x [0, 2, 3, 1] {nnx.source = "permute_0"} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
        %mean = nnx.fn.mean %permute {dims = array<i64: 3>, keepdim} : tensor<?x2x2x2xf32> -> tensor<?x2x2x1xf32>
        %sub = nnx.fn.sub %permute, %mean : tensor<?x2x2x2xf32>, tensor<?x2x2x1xf32> -> tensor<?x2x2x2xf32>
        %mul = nnx.fn.mul %sub, %sub : tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
        %mean_1 = nnx.fn.mean %mul {dims = array<i64: 3>, keepdim} : tensor<?x2x2x2xf32> -> tensor<?x2x2x1xf32>
        %cst = arith.constant dense<1.0e-05> : tensor<f32>
        %add = nnx.fn.add %mean_1, %cst : tensor<?x2x2x1xf32>, tensor<f32> -> tensor<?x2x2x1xf32>
        %rsqrt = math.rsqrt %add : tensor<?x2x2x1xf32>
        %mul_1 = nnx.fn.mul %sub, %rsqrt : tensor<?x2x2x2xf32>, tensor<?x2x2x1xf32> -> tensor<?x2x2x2xf32>
        %weight = nnx.state "weight" : tensor<2xf32>
        %mul_2 = nnx.fn.mul %mul_1, %weight : tensor<?x2x2x2xf32>, tensor<2xf32> -> tensor<?x2x2x2xf32>
        %bias = nnx.state "bias" : tensor<2xf32>
        %add_1 = nnx.fn.add %mul_2, %bias {nnx.source = "layer_norm_0"} : tensor<?x2x2x2xf32>, tensor<2xf32> -> tensor<?x2x2x2xf32>
        %permute_1 = nnx.fn.permute %add_1 [0, 3, 1, 2] {nnx.source = "permute_1"} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32>
        nnx.return %permute_1 : tensor<?x2x2x2xf32>
      }
    }
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[-0.27]], [[0.19]]]]> : tensor<1x2x1x1xf32>, bias = dense<[-0.01]> : tensor<1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %conv = nnx.call @conv(%x) {nnx.source = "self_conv_0"} : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %norm = nnx.call @norm(%conv) {nnx.source = "self_norm_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
      %out = nnx.call @out(%norm) {nnx.source = "self_out_0"} : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %out : tensor<?x1x2x2xf32>
    }
  }
}

//--- flat.mlir
// A flatten into a Linear: the Linear's columns are channels x positions.
// FLAT-LABEL: channel group of 'conv' (nnx.conv2d): 2 channels
// FLAT-NEXT:  tensor conv.weight dim 0
// FLAT-NEXT:  tensor conv.bias dim 0
// FLAT-NEXT:  tensor fc.weight dim 1 (reads)
// FLAT-NEXT:  value <root>:self_conv_0 dim 1
// FLAT-NEXT:  value <root>:relu_0 dim 1
// FLAT-NEXT:  value <root>:flatten_0 dim 1
// FLAT-NOT: {{.}}
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
