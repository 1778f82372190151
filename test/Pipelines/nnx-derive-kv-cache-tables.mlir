// nnx-derive-kv-cache on llama2.c's way of writing positions and the mask:
// a table sliced to T (`freqs[:T]`, reshaped and multiplied with the data)
// and a registered buffer `triu(full(-inf), 1)` sliced to T x T and added
// to the scores. Decode reads the table from the position on
// (`freqs[position:position + T]`) and the mask's rows of the new
// positions from the buffer sliced to all positions.
// RUN: nnx-opt %s --nnx-derive-kv-cache=max-length=4 | FileCheck %s

// Prefill: the table from row 0.
// CHECK-LABEL: func.func @prefill(
// CHECK:         %[[Z:.*]] = arith.constant 0 : index
// CHECK:         tensor.extract_slice %{{.*}}[%[[Z]]] [%{{.*}}] [1] : tensor<4xf32> to tensor<?xf32>

// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<?x?xi64>, %[[POS:[^:]*]]: tensor<i64>
// CHECK:         %[[P:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[T:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi64>
// CHECK:         %[[ALL:.*]] = arith.addi %[[P]], %[[T]] : index
// CHECK:         tensor.extract_slice %{{.*}}[%[[P]]] [%{{.*}}] [1] : tensor<4xf32> to tensor<?xf32>
// CHECK:         tensor.insert_slice
// CHECK:         %[[MASK:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%[[ALL]], %[[ALL]]] [1, 1] : tensor<4x4xf32> to tensor<?x?xf32>
// CHECK:         tensor.extract_slice %[[MASK]][%[[P]], 0] [%[[T]], %{{.*}}] [1, 1]

func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}, %freqs: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "freqs"}, %buf: tensor<4x4xf32> {bufferization.writable = false, nnx.parameter = "mask"}) -> tensor<?x?x8xf32> attributes {nnx.parameters = [dense<1.0> : tensor<4xf32>, dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>, dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %posf = tensor.extract_slice %freqs[0] [%t] [1] : tensor<4xf32> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %mask = tensor.extract_slice %buf[0, 0] [%t, %t] [1, 1] : tensor<4x4xf32> to tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
