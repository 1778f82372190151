// Two Linears with bias; the second one's matmul is a partial sum over 2
// ranks. Every rank holds the same weights, so the sum is twice the matmul,
// plus the bias once (tensor-parallel.test).
nnx.model @mlp inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<[[0.5, -1.0, 0.25, 2.0], [1.5, 0.0, -0.5, 1.0], [-2.0, 0.75, 1.0, 0.5]]> : tensor<3x4xf32>,
                     bias = dense<[0.1, -0.2, 0.3]> : tensor<3xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<[[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]]> : tensor<2x3xf32>,
                     bias = dense<[10.0, -20.0]> : tensor<2xf32>,
                     nnx.partial_sum = {ranks = 2 : i64}}
  }
}
