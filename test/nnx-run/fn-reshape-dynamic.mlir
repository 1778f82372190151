// Reshapes with batch AND sequence dynamic around Linears, executed: a
// regression test for MLIR 22.1's expand-strided-metadata, which crashes
// (SIGSEGV, llvm-project #186830) on a collapse_shape / expand_shape whose
// group holds two dynamic dims. nnx-lower-functional must lower such a
// reshape (x.view(-1, 8), y.view(b, t, 8), x.flatten()) to tensor.reshape,
// and nnx.linear on tensor<?x?x8xf32> must not collapse its leading dims.
// Compared with NumPy (Inputs/fn_ops.py) at rtol = atol = 1e-5 at two
// (batch, seq) pairs.

// RUN: %python %S/Inputs/fn_ops.py make %t 2 5
// RUN: nnx-run %s --input %t/x_2_5.npy --output %t/y_2_5.npy --output %t/flat_2_5.npy
// RUN: %python %S/Inputs/fn_ops.py check-reshape %t 2 5 | FileCheck %s --check-prefix=OK25
// OK25: ok 2 5

// RUN: %python %S/Inputs/fn_ops.py make %t 3 7
// RUN: nnx-run %s --input %t/x_3_7.npy --output %t/y_3_7.npy --output %t/flat_3_7.npy
// RUN: %python %S/Inputs/fn_ops.py check-reshape %t 3 7 | FileCheck %s --check-prefix=OK37
// OK37: ok 3 7

// The lowering: tensor.reshape where a group would hold two dynamic dims,
// expand/collapse_shape elsewhere.
// RUN: nnx-opt %s --nnx-build-forward --nnx-lower-functional | FileCheck %s
// CHECK-LABEL: func.func @forward(
// CHECK:         tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?x?x8xf32>, tensor<2xindex>) -> tensor<?x8xf32>
// CHECK:         linalg.matmul
// CHECK:         tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?x8xf32>, tensor<3xindex>) -> tensor<?x?x8xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<?x2x?x4xf32> into tensor<?x2x?xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape {{.*}} : tensor<?x2x?xf32> into tensor<?x2x?x4xf32>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<?x?x2x4xf32> into tensor<?x?x8xf32>
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?x?x8xf32>, tensor<1xindex>) -> tensor<?xf32>

nnx.model @reshapes inputs(tensor<?x?x8xf32>) {
  nnx.module @root class = "Reshapes" {
    nnx.linear @q {weight = dense<[[-0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125], [0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875], [0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125], [-0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375], [0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625], [-0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25], [-0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25], [0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625]]> : tensor<8x8xf32>}
    nnx.linear @o {weight = dense<[[-0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25], [0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625], [-0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375], [0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125], [0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875], [-0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125], [0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0], [-0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125]]> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
      %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
      %bt = arith.muli %b, %t : index
      %flat = nnx.fn.reshape %x [%bt, 8] : tensor<?x?x8xf32> -> tensor<?x8xf32>
      %y = nnx.call @q(%flat) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %y3 = nnx.fn.reshape %y [%b, %t, 8] : tensor<?x8xf32> -> tensor<?x?x8xf32>
      %y4 = nnx.fn.reshape %y3 [%b, %t, 2, 4] : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
      %yp = nnx.fn.permute %y4 [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
      %t4 = arith.muli %t, %c4 : index
      %ym = nnx.fn.reshape %yp [%b, 2, %t4] : tensor<?x2x?x4xf32> -> tensor<?x2x?xf32>
      %yb = nnx.fn.reshape %ym [%b, 2, %t, 4] : tensor<?x2x?xf32> -> tensor<?x2x?x4xf32>
      %yc = nnx.fn.permute %yb [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
      %y8 = nnx.fn.reshape %yc [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
      %out = nnx.call @o(%y8) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      %n = arith.muli %bt, %c8 : index
      %all = nnx.fn.reshape %x [%n] : tensor<?x?x8xf32> -> tensor<?xf32>
      nnx.return %out, %all : tensor<?x?x8xf32>, tensor<?xf32>
    }
  }
}
