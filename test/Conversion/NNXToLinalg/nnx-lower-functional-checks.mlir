// RUN: nnx-opt %s --nnx-lower-functional -split-input-file | FileCheck %s

// The run-time checks nnx-lower-functional emits (docs/Lowering.md,
// "Run-time checks"): an scf.if of the failed predicate calling
// nnxRuntimeFail with the message and both sizes, before the op; none where
// the sizes are provably equal.

// The contracted dims of a matmul.
// CHECK-DAG: llvm.mlir.global internal constant @[[$MM:__nnx_check_[0-9a-f]+]]("'nnx.fn.matmul' (matmul_0) at {{.*}}: dimension 1 of the lhs is {0} and dimension 0 of the rhs is {1}; they must be equal\00")
// CHECK-DAG: func.func private @nnxRuntimeFail(!llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<?x?xf32>, %[[B:.*]]: tensor<?x?xf32>
// CHECK-DAG:     %[[K0:.*]] = tensor.dim %[[A]], %c1{{.*}}
// CHECK-DAG:     %[[K1:.*]] = tensor.dim %[[B]], %c0{{.*}}
// CHECK:         %[[BAD:.*]] = arith.cmpi ne, %[[K0]], %[[K1]] : index
// CHECK:         scf.if %[[BAD]] {
// CHECK:           %[[M:.*]] = llvm.mlir.addressof @[[$MM]] : !llvm.ptr
// CHECK-DAG:       %[[X:.*]] = arith.index_cast %[[K0]] : index to i64
// CHECK-DAG:       %[[Y:.*]] = arith.index_cast %[[K1]] : index to i64
// CHECK:           func.call @nnxRuntimeFail(%[[M]], %[[X]], %[[Y]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK:         } {nnx_runtime_check}
// CHECK:         linalg.generic
// CHECK-NOT:     scf.if
// CHECK:         return
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = nnx.fn.matmul %a, %b {nnx.source = "matmul_0"} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// Static sizes need no check; neither does one value against itself (the
// result's dims are the operands').
// CHECK-NOT: llvm.mlir.global
// CHECK-NOT: nnxRuntimeFail
// CHECK-LABEL: func.func @consistent(
// CHECK-NOT:     scf.if
// CHECK:         return
func.func @consistent(%a: tensor<?x4xf32>, %b: tensor<4x5xf32>) -> tensor<?x5xf32> {
  %y = nnx.fn.matmul %a, %b : tensor<?x4xf32>, tensor<4x5xf32> -> tensor<?x5xf32>
  %z = nnx.fn.add %y, %y : tensor<?x5xf32>, tensor<?x5xf32> -> tensor<?x5xf32>
  return %z : tensor<?x5xf32>
}

// -----

