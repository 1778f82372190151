// Round trip of every nnx.fn op, in the syntax the PyTorch exporter emits,
// through text, generic form and bytecode.
// RUN: nnx-opt %s | FileCheck %s
// RUN: nnx-opt %s | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s

// CHECK-LABEL: func.func @binary(
// CHECK-SAME:      %[[A:.*]]: tensor<?x?x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<1x1x?x?xf32>, %[[Z:.*]]: tensor<f32>, %[[I:.*]]: tensor<?x4xi64>
func.func @binary(%a: tensor<?x?x8xf32>, %b: tensor<8xf32>,
                  %m: tensor<1x1x?x?xf32>, %z: tensor<f32>,
                  %i: tensor<?x4xi64>) {
  // CHECK: nnx.fn.add %[[A]], %[[B]] : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %0 = nnx.fn.add %a, %b : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  // CHECK: nnx.fn.sub %[[B]], %[[A]] : tensor<8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %1 = nnx.fn.sub %b, %a : tensor<8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  // CHECK: nnx.fn.mul %[[A]], %[[Z]] : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
  %2 = nnx.fn.mul %a, %z : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
  // CHECK: nnx.fn.div %[[Z]], %[[A]] : tensor<f32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %3 = nnx.fn.div %z, %a : tensor<f32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  // CHECK: nnx.fn.pow %[[A]], %[[Z]] : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
  %4 = nnx.fn.pow %a, %z : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
  // CHECK: nnx.fn.maximum %[[I]], %[[I]] : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi64>
  %5 = nnx.fn.maximum %i, %i : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi64>
  // CHECK: nnx.fn.minimum %[[A]], %[[B]] : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %6 = nnx.fn.minimum %a, %b : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  // CHECK: nnx.fn.eq %[[M]], %[[Z]] : tensor<1x1x?x?xf32>, tensor<f32> -> tensor<1x1x?x?xi1>
  %7 = nnx.fn.eq %m, %z : tensor<1x1x?x?xf32>, tensor<f32> -> tensor<1x1x?x?xi1>
  // CHECK: nnx.fn.ne %[[A]], %[[B]] : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xi1>
  %8 = nnx.fn.ne %a, %b : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xi1>
  // CHECK: nnx.fn.lt %[[I]], %[[I]] : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi1>
  %9 = nnx.fn.lt %i, %i : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi1>
  // CHECK: nnx.fn.le %[[A]], %[[B]] : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xi1>
  %10 = nnx.fn.le %a, %b : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xi1>
  // CHECK: nnx.fn.gt %[[A]], %[[Z]] : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xi1>
  %11 = nnx.fn.gt %a, %z : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xi1>
  // CHECK: nnx.fn.ge %[[M]], %[[M]] : tensor<1x1x?x?xf32>, tensor<1x1x?x?xf32> -> tensor<1x1x?x?xi1>
  %12 = nnx.fn.ge %m, %m : tensor<1x1x?x?xf32>, tensor<1x1x?x?xf32> -> tensor<1x1x?x?xi1>
  // CHECK: nnx.fn.eq %{{.*}}, %{{.*}} : tensor<1x1x?x?xi1>, tensor<1x1x?x?xi1> -> tensor<1x1x?x?xi1>
  %13 = nnx.fn.eq %7, %12 : tensor<1x1x?x?xi1>, tensor<1x1x?x?xi1> -> tensor<1x1x?x?xi1>
  return
}

// CHECK-LABEL: func.func @where_matmul(
func.func @where_matmul(%cond: tensor<1x1x?x?xi1>, %a: tensor<?x4x?x?xf32>,
                        %b: tensor<f32>, %q: tensor<?x4x?x16xf32>,
                        %w: tensor<16x8xf32>) {
  // CHECK: nnx.fn.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
  %0 = nnx.fn.where %cond, %a, %b : tensor<1x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
  // CHECK: nnx.fn.matmul %{{.*}}, %{{.*}} {transpose_b} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
  %s = nnx.fn.matmul %q, %q {transpose_b} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
  // CHECK: nnx.fn.matmul %{{.*}}, %{{.*}} : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %c = nnx.fn.matmul %s, %q : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  // CHECK: nnx.fn.matmul %{{.*}}, %{{.*}} : tensor<?x4x?x16xf32>, tensor<16x8xf32> -> tensor<?x4x?x8xf32>
  %d = nnx.fn.matmul %q, %w : tensor<?x4x?x16xf32>, tensor<16x8xf32> -> tensor<?x4x?x8xf32>
  return
}

