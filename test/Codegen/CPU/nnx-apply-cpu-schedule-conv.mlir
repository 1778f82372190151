// RUN: nnx-opt %s -split-input-file --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-set-target=vector-bits=256 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=AVX2

// A groups-1 conv whose windows overlap, with at most 4 stride phases,
// becomes one matmul per kernel tap (ConvToMatmuls.cpp).
// The input is split into its 2 x 2 stride phases, channels-last: each phase
// is a stride-2 slice of the input transposed into a box of an
// N x 2 x 2 x Hq x Wq x C buffer (Hq = ceil(7 / 2) + 1 extra row = 5, Wq = 4),
// seen as N x 4 x 20 x C, and the phase's pixels outside that box (here its
// extra row, and a last column where the phase has 3) are zeros. Each of the 9 taps multiplies a window of 12 rows
// (OH x Wq) of its phase with its C x F slice of the weight, permuted once to
// kh x kw x C x F. The wide result (3 of the Wq = 4 columns kept) is added to
// the init, channels first.
// CHECK-LABEL: func.func @strided(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x2x7x7xf32>
// CHECK-DAG:     %[[NINE:.*]] = arith.constant 9 : index
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<5x2x3x3xf32>) {{.*}} permutation = [2, 3, 1, 0]
// CHECK:         linalg.fill {{.*}} -> tensor<?x2x2x5x4x2xf32>
// CHECK:         tensor.extract_slice %[[X]][0, 0, 0, 0] [%{{.*}}, 2, 4, 4] [1, 1, 2, 2]
// CHECK:         linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK:         tensor.extract_slice %[[X]][0, 0, 0, 1] [%{{.*}}, 2, 4, 3] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %[[X]][0, 0, 1, 0] [%{{.*}}, 2, 3, 4] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %[[X]][0, 0, 1, 1] [%{{.*}}, 2, 3, 3] [1, 1, 2, 2]
// CHECK:         tensor.collapse_shape {{.*}} into tensor<?x4x20x2xf32>
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

// A zero padding of the input is not built: it is the phases' zero border.
// Padded row 2i of phase 0 is input row 2i - 1: the phase's rows 1.. hold
// input rows 1, 3, 5; phase 1's rows 0.. hold input rows 0, 2, 4, 6.
// CHECK-LABEL: func.func @padded(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x2x7x7xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.fill {{.*}} -> tensor<1x2x2x6x5x2xf32>
// CHECK:         tensor.extract_slice %[[X]][0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 1, 1, 0] [1, 1, 1, 3, 3, 2]
// CHECK:         tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %{{.*}}[0, 1, 1, 0, 0, 0] [1, 1, 1, 4, 4, 2]
func.func @padded(%x: tensor<1x2x7x7xf32>, %w: tensor<5x2x3x3xf32>, %init: tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x7x7xf32> to tensor<1x2x9x9xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%p, %w : tensor<1x2x9x9xf32>, tensor<5x2x3x3xf32>)
         outs(%init : tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  return %r : tensor<1x5x4x4xf32>
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

// A depthwise conv takes the same phases and taps; each tap is a
// channels-last multiply-add of a row block by the tap's C weights, and the
// C x kh x kw weight is read as kh x kw x 1 x C (split first, then
// permuted: one layout a parameter is bound in).
// CHECK-LABEL: func.func @depthwise(
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
// CHECK:         tensor.expand_shape {{.*}} into tensor<1x4x3x3xf32>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x4x3x3xf32>) outs(%{{.*}} : tensor<3x3x1x4xf32>) permutation = [2, 3, 0, 1]
// CHECK:         tensor.collapse_shape {{.*}} into tensor<1x1x72x4xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<48x4xf32>)
// CHECK-DAG:       %[[ROWS:.*]] = tensor.extract_slice %{{.*}} : tensor<1x1x72x4xf32> to tensor<48x4xf32>
// CHECK-DAG:       %[[TAP:.*]] = tensor.extract_slice %{{.*}} : tensor<3x3x1x4xf32> to tensor<4xf32>
// CHECK:           linalg.generic {{.*}} ins(%[[ROWS]], %[[TAP]] : tensor<48x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<48x4xf32>)
// CHECK:             arith.mulf
// CHECK:             arith.addf
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 6, 6, 4] [1, 1, 1, 1] : tensor<1x6x8x4xf32> to tensor<1x6x6x4xf32>
func.func @depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3xf32>, %init: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>)
         outs(%init : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// A ViT patch embedding (kernel = stride = 16) takes the patches, not 256
// stride phases: one gather with a strided map (a permutation of the input:
// space to depth) to N x OH x OW x G x kh x kw x Cg (one group: G = 1,
// Cg = C), read as (N OH OW) x 768,
// times the weight as 768 x F: one matmul, whose K cache loop runs over all
// 768; no loop over taps. The result is added to the init channels first.
// CHECK: #[[$S2D:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3 * 3 + d6, d1 * 16 + d4, d2 * 16 + d5)>
// CHECK-LABEL: func.func @patch_embedding(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x3x32x48xf32>
// CHECK:         %[[W:.*]] = linalg.transpose ins(%{{.*}} : tensor<8x3x16x16xf32>) {{.*}} permutation = [2, 3, 1, 0]
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$S2D]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<?x3x32x48xf32>) outs(%{{.*}} : tensor<?x2x3x1x16x16x3xf32>)
// CHECK:         %[[A:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2], [3, 4, 5, 6]] : tensor<?x2x3x1x16x16x3xf32> into tensor<?x768xf32>
// CHECK:         %[[B:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2], [3]] : tensor<16x16x3x8xf32> into tensor<768x8xf32>
// CHECK-NOT:     scf.for {{.*}} to %c256
// CHECK:         tensor.extract_slice %[[A]]
// CHECK:         scf.for %{{.*}} = %c0 to %c768 step %c128
// CHECK:           tensor.extract_slice %[[B]][%{{.*}}, 0] [128, 8]
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         tensor.expand_shape {{.*}} into tensor<?x2x3x8xf32>
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%{{.*}} : tensor<?x2x3x8xf32>) outs(%{{.*}} : tensor<?x8x2x3xf32>)
// CHECK:           arith.addf
func.func @patch_embedding(%x: tensor<?x3x32x48xf32>, %w: tensor<8x3x16x16xf32>, %init: tensor<?x8x2x3xf32>) -> tensor<?x8x2x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<16> : tensor<2xi64>}
         ins(%x, %w : tensor<?x3x32x48xf32>, tensor<8x3x16x16xf32>)
         outs(%init : tensor<?x8x2x3xf32>) -> tensor<?x8x2x3xf32>
  return %r : tensor<?x8x2x3xf32>
}

