// nnx-widen-residual: the embedding, the RMSNorm (eps * d/d', gain *
// sqrt(d/d')) and the head grow together; the exported families' logits are
// checked by executing them (preservation/transformer-attention.test).
// RUN: nnx-opt %s --nnx-widen-residual="width=16" | FileCheck %s
// RUN: not nnx-opt %s --nnx-widen-residual="width=100000000000" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: nnx-widen-residual: edited layer 'embed' (nnx.embedding) would grow its 'weight' to 10x100000000000

// CHECK: nnx.embedding @embed {{.*}} : tensor<10x16xf32>
// CHECK: state = {weight = dense<[1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 1.41421{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}, 0.707106{{[0-9]*}}]> : tensor<16xf32>}
// CHECK: arith.constant dense<5.000000e-07> : tensor<f32>
// CHECK: nnx.linear @head {{.*}} : tensor<10x16xf32>
// CHECK: nnx.call @head({{.*}}) : (tensor<?x?x16xf32>) -> tensor<?x?x10xf32>
nnx.model @lm inputs(tensor<?x?xi64>) {
  nnx.module @net class = "LM" {
    nnx.embedding @embed {weight = dense<0.5> : tensor<10x8xf32>}
    nnx.module @norm class = "RMSNorm" attributes {state = {weight = dense<2.0> : tensor<8xf32>}} {
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %sq = nnx.fn.mul %x, %x : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
        %mean = nnx.fn.mean %sq {dims = array<i64: 2>, keepdim} : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
        %eps = arith.constant dense<1.0e-06> : tensor<f32>
        %add = nnx.fn.add %mean, %eps : tensor<?x?x1xf32>, tensor<f32> -> tensor<?x?x1xf32>
        %r = math.rsqrt %add : tensor<?x?x1xf32>
        %n = nnx.fn.mul %x, %r : tensor<?x?x8xf32>, tensor<?x?x1xf32> -> tensor<?x?x8xf32>
        %w = nnx.state "weight" : tensor<8xf32>
        %y = nnx.fn.mul %w, %n : tensor<8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.linear @head {weight = dense<0.25> : tensor<10x8xf32>}
    nnx.forward @forward(%ids: tensor<?x?xi64>) -> tensor<?x?x10xf32> {
      %e = nnx.call @embed(%ids) : (tensor<?x?xi64>) -> tensor<?x?x8xf32>
      %h = nnx.call @norm(%e) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      %y = nnx.call @head(%h) : (tensor<?x?x8xf32>) -> tensor<?x?x10xf32>
      nnx.return %y : tensor<?x?x10xf32>
    }
  }
}
