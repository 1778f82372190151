module {
  nnx.model @lora inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {bias = tensor<3xf32>, weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {alpha = 4.000000e+00 : f64, r = 2 : i64}, shapes = [tensor<3x4xf32>]>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["x.y"], config = {rank = 1 : i64}>]>} {
    nnx.sequential @net keying = named {
      nnx.lora @fc {alpha = 4.000000e+00 : f64, bias = dense<1.000000e+00> : tensor<3xf32>, lora_A = dense<5.000000e-01> : tensor<2x4xf32>, lora_B = dense<0.000000e+00> : tensor<3x2xf32>, requires_grad = {bias = false, weight = false}, weight = dense<2.500000e-01> : tensor<3x4xf32>}
    }
  }
  nnx.model @merged inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = fresh, materialized = 0, operations = []>} {
    nnx.lora @fc {alpha = 1.000000e+00 : f64, lora_A = dense<5.000000e-01> : tensor<1x4xf32>, lora_B = dense<0.000000e+00> : tensor<3x1xf32>, merged, weight = dense<2.500000e-01> : tensor<3x4xf32>}
  }
}

