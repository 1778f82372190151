// widen, deepen and low-rank on a Conv1d net (conv1d, GELU, strided
// conv1d, ReLU, flatten, Linear): the edited model computes the same
// forward as the original (atol = rtol = 1e-5).
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=0 width=6 seed=5}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=2 width=5 seed=6}" --batch 2
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=3}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-low-rank{layer=2 rank=3}"
nnx.model @conv1d inputs(tensor<?x2x8xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv1d @"0" {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<[[[0.1311999, -0.4938355, -0.4990807], [0.5077023, 0.01950346, 0.3209164]], [[0.2089416, 0.5951645, -0.205174], [0.248111, 0.2911616, -0.592475]], [[0.212928, -0.417578, -0.1452228], [-0.3924663, -0.5825414, -0.3174337]], [[0.006047338, 0.3231721, 0.01246569], [0.4192449, -0.3253509, -0.4914517]]]> : tensor<4x2x3xf32>, bias = dense<[0.2894081, -0.1942728, -0.3053087, -0.3675982]> : tensor<4xf32>}
    nnx.gelu @"1"
    nnx.conv1d @"2" {in_channels = 4 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<[[[-0.3593211, 0.1927257, -0.2954447], [0.2684287, 0.03801532, -0.3973882], [-0.01788236, -0.1939875, 0.04924361], [0.368682, 0.07402725, 0.3904503]], [[0.1520162, 0.2238892, 0.2816339], [-0.1355887, 0.04216062, -0.1184763], [0.2917529, 0.2895595, 0.09185962], [0.06191375, -0.2008595, -0.09189724]], [[-0.2198144, 0.1367674, -0.3296733], [-0.2609699, 0.162488, 0.008202614], [0.1010928, -0.3753357, -0.09421973], [0.4279681, -0.0282423, 0.2434223]]]> : tensor<3x4x3xf32>, bias = dense<[-0.2122726, 0.3671128, -0.1449341]> : tensor<3xf32>}
    nnx.relu @"3"
    nnx.flatten @"4"
    nnx.linear @"5" {weight = dense<[[-0.2264441, -0.4091038, -0.3894679, -0.1064203, 0.3506577, -0.2459127, -0.07111689, 0.3279577, 0.3943771, 0.2231087, -0.1465038, 0.1153789], [-0.2493398, 0.0929995, 0.04986328, 0.2751952, -0.07764775, -0.07299922, -0.1201755, 0.3423948, 0.3527562, -0.2666826, 0.317668, -0.2249343]]> : tensor<2x12xf32>, bias = dense<[0.121145, 0.005865397]> : tensor<2xf32>}
  }
}
