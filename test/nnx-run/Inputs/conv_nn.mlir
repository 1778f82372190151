nnx.model @cnn inputs(tensor<?x2x?x?xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1, pool = 2, dropout = 0.25 : f64} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>, bias = dense<0.1> : tensor<2xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.25> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
