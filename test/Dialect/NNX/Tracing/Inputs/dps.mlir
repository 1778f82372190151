// x + y as a labelled linalg.generic: two inputs and one destination.
#id = affine_map<(d0, d1) -> (d0, d1)>
nnx.model @m inputs(tensor<2x4xf32>, tensor<2x4xf32>) {
  nnx.module @net class = "Net" {
    nnx.forward @forward(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %e = tensor.empty() : tensor<2x4xf32>
      %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%x, %y : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {nnx.source = "add_0"} {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %r = arith.addf %a, %b : f32
        linalg.yield %r : f32
      } -> tensor<2x4xf32>
      nnx.return %s : tensor<2x4xf32>
    }
  }
}
