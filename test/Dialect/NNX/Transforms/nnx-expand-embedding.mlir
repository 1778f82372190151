// RUN: nnx-opt %s --nnx-expand-embedding="layer=embed num=5 init=copy_mean" | FileCheck %s --check-prefix=MEAN
// RUN: nnx-opt %s --nnx-expand-embedding="layer=embed num=4" | FileCheck %s --check-prefix=ZEROS
// The same size is allowed (not smaller): every row is an original one.
// RUN: nnx-opt %s --nnx-expand-embedding="layer=embed num=3" | FileCheck %s --check-prefix=SAME

// The original rows are bit-identical; new rows are the mean of the original
// rows (copy_mean) or zeros; frozen_rows marks the original rows; the table
// keeps its requires_grad flag and mode; the negative padding_idx is rewritten
// to the row it named.
// MEAN-LABEL: nnx.model @emb
// MEAN: nnx.embedding @embed {frozen_rows = array<i1: true, true, true, false, false>, padding_idx = 2 : i64, requires_grad = {weight = false}, train, weight = dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [1.000000e-01, 0.699999988], [1.36666667, 2.23333335], [1.36666667, 2.23333335]]> : tensor<5x2xf32>}
// ZEROS-LABEL: nnx.model @emb
// ZEROS: nnx.embedding @embed {frozen_rows = array<i1: true, true, true, false>, padding_idx = 2 : i64, requires_grad = {weight = false}, train, weight = dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [1.000000e-01, 0.699999988], [0.000000e+00, 0.000000e+00]]> : tensor<4x2xf32>}
// SAME-LABEL: nnx.model @emb
// SAME: nnx.embedding @embed {frozen_rows = array<i1: true, true, true>, padding_idx = 2 : i64, {{.*}} : tensor<3x2xf32>}
nnx.model @emb inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @embed {weight = dense<[[1.0, 2.0], [3.0, 4.0], [0.1, 0.7]]> : tensor<3x2xf32>, padding_idx = -1 : i64, requires_grad = {weight = false}, train}
    nnx.relu @r
  }
}
