// nnx-widen-channels: the residual stream of the stem grows from 2 to 3
// channels. seed 1 picks channel 0 for the new channel 2: every writer
// (stem, bn0; conv2, bn2 at the add) copies it, eval-mode batch norms copy
// its statistics, and every reader (conv1, conv3, the downsample conv)
// halves its columns of channel 0 (-0.58 -> -0.29, twice). Function
// preservation is measured in preservation/channel-groups.mlir.
// RUN: nnx-opt %s --nnx-widen-channels="layer=stem width=3 seed=1" | FileCheck %s

// CHECK-LABEL: nnx.model @res
// CHECK:      nnx.conv2d @stem {{{.*}}out_channels = 3 : i64{{.*}}weight = dense<{{\[\[\[\[}}-0.00999999977]]], {{\[\[\[}}5.400000e-01]]], {{\[\[\[}}-0.00999999977]]]]> : tensor<3x1x1x1xf32>}
// CHECK-NEXT: nnx.batch_norm @bn0 {bias = dense<[-6.000000e-02, 3.900000e-01, -6.000000e-02]> : tensor<3xf32>, running_mean = dense<[5.000000e-02, 2.200000e-01, 5.000000e-02]> : tensor<3xf32>, running_var = dense<[1.400000e+00, 1.320000e+00, 1.400000e+00]> : tensor<3xf32>, weight = dense<[9.200000e-01, 1.150000e+00, 9.200000e-01]> : tensor<3xf32>}
// CHECK-NEXT: nnx.conv2d @conv1 {{{.*}}in_channels = 3 : i64{{.*}}out_channels = 2 : i64{{.*}}weight = dense<{{\[\[\[\[}}-2.900000e-01]], {{\[\[}}-5.200000e-01]], {{\[\[}}-2.900000e-01]]], {{.*}}> : tensor<2x3x1x1xf32>}
// CHECK:      nnx.conv2d @conv2 {{{.*}}out_channels = 3 : i64{{.*}} : tensor<3x2x1x1xf32>}
// CHECK-NEXT: nnx.batch_norm @bn2 {{{.*}} : tensor<3xf32>{{.*}} : tensor<3xf32>{{.*}} : tensor<3xf32>{{.*}} : tensor<3xf32>}
// CHECK:      nnx.conv2d @"0" {{{.*}}in_channels = 3 : i64{{.*}} : tensor<3x3x1x1xf32>}
// CHECK:      nnx.conv2d @conv3 {{{.*}}in_channels = 3 : i64{{.*}} : tensor<3x3x1x1xf32>}
// CHECK:      nnx.fn.add {{.*}} : tensor<?x3x2x2xf32>, tensor<?x3x2x2xf32> -> tensor<?x3x2x2xf32>
// CHECK:      nnx.call @conv3({{.*}}) {{.*}} : (tensor<?x3x2x2xf32>) -> tensor<?x3x2x2xf32>
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