// -----

// Overlapping windows with 9 stride phases take the patches too: the
// gather reads the padded input (the zero padding is built), 49 taps of
// 3 channels, K = 147.
// CHECK: #[[$S3:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3 * 3 + d6, d1 * 3 + d4, d2 * 3 + d5)>
// CHECK-LABEL: func.func @stride3(
// CHECK:         %[[PAD:.*]] = tensor.pad
// CHECK:         linalg.generic {indexing_maps = [#[[$S3]], #{{.*}}], {{.*}} ins(%[[PAD]] : tensor<2x3x16x15xf32>) outs(%{{.*}} : tensor<2x4x3x1x7x7x3xf32>)
// CHECK:         tensor.collapse_shape {{.*}} into tensor<24x147xf32>
// CHECK:         tensor.collapse_shape {{.*}} into tensor<147x4xf32>
func.func @stride3(%x: tensor<2x3x10x9xf32>, %w: tensor<4x3x7x7xf32>, %init: tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 3, 3] high[0, 0, 3, 3] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x10x9xf32> to tensor<2x3x16x15xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>}
         ins(%p, %w : tensor<2x3x16x15xf32>, tensor<4x3x7x7xf32>)
         outs(%init : tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return %r : tensor<2x4x4x3xf32>
}

// -----

// A depthwise conv with stride 3: the same gather, then the taps summed
// channel by channel (the tap dims reductions), channels-last.
// CHECK-LABEL: func.func @depthwise_stride3(
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<4x3x3xf32>) outs(%{{.*}} : tensor<3x3x4xf32>) permutation = [1, 2, 0]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x9x9xf32>) outs(%{{.*}} : tensor<1x3x3x1x3x3x4xf32>)
// CHECK:         tensor.collapse_shape {{.*}} into tensor<1x9x3x3x4xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x9x3x3x4xf32>, tensor<3x3x4xf32>) outs(%{{.*}} : tensor<1x9x4xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise_stride3(%x: tensor<1x4x9x9xf32>, %w: tensor<4x3x3xf32>, %init: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x9x9xf32>, tensor<4x3x3xf32>)
         outs(%init : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %r : tensor<1x4x3x3xf32>
}

