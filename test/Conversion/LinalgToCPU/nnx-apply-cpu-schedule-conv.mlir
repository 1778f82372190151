// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s

// A groups-1 conv becomes one matmul per kernel tap (ConvToMatmuls.cpp): the
// input is padded to whole stride phases plus one row (7 -> 2 x 5 rows and
// 2 x 4 columns for stride 2), split into the phases channels-last
// (N x 4 x 20 x C), and each of the 9 taps multiplies a window of rows of its
// phase with its C x F slice of the weight, permuted once to kh x kw x C x F.
// The wide result (Wq = 4 columns per row, 3 kept) is added to the init,
// channels first.
// CHECK-LABEL: func.func @strided(
// CHECK-DAG:     %[[NINE:.*]] = arith.constant 9 : index
// CHECK:         tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 3, 1]
// CHECK:         tensor.expand_shape {{.*}} : tensor<?x2x10x8xf32> into tensor<?x2x5x2x4x2xf32>
// CHECK:         linalg.transpose {{.*}} permutation = [0, 3, 5, 2, 4, 1]
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<5x2x3x3xf32>) {{.*}} permutation = [2, 3, 1, 0]
// CHECK:         scf.forall
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[NINE]]
// CHECK:             tensor.extract_slice %{{.*}} [1, 1, 12, 2] [1, 1, 1, 1] : tensor<?x4x20x2xf32> to tensor<12x2xf32>
// CHECK:             tensor.extract_slice %{{.*}} [1, 1, 2, 5] [1, 1, 1, 1] : tensor<3x3x2x5xf32> to tensor<2x5xf32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%{{.*}} : tensor<?x3x3x5xf32>) outs(%{{.*}} : tensor<?x5x3x3xf32>)
// CHECK:           arith.addf
func.func @strided(%x: tensor<?x2x7x7xf32>, %w: tensor<5x2x3x3xf32>, %init: tensor<?x5x3x3xf32>) -> tensor<?x5x3x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<?x2x7x7xf32>, tensor<5x2x3x3xf32>)
         outs(%init : tensor<?x5x3x3xf32>) -> tensor<?x5x3x3xf32>
  return %r : tensor<?x5x3x3xf32>
}

// -----

// A parameter argument read by convs only is asked for as kh x kw x C x F:
// its type changes and nnx.parameter_layouts tells the runner.
// CHECK-LABEL: func.func @parameter(
// CHECK-SAME:      %{{.*}}: tensor<3x3x4x6xf32> {nnx.parameter = "conv.weight"}
// CHECK-SAME:      nnx.parameter_layouts = {conv.weight = array<i64: 2, 3, 1, 0>}
// CHECK-NOT:     linalg.transpose ins(%arg1
func.func @parameter(%x: tensor<1x4x?x?xf32>, %w: tensor<6x4x3x3xf32> {nnx.parameter = "conv.weight"}, %init: tensor<1x6x?x?xf32>) -> tensor<1x6x?x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x?x?xf32>, tensor<6x4x3x3xf32>)
         outs(%init : tensor<1x6x?x?xf32>) -> tensor<1x6x?x?xf32>
  return %r : tensor<1x6x?x?xf32>
}

// -----

// A constant weight is permuted at compile time: W[f, 0, 0, kw] at
// [0, kw, 0, f].
// CHECK-LABEL: func.func @constant(
// CHECK:         arith.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00]], {{\[\[}}2.000000e+00, 4.000000e+00]]]]> : tensor<1x2x1x2xf32>
// CHECK-NOT:     linalg.transpose {{.*}} permutation = [2, 3, 1, 0]
func.func @constant(%x: tensor<1x1x4x4xf32>, %init: tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x1x4x4xf32>, tensor<2x1x1x2xf32>)
         outs(%init : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  return %r : tensor<1x2x4x3xf32>
}

// -----

// A depthwise conv is left alone.
// CHECK-LABEL: func.func @depthwise(
// CHECK:         linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3xf32>, %init: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>)
         outs(%init : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}
