// RUN: nnx-opt %s -split-input-file --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-set-target=vector-bits=256 --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=AVX2

// A 1 x 1 conv summed in place, then its epilogue (a BatchNorm-like
// per-channel scale computed after the conv, a residual add, ReLU) as its
// kernel holds them (nnx-outline-layers). The epilogue, collapsed to the
// forall's (N H W) x F, is applied to each block of rows inside the forall
// (ConvEpilogues.cpp): the forall's one shared output is the epilogue's
// destination, each block's sums go to a temporary of the block's size
// (a tensor.empty, zero-filled), and the scale is computed ahead of the
// forall.
// CHECK-LABEL: func.func @pointwise_epilogue(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8x8x16xf32>, %[[W:[^:]*]]: tensor<1x1x16x32xf32>, %[[INIT:[^:]*]]: tensor<?x8x8x32xf32>, %[[G:[^:]*]]: tensor<32xf32>, %[[RES:[^:]*]]: tensor<?x8x8x32xf32>, %[[OUT:[^:]*]]: tensor<?x8x8x32xf32>
// CHECK-DAG:     %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<32xf32>)
// CHECK-DAG:     %[[RES2:.*]] = tensor.collapse_shape %[[RES]] {{\[}}[0, 1, 2], [3]] : tensor<?x8x8x32xf32> into tensor<?x32xf32>
// CHECK-DAG:     %[[OUT2:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0, 1, 2], [3]] : tensor<?x8x8x32xf32> into tensor<?x32xf32>
// CHECK:         %[[Y:.*]] = scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(%[[S:.*]] = %[[OUT2]]) -> (tensor<?x32xf32>) {
// CHECK:           %[[BOX:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf32>
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[BOX]] : tensor<?x32xf32>)
// CHECK:           vector.contract
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %[[SCALE]], %{{.*}} : tensor<?x32xf32>, tensor<32xf32>, tensor<?x32xf32>)
// CHECK:             arith.mulf
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice %{{.*}} into %[[S]]
// CHECK-NEXT:      }
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1, 2], [3]] {{.*}} : tensor<?x32xf32> into tensor<?x8x8x32xf32>
// CHECK:         return %[[R]]
// AVX2-LABEL: func.func @pointwise_epilogue(
// AVX2:         scf.forall {{.*}} -> (tensor<?x32xf32>) {
// AVX2:           vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2:           arith.maximumf
// AVX2:           scf.forall.in_parallel
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch = affine_map<(n, h, w, c) -> (c)>
func.func @pointwise_epilogue(%x: tensor<?x8x8x16xf32>, %w: tensor<1x1x16x32xf32>, %init: tensor<?x8x8x32xf32>, %g: tensor<32xf32>, %res: tensor<?x8x8x32xf32>, %out: tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x8x8x16xf32>, tensor<1x1x16x32xf32>) outs(%z : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %e = tensor.empty() : tensor<32xf32>
  %scale = linalg.generic {indexing_maps = [affine_map<(c) -> (c)>, affine_map<(c) -> (c)>], iterator_types = ["parallel"]}
      ins(%g : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %two : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %r = linalg.generic {indexing_maps = [#id, #ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %scale, %res : tensor<?x8x8x32xf32>, tensor<32xf32>, tensor<?x8x8x32xf32>) outs(%out : tensor<?x8x8x32xf32>) {
  ^bb0(%a: f32, %s: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %sum = arith.addf %m, %b : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<?x8x8x32xf32>
  return %r : tensor<?x8x8x32xf32>
}

// -----

// A padded channels-last 3 x 3 conv by the phases: each block of whole
// rows of the result (here one image's 7) sums its wide rows in a
// temporary and copies their kept columns into its box of the result; the
// epilogue (ReLU) is fused into the blocks, and with the copy into one
// generic: it reads the kept columns of the block's wide rows and writes
// the epilogue's box. No whole wide result, no pass after the forall.
// CHECK-LABEL: func.func @phases_epilogue(
// CHECK-SAME:      %[[OUT:[^:]*]]: tensor<?x7x7x16xf32>) -> tensor<?x7x7x16xf32>
// CHECK:         %[[Y:.*]] = scf.forall (%[[N:.*]]) in (%{{.*}}) shared_outs(%[[S:.*]] = %[[OUT]]) -> (tensor<?x7x7x16xf32>)
// CHECK:           linalg.fill {{.*}} -> tensor<56x16xf32>
// CHECK:           vector.contract
// CHECK:           %[[ROWS:.*]] = tensor.expand_shape %{{.*}} output_shape [7, 8, 16] : tensor<56x16xf32> into tensor<7x8x16xf32>
// CHECK:           %[[KEPT:.*]] = tensor.extract_slice %[[ROWS]][0, 0, 0] [7, 7, 16] [1, 1, 1]
// CHECK:           %[[BOX:.*]] = tensor.extract_slice %[[S]][%[[N]], 0, 0, 0] [1, 7, 7, 16]
// CHECK:           %[[R:.*]] = linalg.generic {{.*}} ins(%[[KEPT]] : tensor<7x7x16xf32>) outs(%[[BOX]] : tensor<1x7x7x16xf32>)
// CHECK:             arith.maximumf
// CHECK:           tensor.parallel_insert_slice %[[R]] into %[[S]][%[[N]], 0, 0, 0] [1, 7, 7, 16]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[Y]]
func.func @phases_epilogue(%x: tensor<?x7x7x8xf32>, %w: tensor<3x3x8x16xf32>, %init: tensor<?x7x7x16xf32>, %out: tensor<?x7x7x16xf32>) -> tensor<?x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x7x7x8xf32> to tensor<?x9x9x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<?x7x7x16xf32>) -> tensor<?x7x7x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x9x9x8xf32>, tensor<3x3x8x16xf32>) outs(%z : tensor<?x7x7x16xf32>) -> tensor<?x7x7x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<?x7x7x16xf32>) outs(%out : tensor<?x7x7x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %relu = arith.maximumf %a, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<?x7x7x16xf32>
  return %r : tensor<?x7x7x16xf32>
}

// -----

// A consumer that reads the conv's result permuted (the model's NCHW
// output) is not an epilogue: the conv's result is written whole, then
// read by it.
// CHECK-LABEL: func.func @permuted_consumer(
// CHECK:         %[[Y:.*]] = scf.forall
// CHECK:           tensor.parallel_insert_slice
// CHECK:         %[[C:.*]] = tensor.expand_shape %[[Y]]
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : tensor<?x8x8x32xf32>) outs(%{{.*}} : tensor<?x32x8x8xf32>)
func.func @permuted_consumer(%x: tensor<?x8x8x16xf32>, %w: tensor<1x1x16x32xf32>, %init: tensor<?x8x8x32xf32>, %out: tensor<?x32x8x8xf32>) -> tensor<?x32x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x8x8x16xf32>, tensor<1x1x16x32xf32>) outs(%z : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<?x8x8x32xf32>) outs(%out : tensor<?x32x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %relu = arith.maximumf %a, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<?x32x8x8xf32>
  return %r : tensor<?x32x8x8xf32>
}