// -----

// A stride of 2^62 is the same few ops (one output pixel).
// CHECK: #[[$HUGE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3 * 2 + d6, d1 * 4611686018427387904 + d4, d2 * 4611686018427387904 + d5)>
// CHECK-LABEL: func.func @huge_stride(
// CHECK:         linalg.generic {indexing_maps = [#[[$HUGE]], #{{.*}}], {{.*}} outs(%{{.*}} : tensor<?x1x1x1x3x3x2xf32>)
// CHECK:         tensor.collapse_shape {{.*}} into tensor<?x18xf32>
func.func @huge_stride(%x: tensor<?x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %init: tensor<?x3x1x1xf32>) -> tensor<?x3x1x1xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<4611686018427387904> : tensor<2xi64>}
         ins(%x, %w : tensor<?x2x5x5xf32>, tensor<3x2x3x3xf32>)
         outs(%init : tensor<?x3x1x1xf32>) -> tensor<?x3x1x1xf32>
  return %r : tensor<?x3x1x1xf32>
}

// -----

// A grouped conv (4 groups of 8 channels, as nnx-build-forward writes it:
// input, filter and init split on the channel dim) takes the same phases on
// the channels merged back (the padding is not built either), and one matmul
// per group and tap: the forall runs over images and groups; group g reads
// channels [8g, 8g + 8) of its phase's rows, the weight's rows [8g, 8g + 8)
// (kh x kw x G x Cg x Fg collapsed to kh x kw x C x Fg) and sums into the
// columns [8g, 8g + 8) of the wide result, each tap's K block from zero.
// CHECK: #[[$G8:.*]] = affine_map<(d0) -> (d0 * 8)>
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x32x7x7xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<4x8x8x3x3xf32>) outs(%{{.*}} : tensor<3x3x4x8x8xf32>) permutation = [3, 4, 0, 2, 1]
// CHECK:         %[[W:.*]] = tensor.collapse_shape {{.*}} {{\[\[}}0], [1], [2, 3], [4]] : tensor<3x3x4x8x8xf32> into tensor<3x3x32x8xf32>
// CHECK:         tensor.extract_slice %[[X]][0, 0, 1, 1] [%{{.*}}, 32, 3, 3] [1, 1, 2, 2]
// CHECK:         %[[P:.*]] = tensor.collapse_shape {{.*}} into tensor<?x4x30x32xf32>
// CHECK:         scf.forall (%[[N:.*]], %[[G:.*]]) in (%{{.*}}, 4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x20x32xf32>)
// CHECK:           %[[COL:.*]] = affine.apply #[[$G8]](%[[G]])
// CHECK:           tensor.extract_slice %[[OUT]][%[[N]], 0, %[[COL]]] [1, 20, 8] [1, 1, 1] : tensor<?x20x32xf32> to tensor<20x8xf32>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c9
// CHECK:             %[[C:.*]] = affine.apply #[[$G8]](%[[G]])
// CHECK:             tensor.extract_slice %[[P]][%[[N]], %{{.*}}, %{{.*}}, %[[C]]] [1, 1, 20, 8] [1, 1, 1, 1] : tensor<?x4x30x32xf32> to tensor<20x8xf32>
// CHECK:             %[[R:.*]] = affine.apply #[[$G8]](%[[G]])
// CHECK:             tensor.extract_slice %[[W]][%{{.*}}, %{{.*}}, %[[R]], 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<3x3x32x8xf32> to tensor<8x8xf32>
// CHECK:             scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[ZEROS:.*]]) -> (tensor<6x8xf32>, vector<6x8xf32>)
// CHECK:             arith.addf %{{.*}} : vector<6x8xf32>
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[N]], 0, %[[COL]]] [1, 20, 8] [1, 1, 1]
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [%{{.*}}, 4, 4, 32] [1, 1, 1, 1] : tensor<?x4x5x32xf32> to tensor<?x4x4x32xf32>
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%{{.*}} : tensor<?x4x4x32xf32>) outs(%{{.*}} : tensor<?x32x4x4xf32>)
func.func @grouped(%x: tensor<?x32x7x7xf32>, %w: tensor<32x8x3x3xf32>, %init: tensor<?x32x4x4xf32>) -> tensor<?x32x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x32x7x7xf32> to tensor<?x32x9x9xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x32x7x7xf32>
  %xg = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [%n, 4, 8, 9, 9] : tensor<?x32x9x9xf32> into tensor<?x4x8x9x9xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [4, 8, 8, 3, 3] : tensor<32x8x3x3xf32> into tensor<4x8x8x3x3xf32>
  %ig = tensor.expand_shape %init [[0], [1, 2], [3], [4]] output_shape [%n, 4, 8, 4, 4] : tensor<?x32x4x4xf32> into tensor<?x4x8x4x4xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%xg, %wg : tensor<?x4x8x9x9xf32>, tensor<4x8x8x3x3xf32>)
         outs(%ig : tensor<?x4x8x4x4xf32>) -> tensor<?x4x8x4x4xf32>
  %y = tensor.collapse_shape %r [[0], [1, 2], [3], [4]] : tensor<?x4x8x4x4xf32> into tensor<?x32x4x4xf32>
  return %y : tensor<?x32x4x4xf32>
}

