nnx.model @broken inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>
  }
}
