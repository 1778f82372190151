// nnx-prune keeps the units of largest importance (the product of the L2
// norms of their rows and consumer columns), in their order, in a
// sequential and in a SwiGLU forward (the sibling loses the same units).
// RUN: split-file %s %t
// RUN: nnx-opt %t/seq.mlir --nnx-prune="layer=0 keep=1" | FileCheck %s --check-prefix=SEQ
// RUN: nnx-opt %t/swiglu.mlir --nnx-prune="layer=gate_proj keep=2" | FileCheck %s --check-prefix=SWIGLU
// RUN: %python -c "import numpy; numpy.save('%t/imp.npy', numpy.array([9.0, 1.0], dtype=numpy.float32))"
// RUN: nnx-opt %t/seq.mlir --nnx-prune="layer=0 keep=1 importance=%t/imp.npy" | FileCheck %s --check-prefix=FILE
// RUN: nnx-opt %t/seq.mlir --nnx-prune="layer=0 keep=1" --nnx-param-count -o %t/out.mlir | FileCheck %s --check-prefix=COUNT

// Unit 1 (2 * 4 = 8) outranks unit 0 (1 * 3 = 3).
// SEQ:      nnx.linear @"0" {bias = dense<2.000000e-01> : tensor<1xf32>, weight = dense<2.000000e+00> : tensor<1x1xf32>}
// SEQ-NEXT: nnx.relu @"1"
// SEQ-NEXT: nnx.linear @"2" {weight = dense<4.000000e+00> : tensor<1x1xf32>}

// importance= ranks by the file's scores: unit 0 (9) stays.
// FILE:      nnx.linear @"0" {bias = dense<1.000000e-01> : tensor<1xf32>, weight = dense<1.000000e+00> : tensor<1x1xf32>}
// FILE-NEXT: nnx.relu @"1"
// FILE-NEXT: nnx.linear @"2" {weight = dense<3.000000e+00> : tensor<1x1xf32>}

// Importance: unit 0: 1 * 1 * 1 = 1, unit 1: 2 * 1 * 2 = 4, unit 2: 1 * 3 *
// 3 = 9. Units 1 and 2 stay, in order.
// SWIGLU:      nnx.linear @gate_proj {weight = dense<{{\[\[}}2.000000e+00], [1.000000e+00]]> : tensor<2x1xf32>}
// SWIGLU-NEXT: nnx.linear @up_proj {weight = dense<{{\[\[}}1.000000e+00], [3.000000e+00]]> : tensor<2x1xf32>}
// SWIGLU-NEXT: nnx.linear @down_proj {weight = dense<{{\[\[}}2.000000e+00, 3.000000e+00]]> : tensor<1x2xf32>}
// SWIGLU:      nnx.call @gate_proj(%{{.*}}) : (tensor<?x?x1xf32>) -> tensor<?x?x2xf32>
// SWIGLU:      nnx.fn.mul %{{.*}}, %{{.*}} : tensor<?x?x2xf32>, tensor<?x?x2xf32> -> tensor<?x?x2xf32>
// SWIGLU:      nnx.call @down_proj(%{{.*}}) : (tensor<?x?x2xf32>) -> tensor<?x?x1xf32>

// 2 + 2 + 2 parameters before; one unit (weight row, bias entry, consumer
// column) fewer after.
// COUNT: total{{ +}}3

//--- seq.mlir
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, bias = dense<[0.1, 0.2]> : tensor<2xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
  }
}

//--- swiglu.mlir
nnx.model @m inputs(tensor<?x?x1xf32>) {
  nnx.module @mlp class = "LlamaMLP" {
    nnx.linear @gate_proj {weight = dense<[[1.0], [2.0], [1.0]]> : tensor<3x1xf32>}
    nnx.linear @up_proj {weight = dense<[[1.0], [1.0], [3.0]]> : tensor<3x1xf32>}
    nnx.linear @down_proj {weight = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>}
    nnx.silu @act_fn
    nnx.forward @forward(%x: tensor<?x?x1xf32>) -> tensor<?x?x1xf32> {
      %g = nnx.call @gate_proj(%x) : (tensor<?x?x1xf32>) -> tensor<?x?x3xf32>
      %a = nnx.call @act_fn(%g) : (tensor<?x?x3xf32>) -> tensor<?x?x3xf32>
      %u = nnx.call @up_proj(%x) : (tensor<?x?x1xf32>) -> tensor<?x?x3xf32>
      %m = nnx.fn.mul %a, %u : tensor<?x?x3xf32>, tensor<?x?x3xf32> -> tensor<?x?x3xf32>
      %y = nnx.call @down_proj(%m) : (tensor<?x?x3xf32>) -> tensor<?x?x1xf32>
      nnx.return %y : tensor<?x?x1xf32>
    }
  }
}