// -----

// A grouped parameter is asked for as the phases read it: the stored
// G*Fg x Cg x kh x kw weight viewed as G x Fg x Cg x kh x kw, permuted to
// kh x kw x G x Cg x Fg.
// CHECK-LABEL: func.func @grouped_parameter(
// CHECK-SAME:      %{{.*}}: tensor<3x3x2x16x16xf32> {nnx.parameter = "conv.weight"}
// CHECK-SAME:      nnx.parameter_layouts = {conv.weight = {permutation = array<i64: 3, 4, 0, 2, 1>, shape = array<i64: 2, 16, 16, 3, 3>}}
// CHECK-NOT:     linalg.transpose ins(%arg1
func.func @grouped_parameter(%x: tensor<1x32x9x9xf32>, %w: tensor<32x16x3x3xf32> {nnx.parameter = "conv.weight"}, %init: tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32> {
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 16, 9, 9] : tensor<1x32x9x9xf32> into tensor<1x2x16x9x9xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 16, 16, 3, 3] : tensor<32x16x3x3xf32> into tensor<2x16x16x3x3xf32>
  %ig = tensor.expand_shape %init [[0], [1, 2], [3], [4]] output_shape [1, 2, 16, 7, 7] : tensor<1x32x7x7xf32> into tensor<1x2x16x7x7xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%xg, %wg : tensor<1x2x16x9x9xf32>, tensor<2x16x16x3x3xf32>)
         outs(%ig : tensor<1x2x16x7x7xf32>) -> tensor<1x2x16x7x7xf32>
  %y = tensor.collapse_shape %r [[0], [1, 2], [3], [4]] : tensor<1x2x16x7x7xf32> into tensor<1x32x7x7xf32>
  return %y : tensor<1x32x7x7xf32>
}

// -----

// A 1x1 grouped conv (windows apart) takes the patches, gathered by group
// (N x OH x OW x G x kh x kw x Cg, channel g * 4 + c), then one matmul per
// group (a forall over the 3 groups): (N OH OW) x 4 by 4 x 8 into columns
// [8g, 8g + 8). A conv not split from merged channels is merged by a
// collapse.
// CHECK: #[[$GATHER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3 * 4 + d6, d1 + d4, d2 + d5)>
// CHECK-LABEL: func.func @grouped_patches(
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x3x4x5x5xf32> into tensor<2x12x5x5xf32>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<3x8x4x1x1xf32>) outs(%{{.*}} : tensor<3x1x1x4x8xf32>) permutation = [0, 3, 4, 2, 1]
// CHECK:         linalg.generic {indexing_maps = [#[[$GATHER]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<2x12x5x5xf32>) outs(%{{.*}} : tensor<2x5x5x3x1x1x4xf32>)
// CHECK:         %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3], [4, 5, 6]] : tensor<2x5x5x3x1x1x4xf32> into tensor<50x3x4xf32>
// CHECK:         %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4]] : tensor<3x1x1x4x8xf32> into tensor<3x4x8xf32>
// CHECK:         scf.forall (%[[G:.*]]) in (3) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<50x24xf32>)
// CHECK-DAG:       tensor.extract_slice %[[A]][0, %[[G]], 0] [50, 1, 4] [1, 1, 1] : tensor<50x3x4xf32> to tensor<50x4xf32>
// CHECK-DAG:       tensor.extract_slice %[[B]][%[[G]], 0, 0] [1, 4, 8] [1, 1, 1] : tensor<3x4x8xf32> to tensor<4x8xf32>
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][0, %{{.*}}] [50, 8] [1, 1]
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] {{.*}} : tensor<2x24x5x5xf32> into tensor<2x3x8x5x5xf32>
func.func @grouped_patches(%x: tensor<2x3x4x5x5xf32>, %w: tensor<3x8x4x1x1xf32>, %init: tensor<2x3x8x5x5xf32>) -> tensor<2x3x8x5x5xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<2x3x4x5x5xf32>, tensor<3x8x4x1x1xf32>)
         outs(%init : tensor<2x3x8x5x5xf32>) -> tensor<2x3x8x5x5xf32>
  return %r : tensor<2x3x8x5x5xf32>
}