// CHECK-LABEL: func.func @shapes(
// CHECK-SAME:      %[[X:.*]]: tensor<?x?x64xf32>, %[[MK:.*]]: tensor<?x?xi1>, %[[KV:.*]]: tensor<?x2x1x?x16xf32>, %[[BB:.*]]: index, %[[T:.*]]: index
func.func @shapes(%x: tensor<?x?x64xf32>, %m: tensor<?x?xi1>,
                  %kv: tensor<?x2x1x?x16xf32>, %b: index, %t: index) {
  // CHECK: %[[V:.*]] = nnx.fn.reshape %[[X]] [%[[BB]], %[[T]], 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %v = nnx.fn.reshape %x [%b, %t, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  // CHECK: nnx.fn.reshape %[[MK]] [1, 1, %[[T]], %[[T]]] : tensor<?x?xi1> -> tensor<1x1x?x?xi1>
  %u = nnx.fn.reshape %m [1, 1, %t, %t] : tensor<?x?xi1> -> tensor<1x1x?x?xi1>
  // CHECK: nnx.fn.expand %[[KV]] [%[[BB]], 2, 2, %[[T]], 16] : tensor<?x2x1x?x16xf32> -> tensor<?x2x2x?x16xf32>
  %e = nnx.fn.expand %kv [%b, 2, 2, %t, 16] : tensor<?x2x1x?x16xf32> -> tensor<?x2x2x?x16xf32>
  // CHECK: nnx.fn.permute %[[V]] [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %h = nnx.fn.permute %v [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  return
}

// CHECK-LABEL: func.func @rows(
func.func @rows(%s: tensor<?x4x?x?xf32>, %x: tensor<?x?x64xf32>) {
  // CHECK: nnx.fn.softmax %{{.*}} {dim = -1 : i64} : tensor<?x4x?x?xf32>
  %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x4x?x?xf32>
  // CHECK: nnx.fn.mean %{{.*}} {dims = array<i64: -1>, keepdim} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  %v = nnx.fn.mean %x {dims = array<i64: -1>, keepdim} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  // CHECK: nnx.fn.sum %{{.*}} {dims = array<i64: 1>} : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %w = nnx.fn.sum %x {dims = array<i64: 1>} : tensor<?x?x64xf32> -> tensor<?x64xf32>
  return
}

