// nnx-widen on convolutions: out_channels grow, the consumer's input
// channels (a conv's kernel taps, or a Linear's block of columns after a
// flatten) are divided by each channel's replication count. seed 1 picks
// unit 0 for the new channel 2 (units 0, 1, 0: channel 0 is held twice).
// RUN: split-file %s %t
// RUN: nnx-opt %t/conv.mlir --nnx-widen="layer=0 width=3 seed=1" | FileCheck %t/conv.mlir
// RUN: nnx-opt %t/flatten.mlir --nnx-widen="layer=0 width=3 seed=1" | FileCheck %t/flatten.mlir
// RUN: nnx-opt %t/bn.mlir --nnx-widen="layer=0 width=3 seed=1 through-batchnorm=true" | FileCheck %t/bn.mlir
// RUN: nnx-opt %t/conv1d.mlir --nnx-widen="layer=0 width=3 seed=1" | FileCheck %t/conv1d.mlir

//--- conv.mlir
// Through a ReLU and a max pool (per channel) to the next conv.
// CHECK-LABEL: nnx.model @convs
// CHECK:      nnx.conv2d @"0" {bias = dense<[5.000000e-01, -5.000000e-01, 5.000000e-01]> : tensor<3xf32>, dilation = array<i64: 1, 1>, in_channels = 1 : i64, kernel_size = array<i64: 1, 1>, out_channels = 3 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, weight = dense<{{\[\[\[}}[1.000000e+00]]], {{\[\[}}[2.000000e+00]]], {{\[\[}}[1.000000e+00]]]]> : tensor<3x1x1x1xf32>}
// CHECK-NEXT: nnx.relu @"1"
// CHECK-NEXT: nnx.max_pool2d @"2"
// CHECK-NEXT: nnx.conv2d @"3" {dilation = array<i64: 1, 1>, in_channels = 3 : i64, kernel_size = array<i64: 1, 2>, out_channels = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, train, weight = dense<{{\[\[}}{{\[}}[1.500000e+00, 2.500000e+00]], {{\[}}[4.000000e+00, 6.000000e+00]], {{\[}}[1.500000e+00, 2.500000e+00]]]]> : tensor<1x3x1x2xf32>}
nnx.model @convs inputs(tensor<?x1x4x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>}
    nnx.relu @"1"
    nnx.max_pool2d @"2" {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    nnx.conv2d @"3" {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[3.0, 5.0]], [[4.0, 6.0]]]]> : tensor<1x2x1x2xf32>, train}
  }
}

//--- flatten.mlir
// Through a flatten to a Linear: each channel owns 2 consecutive columns
// (its H x W = 2 x 1 positions).
// CHECK-LABEL: nnx.model @head
// CHECK:      nnx.conv2d @"0" {{{.*}}out_channels = 3 : i64{{.*}} : tensor<3x1x1x1xf32>}
// CHECK-NEXT: nnx.flatten @"1"
// CHECK-NEXT: nnx.dropout @"2"
// CHECK-NEXT: nnx.linear @"3" {weight = dense<{{\[}}[5.000000e-01, 1.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e-01, 1.000000e+00]]> : tensor<1x6xf32>}
nnx.model @head inputs(tensor<?x1x2x1xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>}
    nnx.flatten @"1"
    nnx.dropout @"2" {p = 0.5 : f64}
    nnx.linear @"3" {weight = dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>}
  }
}

//--- bn.mlir
// through-batchnorm: the eval-mode batch norm's statistics and affine
// entries follow the channels.
// CHECK-LABEL: nnx.model @bn
// CHECK:      nnx.batch_norm @"1" {bias = dense<[0.000000e+00, 1.000000e+00, 0.000000e+00]> : tensor<3xf32>, running_mean = dense<[1.000000e-01, 2.000000e-01, 1.000000e-01]> : tensor<3xf32>, running_var = dense<[1.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>, weight = dense<[1.000000e+00, 3.000000e+00, 1.000000e+00]> : tensor<3xf32>}
// CHECK:      nnx.conv2d @"3" {{{.*}}in_channels = 3 : i64{{.*}}weight = dense<{{\[\[\[}}[1.500000e+00]], {{\[}}[4.000000e+00]], {{\[}}[1.500000e+00]]]]> : tensor<1x3x1x1xf32>}
nnx.model @bn inputs(tensor<?x1x3x3xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>}
    nnx.batch_norm @"1" {running_mean = dense<[0.1, 0.2]> : tensor<2xf32>, running_var = dense<[1.0, 2.0]> : tensor<2xf32>, weight = dense<[1.0, 3.0]> : tensor<2xf32>, bias = dense<[0.0, 1.0]> : tensor<2xf32>}
    nnx.relu @"2"
    nnx.conv2d @"3" {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<[[[[3.0]], [[4.0]]]]> : tensor<1x2x1x1xf32>}
  }
}

//--- conv1d.mlir
// CHECK-LABEL: nnx.model @audio
// CHECK:      nnx.conv1d @"0" {{{.*}}out_channels = 3 : i64{{.*}}weight = dense<{{\[\[}}[1.000000e+00, 0.000000e+00]], {{\[}}[2.000000e+00, 1.000000e+00]], {{\[}}[1.000000e+00, 0.000000e+00]]]> : tensor<3x1x2xf32>}
// CHECK-NEXT: nnx.gelu @"1"
// CHECK-NEXT: nnx.conv1d @"2" {{{.*}}in_channels = 3 : i64{{.*}}weight = dense<{{\[\[}}[1.500000e+00], [4.000000e+00], [1.500000e+00]]]> : tensor<1x3x1xf32>}
nnx.model @audio inputs(tensor<?x1x5xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv1d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 2>, stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, weight = dense<[[[1.0, 0.0]], [[2.0, 1.0]]]> : tensor<2x1x2xf32>}
    nnx.gelu @"1"
    nnx.conv1d @"2" {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1>, stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, weight = dense<[[[3.0], [4.0]]]> : tensor<1x2x1xf32>}
  }
}
