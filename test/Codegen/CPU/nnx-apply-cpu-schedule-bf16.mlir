// bf16 matmuls (bf16 operands, f32 accumulators) on vdpbf16ps: at
// tile-matmul, a 4-D contraction over pairs of K with B packed K/2 x N x 2 (a
// parameter argument asks for that layout at bind time; a constant is packed
// at compile time); at lower-vectors, register tiles of x86vector.avx512.dot.
// bf16-dot=off (a host without AVX512_BF16) leaves the matmul to the f32
// tiles, which extend the operands.
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512 bf16-dot=on" | FileCheck %s --check-prefix=TILE
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512 bf16-dot=off" | FileCheck %s --check-prefix=OFF
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512 bf16-dot=on" \
// RUN: | mlir-opt -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN: | nnx-opt -split-input-file --nnx-apply-cpu-schedule=stage=lower-vectors | FileCheck %s --check-prefix=LOWER
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512 bf16-dot=on parallel" \
// RUN: | mlir-opt -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN: | nnx-opt -split-input-file --nnx-apply-cpu-schedule="stage=lower-vectors parallel" | FileCheck %s --check-prefix=THREADS
// bf16-dot=target (the default) follows the module's #nnx.target: the
// vdpbf16ps tiles with avx512_bf16 at 512 bits, the f32 tiles without.
// RUN: nnx-opt %s -split-input-file --nnx-set-target="vector-bits=512 avx512-bf16=true" --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=TILE
// RUN: nnx-opt %s -split-input-file --nnx-set-target="vector-bits=512" --nnx-apply-cpu-schedule=stage=tile-matmul | FileCheck %s --check-prefix=OFF
// RUN: not nnx-opt %s --nnx-apply-cpu-schedule="bf16-dot=maybe" 2>&1 | FileCheck %s --check-prefix=BAD

// TILE-LABEL: func.func @linear(
// TILE-SAME:      %[[A:.*]]: tensor<?x64xbf16>, %[[W:.*]]: tensor<32x72x2xbf16> {nnx.parameter = "fc.weight"}
// TILE-SAME:      nnx.parameter_layouts = {fc.weight = {permutation = array<i64: 1, 0, 2>, shape = array<i64: 72, 32, 2>}}
// TILE:         %[[A3:.*]] = tensor.expand_shape %[[A]] {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, 32, 2] : tensor<?x64xbf16> into tensor<?x32x2xbf16>
// TILE:         linalg.generic {indexing_maps = [#[[MA:.*]], #[[MB:.*]], #[[MC:.*]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// TILE-SAME:      ins(%[[A3]], %[[W]] : tensor<?x32x2xbf16>, tensor<32x72x2xbf16>) outs(%{{.*}} : tensor<?x72xf32>)
// TILE-NOT:     linalg.matmul

// OFF-LABEL: func.func @linear(
// OFF-SAME:      tensor<64x72xbf16>
// OFF:         vector.contract
// OFF-NOT:     x86vector

// The lowered tiles: 6 rows x 4 vectors of 16 accumulators per pair of K
// (24 dots), then one-vector tiles whose last one is masked (72 = 64 + 8).
// LOWER-LABEL: func.func @linear(
// LOWER-COUNT-24: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// LOWER:         vector.maskedload %{{.*}} : memref<32x144xbf16>, vector<32xi1>, vector<32xbf16> into vector<32xbf16>
// LOWER:         vector.maskedstore %{{.*}} : memref<?x72xf32>, vector<16xi1>, vector<16xf32>
// LOWER-NOT:     linalg.generic

// With threads, one N cache block (72 columns) is no loop at all.
// THREADS-LABEL: func.func @linear(
// THREADS-NOT:     scf.forall
// THREADS:         x86vector.avx512.dot

// BAD: nnx-apply-cpu-schedule: bf16-dot=maybe is not a choice the schedule knows (expected target, on or off)

func.func @linear(%a: tensor<?x64xbf16>, %w: tensor<72x64xbf16> {nnx.parameter = "fc.weight"}, %c: tensor<?x72xf32>) -> tensor<?x72xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x64xbf16>, tensor<72x64xbf16>)
         outs(%c : tensor<?x72xf32>) -> tensor<?x72xf32>
  return %r : tensor<?x72xf32>
}