// CHECK-LABEL: func.func @activations(
func.func @activations(%x: tensor<?x?x64xf32>) {
  // CHECK: nnx.fn.gelu %{{.*}} {approximate = #nnx.gelu_approximation<tanh>} : tensor<?x?x64xf32>
  %g = nnx.fn.gelu %x {approximate = #nnx.gelu_approximation<tanh>} : tensor<?x?x64xf32>
  // CHECK: nnx.fn.gelu %{{.*}} : tensor<?x?x64xf32>
  %g2 = nnx.fn.gelu %x : tensor<?x?x64xf32>
  // CHECK: nnx.fn.silu %{{.*}} : tensor<?x?x64xf32>
  %s = nnx.fn.silu %x : tensor<?x?x64xf32>
  // CHECK: nnx.fn.relu %{{.*}} : tensor<?x?x64xf32>
  %r = nnx.fn.relu %x : tensor<?x?x64xf32>
  // CHECK: nnx.fn.sigmoid %{{.*}} : tensor<?x?x64xf32>
  %y = nnx.fn.sigmoid %x : tensor<?x?x64xf32>
  // CHECK: nnx.fn.dropout %{{.*}} {p = 1.000000e-01 : f64} : tensor<?x?x64xf32>
  %d = nnx.fn.dropout %x {p = 1.000000e-01 : f64} : tensor<?x?x64xf32>
  // CHECK: nnx.fn.dropout %{{.*}} {p = 2.500000e-01 : f64, seed = 7 : i64, train} : tensor<?x?x64xf32>
  %d2 = nnx.fn.dropout %x {p = 2.500000e-01 : f64, train, seed = 7 : i64} : tensor<?x?x64xf32>
  return
}

// CHECK-LABEL: func.func @factories(
func.func @factories(%t: index, %m: tensor<?x?xi1>, %f: tensor<1x1x?x?xf32>) {
  // CHECK: nnx.fn.arange %{{.*}} : tensor<?xi64>
  %i = nnx.fn.arange %t : tensor<?xi64>
  // CHECK: nnx.fn.arange %{{.*}} : tensor<?xf32>
  %a = nnx.fn.arange %t : tensor<?xf32>
  %c5 = arith.constant 5 : index
  // CHECK: nnx.fn.arange %{{.*}} : tensor<5xi32>
  %s = nnx.fn.arange %c5 : tensor<5xi32>
  // CHECK: nnx.fn.tril %{{.*}} : tensor<?x?xi1>
  %l = nnx.fn.tril %m {diagonal = 0 : i64} : tensor<?x?xi1>
  // CHECK: nnx.fn.triu %{{.*}} {diagonal = 1 : i64} : tensor<1x1x?x?xf32>
  %u = nnx.fn.triu %f {diagonal = 1 : i64} : tensor<1x1x?x?xf32>
  return
}

// In a forward region, beside upstream ops and calls.
// CHECK-LABEL: nnx.model @attn
// CHECK:         nnx.fn.matmul %{{.*}}, %{{.*}} {nnx.source = "matmul_0", transpose_b}
// CHECK:         nnx.fn.softmax %{{.*}} {dim = -1 : i64, nnx.source = "softmax_0"}
nnx.model @attn inputs(tensor<?x?x16xf32>) {
  nnx.module @root class = "Attn" {
    nnx.forward @forward(%x: tensor<?x?x16xf32>) -> tensor<?x?x?xf32> {
      %s = nnx.fn.matmul %x, %x {transpose_b, nnx.source = "matmul_0"} : tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x?xf32>
      %p = nnx.fn.softmax %s {dim = -1 : i64, nnx.source = "softmax_0"} : tensor<?x?x?xf32>
      nnx.return %p : tensor<?x?x?xf32>
    }
  }
}

// An empty `dims` reduces every dim (torch's dim=[]).
// CHECK-LABEL: func.func @reduce_all(
// CHECK:         nnx.fn.sum %{{.*}} {dims = array<i64>} : tensor<?x4xf32> -> tensor<f32>
// CHECK:         nnx.fn.mean %{{.*}} {dims = array<i64>, keepdim} : tensor<?x4xf32> -> tensor<1x1xf32>
func.func @reduce_all(%x: tensor<?x4xf32>) {
  %0 = nnx.fn.sum %x {dims = array<i64>} : tensor<?x4xf32> -> tensor<f32>
  %1 = nnx.fn.mean %x {dims = array<i64>, keepdim} : tensor<?x4xf32> -> tensor<1x1xf32>
  return
}

// The logical ops: i1 operands broadcast as for nnx.fn.add; `~mask` is
// `logical_xor %mask, %true`.
// CHECK-LABEL: func.func @logical(
// CHECK-SAME:      %[[A:.*]]: tensor<?x4xi1>, %[[B:.*]]: tensor<4xi1>
func.func @logical(%a: tensor<?x4xi1>, %b: tensor<4xi1>) {
  // CHECK: nnx.fn.logical_and %[[A]], %[[B]] : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
  %0 = nnx.fn.logical_and %a, %b : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
  // CHECK: nnx.fn.logical_or %[[B]], %[[A]] : tensor<4xi1>, tensor<?x4xi1> -> tensor<?x4xi1>
  %1 = nnx.fn.logical_or %b, %a : tensor<4xi1>, tensor<?x4xi1> -> tensor<?x4xi1>
  %true = arith.constant dense<true> : tensor<i1>
  // CHECK: nnx.fn.logical_xor %[[A]], %{{.*}} : tensor<?x4xi1>, tensor<i1> -> tensor<?x4xi1>
  %2 = nnx.fn.logical_xor %a, %true : tensor<?x4xi1>, tensor<i1> -> tensor<?x4xi1>
  return
}

// CHECK-LABEL: func.func @max_min(
func.func @max_min(%x: tensor<?x8xf32>, %i: tensor<?x?xi32>) {
  // CHECK: nnx.fn.amax %{{.*}} {dims = array<i64: -1>, keepdim} : tensor<?x8xf32> -> tensor<?x1xf32>
  %0 = nnx.fn.amax %x {dims = array<i64: -1>, keepdim} : tensor<?x8xf32> -> tensor<?x1xf32>
  // CHECK: nnx.fn.amin %{{.*}} {dims = array<i64: 0>} : tensor<?x8xf32> -> tensor<8xf32>
  %1 = nnx.fn.amin %x {dims = array<i64: 0>} : tensor<?x8xf32> -> tensor<8xf32>
  // CHECK: nnx.fn.amax %{{.*}} {dims = array<i64>} : tensor<?x?xi32> -> tensor<i32>
  %2 = nnx.fn.amax %i {dims = array<i64>} : tensor<?x?xi32> -> tensor<i32>
  return
}

// CHECK-LABEL: func.func @indexing(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>, %[[I:.*]]: tensor<?x2xi64>, %[[S:.*]]: tensor<?xi64>, %[[S32:.*]]: tensor<3xi32>
func.func @indexing(%x: tensor<?x8xf32>, %index: tensor<?x2xi64>,
                    %s: tensor<?xi64>, %s32: tensor<3xi32>) {
  // CHECK: nnx.fn.gather %[[X]], %[[I]] {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
  %0 = nnx.fn.gather %x, %index {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
  // CHECK: nnx.fn.index_select %[[X]], %[[S]] {dim = 0 : i64} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  %1 = nnx.fn.index_select %x, %s {dim = 0 : i64} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  // CHECK: nnx.fn.index_select %[[X]], %[[S32]] {dim = -1 : i64} : tensor<?x8xf32>, tensor<3xi32> -> tensor<?x3xf32>
  %2 = nnx.fn.index_select %x, %s32 {dim = -1 : i64} : tensor<?x8xf32>, tensor<3xi32> -> tensor<?x3xf32>
  return
}

// CHECK-LABEL: func.func @topk_cumsum(
func.func @topk_cumsum(%x: tensor<?x8xf32>, %y: tensor<?x?xf32>,
                       %m: tensor<?x?xi64>) {
  // CHECK: %{{.*}}, %{{.*}} = nnx.fn.topk %{{.*}} {dim = -1 : i64, k = 2 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  %values, %indices = nnx.fn.topk %x {k = 2 : i64, dim = -1 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  // CHECK: nnx.fn.topk %{{.*}} {dim = 0 : i64, k = 3 : i64} : tensor<?x?xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
  %v2, %i2 = nnx.fn.topk %y {k = 3 : i64, dim = 0 : i64} : tensor<?x?xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
  // CHECK: nnx.fn.cumsum %{{.*}} {dim = 1 : i64} : tensor<?x?xf32>
  %c = nnx.fn.cumsum %y {dim = 1 : i64} : tensor<?x?xf32>
  // CHECK: nnx.fn.cumsum %{{.*}} {dim = -1 : i64} : tensor<?x?xi64>
  %p = nnx.fn.cumsum %m {dim = -1 : i64} : tensor<?x?xi64>
  return
}

// CHECK-LABEL: func.func @pools(
func.func @pools(%x: tensor<?x6x28x28xf32>, %y: tensor<?x64x?x?xf32>) {
  // CHECK: nnx.fn.max_pool2d %{{.*}} {dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<?x6x28x28xf32> -> tensor<?x6x14x14xf32>
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x6x28x28xf32> -> tensor<?x6x14x14xf32>
  // CHECK: nnx.fn.max_pool2d %{{.*}} {ceil_mode, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x64x?x?xf32> -> tensor<?x64x?x?xf32>
  %1 = nnx.fn.max_pool2d %y {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode} : tensor<?x64x?x?xf32> -> tensor<?x64x?x?xf32>
  // CHECK: nnx.fn.avg_pool2d %{{.*}} {count_include_pad, kernel_size = array<i64: 4, 4>, padding = array<i64: 0, 0>, stride = array<i64: 4, 4>} : tensor<?x6x28x28xf32> -> tensor<?x6x7x7xf32>
  %2 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 4, 4>, stride = array<i64: 4, 4>, padding = array<i64: 0, 0>, count_include_pad} : tensor<?x6x28x28xf32> -> tensor<?x6x7x7xf32>
  // CHECK: nnx.fn.avg_pool2d %{{.*}} {ceil_mode, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x6x28x28xf32> -> tensor<?x6x15x15xf32>
  %3 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode} : tensor<?x6x28x28xf32> -> tensor<?x6x15x15xf32>
  // CHECK: nnx.fn.adaptive_avg_pool2d %{{.*}} {output_size = array<i64: 1, 1>} : tensor<?x64x?x?xf32> -> tensor<?x64x1x1xf32>
  %4 = nnx.fn.adaptive_avg_pool2d %y {output_size = array<i64: 1, 1>} : tensor<?x64x?x?xf32> -> tensor<?x64x1x1xf32>
  return
}

// CHECK-LABEL: func.func @guards(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>, %[[N:.*]]: i64
func.func @guards(%x: tensor<?x8xf32>, %n: i64) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : i64
  // CHECK: %[[B:.*]] = tensor.dim %[[X]]
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  // CHECK: nnx.fn.guard sgt, %[[B]], %{{.*}}, "model.py:12: `x.shape[0] > 3` held when exported; this call has {0} > {1}" : index
  nnx.fn.guard sgt, %b, %c3, "model.py:12: `x.shape[0] > 3` held when exported; this call has {0} > {1}" : index
  // CHECK: nnx.fn.guard sle, %[[N]], %{{.*}}, "t <= block_size" {nnx.source = "guard_0"} : i64
  nnx.fn.guard sle, %n, %c16, "t <= block_size" {nnx.source = "guard_0"} : i64
  return
}
