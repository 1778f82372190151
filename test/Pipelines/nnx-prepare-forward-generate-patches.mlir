// nnx-prepare-forward generate= with a patch (a write probe on the hidden
// state before the attention core): the patch is a trailing argument of
// prefill and decode, sliced to the value's sizes, and
// @forward_write_shapes takes the function's inputs (decode's position and
// caches after the ids, unused: a patch's shape follows the new tokens).
// RUN: nnx-opt %s --nnx-prepare-forward="generate=decode max-length=16" \
// RUN:   | FileCheck %s --check-prefix=DECODE
// RUN: nnx-opt %s --nnx-prepare-forward="generate=prefill max-length=16" \
// RUN:   | FileCheck %s --check-prefix=PREFILL

// DECODE-LABEL: func.func @forward(
// DECODE-SAME:    %{{.*}}: tensor<?x?xi64>, %{{.*}}: tensor<i64>, %{{.*}}: tensor<?x2x16x4xf32> {nnx.updated_in_place}, %{{.*}}: tensor<?x2x16x4xf32> {nnx.updated_in_place}, %{{.*}}: tensor<4xf32> {{{.*}}nnx.parameter = "w"}, %[[PATCH:.*]]: tensor<?x?xf32>)
// DECODE-SAME:    -> tensor<?x?x8xf32>
// DECODE-SAME:    nnx.write_probes = ["h"]
// DECODE:         tensor.extract_slice %[[PATCH]][0, 0]
// DECODE:         tensor.insert_slice
// DECODE-LABEL: func.func @forward_write_shapes(
// DECODE-SAME:    %{{.*}}: tensor<?x?xi64> {bufferization.writable = false}, %{{.*}}: tensor<i64> {bufferization.writable = false}, %{{.*}}: tensor<?x2x16x4xf32> {bufferization.writable = false}, %{{.*}}: tensor<?x2x16x4xf32> {bufferization.writable = false}, %{{.*}}: tensor<4xf32> {bufferization.writable = false})
// DECODE-SAME:    -> tensor<2xi64>

// PREFILL-LABEL: func.func @forward(
// PREFILL-SAME:    %{{.*}}: tensor<?x?xi64>, %{{.*}}: tensor<4xf32> {{{.*}}nnx.parameter = "w"}, %[[PATCH:.*]]: tensor<?x?xf32>)
// PREFILL-SAME:    -> (tensor<?x?x8xf32>, tensor<?x2x16x4xf32>, tensor<?x2x16x4xf32>)
// PREFILL:         tensor.extract_slice %[[PATCH]][0, 0]
// PREFILL-LABEL: func.func @forward_write_shapes(
// PREFILL-SAME:    %{{.*}}: tensor<?x?xi64> {bufferization.writable = false}, %{{.*}}: tensor<4xf32> {bufferization.writable = false})

func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h0 = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %h = nnx.probe write "h" %h0 : tensor<?x?xf32>
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
