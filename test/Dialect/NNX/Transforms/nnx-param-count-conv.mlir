// Convolutional layers: a Conv2d(3, 8, 3) has 8*3*3*3 + 8 = 224 parameters,
// a depthwise Conv2d(8, 8, 3, groups=8, bias=False) 8*1*3*3 = 72, a
// BatchNorm2d(8) 8 + 8 = 16 (its running statistics are buffers).
// RUN: nnx-opt %s --nnx-param-count -o %t | FileCheck %s

// CHECK-LABEL: model @convnet
// CHECK:      0 nnx.conv2d 224
// CHECK-NEXT: 1 nnx.batch_norm 16
// CHECK-NEXT: 2 nnx.conv2d 72
// CHECK-NEXT: total 312
nnx.model @convnet inputs(tensor<?x3x?x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x3x3x3xf32>, bias = dense<0.0> : tensor<8xf32>}
    nnx.batch_norm @"1" {running_mean = dense<0.0> : tensor<8xf32>, running_var = dense<1.0> : tensor<8xf32>, weight = dense<1.0> : tensor<8xf32>, bias = dense<0.0> : tensor<8xf32>}
    nnx.conv2d @"2" {in_channels = 8 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 8 : i64, weight = dense<0.1> : tensor<8x1x3x3xf32>}
  }
}
