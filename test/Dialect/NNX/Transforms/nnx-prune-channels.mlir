// nnx-prune-channels: the channel group of the stem (the residual stream:
// stem, bn0, conv2 and bn2 write it; conv1, conv3 and the downsample conv
// read it) keeps its most important channel in every member. By the L2
// norm of the group's parameters channel 1 stays (stem weight 0.54, bn0
// bias 0.39, ...); by the scores of importance.npy channel 0 stays.
// RUN: split-file %s %t
// RUN: nnx-opt %t/res.mlir --nnx-prune-channels="layer=stem keep=1" | FileCheck %t/res.mlir --check-prefix=L2
// RUN: %python -c "import numpy; numpy.save('%t/importance.npy', numpy.array([2.0, 1.0]))"
// RUN: nnx-opt %t/res.mlir --nnx-prune-channels="layer=stem keep=1 importance=%t/importance.npy" | FileCheck %t/res.mlir --check-prefix=FILE
// A depthwise conv's channels are its groups: 2 -> 1 (groups = 1, the
// default, is not printed).
// RUN: nnx-opt %t/dw.mlir --nnx-prune-channels="layer=expand keep=1" | FileCheck %t/dw.mlir
// A concatenation's part: 'b' (3 channels at offset 2 of 'c''s input)
// loses its channel 2 (L2 over its row, bias and c's column at offset 4:
// 0.02, 0.26, 0.18), and 'c' loses column 4.
// RUN: nnx-opt %t/cat.mlir --nnx-prune-channels="layer=b keep=2" | FileCheck %t/cat.mlir
// RUN: nnx-opt %t/cls.mlir --nnx-prune-channels="layer=fc1 keep=3" | FileCheck %t/cls.mlir
// RUN: nnx-opt %t/gn.mlir --nnx-channel-groups=layer=conv -o /dev/null | FileCheck %t/gn.mlir --check-prefix=GROUP
// RUN: nnx-opt %t/gn.mlir --nnx-prune-channels="layer=conv keep=1" | FileCheck %t/gn.mlir
// RUN: %python %S/preservation/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %t/gn.mlir --edit "nnx-widen-channels{layer=conv width=3 seed=1}" --batch 2