// -----

// A conv with a bias starts from the bias broadcast into its destination,
// not from a fill: its epilogue is still applied to each block, and each
// block reads its starting sums from the broadcast (no longer a shared
// output once the conv's result is read nowhere else: bufferization copies
// the block it writes).
// CHECK-LABEL: func.func @bias_epilogue(
// CHECK:         %[[BIAS:.*]] = linalg.generic
// CHECK:         %[[START:.*]] = tensor.collapse_shape %[[BIAS]]
// CHECK:         scf.forall {{.*}} shared_outs(%[[S:.*]] = %{{.*}}) -> (tensor<?x32xf32>)
// CHECK:           tensor.extract_slice %[[START]]
// CHECK-NOT:       linalg.fill
// CHECK:           vector.contract
// CHECK:           arith.maximumf
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %{{.*}} into %[[S]]
// CHECK-NEXT:      }
func.func @bias_epilogue(%x: tensor<?x8x8x16xf32>, %w: tensor<1x1x16x32xf32>, %b: tensor<32xf32>, %init: tensor<?x8x8x32xf32>, %out: tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %start = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<32xf32>) outs(%init : tensor<?x8x8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x8x8x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x8x8x16xf32>, tensor<1x1x16x32xf32>) outs(%start : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<?x8x8x32xf32>) outs(%out : tensor<?x8x8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %relu = arith.maximumf %a, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<?x8x8x32xf32>
  return %r : tensor<?x8x8x32xf32>
}

// -----

// A 3 x 1 conv (one kernel column, stride 1) sums in place by the phases,
// each block a rank-reduced box of one image's rows of N x (OH OW) x F:
// upstream's consumer fusion would tile the epilogue by the box's full
// rank, so the epilogue stays after the forall.
// CHECK-LABEL: func.func @column_kernel_epilogue(
// CHECK:         %[[Y:.*]] = scf.forall
// CHECK:           tensor.parallel_insert_slice %{{.*}} : tensor<{{[0-9]+}}x16xf32> into tensor<?x56x16xf32>
// CHECK:         %[[C:.*]] = tensor.expand_shape %[[Y]]
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : tensor<?x7x8x16xf32>)
// CHECK:           arith.maximumf
func.func @column_kernel_epilogue(%x: tensor<?x7x8x8xf32>, %w: tensor<3x1x8x16xf32>, %init: tensor<?x7x8x16xf32>, %out: tensor<?x7x8x16xf32>) -> tensor<?x7x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 0, 0] high[0, 1, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<?x7x8x8xf32> to tensor<?x9x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<?x7x8x16xf32>) -> tensor<?x7x8x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<?x9x8x8xf32>, tensor<3x1x8x16xf32>) outs(%z : tensor<?x7x8x16xf32>) -> tensor<?x7x8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<?x7x8x16xf32>) outs(%out : tensor<?x7x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %relu = arith.maximumf %a, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<?x7x8x16xf32>
  return %r : tensor<?x7x8x16xf32>
}