// A broadcast: the dims of both operands (the result's are the lhs').
// CHECK-LABEL: func.func @add(
// CHECK-SAME:      %[[A:.*]]: tensor<?x?xf32>, %[[B:.*]]: tensor<?x?xf32>
// CHECK:         tensor.empty
// CHECK:         %[[A0:.*]] = tensor.dim %[[A]], %c0{{.*}}
// CHECK:         %[[B0:.*]] = tensor.dim %[[B]], %c0{{.*}}
// CHECK:         arith.cmpi ne, %[[A0]], %[[B0]]
// CHECK:         scf.if
// CHECK:         %[[A1:.*]] = tensor.dim %[[A]], %c1{{.*}}
// CHECK:         %[[B1:.*]] = tensor.dim %[[B]], %c1{{.*}}
// CHECK:         arith.cmpi ne, %[[A1]], %[[B1]]
// CHECK:         scf.if
// CHECK-NOT:     scf.if
// CHECK:         linalg.generic
func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = nnx.fn.add %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// reshape: same rank with sizes that are not the input's is a
// tensor.reshape, its element count checked.
// CHECK: llvm.mlir.global internal constant @{{.*}}("'nnx.fn.reshape' at {{.*}}: the sizes given hold {0} elements, the input {1}\00")
// CHECK-LABEL: func.func @reshape(
// CHECK:         %[[SIZES:.*]] = arith.muli
// CHECK:         %[[IN:.*]] = arith.muli
// CHECK:         arith.cmpi ne, %[[SIZES]], %[[IN]]
// CHECK:         scf.if
// CHECK:         tensor.reshape
func.func @reshape(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %y = nnx.fn.reshape %a [%d0, %d0] : tensor<?x?xf32> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// The input's own sizes: nothing to do, nothing to check.
// CHECK-LABEL: func.func @same(
// CHECK-SAME:      %[[A:.*]]: tensor<?x?xf32>
// CHECK-NOT:     scf.if
// CHECK-NOT:     tensor.reshape
// CHECK:         return %[[A]]
func.func @same(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %y = nnx.fn.reshape %a [%d0, %d1] : tensor<?x?xf32> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// An expansion: the group of the dynamic dim holds it.
// CHECK: llvm.mlir.global internal constant @{{.*}}("'nnx.fn.reshape' at {{.*}}: dimensions [0, 1] of the result hold {0} elements, dimension 0 of the input {1} (this reshape splits or merges whole dimensions)\00")
// CHECK-LABEL: func.func @split(
// CHECK:         scf.if
// CHECK:         tensor.expand_shape
func.func @split(%a: tensor<?xf32>, %n: index) -> tensor<?x4xf32> {
  %y = nnx.fn.reshape %a [%n, 4] : tensor<?xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// concat: the dims that are not concatenated; extract_slice: inside.
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("'tensor.concat' (cat_0) at {{.*}}: dimension 0 of operand 0 is {0} and of operand 1 {1}; all but the concatenated dimension must be equal\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("'tensor.extract_slice' at {{.*}}: the slice in dimension 1 ends at {0}, past the source's size {1}\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("'tensor.extract_slice' at {{.*}}: the offset {0} in dimension 1 is negative\00")
// CHECK-LABEL: func.func @concat_slice(
// CHECK:         scf.if
// CHECK:         tensor.insert_slice
// CHECK:         arith.cmpi slt
// CHECK:         scf.if
// CHECK:         arith.cmpi ugt
// CHECK:         scf.if
// CHECK:         tensor.extract_slice
func.func @concat_slice(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %o: index) -> tensor<2x3xf32> {
  %y = tensor.concat dim(1) %a, %b {nnx.source = "cat_0"} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.extract_slice %y[0, %o] [2, 3] [1, 1] : tensor<?x?xf32> to tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// gather: every index in [0, size of dim 1), found by a reduction over the
// indices (the first bad one in row-major order, encoded INT64_MAX - p, and
// its value); the failure prints that index and the size. The index's
// other dims must not exceed the input's.
// CHECK-DAG: llvm.mlir.global internal constant @[[$RANGE:__nnx_check_[0-9a-f]+]]("'nnx.fn.gather' (gather_0) at {{.*}}: index {0} is out of bounds for dimension 1 of the input, of size {1}\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[$DIM:__nnx_check_[0-9a-f]+]]("'nnx.fn.gather' (gather_0) at {{.*}}: dimension 0 of the index is {0}, larger than the input's {1}\00")
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?xf32>, %[[I:[^:]*]]: tensor<?x2xi64>
// CHECK:         %[[N0:.*]] = tensor.dim %[[I]], %c0
// CHECK:         %[[X0:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[BIG:.*]] = arith.cmpi sgt, %[[N0]], %[[X0]] : index
// CHECK:         scf.if %[[BIG]] {
// CHECK:           llvm.mlir.addressof @[[$DIM]]
// CHECK:         } {nnx_runtime_check}
// CHECK:         %[[SIZE:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[BOUND:.*]] = arith.index_cast %[[SIZE]] : index to i64
// CHECK:         %[[FIRST:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[I]] : tensor<?x2xi64>)
// CHECK:           %[[LOW:.*]] = arith.cmpi slt, %[[V:.*]], %{{.*}} : i64
// CHECK:           %[[HIGH:.*]] = arith.cmpi sge, %[[V]], %[[BOUND]] : i64
// CHECK:           arith.ori %[[LOW]], %[[HIGH]] : i1
// CHECK:         %[[CODE:.*]] = tensor.extract %[[FIRST]]#0[] : tensor<i64>
// CHECK:         %[[INDEX:.*]] = tensor.extract %[[FIRST]]#1[] : tensor<i64>
// CHECK:         %[[BAD:.*]] = arith.cmpi ne, %[[CODE]], %{{.*}} : i64
// CHECK:         scf.if %[[BAD]] {
// CHECK:           %[[M:.*]] = llvm.mlir.addressof @[[$RANGE]] : !llvm.ptr
// CHECK:           func.call @nnxRuntimeFail(%[[M]], %[[INDEX]], %[[BOUND]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK:         } {nnx_runtime_check}
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[X]]
func.func @gather(%x: tensor<?x?xf32>, %i: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %y = nnx.fn.gather %x, %i {dim = 1 : i64, nnx.source = "gather_0"} : tensor<?x?xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// index_select of a static dim: the bound is the constant.
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("'nnx.fn.index_select' at {{.*}}: index {0} is out of bounds for dimension 0 of the input, of size {1}\00")
// CHECK-LABEL: func.func @index_select(
// CHECK:         %[[BOUND:.*]] = arith.index_cast %c5 : index to i64
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK:           arith.cmpi sge, %{{.*}}, %[[BOUND]] : i64
// CHECK:         scf.if
// CHECK:           func.call @nnxRuntimeFail(%{{.*}}, %{{.*}}, %[[BOUND]])
func.func @index_select(%x: tensor<5x?xf32>, %i: tensor<?xi32>) -> tensor<?x?xf32> {
  %y = nnx.fn.index_select %x, %i {dim = -2 : i64} : tensor<5x?xf32>, tensor<?xi32> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// topk over a dynamic dim: k at most its size; over a static one, none.
// CHECK-DAG: llvm.mlir.global internal constant @[[$K:__nnx_check_[0-9a-f]+]]("'nnx.fn.topk' at {{.*}}: k is {0}, larger than dimension 1 of the input ({1})\00")
// CHECK-LABEL: func.func @topk(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[BIG:.*]] = arith.cmpi sgt, %c3, %[[N]] : index
// CHECK:         scf.if %[[BIG]] {
// CHECK:           llvm.mlir.addressof @[[$K]]
// CHECK:         } {nnx_runtime_check}
// CHECK-NOT:     scf.if
// CHECK:         return
func.func @topk(%x: tensor<?x?xf32>, %y: tensor<?x8xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>, tensor<?x3xf32>, tensor<?x3xi64>) {
  %v, %i = nnx.fn.topk %x {k = 3 : i64, dim = 1 : i64, largest, sorted} : tensor<?x?xf32> -> tensor<?x3xf32>, tensor<?x3xi64>
  %w, %j = nnx.fn.topk %y {k = 3 : i64, dim = 1 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x3xf32>, tensor<?x3xi64>
  return %v, %i, %w, %j : tensor<?x3xf32>, tensor<?x3xi64>, tensor<?x3xf32>, tensor<?x3xi64>
}

// -----

// A guard is the check it states, with its own message; one that holds on
// constants leaves nothing.
// CHECK-DAG: llvm.mlir.global internal constant @[[$G:__nnx_check_[0-9a-f]+]]("model.py:12: `x.shape[0] > 3` held when exported; this call has {0} > {1}\00")
// CHECK-DAG: func.func private @nnxRuntimeFail(!llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @guard(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[BAD:.*]] = arith.cmpi sle, %[[B]], %[[C3:.*]] : index
// CHECK:         scf.if %[[BAD]] {
// CHECK:           %[[M:.*]] = llvm.mlir.addressof @[[$G]] : !llvm.ptr
// CHECK-DAG:       %[[L:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK-DAG:       %[[R:.*]] = arith.index_cast %[[C3]] : index to i64
// CHECK:           func.call @nnxRuntimeFail(%[[M]], %[[L]], %[[R]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK:         } {nnx_runtime_check}
// CHECK-NOT:     nnx.fn.guard
// CHECK-NOT:     scf.if
// CHECK:         return
func.func @guard(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  nnx.fn.guard sgt, %b, %c3, "model.py:12: `x.shape[0] > 3` held when exported; this call has {0} > {1}" : index
  nnx.fn.guard slt, %c3, %c4, "holds" : index
  return %x : tensor<?x8xf32>
}
