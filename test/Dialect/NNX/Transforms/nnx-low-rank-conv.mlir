// nnx-low-rank of a convolution: C_in -> rank with the original window and
// no bias, then rank -> C_out 1x1 with the original bias. The weight
// [[1, 2]] per output channel of a 2 -> 2 conv, as the 2 x 4 matrix
// [[3, 0, 0, 0], [0, 0, 1, 0]] (taps of channel 0 then 1), keeps sigma = 3
// at rank 1.
// RUN: nnx-opt %s --nnx-low-rank="layer=c rank=1" | FileCheck %s
// RUN: nnx-opt %s --nnx-low-rank="layer=c rank=2" | FileCheck %s --check-prefix=MAX

// CHECK-LABEL: nnx.model @m
// CHECK:      nnx.sequential @c keying = positional attributes {train} {
// CHECK-NEXT:   nnx.conv2d @"0" {dilation = array<i64: 2, 1>, in_channels = 2 : i64, kernel_size = array<i64: 1, 2>, out_channels = 1 : i64, padding = array<i64: 1, 0>, requires_grad = {weight = false}, stride = array<i64: 2, 1>, train, weight = dense<{{\[\[\[}}[1.73205078, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00]]]]> : tensor<1x2x1x2xf32>}
// CHECK-NEXT:   nnx.conv2d @"1" {bias = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>, dilation = array<i64: 1, 1>, in_channels = 1 : i64, kernel_size = array<i64: 1, 1>, out_channels = 2 : i64, padding = array<i64: 0, 0>, requires_grad = {weight = false}, stride = array<i64: 1, 1>, train, weight = dense<{{\[\[\[}}[1.73205078]]], {{\[\[\[}}0.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-NEXT: }
// MAX:        nnx.conv2d @"0" {{{.*}}out_channels = 2 : i64{{.*}} : tensor<2x2x1x2xf32>}
// MAX-NEXT:   nnx.conv2d @"1" {{{.*}}in_channels = 2 : i64{{.*}} : tensor<2x2x1x1xf32>}
nnx.model @m inputs(tensor<?x2x5x5xf32>) {
  nnx.sequential @net keying = named {
    nnx.conv2d @c {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 2>, stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 2, 1>, weight = dense<[[[[3.0, 0.0]], [[0.0, 0.0]]], [[[0.0, 0.0]], [[1.0, 0.0]]]]> : tensor<2x2x1x2xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>, requires_grad = {weight = false}, train}
  }
}
