// A custom module whose forward calls the children of an nnx.module_dict
// (nn.ModuleDict) by path: y = fc(emb(ids)); see test/nnx-run/module-dict.test.
nnx.model @dict inputs(tensor<?x3xi64>) {
  nnx.module @net class = "DictNet" {
    nnx.module_dict @d {
      nnx.linear @fc {weight = dense<[[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -1.0]]> : tensor<2x4xf32>,
                      bias = dense<[0.25, -1.0]> : tensor<2xf32>}
      nnx.embedding @emb {weight = dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0],
                                          [-1.0, -2.0, -3.0, -4.0], [0.5, 0.25, 0.0, 1.0]]> : tensor<5x4xf32>}
    }
    nnx.forward @forward(%ids: tensor<?x3xi64>) -> tensor<?x3x2xf32> {
      %e = nnx.call @d::@emb(%ids) : (tensor<?x3xi64>) -> tensor<?x3x4xf32>
      %y = nnx.call @d::@fc(%e) : (tensor<?x3x4xf32>) -> tensor<?x3x2xf32>
      nnx.return %y : tensor<?x3x2xf32>
    }
  }
}
