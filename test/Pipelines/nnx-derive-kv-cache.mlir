// nnx-derive-kv-cache: @prefill and @decode written beside a causal forward
// (one attention core: 2 heads of 4 dims, keys = values = queries here, an
// additive triu mask, positions from arange(T)).
// RUN: nnx-opt %s --nnx-derive-kv-cache=max-length=16 | FileCheck %s
// RUN: nnx-opt %s --nnx-prepare-forward="generate=decode max-length=16" \
// RUN:   | FileCheck %s --check-prefix=PREPARE
// RUN: nnx-opt %s --nnx-derive-kv-cache=max-length=16 --canonicalize \
// RUN:   --nnx-lower-functional | FileCheck %s --check-prefix=LOWERED
// The forward is unchanged.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    -> tensor<?x?x8xf32>
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return

// Prefill: fresh zeroed caches, the prompt's rows written at position 0.
// CHECK-LABEL: func.func @prefill(
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<?x?xi64>, %{{.*}}: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"})
// CHECK-SAME:    -> (tensor<?x?x8xf32>, tensor<?x2x16x4xf32>, tensor<?x2x16x4xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     linalg.fill {{.*}} -> tensor<?x2x16x4xf32>
// CHECK:         %[[T:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi64>
// CHECK:         %[[ALL:.*]] = arith.addi %[[ZERO]], %[[T]] : index
// CHECK:         nnx.fn.guard sle, %[[ALL]], %{{.*}}, "nnx-derive-kv-cache: the cache holds 16 positions; this call needs {0}" : index
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, %[[ZERO]], 0]
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?x8xf32>, tensor<?x2x16x4xf32>, tensor<?x2x16x4xf32>

// Decode: the new tokens, the position and the caches; the new rows written
// in place at the position, attention over all position + T rows, the mask's
// rows of the new positions, the positions shifted.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[NEW:[^:]*]]: tensor<?x?xi64>, %[[POS:[^:]*]]: tensor<i64>, %[[K:[^:]*]]: tensor<?x2x16x4xf32>, %[[V:[^:]*]]: tensor<?x2x16x4xf32>, %{{.*}}: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"})
// CHECK-SAME:    -> (tensor<?x?x8xf32>, tensor<?x2x16x4xf32>, tensor<?x2x16x4xf32>)
// CHECK:         %[[P64:.*]] = tensor.extract %[[POS]][] : tensor<i64>
// CHECK:         %[[P:.*]] = arith.index_cast %[[P64]] : i64 to index
// CHECK:         %[[TN:.*]] = tensor.dim %[[NEW]], %{{.*}} : tensor<?x?xi64>
// CHECK:         %[[TK:.*]] = arith.addi %[[P]], %[[TN]] : index
// CHECK:         nnx.fn.guard sle, %[[TK]], %{{.*}}
// CHECK:         %[[AR:.*]] = nnx.fn.arange %[[TK]] : tensor<?xi64>
// CHECK:         %[[SHIFTED:.*]] = tensor.extract_slice %[[AR]][%[[P]]] [%[[TN]]] [1]
// CHECK:         arith.sitofp %[[SHIFTED]]
// CHECK:         %[[X:.*]] = nnx.fn.expand
// CHECK:         %[[V1:.*]] = tensor.insert_slice %[[X]] into %[[V]][0, 0, %[[P]], 0] [%{{.*}}, 2, %[[TN]], 4] [1, 1, 1, 1]
// CHECK:         %[[VALL:.*]] = tensor.extract_slice %[[V1]][0, 0, 0, 0] [%{{.*}}, 2, %[[TK]], 4] [1, 1, 1, 1]
// CHECK:         %[[K1:.*]] = tensor.insert_slice %[[X]] into %[[K]][0, 0, %[[P]], 0]
// CHECK:         %[[KALL:.*]] = tensor.extract_slice %[[K1]][0, 0, 0, 0] [%{{.*}}, 2, %[[TK]], 4]
// CHECK:         %[[KT:.*]] = nnx.fn.permute %[[KALL]] [0, 1, 3, 2]
// CHECK:         %[[S:.*]] = nnx.fn.matmul %[[X]], %[[KT]]
// CHECK:         %[[ONES:.*]] = tensor.splat %{{.*}}[%[[TK]], %[[TK]]] : tensor<?x?xi1>
// CHECK:         %[[UP:.*]] = nnx.fn.triu %[[ONES]] {diagonal = 1 : i64}
// CHECK:         %[[M:.*]] = nnx.fn.where %[[UP]]
// CHECK:         %[[ROWS:.*]] = tensor.extract_slice %[[M]][%[[P]], 0] [%[[TN]], %{{.*}}] [1, 1]
// CHECK:         %[[A:.*]] = nnx.fn.add %[[S]], %[[ROWS]]
// CHECK:         %[[SM:.*]] = nnx.fn.softmax %[[A]]
// CHECK:         nnx.fn.matmul %[[SM]], %[[VALL]]
// CHECK:         return %{{.*}}, %[[K1]], %[[V1]] :

// nnx-prepare-forward{generate=decode}: decode is the @forward it hands to
// the target pipeline, with its shape functions.
// Prepared as @forward, decode updates its caches in place and returns
// only the logits (no cache is copied into a result).
// PREPARE-NOT:   func.func @prefill
// PREPARE-NOT:   func.func @decode
// PREPARE-LABEL: func.func @forward(
// PREPARE-SAME:    tensor<?x?xi64>, %{{.*}}: tensor<i64>, %{{.*}}: tensor<?x2x16x4xf32> {nnx.updated_in_place}, %{{.*}}: tensor<?x2x16x4xf32> {nnx.updated_in_place}, %{{.*}}: tensor<4xf32>
// PREPARE-SAME:    -> tensor<?x?x8xf32>
// PREPARE-SAME:    llvm.emit_c_interface
// PREPARE:         tensor.insert_slice
// PREPARE-LABEL: func.func @forward_result_shapes(

// Lowered, the functions still write the caches (no op is left that
// nnx-lower-functional does not know).
// LOWERED-LABEL: func.func @decode(
// LOWERED:         tensor.insert_slice
// LOWERED-NOT:     nnx.fn.
// LOWERED:         return

func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
