// The functional pools (F.max_pool2d, F.avg_pool2d,
// F.adaptive_avg_pool2d) run through nnx-run on a dynamic batch and image
// size, at two sizes, each output compared with torch.nn.functional's own
// pools in float64 (Inputs/fn_pooling.py gives the bound): ceil mode,
// padding, dilation, count_include_pad off and on, the global and a 2 x 3
// adaptive pool. A window larger than the padded input, and an input size
// that an adaptive pool's output size does not divide, are errors naming
// the op (exit 1).

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/fn_pooling.py make %t 1 6 9
// RUN: nnx-run %s --input %t/x_1_6_9.npy --output %t/max_1_6_9.npy \
// RUN:   --output %t/maxd_1_6_9.npy --output %t/avg_1_6_9.npy --output %t/avg2_1_6_9.npy \
// RUN:   --output %t/global_1_6_9.npy --output %t/grid_1_6_9.npy
// RUN: %python %S/Inputs/fn_pooling.py check %t 1 6 9 | FileCheck %s --check-prefix=OK1
// OK1: ok 1 6 9

// RUN: %python %S/Inputs/fn_pooling.py make %t 3 14 21
// RUN: nnx-run %s --input %t/x_3_14_21.npy --output %t/max_3_14_21.npy \
// RUN:   --output %t/maxd_3_14_21.npy --output %t/avg_3_14_21.npy --output %t/avg2_3_14_21.npy \
// RUN:   --output %t/global_3_14_21.npy --output %t/grid_3_14_21.npy
// RUN: %python %S/Inputs/fn_pooling.py check %t 3 14 21 | FileCheck %s --check-prefix=OK3
// OK3: ok 3 14 21

// 2 x 9: the dilated 2 x 2 max pool spans 3 rows.
// RUN: %python %S/Inputs/fn_pooling.py make %t 1 2 9
// RUN: %exit1 nnx-run %s --input %t/x_1_2_9.npy 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: nnx-run: error: 'nnx.fn.max_pool2d' at {{.*}}fn-pooling.mlir:{{[0-9]+}}:{{[0-9]+}}:
// SMALL-SAME: window

// 5 rows do not split into the grid's 2.
// RUN: %python %S/Inputs/fn_pooling.py make %t 1 5 9
// RUN: %exit1 nnx-run %s --input %t/x_1_5_9.npy 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: nnx-run: error: 'nnx.fn.adaptive_avg_pool2d' at {{.*}}fn-pooling.mlir:{{[0-9]+}}:{{[0-9]+}}: the input's size in dim 2 is not a multiple of 2 (remainder 1)

func.func @forward(%x: tensor<?x3x?x?xf32>)
    -> (tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>,
        tensor<?x3x?x?xf32>, tensor<?x3x1x1xf32>, tensor<?x3x2x3xf32>) {
  %max = nnx.fn.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode} : tensor<?x3x?x?xf32> -> tensor<?x3x?x?xf32>
  %maxd = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>} : tensor<?x3x?x?xf32> -> tensor<?x3x?x?xf32>
  %avg = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode} : tensor<?x3x?x?xf32> -> tensor<?x3x?x?xf32>
  %avg2 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, count_include_pad} : tensor<?x3x?x?xf32> -> tensor<?x3x?x?xf32>
  %global = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<?x3x?x?xf32> -> tensor<?x3x1x1xf32>
  %grid = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 2, 3>} : tensor<?x3x?x?xf32> -> tensor<?x3x2x3xf32>
  return %max, %maxd, %avg, %avg2, %global, %grid
      : tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>,
        tensor<?x3x?x?xf32>, tensor<?x3x1x1xf32>, tensor<?x3x2x3xf32>
}