// -----

// Narrow groups at stride 1 that sum 4 channels (ResNeXt-50 32x4d's Cg =
// Fg = 4) take the phases too: one 4 x 4 slice of the weight per group and
// tap, into the group's 4 columns (twice upstream's loops: 2.95 against
// 6.1 ms at 56 x 56, bench/results/2026-12-06-conv-memrefcopy-amd-epyc.txt).
// CHECK-LABEL: func.func @narrow_groups(
// CHECK:         scf.forall (%[[G:.*]]) in (2)
// CHECK:           scf.for %{{.*}} = %c0 to %c9
// CHECK:             vector.contract
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}] [1, 24, 4] [1, 1, 1]
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
// CHECK:         return
func.func @narrow_groups(%x: tensor<1x2x4x6x6xf32>, %w: tensor<2x4x4x3x3xf32>, %init: tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x2x4x6x6xf32>, tensor<2x4x4x3x3xf32>)
         outs(%init : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  return %r : tensor<1x2x4x4x4xf32>
}

// -----

// A depthwise conv with a channel multiplier (Cg = 1, Fg = 2) at stride 1
// keeps upstream's loops: its taps' matmuls would sum one channel each.
// CHECK-LABEL: func.func @channel_multiplier(
// CHECK:         linalg.conv_2d_ngchw_gfchw
// CHECK-NOT:     linalg.matmul
func.func @channel_multiplier(%x: tensor<1x4x1x6x6xf32>, %w: tensor<4x2x1x3x3xf32>, %init: tensor<1x4x2x4x4xf32>) -> tensor<1x4x2x4x4xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x1x6x6xf32>, tensor<4x2x1x3x3xf32>)
         outs(%init : tensor<1x4x2x4x4xf32>) -> tensor<1x4x2x4x4xf32>
  return %r : tensor<1x4x2x4x4xf32>
}

// -----

// Channels-last (nnx-channels-last's linalg.conv_2d_nhwc_hwcf): a 1 x 1 conv
// at stride 1 reads its input as it is, (N H W) x C, with no gather, and sums
// into its destination, (N H W) x F, with no zero-filled copy and no add.
// Capped at AVX2, the same rewrite, on the 6 x 16 register tiles.
// AVX2-LABEL: func.func @nhwc_pointwise(
// AVX2-NOT:     linalg.generic
// AVX2:         tensor.collapse_shape %{{.*}} : tensor<?x8x8x16xf32> into tensor<?x16xf32>
// AVX2:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2:         tensor.expand_shape %{{.*}} : tensor<?x32xf32> into tensor<?x8x8x32xf32>
// CHECK-LABEL: func.func @nhwc_pointwise(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8x8x16xf32>, %[[W:[^:]*]]: tensor<1x1x16x32xf32>, %[[INIT:[^:]*]]: tensor<?x8x8x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.fill
// CHECK-DAG:     tensor.collapse_shape %[[INIT]] {{\[}}[0, 1, 2], [3]] : tensor<?x8x8x32xf32> into tensor<?x32xf32>
// CHECK-DAG:     tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<?x8x8x16xf32> into tensor<?x16xf32>
// CHECK-DAG:     tensor.collapse_shape %[[W]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x16x32xf32> into tensor<16x32xf32>
// CHECK:         vector.contract
// CHECK-NOT:     linalg.generic
// CHECK:         tensor.expand_shape %{{.*}} : tensor<?x32xf32> into tensor<?x8x8x32xf32>
func.func @nhwc_pointwise(%x: tensor<?x8x8x16xf32>, %w: tensor<1x1x16x32xf32>, %init: tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x8x8x16xf32>, tensor<1x1x16x32xf32>) outs(%init : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  return %r : tensor<?x8x8x32xf32>
}

