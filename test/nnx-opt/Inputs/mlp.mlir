nnx.model @mlp inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc1 {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
    nnx.relu @act
    nnx.linear @fc2 {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
  }
}