//--- res.mlir
// L2-LABEL: nnx.model @res
// L2:      nnx.conv2d @stem {{{.*}}out_channels = 1 : i64{{.*}}weight = dense<5.400000e-01> : tensor<1x1x1x1xf32>}
// L2-NEXT: nnx.batch_norm @bn0 {bias = dense<3.900000e-01> : tensor<1xf32>, running_mean = dense<2.200000e-01> : tensor<1xf32>, running_var = dense<1.320000e+00> : tensor<1xf32>, weight = dense<1.150000e+00> : tensor<1xf32>}
// L2-NEXT: nnx.conv2d @conv1 {{{.*}}in_channels = 1 : i64{{.*}}out_channels = 2 : i64{{.*}}weight = dense<{{\[\[\[\[}}-5.200000e-01]]], {{\[\[\[}}1.900000e-01]]]]> : tensor<2x1x1x1xf32>}
// L2:      nnx.conv2d @conv2 {{{.*}}in_channels = 2 : i64{{.*}}out_channels = 1 : i64{{.*}} : tensor<1x2x1x1xf32>}
// L2-NEXT: nnx.batch_norm @bn2 {{{.*}} : tensor<1xf32>{{.*}} : tensor<1xf32>{{.*}} : tensor<1xf32>{{.*}} : tensor<1xf32>}
// L2:      nnx.conv2d @"0" {{{.*}}in_channels = 1 : i64{{.*}}out_channels = 3 : i64{{.*}} : tensor<3x1x1x1xf32>}
// L2:      nnx.conv2d @conv3 {{{.*}}in_channels = 1 : i64{{.*}}out_channels = 3 : i64{{.*}} : tensor<3x1x1x1xf32>}
// L2:      nnx.call @stem({{.*}}) {{.*}} -> tensor<?x1x2x2xf32>
// L2:      nnx.fn.add {{.*}} : tensor<?x1x2x2xf32>, tensor<?x1x2x2xf32> -> tensor<?x1x2x2xf32>
// L2:      nnx.call @conv3({{.*}}) {{.*}} : (tensor<?x1x2x2xf32>) -> tensor<?x3x2x2xf32>
// L2-NEXT: nnx.call @down({{.*}}) {{.*}} : (tensor<?x1x2x2xf32>) -> tensor<?x3x2x2xf32>
// FILE-LABEL: nnx.model @res
// FILE:      nnx.conv2d @stem {{{.*}}weight = dense<-0.00999999977> : tensor<1x1x1x1xf32>}
// FILE-NEXT: nnx.batch_norm @bn0 {bias = dense<-6.000000e-02> : tensor<1xf32>
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
// CHECK-LABEL: nnx.model @dw
// CHECK:      nnx.conv2d @expand {{{.*}}out_channels = 1 : i64{{.*}}}
// CHECK-NEXT: nnx.conv2d @dw {{{.*}}dilation = array<i64: 1, 1>, in_channels = 1 : i64{{.*}}out_channels = 1 : i64{{.*}} : tensor<1x1x3x3xf32>}
// CHECK-NEXT: nnx.conv2d @project {{{.*}}in_channels = 1 : i64{{.*}} : tensor<1x1x1x1xf32>}
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
// CHECK-LABEL: nnx.model @cat
// CHECK:      nnx.conv2d @b {bias = dense<[7.900000e-01, -9.000000e-02]> : tensor<2xf32>{{.*}}out_channels = 2 : i64{{.*}}weight = dense<{{\[\[\[\[}}-3.900000e-01]]], {{\[\[\[}}2.700000e-01]]]]> : tensor<2x1x1x1xf32>}
// CHECK-NEXT: nnx.conv2d @c {{{.*}}in_channels = 4 : i64{{.*}}weight = dense<{{\[\[\[\[}}-1.400000e-01]], {{\[\[}}-9.000000e-02]], {{\[\[}}-4.300000e-01]], {{\[\[}}-3.000000e-01]]]]> : tensor<1x4x1x1xf32>}
// CHECK:      tensor.concat dim(1) {{.*}} : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x4x2x2xf32>
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

//--- cls.mlir
// ViT's sequence: a class token concatenated before the patches. Reading
// the class token back (a slice at offset 0, size 1) makes the sequence a
// segmented extent; a slice of the whole sequence (MultiheadAttention's)
// must stay whole when another group (the MLP's units) is pruned.
// CHECK:      nnx.linear @fc1 {{{.*}}tensor<3x4xf32>}
// CHECK:      nnx.linear @fc2 {{{.*}}tensor<2x3xf32>}
// CHECK:      tensor.extract_slice %{{.*}}[0, 0, 0] [%{{.*}}, 3, 4] [1, 1, 1] : tensor<?x3x4xf32> to tensor<?x3x4xf32>
// CHECK-NEXT: tensor.extract_slice %{{.*}}[0, 0, 0] [%{{.*}}, 1, 4] [1, 1, 1] : tensor<?x3x4xf32> to tensor<?x4xf32>
nnx.model @vit inputs(tensor<?x2x4xf32>) {
  nnx.module @net class = "ViT" attributes {state = {class_token = dense<[[[0.5, -0.5, 1.0, 0.25]]]> : tensor<1x1x4xf32>}} {
    nnx.linear @fc1 {weight = dense<[[1.0, 0.5, -0.5, 0.25], [0.5, 1.0, 0.25, -1.0], [-0.25, 0.75, 1.0, 0.5], [1.5, -0.5, 0.5, 1.0]]> : tensor<4x4xf32>, bias = dense<[0.1, -0.1, 0.2, 0.0]> : tensor<4xf32>}
    nnx.relu @act
    nnx.linear @fc2 {weight = dense<[[1.0, -1.0, 0.5, 0.25], [0.5, 0.5, -0.5, 1.0]]> : tensor<2x4xf32>}
    nnx.forward @forward(%x: tensor<?x2x4xf32>) -> tensor<?x2xf32> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x2x4xf32>
      %cls = nnx.state "class_token" : tensor<1x1x4xf32>
      %e = nnx.fn.expand %cls [%n, 1, 4] : tensor<1x1x4xf32> -> tensor<?x1x4xf32>
      %cat = tensor.concat dim(1) %e, %x : (tensor<?x1x4xf32>, tensor<?x2x4xf32>) -> tensor<?x3x4xf32>
      %whole = tensor.extract_slice %cat[0, 0, 0][%n, 3, 4][1, 1, 1] : tensor<?x3x4xf32> to tensor<?x3x4xf32>
      %first = tensor.extract_slice %whole[0, 0, 0][%n, 1, 4][1, 1, 1] : tensor<?x3x4xf32> to tensor<?x4xf32>
      %h = nnx.call @fc1(%first) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %r = nnx.call @act(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @fc2(%r) : (tensor<?x4xf32>) -> tensor<?x2xf32>
      nnx.return %y : tensor<?x2xf32>
    }
  }
}