// -----

// A 1 x 1 conv into zeros (a conv without bias) sums in place as above; the
// fill moves into the forall, each block of rows filling its own box before
// its matmul: the destination is not zeroed whole ahead of the loop (out to
// memory) and then read back.
// CHECK-LABEL: func.func @nhwc_pointwise_zeros(
// CHECK-SAME:      %[[INIT:[^:]*]]: tensor<?x8x8x32xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0, 1, 2], [3]] : tensor<?x8x8x32xf32> into tensor<?x32xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         scf.forall {{.*}} shared_outs(%{{.*}} = %[[FLAT]])
// CHECK:           %[[BOX:.*]] = tensor.extract_slice
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[BOX]] : tensor<{{.*}}x32xf32>)
// CHECK:           vector.contract
func.func @nhwc_pointwise_zeros(%x: tensor<?x8x8x16xf32>, %w: tensor<1x1x16x32xf32>, %init: tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x8x8x16xf32>, tensor<1x1x16x32xf32>) outs(%z : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  return %r : tensor<?x8x8x32xf32>
}

// -----

// A padded channels-last 3 x 3 conv: its one phase is the input copied into
// a zero-filled buffer without a transpose. Its rows are 8 pixels, not 7 +
// 2: one zero column between two rows' pixels is both the left padding of
// the next and the right padding of the previous (10 rows with the extra
// one). Each block (here one image's 7 rows) sums its 7 x 8 wide rows in a
// temporary, and adds their first 7 columns to its box of the destination
// (channels-last: a box of the result; ConvToMatmuls' convByTapsInBlocks).
// CHECK-LABEL: func.func @nhwc_padded(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x7x7x8xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.fill {{.*}} -> tensor<?x1x1x10x8x8xf32>
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [%{{.*}}, 7, 7, 8] [1, 1, 1, 1]
// CHECK:         tensor.insert_slice %[[S]] into %{{.*}}[0, 0, 0, 1, 1, 0] [%{{.*}}, 1, 1, 7, 7, 8]
// CHECK:         scf.forall (%[[N:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x7x7x16xf32>)
// CHECK:           linalg.fill {{.*}} -> tensor<56x16xf32>
// CHECK:           tensor.extract_slice %{{.*}} [1, 1, 56, 8] [1, 1, 1, 1] : tensor<?x1x80x8xf32> to tensor<56x8xf32>
// CHECK:           %[[ROWS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [7, 8, 16]
// CHECK:           %[[KEPT:.*]] = tensor.extract_slice %[[ROWS]][0, 0, 0] [7, 7, 16] [1, 1, 1]
// CHECK:           %[[BOX:.*]] = tensor.extract_slice %[[OUT]][%[[N]], 0, 0, 0] [1, 7, 7, 16] [1, 1, 1, 1]
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[KEPT]] : tensor<7x7x16xf32>) outs(%[[BOX]] : tensor<1x7x7x16xf32>)
// CHECK:             arith.addf
// CHECK:           tensor.parallel_insert_slice %[[SUM]] into %[[OUT]][%[[N]], 0, 0, 0] [1, 7, 7, 16]
func.func @nhwc_padded(%x: tensor<?x7x7x8xf32>, %w: tensor<3x3x8x16xf32>, %init: tensor<?x7x7x16xf32>) -> tensor<?x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x7x7x8xf32> to tensor<?x9x9x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x9x9x8xf32>, tensor<3x3x8x16xf32>) outs(%init : tensor<?x7x7x16xf32>) -> tensor<?x7x7x16xf32>
  return %r : tensor<?x7x7x16xf32>
}

// -----

// A 5 x 5 conv on an image 1 pixel wide: its rows' shared zero columns would
// make rows of 1 + 2 pixels, but the last tap's window reaches 4 columns
// past the last row: rows of 4 keep that window inside the extra row.
// CHECK-LABEL: func.func @narrow_image(
// CHECK:         linalg.fill {{.*}} -> tensor<?x1x1x11x4x8xf32>
// CHECK:           tensor.extract_slice %{{.*}} [1, 1, 24, 8] [1, 1, 1, 1] : tensor<?x1x44x8xf32> to tensor<24x8xf32>
func.func @narrow_image(%x: tensor<?x6x1x8xf32>, %w: tensor<5x5x8x8xf32>, %init: tensor<?x6x1x8xf32>) -> tensor<?x6x1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x6x1x8xf32> to tensor<?x10x5x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x10x5x8xf32>, tensor<5x5x8x8xf32>) outs(%init : tensor<?x6x1x8xf32>) -> tensor<?x6x1x8xf32>
  return %r : tensor<?x6x1x8xf32>
}

