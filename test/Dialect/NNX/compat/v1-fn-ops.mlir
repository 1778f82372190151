module {
  func.func @binary(%arg0: tensor<?x?x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<1x1x?x?xf32>, %arg3: tensor<f32>, %arg4: tensor<?x4xi64>) {
    %0 = nnx.fn.add %arg0, %arg1 : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
    %1 = nnx.fn.sub %arg1, %arg0 : tensor<8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
    %2 = nnx.fn.mul %arg0, %arg3 : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
    %3 = nnx.fn.div %arg3, %arg0 : tensor<f32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
    %4 = nnx.fn.pow %arg0, %arg3 : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
    %5 = nnx.fn.maximum %arg4, %arg4 : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi64>
    %6 = nnx.fn.minimum %arg0, %arg1 : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
    %7 = nnx.fn.eq %arg2, %arg3 : tensor<1x1x?x?xf32>, tensor<f32> -> tensor<1x1x?x?xi1>
    %8 = nnx.fn.ne %arg0, %arg1 : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xi1>
    %9 = nnx.fn.lt %arg4, %arg4 : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi1>
    %10 = nnx.fn.le %arg0, %arg1 : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xi1>
    %11 = nnx.fn.gt %arg0, %arg3 : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xi1>
    %12 = nnx.fn.ge %arg2, %arg2 : tensor<1x1x?x?xf32>, tensor<1x1x?x?xf32> -> tensor<1x1x?x?xi1>
    %13 = nnx.fn.eq %7, %12 : tensor<1x1x?x?xi1>, tensor<1x1x?x?xi1> -> tensor<1x1x?x?xi1>
    return
  }
  func.func @where_matmul(%arg0: tensor<1x1x?x?xi1>, %arg1: tensor<?x4x?x?xf32>, %arg2: tensor<f32>, %arg3: tensor<?x4x?x16xf32>, %arg4: tensor<16x8xf32>) {
    %0 = nnx.fn.where %arg0, %arg1, %arg2 : tensor<1x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %1 = nnx.fn.matmul %arg3, %arg3 {transpose_b} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
    %2 = nnx.fn.matmul %1, %arg3 : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
    %3 = nnx.fn.matmul %arg3, %arg4 : tensor<?x4x?x16xf32>, tensor<16x8xf32> -> tensor<?x4x?x8xf32>
    return
  }
  func.func @shapes(%arg0: tensor<?x?x64xf32>, %arg1: tensor<?x?xi1>, %arg2: tensor<?x2x1x?x16xf32>, %arg3: index, %arg4: index) {
    %0 = nnx.fn.reshape %arg0 [%arg3, %arg4, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
    %1 = nnx.fn.reshape %arg1 [1, 1, %arg4, %arg4] : tensor<?x?xi1> -> tensor<1x1x?x?xi1>
    %2 = nnx.fn.expand %arg2 [%arg3, 2, 2, %arg4, 16] : tensor<?x2x1x?x16xf32> -> tensor<?x2x2x?x16xf32>
    %3 = nnx.fn.permute %0 [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
    return
  }
  func.func @rows(%arg0: tensor<?x4x?x?xf32>, %arg1: tensor<?x?x64xf32>) {
    %0 = nnx.fn.softmax %arg0 {dim = -1 : i64} : tensor<?x4x?x?xf32>
    %1 = nnx.fn.mean %arg1 {dims = array<i64: -1>, keepdim} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
    %2 = nnx.fn.sum %arg1 {dims = array<i64: 1>} : tensor<?x?x64xf32> -> tensor<?x64xf32>
    return
  }
  func.func @activations(%arg0: tensor<?x?x64xf32>) {
    %0 = nnx.fn.gelu %arg0 {approximate = #nnx.gelu_approximation<tanh>} : tensor<?x?x64xf32>
    %1 = nnx.fn.gelu %arg0 : tensor<?x?x64xf32>
    %2 = nnx.fn.silu %arg0 : tensor<?x?x64xf32>
    %3 = nnx.fn.relu %arg0 : tensor<?x?x64xf32>
    %4 = nnx.fn.sigmoid %arg0 : tensor<?x?x64xf32>
    %5 = nnx.fn.dropout %arg0 {p = 1.000000e-01 : f64} : tensor<?x?x64xf32>
    %6 = nnx.fn.dropout %arg0 {p = 2.500000e-01 : f64, seed = 7 : i64, train} : tensor<?x?x64xf32>
    return
  }
  func.func @factories(%arg0: index, %arg1: tensor<?x?xi1>, %arg2: tensor<1x1x?x?xf32>) {
    %0 = nnx.fn.arange %arg0 : tensor<?xi64>
    %1 = nnx.fn.arange %arg0 : tensor<?xf32>
    %c5 = arith.constant 5 : index
    %2 = nnx.fn.arange %c5 : tensor<5xi32>
    %3 = nnx.fn.tril %arg1 : tensor<?x?xi1>
    %4 = nnx.fn.triu %arg2 {diagonal = 1 : i64} : tensor<1x1x?x?xf32>
    return
  }
  nnx.model @attn inputs(tensor<?x?x16xf32>) {
    nnx.module @root class = "Attn" {
      nnx.forward @forward(%arg0: tensor<?x?x16xf32>) -> tensor<?x?x?xf32> {
        %0 = nnx.fn.matmul %arg0, %arg0 {nnx.source = "matmul_0", transpose_b} : tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x?xf32>
        %1 = nnx.fn.softmax %0 {dim = -1 : i64, nnx.source = "softmax_0"} : tensor<?x?x?xf32>
        nnx.return %1 : tensor<?x?x?xf32>
      }
    }
  }
  func.func @reduce_all(%arg0: tensor<?x4xf32>) {
    %0 = nnx.fn.sum %arg0 {dims = array<i64>} : tensor<?x4xf32> -> tensor<f32>
    %1 = nnx.fn.mean %arg0 {dims = array<i64>, keepdim} : tensor<?x4xf32> -> tensor<1x1xf32>
    return
  }
  func.func @logical(%arg0: tensor<?x4xi1>, %arg1: tensor<4xi1>) {
    %0 = nnx.fn.logical_and %arg0, %arg1 : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
    %1 = nnx.fn.logical_or %arg1, %arg0 : tensor<4xi1>, tensor<?x4xi1> -> tensor<?x4xi1>
    %cst = arith.constant dense<true> : tensor<i1>
    %2 = nnx.fn.logical_xor %arg0, %cst : tensor<?x4xi1>, tensor<i1> -> tensor<?x4xi1>
    return
  }
  func.func @max_min(%arg0: tensor<?x8xf32>, %arg1: tensor<?x?xi32>) {
    %0 = nnx.fn.amax %arg0 {dims = array<i64: -1>, keepdim} : tensor<?x8xf32> -> tensor<?x1xf32>
    %1 = nnx.fn.amin %arg0 {dims = array<i64: 0>} : tensor<?x8xf32> -> tensor<8xf32>
    %2 = nnx.fn.amax %arg1 {dims = array<i64>} : tensor<?x?xi32> -> tensor<i32>
    return
  }
  func.func @indexing(%arg0: tensor<?x8xf32>, %arg1: tensor<?x2xi64>, %arg2: tensor<?xi64>, %arg3: tensor<3xi32>) {
    %0 = nnx.fn.gather %arg0, %arg1 {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
    %1 = nnx.fn.index_select %arg0, %arg2 {dim = 0 : i64} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    %2 = nnx.fn.index_select %arg0, %arg3 {dim = -1 : i64} : tensor<?x8xf32>, tensor<3xi32> -> tensor<?x3xf32>
    return
  }
  func.func @topk_cumsum(%arg0: tensor<?x8xf32>, %arg1: tensor<?x?xf32>, %arg2: tensor<?x?xi64>) {
    %values, %indices = nnx.fn.topk %arg0 {dim = -1 : i64, k = 2 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
    %values_0, %indices_1 = nnx.fn.topk %arg1 {dim = 0 : i64, k = 3 : i64} : tensor<?x?xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
    %0 = nnx.fn.cumsum %arg1 {dim = 1 : i64} : tensor<?x?xf32>
    %1 = nnx.fn.cumsum %arg2 {dim = -1 : i64} : tensor<?x?xi64>
    return
  }
  func.func @pools(%arg0: tensor<?x6x28x28xf32>, %arg1: tensor<?x64x?x?xf32>) {
    %0 = nnx.fn.max_pool2d %arg0 {dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<?x6x28x28xf32> -> tensor<?x6x14x14xf32>
    %1 = nnx.fn.max_pool2d %arg1 {ceil_mode, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x64x?x?xf32> -> tensor<?x64x?x?xf32>
    %2 = nnx.fn.avg_pool2d %arg0 {count_include_pad, kernel_size = array<i64: 4, 4>, padding = array<i64: 0, 0>, stride = array<i64: 4, 4>} : tensor<?x6x28x28xf32> -> tensor<?x6x7x7xf32>
    %3 = nnx.fn.avg_pool2d %arg0 {ceil_mode, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x6x28x28xf32> -> tensor<?x6x15x15xf32>
    %4 = nnx.fn.adaptive_avg_pool2d %arg1 {output_size = array<i64: 1, 1>} : tensor<?x64x?x?xf32> -> tensor<?x64x1x1xf32>
    return
  }
}

