// Pools and convolutions over images of dynamic size (empty-image.test):
// padded, so that an image with no rows would still have windows (of
// padding only).
nnx.model @avg inputs(tensor<?x1x?x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.avg_pool2d @"0" {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, count_include_pad}
  }
}
nnx.model @max inputs(tensor<?x1x?x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.max_pool2d @"0" {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
  }
}
nnx.model @conv inputs(tensor<?x1x?x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>, bias = dense<[1.0, 2.0]> : tensor<2xf32>}
  }
}
nnx.model @conv1d inputs(tensor<?x1x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv1d @"0" {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1>, stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<0.5> : tensor<2x1x1xf32>, bias = dense<[1.0, 2.0]> : tensor<2xf32>}
  }
}
