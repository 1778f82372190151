// RUN: nnx-opt %s -split-input-file --nnx-channels-last | FileCheck %s

// A conv, an elementwise generic and a second conv: both convs become NHWC,
// the padding stays a padding (of the permuted input), the filters are
// permuted to kh x kw x C x F, and the permutation back after the first conv
// moves through the generic (which now reads a per-channel vector through
// d3) and cancels against the second conv's. What is left: one permutation
// of the input, one of the result.
// CHECK-DAG:   #[[TO_NHWC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG:   #[[TO_NCHW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK:       func.func @chain(
// CHECK:         %[[IN:.*]] = linalg.generic {indexing_maps = [#[[TO_NHWC]], #[[ID]]]{{.*}} outs(%{{.*}} : tensor<?x8x8x4xf32>)
// CHECK:         %[[PAD:.*]] = tensor.pad %[[IN]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         %[[W1:.*]] = linalg.transpose ins(%{{.*}} : tensor<6x4x3x3xf32>) {{.*}} permutation = [2, 3, 1, 0]
// CHECK:         %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<?x8x8x6xf32>
// CHECK:         %[[C1:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[PAD]], %[[W1]] : {{.*}}) outs(%[[FILL]] :
// CHECK:         %[[BN:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[C]], #[[ID]]]{{.*}} ins(%[[C1]], %{{.*}} : tensor<?x8x8x6xf32>, tensor<6xf32>)
// CHECK:         %[[C2:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[BN]],
// CHECK:         %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[TO_NCHW]], #[[ID]]]{{.*}} ins(%[[C2]] : tensor<?x8x8x5xf32>)
// CHECK:         return %[[OUT]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @chain(%x: tensor<?x4x8x8xf32>, %w1: tensor<6x4x3x3xf32>, %s: tensor<6xf32>, %w2: tensor<5x6x1x1xf32>) -> tensor<?x5x8x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x8x8xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x4x8x8xf32> to tensor<?x4x10x10xf32>
  %e1 = tensor.empty(%n) : tensor<?x6x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x6x8x8xf32>) -> tensor<?x6x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w1 : tensor<?x4x10x10xf32>, tensor<6x4x3x3xf32>) outs(%f1 : tensor<?x6x8x8xf32>) -> tensor<?x6x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x6x8x8xf32>
  %bn = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%c1, %s : tensor<?x6x8x8xf32>, tensor<6xf32>) outs(%e2 : tensor<?x6x8x8xf32>) {
  ^bb0(%v: f32, %k: f32, %o: f32):
    %m = arith.mulf %v, %k : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x6x8x8xf32>
  %e3 = tensor.empty(%n) : tensor<?x5x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x5x8x8xf32>) -> tensor<?x5x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%bn, %w2 : tensor<?x6x8x8xf32>, tensor<5x6x1x1xf32>) outs(%f3 : tensor<?x5x8x8xf32>) -> tensor<?x5x8x8xf32>
  return %c2 : tensor<?x5x8x8xf32>
}

// -----

// A depthwise conv reads its C x kh x kw filter as kh x kw x C; a max pool
// keeps its window and its -inf padding; the permutation between them
// cancels.
// CHECK-LABEL: func.func @depthwise_pool(
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<4x3x3xf32>) {{.*}} permutation = [1, 2, 0]
// CHECK:         %[[DW:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {{.*}} -> tensor<?x6x6x4xf32>
// CHECK:         %[[PAD:.*]] = tensor.pad %[[DW]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:           tensor.yield %{{.*}} : f32
// CHECK:         linalg.pooling_nhwc_max {{.*}} ins(%[[PAD]], %{{.*}} : tensor<?x8x8x4xf32>, tensor<3x3xf32>)
// CHECK-NOT:     linalg.pooling_nchw_max
func.func @depthwise_pool(%x: tensor<?x4x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x4x8x8xf32>, tensor<4x3x3xf32>) outs(%f : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %p = tensor.pad %d low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %dd: index):
    tensor.yield %ninf : f32
  } : tensor<?x4x6x6xf32> to tensor<?x4x8x8xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e2 = tensor.empty(%n) : tensor<?x4x6x6xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %m = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %win : tensor<?x4x8x8xf32>, tensor<3x3xf32>) outs(%f2 : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  return %m : tensor<?x4x6x6xf32>
}

// -----

