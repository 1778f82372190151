// The §3-style tables for surgery on a ConvNN (nnx.conv_nn): in_channels 3,
// channels [8, 16], hidden_dims [32], output_dim 10, 3 x 3 blocks, max pool
// 2: 224 + 1168 + 544 + 330 = 2266 parameters.
// RUN: nnx-opt %s --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=BEFORE
// widen block 0 to 12 channels: layers.0 +112 (12*3*9 + 12), layers.1 +576
// (16*12*9 + 16).
// RUN: nnx-opt %s --nnx-widen="layer=layers.0 width=12" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=WIDEN0
// widen the last block to 24 channels: layers.1 +584, fcs.0 +256 (one
// column per channel after the global average pool: 32 * 24 + 32).
// RUN: nnx-opt %s --nnx-widen="layer=layers.1 width=24" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=WIDEN1
// widen the hidden fc to 48: fcs.0 +272, fcs.1 +160.
// RUN: nnx-opt %s --nnx-widen="layer=fcs.0 width=48" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=WIDENFC
// deepen after block 0: an identity Conv2d(8, 8, 3) +584, or 1 x 1 +72;
// after the hidden fc: an identity Linear(32, 32) +1056.
// RUN: nnx-opt %s --nnx-deepen="after=layers.0" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=DEEPEN
// RUN: nnx-opt %s --nnx-deepen="after=layers.0 kernel-size=1" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=DEEPEN1
// RUN: nnx-opt %s --nnx-deepen="after=fcs.0" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=DEEPENFC
// drop_layer of the deepened identity block: -584 (back to 2266). A
// low-rank factorization of a block or fc is refused (the params cannot
// describe it; nnx-low-rank-invalid.mlir): record it as a recipe.
// RUN: nnx-opt %s --nnx-deepen="after=layers.0" --nnx-drop-layer="layer=layers.1" --nnx-param-count -o %t.mlir | FileCheck %s --check-prefix=DROP

// BEFORE-LABEL: model @cnn
// BEFORE:      layers.0  nnx.conv2d 224
// BEFORE-NEXT: layers.1  nnx.conv2d 1168
// BEFORE:      fcs.0     nnx.linear 544
// BEFORE-NEXT: fcs.1     nnx.linear 330
// BEFORE-NEXT: total 2266
// WIDEN0:      layers.0  nnx.conv2d 336
// WIDEN0-NEXT: layers.1  nnx.conv2d 1744
// WIDEN0:      total 2954
// WIDEN1:      layers.1  nnx.conv2d 1752
// WIDEN1:      fcs.0     nnx.linear 800
// WIDEN1:      total 3106
// WIDENFC:     fcs.0     nnx.linear 816
// WIDENFC-NEXT: fcs.1    nnx.linear 490
// WIDENFC-NEXT: total 2698
// DEEPEN:      layers.1  nnx.conv2d 584
// DEEPEN-NEXT: layers.2  nnx.conv2d 1168
// DEEPEN:      total 2850
// DEEPEN1:     layers.1  nnx.conv2d 72
// DEEPEN1:     total 2338
// DEEPENFC:    fcs.1     nnx.linear 1056
// DEEPENFC-NEXT: fcs.2   nnx.linear 330
// DEEPENFC-NEXT: total 3322
// DROP:        layers.1  nnx.identity 0
// DROP:        total 2266
nnx.model @cnn inputs(tensor<?x3x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 8, 16>, hidden_dims = array<i64: 32>, output_dim = 10, pool = 2} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 8 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<8x3x3x3xf32>, bias = dense<0.0> : tensor<8xf32>}
      nnx.conv2d @"1" {in_channels = 8 : i64, out_channels = 16 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<16x8x3x3xf32>, bias = dense<0.0> : tensor<16xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<0.1> : tensor<32x16xf32>, bias = dense<0.0> : tensor<32xf32>}
      nnx.linear @"1" {weight = dense<0.1> : tensor<10x32xf32>, bias = dense<0.0> : tensor<10xf32>}
    }
  }
}
