// RUN: nnx-opt %s --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule="stage=tile-matmul parallel=false" | FileCheck %s
// RUN: nnx-opt %s --nnx-set-target=vector-bits=256 --nnx-apply-cpu-schedule="stage=tile-matmul parallel=false" | FileCheck %s
// RUN: nnx-opt %s --nnx-set-target=vector-bits=512 --nnx-apply-cpu-schedule="stage=tile-matmul parallel=true" | FileCheck %s --check-prefix=THREADS

// A channels-last pool becomes one elementwise generic of its window taps
// (PoolingTaps.cpp): tap (i, j) is the strided slice of the padded input
// at (0, i * d_h, j * d_w, 0), steps (1, s_h, s_w, 1), as large as the
// destination; the body folds the taps into the destination with the
// pool's own op, tap (0, 0) first. With threads it is split like any
// other elementwise generic.

// CHECK-LABEL: func.func @max_3x3_stride_2(
// CHECK-SAME:      %[[X:.*]]: tensor<?x113x113x64xf32>, %[[OUT:.*]]: tensor<?x56x56x64xf32>
// CHECK-DAG:     %[[N:.*]] = tensor.dim %[[OUT]], %c0
// CHECK-DAG:     %[[T00:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [%[[N]], 56, 56, 64] [1, 2, 2, 1]
// CHECK-DAG:     %[[T01:.*]] = tensor.extract_slice %[[X]][0, 0, 1, 0] [%[[N]], 56, 56, 64] [1, 2, 2, 1]
// CHECK-DAG:     %[[T22:.*]] = tensor.extract_slice %[[X]][0, 2, 2, 0] [%[[N]], 56, 56, 64] [1, 2, 2, 1]
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME:        ins(%[[T00]], %[[T01]], {{.*}}, %[[T22]] : {{.*}}) outs(%[[OUT]] : tensor<?x56x56x64xf32>)
// CHECK:         ^bb0(%[[A:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32, {{.*}}, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK:           %[[M0:.*]] = arith.maximumf %[[ACC]], %[[A]] : f32
// CHECK:           %[[M1:.*]] = arith.maximumf %[[M0]], %[[B]] : f32
// CHECK-COUNT-7:   arith.maximumf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.pooling_nhwc_max

// THREADS-LABEL: func.func @max_3x3_stride_2(
// THREADS:         scf.forall
// THREADS:           linalg.generic
// THREADS-COUNT-9:     arith.maximumf
// THREADS:           tensor.parallel_insert_slice
func.func @max_3x3_stride_2(%x: tensor<?x113x113x64xf32>, %out: tensor<?x56x56x64xf32>) -> tensor<?x56x56x64xf32> {
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<?x113x113x64xf32>, tensor<3x3xf32>) outs(%out : tensor<?x56x56x64xf32>) -> tensor<?x56x56x64xf32>
  return %r : tensor<?x56x56x64xf32>
}

// A sum pool with dilation 2 on dynamic spatial sizes: taps at multiples of
// the dilation, steps of the stride (1: the attributes' default), the sizes
// the destination's.
// CHECK-LABEL: func.func @sum_dilated(
// CHECK-SAME:      %[[X:.*]]: tensor<2x?x?x8xf32>, %[[OUT:.*]]: tensor<2x?x?x8xf32>
// CHECK-DAG:     %[[H:.*]] = tensor.dim %[[OUT]], %c1
// CHECK-DAG:     %[[W:.*]] = tensor.dim %[[OUT]], %c2
// CHECK-DAG:     tensor.extract_slice %[[X]][0, 0, 0, 0] [2, %[[H]], %[[W]], 8] [1, 1, 1, 1]
// CHECK-DAG:     tensor.extract_slice %[[X]][0, 0, 2, 0] [2, %[[H]], %[[W]], 8] [1, 1, 1, 1]
// CHECK-DAG:     tensor.extract_slice %[[X]][0, 2, 0, 0] [2, %[[H]], %[[W]], 8] [1, 1, 1, 1]
// CHECK-DAG:     tensor.extract_slice %[[X]][0, 2, 2, 0] [2, %[[H]], %[[W]], 8] [1, 1, 1, 1]
// CHECK:         linalg.generic
// CHECK-COUNT-4:   arith.addf
// CHECK-NEXT:      linalg.yield
func.func @sum_dilated(%x: tensor<2x?x?x8xf32>, %out: tensor<2x?x?x8xf32>) -> tensor<2x?x?x8xf32> {
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_sum {dilations = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<2x?x?x8xf32>, tensor<2x2xf32>) outs(%out : tensor<2x?x?x8xf32>) -> tensor<2x?x?x8xf32>
  return %r : tensor<2x?x?x8xf32>
}

// A window of more than 64 taps (9 x 9) stays a named op.
// CHECK-LABEL: func.func @large_window(
// CHECK:         linalg.pooling_nhwc_max
// CHECK-NOT:     linalg.generic
func.func @large_window(%x: tensor<1x9x9x4xf32>, %out: tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32> {
  %w = tensor.empty() : tensor<9x9xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<9x9xf32>) outs(%out : tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  return %r : tensor<1x1x1x4xf32>
}

// A bf16 max pool folds its taps in f32 and rounds once (no instruction
// computes on bf16; LLVM kept its own promotion of a bf16 max scalar).
// CHECK-LABEL: func.func @max_bf16(
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[A:[a-z0-9_]+]]: bf16, %[[B:[a-z0-9_]+]]: bf16, %[[C:[a-z0-9_]+]]: bf16, %[[D:[a-z0-9_]+]]: bf16, %[[ACC:[a-z0-9_]+]]: bf16):
// CHECK:           %[[ACC32:.*]] = arith.extf %[[ACC]] : bf16 to f32
// CHECK:           %[[A32:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK:           %[[M0:.*]] = arith.maximumf %[[ACC32]], %[[A32]] : f32
// CHECK:           %[[B32:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK:           %[[M1:.*]] = arith.maximumf %[[M0]], %[[B32]] : f32
// CHECK-COUNT-2:   arith.maximumf %{{.*}} : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16
func.func @max_bf16(%x: tensor<?x9x9x32xbf16>, %out: tensor<?x8x8x32xbf16>) -> tensor<?x8x8x32xbf16> {
  %w = tensor.empty() : tensor<2x2xbf16>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x9x9x32xbf16>, tensor<2x2xbf16>) outs(%out : tensor<?x8x8x32xbf16>) -> tensor<?x8x8x32xbf16>
  return %r : tensor<?x8x8x32xbf16>
}
