// RUN: nnx-opt %s -split-input-file --nnx-outline-kernels | FileCheck %s

// Two equal ReLUs share one kernel; the constant is cloned into it (not
// passed); a different op (the sum loop, with a result) gets its own; the
// function left is glue, compiled without optimization.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: memref<?x4xf32>, %[[Y:.*]]: memref<?x4xf32>, %[[Z:.*]]: memref<?x4xf32>, %[[N:.*]]: index)
// CHECK-SAME:      passthrough = ["noinline", "optnone"]
// CHECK:         call @forward_kernel_0(%[[X]], %[[Y]]) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
// CHECK-NEXT:    call @forward_kernel_0(%[[Y]], %[[Z]]) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
// CHECK-NEXT:    %[[S:.*]] = call @forward_kernel_1(%[[N]]) : (index) -> index
// CHECK-NEXT:    return %[[S]] : index
// CHECK:       func.func private @forward_kernel_0(%[[A:.*]]: memref<?x4xf32>, %[[B:.*]]: memref<?x4xf32>) {
// CHECK-NEXT:    %[[C:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[A]] : memref<?x4xf32>) outs(%[[B]] : memref<?x4xf32>)
// CHECK:           arith.maximumf %{{.*}}, %[[C]] : f32
// CHECK:         return
// CHECK:       func.func private @forward_kernel_1(%[[M:.*]]: index) -> index {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[R:.*]] = scf.for %{{.*}} = %[[C0]] to %[[M]] step %[[C1]] iter_args(%{{.*}} = %[[C0]]) -> (index)
// CHECK:         return %[[R]] : index
// CHECK-NOT:   func.func private @forward_kernel_2
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: memref<?x4xf32>, %y: memref<?x4xf32>, %z: memref<?x4xf32>, %n: index) -> index {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %cst : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<?x4xf32>) outs(%z : memref<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %cst : f32
    linalg.yield %0 : f32
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %next = arith.addi %acc, %i : index
    scf.yield %next : index
  }
  return %s : index
}

// -----

// A function without ops with regions is left alone.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT:     passthrough
// CHECK-NOT:     call
func.func @plain(%a: index, %b: index) -> index {
  %0 = arith.addi %a, %b : index
  return %0 : index
}

// -----

// Two run-time checks equal but for the message global they name share one
// kernel: the address is passed, not cloned (it shapes no code).
// CHECK-LABEL: func.func @checks(
// CHECK-SAME:      %[[B:[^:]*]]: i1, %[[N:[^:]*]]: index)
// CHECK-DAG:     %[[M0:.*]] = llvm.mlir.addressof @__nnx_check_a : !llvm.ptr
// CHECK-DAG:     %[[M1:.*]] = llvm.mlir.addressof @__nnx_check_b : !llvm.ptr
// CHECK:         call @checks_kernel_0(%[[B]], %[[N]], %[[M0]]) : (i1, index, !llvm.ptr) -> ()
// CHECK-NEXT:    call @checks_kernel_0(%[[B]], %[[N]], %[[M1]]) : (i1, index, !llvm.ptr) -> ()
// CHECK:       func.func private @checks_kernel_0(%{{.*}}: i1, %{{.*}}: index, %[[P:.*]]: !llvm.ptr) {
// CHECK:           func.call @nnxRuntimeFail(%[[P]], %{{.*}}, %{{.*}})
// CHECK-NOT:   func.func private @checks_kernel_1
llvm.mlir.global internal constant @__nnx_check_a("a\00") {addr_space = 0 : i32}
llvm.mlir.global internal constant @__nnx_check_b("b\00") {addr_space = 0 : i32}
func.func private @nnxRuntimeFail(!llvm.ptr, i64, i64)
func.func @checks(%bad: i1, %n: index) {
  %a = llvm.mlir.addressof @__nnx_check_a : !llvm.ptr
  %b = llvm.mlir.addressof @__nnx_check_b : !llvm.ptr
  %c0 = arith.constant 0 : i64
  scf.if %bad {
    %v = arith.index_cast %n : index to i64
    func.call @nnxRuntimeFail(%a, %v, %c0) : (!llvm.ptr, i64, i64) -> ()
  }
  scf.if %bad {
    %v = arith.index_cast %n : index to i64
    func.call @nnxRuntimeFail(%b, %v, %c0) : (!llvm.ptr, i64, i64) -> ()
  }
  return
}