// -----

// A constant weight is packed at compile time: element (k2, n, p) of the
// constant is W[n, 2 k2 + p].
// TILE-LABEL: func.func @constant_weight(
// TILE:         arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]], {{\[\[}}3.000000e+00, 4.000000e+00], [7.000000e+00, 8.000000e+00]]]> : tensor<2x2x2xbf16>
// TILE-NOT:     linalg.transpose
// OFF-LABEL: func.func @constant_weight(
// LOWER-LABEL: func.func @constant_weight(
// LOWER:         x86vector.avx512.dot
// THREADS-LABEL: func.func @constant_weight(
func.func @constant_weight(%a: tensor<?x4xbf16>, %c: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xbf16>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x4xbf16>, tensor<2x4xbf16>)
         outs(%c : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// An odd K has no pairs: the f32 tiles take it.
// TILE-LABEL: func.func @odd_k(
// TILE-NOT:     iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// TILE:         vector.contract
// OFF-LABEL: func.func @odd_k(
// LOWER-LABEL: func.func @odd_k(
// LOWER-NOT:     x86vector
// THREADS-LABEL: func.func @odd_k(
func.func @odd_k(%a: tensor<?x3xbf16>, %w: tensor<16x3xbf16>, %c: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x3xbf16>, tensor<16x3xbf16>)
         outs(%c : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// 256 columns are two N cache blocks of 128: with threads, an scf.forall
// over them (each thread owns whole columns).
// TILE-LABEL: func.func @wide(
// OFF-LABEL: func.func @wide(
// LOWER-LABEL: func.func @wide(
// LOWER:         scf.for %{{.*}} = %c0 to %c256 step %c128
// THREADS-LABEL: func.func @wide(
// THREADS:         scf.forall (%{{.*}}) = (0) to (256) step (128)
// THREADS:           x86vector.avx512.dot
func.func @wide(%a: tensor<?x8xbf16>, %w: tensor<256x8xbf16>, %c: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x8xbf16>, tensor<256x8xbf16>)
         outs(%c : tensor<?x256xf32>) -> tensor<?x256xf32>
  return %r : tensor<?x256xf32>
}

// -----

// A table tied to the head (GPT-2's wte and lm_head): the embedding's
// element reads follow the packed layout (W[i, j] is element (j / 2, i,
// j % 2)), so the parameter is still packed once at bind time, not per call.
// TILE-LABEL: func.func @tied(
// TILE-SAME:      %[[W:[a-z0-9]+]]: tensor<4x72x2xbf16> {nnx.parameter = "wte.weight"}
// TILE-SAME:      nnx.parameter_layouts = {wte.weight = {permutation = array<i64: 1, 0, 2>, shape = array<i64: 72, 4, 2>}}
// TILE:         linalg.generic
// TILE:           %[[HALF:.*]] = arith.divui %[[J:.*]], %c2 : index
// TILE:           %[[PAIR:.*]] = arith.remui %[[J]], %c2 : index
// TILE:           tensor.extract %[[W]][%[[HALF]], %{{.*}}, %[[PAIR]]] : tensor<4x72x2xbf16>
// TILE-NOT:     linalg.transpose
// OFF-LABEL: func.func @tied(
// LOWER-LABEL: func.func @tied(
// THREADS-LABEL: func.func @tied(
func.func @tied(%ids: tensor<3xindex>, %w: tensor<72x8xbf16> {nnx.parameter = "wte.weight"}, %c: tensor<3x72xf32>) -> tensor<3x72xf32> {
  %e = tensor.empty() : tensor<3x8xbf16>
  %rows = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xindex>) outs(%e : tensor<3x8xbf16>) {
  ^bb0(%id: index, %out: bf16):
    %j = linalg.index 1 : index
    %v = tensor.extract %w[%id, %j] : tensor<72x8xbf16>
    linalg.yield %v : bf16
  } -> tensor<3x8xbf16>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
         ins(%rows, %w : tensor<3x8xbf16>, tensor<72x8xbf16>)
         outs(%c : tensor<3x72xf32>) -> tensor<3x72xf32>
  return %r : tensor<3x72xf32>
}

// -----

