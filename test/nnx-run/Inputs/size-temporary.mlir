func.func @forward(%x: tensor<1xi64>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %x[%c0] : tensor<1xi64>
  %n = arith.index_cast %e : i64 to index
  %a = nnx.fn.arange %n : tensor<?xf32>
  %s = nnx.fn.sum %a {dims = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  return %s : tensor<f32>
}
