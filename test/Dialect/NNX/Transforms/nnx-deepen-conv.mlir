// nnx-deepen after a ReLU that a convolution feeds: an identity conv of the
// same spatial rank (centre tap 1, "same" padding, bias 0) and a ReLU.
// RUN: split-file %s %t
// RUN: nnx-opt %t/pos.mlir --nnx-deepen="after=2" | FileCheck %t/pos.mlir
// RUN: nnx-opt %t/named.mlir --nnx-deepen="after=relu kernel-size=1" | FileCheck %t/named.mlir
// RUN: nnx-opt %t/conv1d.mlir --nnx-deepen="after=1 kernel-size=5" | FileCheck %t/conv1d.mlir

//--- pos.mlir
// Fed through a batch norm; later keys shift by two.
// CHECK-LABEL: nnx.model @block
// CHECK:      nnx.relu @"2"
// CHECK-NEXT: nnx.conv2d @"3" {bias = dense<0.000000e+00> : tensor<2xf32>, dilation = array<i64: 1, 1>, in_channels = 2 : i64, kernel_size = array<i64: 3, 3>, out_channels = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<{{\[\[\[}}[0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<2x2x3x3xf32>}
// CHECK-NEXT: nnx.relu @"4"
// CHECK-NEXT: nnx.conv2d @"5" {{{.*}}in_channels = 2 : i64
nnx.model @block inputs(tensor<?x1x4x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<2x1x1x1xf32>}
    nnx.batch_norm @"1" {running_mean = dense<0.0> : tensor<2xf32>, running_var = dense<1.0> : tensor<2xf32>}
    nnx.relu @"2"
    nnx.conv2d @"3" {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<1x2x1x1xf32>}
  }
}

//--- named.mlir
// Named keys, through a pooling (a ReLU after a max pool of a conv).
// CHECK-LABEL: nnx.model @named
// CHECK:      nnx.relu @relu
// CHECK-NEXT: nnx.conv2d @_nnx_deepen_conv_0 {bias = dense<0.000000e+00> : tensor<3xf32>, dilation = array<i64: 1, 1>, in_channels = 3 : i64, kernel_size = array<i64: 1, 1>, out_channels = 3 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, weight = dense<{{\[\[\[}}[1.000000e+00]], {{\[\[}}0.000000e+00]], {{\[\[}}0.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<3x3x1x1xf32>}
// CHECK-NEXT: nnx.relu @_nnx_deepen_relu_0
nnx.model @named inputs(tensor<?x1x4x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 3 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<1.0> : tensor<3x1x1x1xf32>}
    nnx.max_pool2d @pool {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    nnx.relu @relu
  }
}

//--- conv1d.mlir
// CHECK-LABEL: nnx.model @audio
// CHECK:      nnx.conv1d @"2" {bias = dense<0.000000e+00> : tensor<1xf32>, dilation = array<i64: 1>, in_channels = 1 : i64, kernel_size = array<i64: 5>, out_channels = 1 : i64, padding = array<i64: 2>, stride = array<i64: 1>, weight = dense<{{\[\[}}[0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<1x1x5xf32>}
// CHECK-NEXT: nnx.relu @"3"
nnx.model @audio inputs(tensor<?x1x6xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv1d @"0" {in_channels = 1 : i64, out_channels = 1 : i64, kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<1.0> : tensor<1x1x3xf32>}
    nnx.relu @"1"
  }
}
