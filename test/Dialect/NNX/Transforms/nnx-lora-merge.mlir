// nnx-lora-merge folds W + (alpha / r) * B A into the weight (double
// precision, rounded once) and marks the layer merged; nnx-lora-unmerge
// takes it out again. `layer` selects one adapter (a path below the root).
// RUN: split-file %s %t
// RUN: nnx-opt %t/f32.mlir --nnx-lora-merge | FileCheck %t/f32.mlir --check-prefix=MERGED
// RUN: nnx-opt %t/f32.mlir --nnx-lora-merge --nnx-lora-unmerge | FileCheck %t/f32.mlir --check-prefix=BACK
// RUN: nnx-opt %t/f32.mlir --nnx-lora-merge="layer=q" | FileCheck %t/f32.mlir --check-prefix=ONE
// RUN: nnx-opt %t/f16.mlir --nnx-lora-merge | FileCheck %t/f16.mlir
// RUN: nnx-opt %t/bf16.mlir --nnx-lora-merge | FileCheck %t/bf16.mlir --check-prefix=BF16

//--- f32.mlir
// q: alpha / r = 2 and B A = [[0.5, 1], [1.5, 3]], so W + 2 B A =
// [[1, 2], [3, 7]] (exact); k: alpha / r = 1, B A = [[1, 1], [1, 1]].
// MERGED: nnx.lora @q {alpha = 2.000000e+00 : f64, lora_A = dense<{{\[\[}}1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>, lora_B = dense<{{\[\[}}5.000000e-01], [1.500000e+00]]> : tensor<2x1xf32>, merged, requires_grad = {weight = false}, weight = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 7.000000e+00]]> : tensor<2x2xf32>}
// MERGED: nnx.lora @k {{{.*}}merged, weight = dense<2.000000e+00> : tensor<2x2xf32>}

// BACK: nnx.lora @q {alpha = 2.000000e+00 : f64, lora_A = {{.*}}, requires_grad = {weight = false}, weight = dense<{{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>}
// BACK: nnx.lora @k {alpha = 1.000000e+00 : f64, lora_A = {{.*}}, lora_B = {{.*}}, weight = dense<1.000000e+00> : tensor<2x2xf32>}

// ONE: nnx.lora @q {{{.*}}merged
// ONE: nnx.lora @k {alpha = 1.000000e+00 : f64, lora_A = {{.*}}, lora_B = {{.*}}, weight = dense<1.000000e+00> : tensor<2x2xf32>}
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @blk class = "Block" {
    nnx.lora @q {alpha = 2.0 : f64, weight = dense<[[0.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>,
                 lora_A = dense<[[1.0, 2.0]]> : tensor<1x2xf32>, lora_B = dense<[[0.5], [1.5]]> : tensor<2x1xf32>,
                 requires_grad = {weight = false}}
    nnx.lora @k {alpha = 1.0 : f64, weight = dense<1.0> : tensor<2x2xf32>,
                 lora_A = dense<1.0> : tensor<1x2xf32>, lora_B = dense<1.0> : tensor<2x1xf32>}
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %q = nnx.call @q(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %y = nnx.call @k(%q) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %y : tensor<?x2xf32>
    }
  }
}

//--- f16.mlir
// f16: 1 + 0.25 * 1 = 1.25 is exact; the other entries are 1 + 0.25 * 0.
// CHECK: nnx.lora @v {alpha = 1.000000e+00 : f64, {{.*}}merged, weight = dense<{{\[\[}}1.250000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00]]> : tensor<2x2xf16>}
nnx.model @h inputs(tensor<?x2xf16>) {
  nnx.sequential @net keying = named {
    nnx.lora @v {alpha = 1.0 : f64, weight = dense<1.0> : tensor<2x2xf16>,
                 lora_A = dense<[[1.0, 0.0]]> : tensor<1x2xf16>, lora_B = dense<[[0.25], [0.0]]> : tensor<2x1xf16>}
  }
}

//--- bf16.mlir
// bf16: W + B A = 1 + (1 * 1 + (1 + 2^-7) * 2^-7) = 2 + 2^-7 + 2^-14, just
// above the tie between 2 and 2 + 2^-6: rounded once it is 2 + 2^-6
// (2.015625). Rounded per step (B A to 1 + 2^-7 first, then the sum, a tie,
// to even) it would be 2.
// BF16: nnx.lora @o {alpha = 2.000000e+00 : f64, {{.*}}merged, weight = dense<2.015630e+00> : tensor<1x1xbf16>}
nnx.model @b inputs(tensor<?x1xbf16>) {
  nnx.sequential @net keying = named {
    nnx.lora @o {alpha = 2.0 : f64, weight = dense<1.0> : tensor<1x1xbf16>,
                 lora_A = dense<[[1.0], [0.0078125]]> : tensor<2x1xbf16>, lora_B = dense<[[1.0, 1.0078125]]> : tensor<1x2xbf16>}
  }
}
