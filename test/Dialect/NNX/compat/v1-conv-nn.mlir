module {
  nnx.model @cnn inputs(tensor<?x2x?x?xf32>) {
    nnx.conv_nn @net attributes {channels = array<i64: 2, 3>, dropout = 2.500000e-01 : f64, hidden_dims = array<i64: 2>, in_channels = 2 : i64, output_dim = 1 : i64, pool = 2 : i64} {
      nnx.module_list @layers {
        nnx.conv2d @"0" {bias = dense<1.000000e-01> : tensor<2xf32>, dilation = array<i64: 1, 1>, in_channels = 2 : i64, kernel_size = array<i64: 3, 3>, out_channels = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<5.000000e-01> : tensor<2x2x3x3xf32>}
        nnx.conv2d @"1" {dilation = array<i64: 1, 1>, in_channels = 2 : i64, kernel_size = array<i64: 3, 3>, out_channels = 3 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<2.500000e-01> : tensor<3x2x3x3xf32>}
      }
      nnx.module_list @fcs {
        nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<2x3xf32>}
        nnx.linear @"1" {weight = dense<1.000000e+00> : tensor<1x2xf32>}
      }
    }
  }
}

