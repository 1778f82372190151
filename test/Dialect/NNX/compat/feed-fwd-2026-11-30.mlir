// Written before the enum attributes (2026-11-30): FeedFwd's activations as
// strings. compat.test loads it and checks it means what the enum spelling
// means.
nnx.model @ff inputs(tensor<?x2xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 2, hidden_dims = array<i64: 2, 2>, output_dim = 1,
                                activation = "relu", activations = ["identity", "leaky_relu"],
                                dropout = 0.5 : f64} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<[[1.0, 0.0], [0.0, -1.0]]> : tensor<2x2xf32>}
      nnx.linear @"1" {weight = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>}
      nnx.linear @"2" {weight = dense<[[1.0, 1.0]]> : tensor<1x2xf32>}
    }
  }
}
