nnx.model @tiny inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<[[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>}
  }
}
