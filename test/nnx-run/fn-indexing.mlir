// The logical ops, amax/amin, gather, index_select, topk and cumsum run
// through nnx-run (nnx-lower-functional, then the CPU pipeline), at two
// sizes of the dynamic dims, every output compared with NumPy
// (Inputs/fn_indexing.py): exactly, except the float cumsum (within the
// error bound of an ascending float32 sum). The inputs hold ties, NaN,
// +-inf and -0.0. An index out of range, and a topk k larger than a
// dynamic dim, are errors naming the op (exit 1), never a read outside the
// input.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/fn_indexing.py make %t 3 5
// RUN: nnx-run %s --input %t/a_3_5.npy --input %t/b_3_5.npy --input %t/x_3_5.npy \
// RUN:   --input %t/idx_3_5.npy --input %t/sel_3_5.npy --input %t/y_3_5.npy --input %t/m_3_5.npy \
// RUN:   --output %t/and_3_5.npy --output %t/or_3_5.npy --output %t/not_3_5.npy \
// RUN:   --output %t/amax_3_5.npy --output %t/amin_3_5.npy --output %t/imax_3_5.npy \
// RUN:   --output %t/gather_3_5.npy --output %t/rows_3_5.npy --output %t/cols_3_5.npy \
// RUN:   --output %t/topv_3_5.npy --output %t/topi_3_5.npy --output %t/lowv_3_5.npy \
// RUN:   --output %t/lowi_3_5.npy --output %t/csum_3_5.npy --output %t/icsum_3_5.npy
// RUN: %python %S/Inputs/fn_indexing.py check %t 3 5 | FileCheck %s --check-prefix=OK35
// OK35: ok 3 5

// RUN: %python %S/Inputs/fn_indexing.py make %t 6 37
// RUN: nnx-run %s --input %t/a_6_37.npy --input %t/b_6_37.npy --input %t/x_6_37.npy \
// RUN:   --input %t/idx_6_37.npy --input %t/sel_6_37.npy --input %t/y_6_37.npy --input %t/m_6_37.npy \
// RUN:   --output %t/and_6_37.npy --output %t/or_6_37.npy --output %t/not_6_37.npy \
// RUN:   --output %t/amax_6_37.npy --output %t/amin_6_37.npy --output %t/imax_6_37.npy \
// RUN:   --output %t/gather_6_37.npy --output %t/rows_6_37.npy --output %t/cols_6_37.npy \
// RUN:   --output %t/topv_6_37.npy --output %t/topi_6_37.npy --output %t/lowv_6_37.npy \
// RUN:   --output %t/lowi_6_37.npy --output %t/csum_6_37.npy --output %t/icsum_6_37.npy
// RUN: %python %S/Inputs/fn_indexing.py check %t 6 37 | FileCheck %s --check-prefix=OK637
// OK637: ok 6 37

// Out of range: gather's index 8 of a dim of 8, index_select's -1.
// RUN: %python %S/Inputs/fn_indexing.py bad %t 3 5
// RUN: %exit1 nnx-run %s --input %t/a_3_5.npy --input %t/b_3_5.npy --input %t/x_3_5.npy \
// RUN:   --input %t/idx8_3_5.npy --input %t/sel_3_5.npy --input %t/y_3_5.npy --input %t/m_3_5.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GATHER
// GATHER: nnx-run: error: 'nnx.fn.gather' (gather_0) at {{.*}}fn-indexing.mlir:{{[0-9]+}}:{{[0-9]+}}: index 8 is out of bounds for dimension 1 of the input, of size 8
// RUN: %exit1 nnx-run %s --input %t/a_3_5.npy --input %t/b_3_5.npy --input %t/x_3_5.npy \
// RUN:   --input %t/idx_3_5.npy --input %t/selneg_3_5.npy --input %t/y_3_5.npy --input %t/m_3_5.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SELECT
// SELECT: nnx-run: error: 'nnx.fn.index_select' (index_select_0) at {{.*}}: index -1 is out of bounds for dimension 0 of the input, of size 3
// topk's k = 2 over the 1 row of y (its dim 0 is dynamic).
// RUN: %python -c "import numpy as np; np.save('%t/y1.npy', np.ones((1, 3), np.float32))"
// RUN: %exit1 nnx-run %s --input %t/a_3_5.npy --input %t/b_3_5.npy --input %t/x_3_5.npy \
// RUN:   --input %t/idx_3_5.npy --input %t/sel_3_5.npy --input %t/y1.npy --input %t/m_3_5.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TOPK
// TOPK: nnx-run: error: 'nnx.fn.topk' (topk_1) at {{.*}}: k is 2, larger than dimension 0 of the input (1)