// A grouped conv (channels split into 2 groups by nnx-build-forward) becomes
// linalg.conv_2d_nhwgc_gfhwc on the NHWC input split again, its filter
// permuted to G x Fg x kh x kw x Cg.
// CHECK-LABEL: func.func @grouped(
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x3x2x3x3xf32>) {{.*}} permutation = [0, 1, 3, 4, 2]
// CHECK:         linalg.conv_2d_nhwgc_gfhwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x8x8x2x2xf32>, tensor<2x3x3x3x2xf32>) outs(%{{.*}} : tensor<?x6x6x2x3xf32>)
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
func.func @grouped(%x: tensor<?x4x8x8xf32>, %w: tensor<2x3x2x3x3xf32>, %init: tensor<?x6x6x6xf32>) -> tensor<?x6x6x6xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8x8xf32>
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [%n, 2, 2, 8, 8] : tensor<?x4x8x8xf32> into tensor<?x2x2x8x8xf32>
  %ig = tensor.expand_shape %init [[0], [1, 2], [3], [4]] output_shape [%n, 2, 3, 6, 6] : tensor<?x6x6x6xf32> into tensor<?x2x3x6x6xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%xg, %w : tensor<?x2x2x8x8xf32>, tensor<2x3x2x3x3xf32>) outs(%ig : tensor<?x2x3x6x6xf32>) -> tensor<?x2x3x6x6xf32>
  %m = tensor.collapse_shape %r [[0], [1, 2], [3], [4]] : tensor<?x2x3x6x6xf32> into tensor<?x6x6x6xf32>
  return %m : tensor<?x6x6x6xf32>
}

// -----

// A generic that reads the loop indices (linalg.index) is not moved: its
// loops cannot be permuted; the permutation back stays before it.
// CHECK-LABEL: func.func @indices_stay(
// CHECK:         %[[C:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK:         %[[BACK:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<?x6x6x3xf32>) outs(%{{.*}} : tensor<?x3x6x6xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BACK]] : tensor<?x3x6x6xf32>)
// CHECK:           linalg.index 1
func.func @indices_stay(%x: tensor<?x2x8x8xf32>, %w: tensor<3x2x3x3xf32>, %init: tensor<?x3x6x6xf32>, %out: tensor<?x3x6x6xf32>) -> tensor<?x3x6x6xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x2x8x8xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<?x3x6x6xf32>) -> tensor<?x3x6x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%c : tensor<?x3x6x6xf32>) outs(%out : tensor<?x3x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %s = arith.addf %v, %f : f32
    linalg.yield %s : f32
  } -> tensor<?x3x6x6xf32>
  return %r : tensor<?x3x6x6xf32>
}

// -----

// A concatenation (insertions into an empty tensor) of two convs' results
// inserts the NHWC results along the channel dim (offset 6 in dim 3), and
// the next conv reads it as it is: the only permutation back is the
// result's.
// CHECK-LABEL: func.func @concat(
// CHECK:         %[[A:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<?x8x8x6xf32>
// CHECK:         %[[B:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<?x8x8x2xf32>
// CHECK:         %[[I:.*]] = tensor.insert_slice %[[A]] into %{{.*}}[0, 0, 0, 0] [%{{.*}}, 8, 8, 6] [1, 1, 1, 1] : tensor<?x8x8x6xf32> into tensor<?x8x8x8xf32>
// CHECK:         %[[J:.*]] = tensor.insert_slice %[[B]] into %[[I]][0, 0, 0, 6] [%{{.*}}, 8, 8, 2] [1, 1, 1, 1] : tensor<?x8x8x2xf32> into tensor<?x8x8x8xf32>
// CHECK:         %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[J]],
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : tensor<?x8x8x3xf32>) outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK-NOT:     linalg.generic
func.func @concat(%x: tensor<?x4x8x8xf32>, %w1: tensor<6x4x1x1xf32>, %w2: tensor<2x4x1x1xf32>, %w3: tensor<3x8x1x1xf32>) -> tensor<?x3x8x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x8x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x6x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x6x8x8xf32>) -> tensor<?x6x8x8xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w1 : tensor<?x4x8x8xf32>, tensor<6x4x1x1xf32>) outs(%f1 : tensor<?x6x8x8xf32>) -> tensor<?x6x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x2x8x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x2x8x8xf32>) -> tensor<?x2x8x8xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w2 : tensor<?x4x8x8xf32>, tensor<2x4x1x1xf32>) outs(%f2 : tensor<?x2x8x8xf32>) -> tensor<?x2x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x8x8x8xf32>
  %i1 = tensor.insert_slice %a into %e[0, 0, 0, 0] [%n, 6, 8, 8] [1, 1, 1, 1] : tensor<?x6x8x8xf32> into tensor<?x8x8x8xf32>
  %i2 = tensor.insert_slice %b into %i1[0, 6, 0, 0] [%n, 2, 8, 8] [1, 1, 1, 1] : tensor<?x2x8x8xf32> into tensor<?x8x8x8xf32>
  %e3 = tensor.empty(%n) : tensor<?x3x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%i2, %w3 : tensor<?x8x8x8xf32>, tensor<3x8x1x1xf32>) outs(%f3 : tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  return %c : tensor<?x3x8x8xf32>
}