// -----

// The same 3 x 3 conv at 7 x 7 with 256 filters takes the patches: its wide
// rows would compute 9 columns for 7, 2 x 256 / 7 = 73 FMAs more per
// output pixel and window element than the patches' gather costs (30,
// wideRowsCostMore). The padded input's windows are gathered (N x 7 x 7 x
// 1 x 3 x 3 x 8), then one matmul of K = 72 sums in place, with no wide
// result.
// CHECK-LABEL: func.func @nhwc_small_map(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x7x7x8xf32>, %[[W:[^:]*]]: tensor<3x3x8x256xf32>, %[[INIT:[^:]*]]: tensor<?x7x7x256xf32>
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<?x9x9x8xf32>) outs(%{{.*}} : tensor<?x7x7x1x3x3x8xf32>)
// CHECK:         tensor.collapse_shape %[[INIT]] {{\[}}[0, 1, 2], [3]] : tensor<?x7x7x256xf32> into tensor<?x256xf32>
// CHECK:         tensor.collapse_shape %{{.*}} : tensor<?x7x7x1x3x3x8xf32> into tensor<?x72xf32>
// CHECK:         tensor.collapse_shape %[[W]] {{.*}} : tensor<3x3x8x256xf32> into tensor<72x256xf32>
// CHECK:         scf.forall
// CHECK-NOT:     tensor.extract_slice %{{.*}} : tensor<?x7x9x256xf32>
// CHECK:         tensor.expand_shape %{{.*}} : tensor<?x256xf32> into tensor<?x7x7x256xf32>
func.func @nhwc_small_map(%x: tensor<?x7x7x8xf32>, %w: tensor<3x3x8x256xf32>, %init: tensor<?x7x7x256xf32>) -> tensor<?x7x7x256xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x7x7x8xf32> to tensor<?x9x9x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x9x9x8xf32>, tensor<3x3x8x256xf32>) outs(%init : tensor<?x7x7x256xf32>) -> tensor<?x7x7x256xf32>
  return %r : tensor<?x7x7x256xf32>
}

// -----

// A channels-last grouped conv (linalg.conv_2d_nhwgc_gfhwc, 4 groups of 8)
// merges its groups: one phase of all 32 channels, the weight permuted to
// kh x kw x G x Cg x Fg read as kh x kw x C x Fg, one matmul per image, group
// and tap into the group's 8 columns; the result is split into groups again.
// CHECK-LABEL: func.func @nhwgc(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : tensor<?x9x9x4x8xf32> into tensor<?x9x9x32xf32>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<4x8x3x3x8xf32>) {{.*}} permutation = [2, 3, 0, 4, 1]
// CHECK:         tensor.collapse_shape %{{.*}} : tensor<3x3x4x8x8xf32> into tensor<3x3x32x8xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, 4)
// CHECK:           tensor.extract_slice %{{.*}} [1, 1, 63, 8] [1, 1, 1, 1] : tensor<?x1x90x32xf32> to tensor<63x8xf32>
// CHECK:           tensor.extract_slice %{{.*}} [1, 1, 8, 8] [1, 1, 1, 1] : tensor<3x3x32x8xf32> to tensor<8x8xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] {{.*}} : tensor<?x7x7x32xf32> into tensor<?x7x7x4x8xf32>
// CHECK-NOT:     linalg.conv_2d_nhwgc_gfhwc
func.func @nhwgc(%x: tensor<?x9x9x4x8xf32>, %w: tensor<4x8x3x3x8xf32>, %init: tensor<?x7x7x4x8xf32>) -> tensor<?x7x7x4x8xf32> {
  %r = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x9x9x4x8xf32>, tensor<4x8x3x3x8xf32>) outs(%init : tensor<?x7x7x4x8xf32>) -> tensor<?x7x7x4x8xf32>
  return %r : tensor<?x7x7x4x8xf32>
}

// -----