func.func @forward(%a: tensor<?x4xi1>, %b: tensor<4xi1>, %x: tensor<?x8xf32>,
                   %idx: tensor<?x3xi64>, %sel: tensor<?xi32>,
                   %y: tensor<?x?xf32>, %m: tensor<?x?xi64>)
    -> (tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x1xf32>,
        tensor<8xf32>, tensor<i64>, tensor<?x3xf32>, tensor<?x8xf32>,
        tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xi64>, tensor<2x?xf32>,
        tensor<2x?xi64>, tensor<?x?xf32>, tensor<?x?xi64>) {
  %and = nnx.fn.logical_and %a, %b : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
  %or = nnx.fn.logical_or %and, %b : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
  %true = arith.constant dense<true> : tensor<i1>
  %not = nnx.fn.logical_xor %a, %true : tensor<?x4xi1>, tensor<i1> -> tensor<?x4xi1>
  %amax = nnx.fn.amax %x {dims = array<i64: -1>, keepdim} : tensor<?x8xf32> -> tensor<?x1xf32>
  %amin = nnx.fn.amin %x {dims = array<i64: 0>} : tensor<?x8xf32> -> tensor<8xf32>
  %imax = nnx.fn.amax %m {dims = array<i64>} : tensor<?x?xi64> -> tensor<i64>
  %gather = nnx.fn.gather %x, %idx {dim = 1 : i64, nnx.source = "gather_0"} : tensor<?x8xf32>, tensor<?x3xi64> -> tensor<?x3xf32>
  %rows = nnx.fn.index_select %x, %sel {dim = 0 : i64, nnx.source = "index_select_0"} : tensor<?x8xf32>, tensor<?xi32> -> tensor<?x8xf32>
  %row0 = tensor.extract_slice %idx[0, 0] [1, 3] [1, 1] : tensor<?x3xi64> to tensor<3xi64>
  %cols = nnx.fn.index_select %x, %row0 {dim = -1 : i64} : tensor<?x8xf32>, tensor<3xi64> -> tensor<?x3xf32>
  %topv, %topi = nnx.fn.topk %x {k = 3 : i64, dim = -1 : i64, largest, sorted, nnx.source = "topk_0"} : tensor<?x8xf32> -> tensor<?x3xf32>, tensor<?x3xi64>
  %lowv, %lowi = nnx.fn.topk %y {k = 2 : i64, dim = 0 : i64, sorted, nnx.source = "topk_1"} : tensor<?x?xf32> -> tensor<2x?xf32>, tensor<2x?xi64>
  %csum = nnx.fn.cumsum %y {dim = 1 : i64} : tensor<?x?xf32>
  %icsum = nnx.fn.cumsum %m {dim = -1 : i64} : tensor<?x?xi64>
  return %and, %or, %not, %amax, %amin, %imax, %gather, %rows, %cols, %topv,
         %topi, %lowv, %lowi, %csum, %icsum
      : tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x1xf32>,
        tensor<8xf32>, tensor<i64>, tensor<?x3xf32>, tensor<?x8xf32>,
        tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xi64>, tensor<2x?xf32>,
        tensor<2x?xi64>, tensor<?x?xf32>, tensor<?x?xi64>
}