// A convolution's taps read one packed weight: the F x C x kh x kw
// parameter, transposed to kh x kw x C x F for the taps and split into
// pairs of C, is asked for as kh x kw x C/2 x F x 2 (one split and one
// permutation, composed) and each tap is a contiguous slice of it; the
// lowered loop of taps runs the vdpbf16ps kernel on that slice (nothing is
// packed per call or per tap).
// TILE-LABEL: func.func @conv3x3(
// TILE-SAME:      %[[W:[a-z0-9]+]]: tensor<3x3x8x4x2xbf16> {nnx.parameter = "conv.weight"}
// TILE-SAME:      nnx.parameter_layouts = {conv.weight = {permutation = array<i64: 3, 4, 1, 0, 2>, shape = array<i64: 4, 8, 2, 3, 3>}}
// TILE-NOT:     linalg.transpose
// TILE:         scf.for
// TILE:           %[[TAP:.*]] = tensor.extract_slice %[[W]][%{{.*}}, %{{.*}}, 0, 0, 0] [1, 1, 8, 4, 2] [1, 1, 1, 1, 1] : tensor<3x3x8x4x2xbf16> to tensor<8x4x2xbf16>
// TILE:           linalg.generic {{.*}} ins(%{{.*}}, %[[TAP]] : tensor<48x8x2xbf16>, tensor<8x4x2xbf16>)
// TILE-NOT:     linalg.transpose
// OFF-LABEL: func.func @conv3x3(
// OFF-NOT:     x86vector
// LOWER-LABEL: func.func @conv3x3(
// LOWER:         scf.for
// LOWER:           memref.subview %{{.*}} : memref<3x3x8x4x2xbf16> to memref<8x4x2xbf16, strided<[8, 2, 1], offset: ?>>
// LOWER:           x86vector.avx512.dot
// LOWER-NOT:     linalg.generic {{.*}}"reduction", "reduction"
// THREADS-LABEL: func.func @conv3x3(
func.func @conv3x3(%x: tensor<?x8x8x16xbf16>, %w: tensor<4x16x3x3xbf16> {nnx.parameter = "conv.weight"}, %out: tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32> {
  %e = tensor.empty() : tensor<3x3x16x4xbf16>
  %t = linalg.transpose ins(%w : tensor<4x16x3x3xbf16>) outs(%e : tensor<3x3x16x4xbf16>) permutation = [2, 3, 1, 0]
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %t : tensor<?x8x8x16xbf16>, tensor<3x3x16x4xbf16>) outs(%out : tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32>
  return %r : tensor<?x6x6x4xf32>
}

// -----

// A bf16 conv of odd C (an RGB stem) gets one zero channel more in the
// input and the weight, so that its taps have even K for the vdpbf16ps
// tiles: the input's zero padding grows by it (its phases hold 4 channels,
// the image's 3 written into them, the 4th left zero), the weight is
// padded in C and packed whole. bf16-dot=off keeps C = 3.
// TILE-LABEL: func.func @stem(
// TILE:         tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// TILE:         tensor<3x3x4x8xbf16>
// TILE:         %[[PH:.*]] = linalg.fill {{.*}} -> tensor<?x2x2x7x6x4xbf16>
// TILE:         tensor.insert_slice %{{.*}} into %[[PH]][0, 0, 0, 1, 1, 0] [%{{.*}}, 1, 1, 4, 4, 3] [1, 1, 1, 1, 1, 1] : tensor<?x4x4x3xbf16> into tensor<?x2x2x7x6x4xbf16>
// TILE:         scf.for
// TILE:           linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<24x2x2xbf16>, tensor<2x8x2xbf16>)
// OFF-LABEL: func.func @stem(
// OFF-NOT:     x4xbf16
// OFF:         return
// LOWER-LABEL: func.func @stem(
// LOWER:         x86vector.avx512.dot
// THREADS-LABEL: func.func @stem(
func.func @stem(%x: tensor<?x9x9x3xbf16>, %w: tensor<3x3x3x8xbf16> {nnx.parameter = "stem.weight"}, %out: tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<?x9x9x3xbf16> to tensor<?x11x11x3xbf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : tensor<?x11x11x3xbf16>, tensor<3x3x3x8xbf16>) outs(%out : tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
  return %r : tensor<?x4x4x8xf32>
}
