// RUN: split-file %s %t
// RUN: nnx-opt %t/lr.mlir --nnx-low-rank="layer=fc rank=1" | FileCheck %t/lr.mlir --check-prefix=R1
// RUN: nnx-opt %t/lr.mlir --nnx-low-rank="layer=fc rank=2" | FileCheck %t/lr.mlir --check-prefix=R2
// RUN: nnx-opt %t/flags.mlir --nnx-low-rank="layer=blk.proj rank=2" | FileCheck %t/flags.mlir

//--- lr.mlir
// W = diag(3, 1): rank 1 keeps sqrt(3) in both factors (0: in -> 1 without
// bias, 1: 1 -> out with the bias); rank 2 = min(out, in) is exact. Both
// weights take the source weight's flag (false); the bias flag (true) stays
// the default; the sequential and both Linears take the source's mode.
// R1-LABEL: nnx.model @lr
// R1:      nnx.sequential @fc keying = positional attributes {train} {
// R1-NEXT:   nnx.linear @"0" {requires_grad = {weight = false}, train, weight = dense<{{\[}}[{{-?}}1.73205078, {{-?}}0.000000e+00]]> : tensor<1x2xf32>}
// R1-NEXT:   nnx.linear @"1" {bias = dense<5.000000e-01> : tensor<2xf32>, requires_grad = {weight = false}, train, weight = dense<{{\[}}[{{-?}}1.73205078], [{{-?}}0.000000e+00]]> : tensor<2x1xf32>}
// R1-NEXT: }
// R1-NEXT: nnx.relu @r

// R2-LABEL: nnx.model @lr
// R2:      nnx.linear @"0" {{{.*}}weight = dense<{{\[}}[{{-?}}1.73205078, {{-?}}0.000000e+00], [{{-?}}0.000000e+00, {{-?}}1.000000e+00]]> : tensor<2x2xf32>}
// R2-NEXT: nnx.linear @"1" {bias = dense<5.000000e-01> : tensor<2xf32>, {{.*}}tensor<2x2xf32>}
nnx.model @lr inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named attributes {train} {
    nnx.linear @fc {weight = dense<[[3.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>, bias = dense<0.5> : tensor<2xf32>, requires_grad = {weight = false}, train}
    nnx.relu @r
  }
}

//--- flags.mlir
// Only 1.bias takes the source bias's flag; the factors keep eval mode; a
// call of the replaced Linear now runs the sequential (same types).
// CHECK-LABEL: nnx.model @flags
// CHECK:      nnx.sequential @proj keying = positional {
// CHECK-NEXT:   nnx.linear @"0" {weight = {{.*}} : tensor<2x3xf32>}
// CHECK-NEXT:   nnx.linear @"1" {bias = dense<1.000000e+00> : tensor<4xf32>, requires_grad = {bias = false}, weight = {{.*}} : tensor<4x2xf32>}
// CHECK-NEXT: }
// CHECK:      nnx.call @proj
nnx.model @flags inputs(tensor<?x3xf32>) {
  nnx.sequential @net keying = named {
    nnx.module @blk class = "Block" {
      nnx.linear @proj {weight = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.5], [1.0, 0.0, 1.0]]> : tensor<4x3xf32>, bias = dense<1.0> : tensor<4xf32>, requires_grad = {bias = false}}
      nnx.forward @forward(%x: tensor<?x3xf32>) -> tensor<?x4xf32> {
        %y = nnx.call @proj(%x) : (tensor<?x3xf32>) -> tensor<?x4xf32>
        nnx.return %y : tensor<?x4xf32>
      }
    }
  }
}
