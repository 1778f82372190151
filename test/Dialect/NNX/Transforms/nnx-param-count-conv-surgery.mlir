// The §3-style tables for surgery on a convnet: Conv2d(3, 8, 3, padding=1)
// -> ReLU -> Conv2d(8, 16, 3, padding=1) -> Flatten -> Linear(256, 10) on
// 3 x 4 x 4 images: 224 + 1168 + 2570 = 3962 parameters.
// RUN: nnx-opt %s --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=BEFORE
// widen conv 0 to 12 channels: 0 +112 (12*3*9 + 12), 2 +576 (16*12*9 + 16).
// RUN: nnx-opt %s --nnx-widen="layer=0 width=12" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=WIDEN0
// widen conv 2 to 24 channels: 2 +584, the Linear +1280 (each channel owns
// 4 x 4 = 16 columns: 10 * 24 * 16 + 10).
// RUN: nnx-opt %s --nnx-widen="layer=2 width=24" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=WIDEN2
// deepen after the ReLU: an identity Conv2d(8, 8, 3) +584, or 1x1 +72.
// RUN: nnx-opt %s --nnx-deepen="after=1" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=DEEPEN
// RUN: nnx-opt %s --nnx-deepen="after=1 kernel-size=1" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=DEEPEN1
// low_rank of conv 2 (a 16 x 72 matrix): 1168 -> 368 (rank 4: 4*8*9 +
// 16*4 + 16), 720 (rank 8), 1424 (rank 16, max, exact).
// RUN: nnx-opt %s --nnx-low-rank="layer=2 rank=4" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=R4
// RUN: nnx-opt %s --nnx-low-rank="layer=2 rank=8" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=R8
// RUN: nnx-opt %s --nnx-low-rank="layer=2 rank=16" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=R16
// drop_layer of the deepened identity conv: -584 (back to 3962).
// RUN: nnx-opt %s --nnx-deepen="after=1" --nnx-drop-layer="layer=2" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=DROP

// BEFORE-LABEL: model @convnet
// BEFORE:      0 nnx.conv2d 224
// BEFORE-NEXT: 1 nnx.relu 0
// BEFORE-NEXT: 2 nnx.conv2d 1168
// BEFORE-NEXT: 3 nnx.flatten 0
// BEFORE-NEXT: 4 nnx.linear 2570
// BEFORE-NEXT: total 3962
// WIDEN0:      0 nnx.conv2d 336
// WIDEN0:      2 nnx.conv2d 1744
// WIDEN0:      4 nnx.linear 2570
// WIDEN0-NEXT: total 4650
// WIDEN2:      0 nnx.conv2d 224
// WIDEN2:      2 nnx.conv2d 1752
// WIDEN2:      4 nnx.linear 3850
// WIDEN2-NEXT: total 5826
// DEEPEN:      2 nnx.conv2d 584
// DEEPEN-NEXT: 3 nnx.relu 0
// DEEPEN-NEXT: 4 nnx.conv2d 1168
// DEEPEN:      total 4546
// DEEPEN1:     2 nnx.conv2d 72
// DEEPEN1:     total 4034
// R4:          2 nnx.sequential 0
// R4-NEXT:     2.0 nnx.conv2d 288
// R4-NEXT:     2.1 nnx.conv2d 80
// R4:          total 3162
// R8:          2.0 nnx.conv2d 576
// R8-NEXT:     2.1 nnx.conv2d 144
// R8:          total 3514
// R16:         2.0 nnx.conv2d 1152
// R16-NEXT:    2.1 nnx.conv2d 272
// R16:         total 4218
// DROP:        2 nnx.identity 0
// DROP:        total 3962
nnx.model @convnet inputs(tensor<?x3x4x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x3x3x3xf32>, bias = dense<0.0> : tensor<8xf32>}
    nnx.relu @"1"
    nnx.conv2d @"2" {in_channels = 8 : i64, out_channels = 16 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<16x8x3x3xf32>, bias = dense<0.0> : tensor<16xf32>}
    nnx.flatten @"3"
    nnx.linear @"4" {weight = dense<0.01> : tensor<10x256xf32>, bias = dense<0.0> : tensor<10xf32>}
  }
}