//--- gn.mlir
// A GroupNorm (as exported: a view into 2 groups, statistics per group)
// splits conv's 4 channels into groups x per-group and reduces over the
// per-group factor: the group is the other factor, the groups. Pruning
// keeps whole groups (the one with the larger L2 norm: channels 2 and 3),
// the view follows; widening copies a whole group (the execution line).
// GROUP-LABEL: channel group of 'conv' (nnx.conv2d): 2 channels
// GROUP-NEXT:  tensor conv.weight dim 0 (outer 1 inner 2)
// GROUP-NEXT:  tensor gn.state.weight dim 0 (outer 1 inner 2)
// GROUP-NEXT:  tensor out.weight dim 1 (reads) (outer 1 inner 2)
// GROUP-NOT:   reduced by
// CHECK:      nnx.conv2d @conv {{{.*}}out_channels = 2 : i64{{.*}}weight = dense<{{\[\[\[\[}}3.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]>
// CHECK:      state = {weight = dense<[2.000000e+00, 1.500000e+00]> : tensor<2xf32>}
// CHECK:      nnx.fn.reshape %{{.*}} [%{{.*}}, 1, 8] : tensor<?x2x2x2xf32> -> tensor<?x1x8xf32>
// CHECK:      nnx.conv2d @out {{{.*}}in_channels = 2 : i64{{.*}}weight = dense<{{\[\[\[\[}}2.500000e-01]], {{\[\[}}2.000000e+00]]]]>
nnx.model @gn inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "GN" {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]]]> : tensor<4x1x1x1xf32>}
    nnx.module @gn class = "GroupNorm" attributes {state = {weight = dense<[1.0, 0.5, 2.0, 1.5]> : tensor<4xf32>}} {
      nnx.forward @forward(%x: tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32> {
        %c0 = arith.constant 0 : index
        %n = tensor.dim %x, %c0 : tensor<?x4x2x2xf32>
        %v = nnx.fn.reshape %x [%n, 2, 8] : tensor<?x4x2x2xf32> -> tensor<?x2x8xf32>
        %m = nnx.fn.mean %v {dims = array<i64: 2>, keepdim} : tensor<?x2x8xf32> -> tensor<?x2x1xf32>
        %s = nnx.fn.sub %v, %m : tensor<?x2x8xf32>, tensor<?x2x1xf32> -> tensor<?x2x8xf32>
        %b = nnx.fn.reshape %s [%n, 4, 2, 2] : tensor<?x2x8xf32> -> tensor<?x4x2x2xf32>
        %w = nnx.state "weight" : tensor<4xf32>
        %w3 = nnx.fn.reshape %w [4, 1, 1] : tensor<4xf32> -> tensor<4x1x1xf32>
        %y = nnx.fn.mul %b, %w3 : tensor<?x4x2x2xf32>, tensor<4x1x1xf32> -> tensor<?x4x2x2xf32>
        nnx.return %y : tensor<?x4x2x2xf32>
      }
    }
    nnx.conv2d @out {in_channels = 4 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[0.5]], [[-1.0]], [[0.25]], [[2.0]]]]> : tensor<1x4x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %conv = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x4x2x2xf32>
      %gn = nnx.call @gn(%conv) : (tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32>
      %out = nnx.call @out(%gn) : (tensor<?x4x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %out : tensor<?x1x2x2xf32>
    }
  }
}
