// nnx-derive-kv-cache on llama2.c's grouped-query attention: the kv heads
// of `B x T x 1 x 4` are repeated (`x[:, :, :, None, :].expand(...)
// .reshape(...)`) to the 2 heads of `B x T x 2 x 4` and only then
// transposed to `B x 2 x T x 4`. The caches hold the kv head only
// (`B x 1 x L x 4`, the new rows transposed in); attention reads them back
// as `B x T x 1 x 4` and repeats them for all positions (the repeat's
// sizes along the sequence are all positions).
// RUN: nnx-opt %s --nnx-derive-kv-cache=max-length=16 | FileCheck %s

// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<?x?xi64>, %[[POS:[^:]*]]: tensor<i64>, %[[KC:[^:]*]]: tensor<?x1x16x4xf32>, %[[VC:[^:]*]]: tensor<?x1x16x4xf32>
// CHECK:         %[[ALL:.*]] = arith.addi
// CHECK:         %[[KV:.*]] = nnx.fn.mul %{{.*}} : tensor<?x?x1x1xf32>, tensor<4xf32> -> tensor<?x?x1x4xf32>
// CHECK:         %[[VT:.*]] = nnx.fn.permute %[[KV]] [0, 2, 1, 3] : tensor<?x?x1x4xf32> -> tensor<?x1x?x4xf32>
// CHECK:         %[[V1:.*]] = tensor.insert_slice %[[VT]] into %[[VC]]
// CHECK:         %[[VALL:.*]] = tensor.extract_slice %[[V1]][0, 0, 0, 0] [%{{.*}}, 1, %[[ALL]], 4]
// CHECK:         %[[VB:.*]] = nnx.fn.permute %[[VALL]] [0, 2, 1, 3] : tensor<?x1x?x4xf32> -> tensor<?x?x1x4xf32>
// CHECK:         %[[KT:.*]] = nnx.fn.permute %[[KV]] [0, 2, 1, 3]
// CHECK:         %[[K1:.*]] = tensor.insert_slice %[[KT]] into %[[KC]]
// CHECK:         %[[KALL:.*]] = tensor.extract_slice %[[K1]]
// CHECK:         %[[KB:.*]] = nnx.fn.permute %[[KALL]] [0, 2, 1, 3]
// CHECK:         %[[R1:.*]] = nnx.fn.reshape %[[KB]] [%{{.*}}, %[[ALL]], 1, 1, 4]
// CHECK:         %[[R2:.*]] = nnx.fn.expand %[[R1]] [%{{.*}}, %[[ALL]], 1, 2, 4]
// CHECK:         nnx.fn.reshape %[[R2]] [%{{.*}}, %[[ALL]], 2, 4]
// CHECK:         return %{{.*}}, %[[K1]], %[[V1]] :

func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> attributes {nnx.parameters = [dense<1.0> : tensor<4xf32>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, %t, 1, 1] : tensor<?x?xf32> -> tensor<?x?x1x1xf32>
  %kv = nnx.fn.mul %x, %w : tensor<?x?x1x1xf32>, tensor<4xf32> -> tensor<?x?x1x4xf32>
  %q = nnx.fn.expand %kv [%b, %t, 2, 4] : tensor<?x?x1x4xf32> -> tensor<?x?x2x4xf32>
  %r1 = nnx.fn.reshape %kv [%b, %t, 1, 1, 4] : tensor<?x?x1x4xf32> -> tensor<?x?x1x1x4xf32>
  %r2 = nnx.fn.expand %r1 [%b, %t, 1, 2, 4] : tensor<?x?x1x1x4xf32> -> tensor<?x?x1x2x4xf32>
  %r3 = nnx.fn.reshape %r2 [%b, %t, 2, 4] : tensor<?x?x1x2x4xf32> -> tensor<?x?x2x4xf32>
  %qh = nnx.fn.permute %q [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
  %kh = nnx.fn.permute %r3 [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %kh [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %qh, %kt : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %a = nnx.fn.where %upper, %ninf, %s : tensor<?x?xi1>, tensor<f32>, tensor<?x2x?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %vr1 = nnx.fn.reshape %kv [%b, %t, 1, 1, 4] : tensor<?x?x1x4xf32> -> tensor<?x?x1x1x4xf32>
  %vr2 = nnx.fn.expand %vr1 [%b, %t, 1, 2, 4] : tensor<?x?x1x1x4xf32> -> tensor<?x?x1x2x4xf32>
  %vr3 = nnx.fn.reshape %vr2 [%b, %t, 2, 4] : tensor<?x?x1x2x4xf32> -> tensor<?x?x2x4xf32>
  %vh = nnx.fn.permute %vr3 [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
  %o = nnx.fn.matmul %p, %vh : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
