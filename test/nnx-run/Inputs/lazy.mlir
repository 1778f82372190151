nnx.model @lazy inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {lazy, out_features = 3}
  }
}