// The taps' matmuls are split among threads by images and blocks of whole
// rows of the result, so that a single image keeps every thread busy: 20
// rows of 21 wide pixels, in 2 blocks of 10 rows (the largest divisor of 20
// whose wide rows, 210, are at most 384), each block's matmul of a static
// M. Each block fills its own temporary of 210 wide rows, inside the
// forall, just before its taps sum into it (still in the core's cache),
// then adds its rows' first 20 columns to the destination's box.
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0) -> (d0 * 10)>
// CHECK-LABEL: func.func @row_blocks(
// CHECK-SAME:      %[[INIT:[^:]*]]: tensor<?x20x20x16xf32>)
// CHECK:         scf.forall (%[[N:.*]], %[[B:.*]]) in (%{{.*}}, 2) shared_outs(%[[OUT:.*]] = %[[INIT]])
// CHECK:           %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<210x16xf32>)
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %[[ZEROS]])
// CHECK:             tensor.extract_slice %{{.*}} [1, 1, 210, 8] [1, 1, 1, 1] : tensor<?x1x483x8xf32> to tensor<210x8xf32>
// CHECK:           tensor.expand_shape %{{.*}} output_shape [10, 21, 16]
// CHECK:           %[[AT:.*]] = affine.apply #[[$ROW]](%[[B]])
// CHECK:           tensor.extract_slice %[[OUT]][%[[N]], %[[AT]], 0, 0] [1, 10, 20, 16]
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[N]], %[[AT]], 0, 0] [1, 10, 20, 16]
func.func @row_blocks(%x: tensor<?x20x20x8xf32>, %w: tensor<3x3x8x16xf32>, %init: tensor<?x20x20x16xf32>) -> tensor<?x20x20x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x20x20x8xf32> to tensor<?x22x22x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x22x22x8xf32>, tensor<3x3x8x16xf32>) outs(%init : tensor<?x20x20x16xf32>) -> tensor<?x20x20x16xf32>
  return %r : tensor<?x20x20x16xf32>
}

// -----

// An NCHW result's blocks are not boxes of it: its taps sum into the wide
// result (20 x 21 = 420 rows per image, in 3 blocks of 140: a static count
// that divides them, from 96 to 192 rows), whose first 20 columns of each
// row are then added to the destination, transposed, after the forall. The
// wide result is zeros: each block fills its own box, inside the forall,
// just before its taps sum into it, and the forall's shared output is the
// unfilled tensor.
// CHECK-DAG:   #[[$FIRST:.*]] = affine_map<(d0) -> (d0 * 140)>
// CHECK-LABEL: func.func @row_blocks_nchw(
// CHECK:         %[[WIDE:.*]] = tensor.empty(%{{.*}}) : tensor<?x420x16xf32>
// CHECK-NOT:     linalg.fill {{.*}} -> tensor<?x420x16xf32>
// CHECK:         scf.forall (%[[N:.*]], %[[B:.*]]) in (%{{.*}}, 3) shared_outs(%{{.*}} = %[[WIDE]])
// CHECK:           %[[AT:.*]] = affine.apply #[[$FIRST]](%[[B]])
// CHECK:           %[[BOX:.*]] = tensor.extract_slice %{{.*}}[%[[N]], %[[AT]], 0] [1, 140, 16] [1, 1, 1] : tensor<?x420x16xf32> to tensor<140x16xf32>
// CHECK:           %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[BOX]] : tensor<140x16xf32>)
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %[[ZEROS]])
// CHECK:             tensor.extract_slice %{{.*}} [1, 1, 140, 8] [1, 1, 1, 1] : tensor<?x1x483x8xf32> to tensor<140x8xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [%{{.*}}, 20, 20, 16] [1, 1, 1, 1] : tensor<?x20x21x16xf32> to tensor<?x20x20x16xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x16x20x20xf32>)
func.func @row_blocks_nchw(%x: tensor<?x8x20x20xf32>, %w: tensor<16x8x3x3xf32>, %init: tensor<?x16x20x20xf32>) -> tensor<?x16x20x20xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x8x20x20xf32> to tensor<?x8x22x22xf32>
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<?x16x20x20xf32>) -> tensor<?x16x20x20xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x8x22x22xf32>, tensor<16x8x3x3xf32>) outs(%z : tensor<?x16x20x20xf32>) -> tensor<?x16x20x20xf32>
  return %r : tensor<?x16x20x20xf32>
}
