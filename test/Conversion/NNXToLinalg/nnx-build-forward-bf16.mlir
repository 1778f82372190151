// bf16 / f16 models under accumulate=f32 (the default): PyTorch's CPU
// semantics. A Linear reads its bf16 operands and accumulates (from the
// bias) in f32, rounding its result once; a layer that computes in several
// steps (activation, norm, softmax) reads its input extended to f32, computes
// with f32 constants and rounds once; an embedding only moves bf16 rows.
// accumulate=storage keeps every step in the tensors' own type.
// RUN: nnx-opt %s -split-input-file --nnx-build-forward --nnx-lower-functional | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-build-forward=accumulate=storage --nnx-lower-functional | FileCheck %s --check-prefix=STORAGE
// RUN: not nnx-opt %s -split-input-file --nnx-build-forward=accumulate=f16 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      nnx.accumulate = "f32"
// The Linear: the bias extended into an f32 accumulator, the bf16 x bf16
// matmul into it, one rounding.
// CHECK:         %[[ACC:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK:         %[[BIAS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xbf16>) outs(%[[ACC]] : tensor<?x8xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[MM:.*]] = linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<8x4xbf16>) outs(%[[BIAS]] : tensor<?x8xf32>)
// CHECK:         %[[Y:.*]] = arith.truncf %[[MM]] : tensor<?x8xf32> to tensor<?x8xbf16>
// GELU in f32, its constant 1/sqrt(2) exact in f32 (in bf16 it would be
// 0.70703125), then rounded.
// CHECK:         %[[G_IN:.*]] = arith.extf %[[Y]] : tensor<?x8xbf16> to tensor<?x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[G_IN]] : tensor<?x8xf32>)
// CHECK:           arith.constant 0.707106769 : f32
// CHECK:           math.erf %{{.*}} : f32
// CHECK:         %[[G:.*]] = arith.truncf %{{.*}} : tensor<?x8xf32> to tensor<?x8xbf16>
// LayerNorm: mean and variance of the extended input, the bf16 weight and
// bias extended where they are read.
// CHECK:         arith.extf %[[G]] : tensor<?x8xbf16> to tensor<?x8xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<?xf32>)
// CHECK:         ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>, tensor<8xbf16>, tensor<8xbf16>)
// CHECK:         arith.truncf %{{.*}} : tensor<?x8xf32> to tensor<?x8xbf16>
// Softmax on the extended tensor, rounded once.
// CHECK:         linalg.softmax dimension(1) ins(%{{.*}} : tensor<?x8xf32>)
// CHECK:         %[[S:.*]] = arith.truncf %{{.*}} : tensor<?x8xf32> to tensor<?x8xbf16>
// CHECK:         return %[[S]] : tensor<?x8xbf16>

// STORAGE-LABEL: func.func @forward(
// STORAGE-SAME:      nnx.accumulate = "storage"
// STORAGE:         linalg.matmul {{.*}} outs(%{{.*}} : tensor<?x8xbf16>)
// STORAGE:           arith.constant 7.070310e-01 : bf16
// STORAGE:         linalg.softmax dimension(1) ins(%{{.*}} : tensor<?x8xbf16>)
// STORAGE-NOT:     f32

// BAD: error: 'nnx.model' op accumulate=f16 is not a compute type nnx knows (expected f32 or storage)

nnx.model @mlp inputs(tensor<?x4xbf16>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<5.000000e-01> : tensor<8x4xbf16>, bias = dense<1.000000e+00> : tensor<8xbf16>}
    nnx.gelu @"1" {approximate = #nnx.gelu_approximation<none>}
    nnx.layer_norm @"2" {normalized_shape = array<i64: 8>, eps = 1.000000e-05 : f64, weight = dense<1.000000e+00> : tensor<8xbf16>, bias = dense<0.000000e+00> : tensor<8xbf16>}
    nnx.softmax @"3" {dim = -1 : i64}
  }
}

// -----

// An embedding gathers bf16 rows as they are; no f32 copy of the table.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %{{.*}}: tensor<?xi64>, %[[T:.*]]: tensor<5x3xbf16>
// CHECK-NOT:     arith.extf
// CHECK:         return %{{.*}} : tensor<?x3xbf16>

nnx.model @emb inputs(tensor<?xi64>) {
  nnx.embedding @wte {weight = dense<2.500000e-01> : tensor<5x3xbf16>}
}

// -----

// nnx.fn ops in a custom forward: a matmul accumulates in f32, a mean and a
// softmax run in f32 (the f16 operands extended, the results rounded once);
// an elementwise add stays one f16 op (one rounding, as in PyTorch).
// CHECK-LABEL: func.func @forward(
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x4x4xf32>)
// CHECK:         %[[QK:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4x2xf16>, tensor<?x4x2xf16>) outs(%[[Z]] : tensor<?x4x4xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[QK16:.*]] = arith.truncf %[[QK]] : tensor<?x4x4xf32> to tensor<?x4x4xf16>
// CHECK:         arith.extf %[[QK16]] : tensor<?x4x4xf16> to tensor<?x4x4xf32>
// CHECK:         linalg.softmax dimension(2) ins(%{{.*}} : tensor<?x4x4xf32>)
// CHECK:         %[[P:.*]] = arith.truncf %{{.*}} : tensor<?x4x4xf32> to tensor<?x4x4xf16>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<?x4xf32>)
// CHECK:         %[[M:.*]] = arith.truncf %{{.*}} : tensor<?x4x1xf32> to tensor<?x4x1xf16>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4x4xf16>, tensor<?x4x1xf16>) outs(%{{.*}} : tensor<?x4x4xf16>)
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f16

nnx.model @attn inputs(tensor<?x4x2xf16>) {
  nnx.module @root class = "Scores" {
    nnx.forward @forward(%q: tensor<?x4x2xf16>) -> tensor<?x4x4xf16> {
      %s = nnx.fn.matmul %q, %q {transpose_b} : tensor<?x4x2xf16>, tensor<?x4x2xf16> -> tensor<?x4x4xf16>
      %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x4x4xf16>
      %m = nnx.fn.mean %p {dims = array<i64: -1>, keepdim} : tensor<?x4x4xf16> -> tensor<?x4x1xf16>
      %r = nnx.fn.add %p, %m : tensor<?x4x4xf16>, tensor<?x4x1xf16> -> tensor<?x4x4xf16>
      nnx.return %r : tensor<?x4x4xf16>
    }
  }
}
