// The bundled MLP (examples/mlp.mlir) with a recipe recorded on it, the
// seed's section 8 example in nnx terms: LoRA (r = 2, alpha = 8) on fc1 and
// fc2, and a rank-2 SVD factorization of the head. docs/Recipes.md walks
// through record, validate, materialize, save and rebuild.
nnx.model @mlp inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<
    materialization = in_place, materialized = 0, operations = [
      #nnx.recipe_op<id = "lora", version = 1, targets = ["fc1", "fc2"],
                     config = {r = 2 : i64, alpha = 8.0 : f64}>,
      #nnx.recipe_op<id = "low_rank", version = 1, targets = ["head"],
                     config = {rank = 2 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc1 {weight = dense<[[0.25, 0.79, 0.55, -0.55],
                                     [-0.40, 0.75, -0.99, 0.64],
                                     [0.59, -0.06, -0.39, -0.44],
                                     [-0.49, -0.11, 0.01, 0.11],
                                     [0.99, 0.59, 0.24, 0.98],
                                     [-0.57, -0.68, 0.23, -0.91],
                                     [-0.93, 0.03, -0.07, 0.83],
                                     [0.26, 0.03, -0.01, -0.50]]> : tensor<8x4xf32>,
                     bias = dense<[-0.98, -0.62, 0.38, -0.60, -0.26, -0.99, 0.66, -0.69]> : tensor<8xf32>}
    nnx.relu @act1
    nnx.dropout @drop1 {p = 0.1 : f64}
    nnx.linear @fc2 {weight = dense<[[-0.46, 0.76, 0.02, 0.69, 0.28, 0.48, -0.82, 0.08],
                                     [0.02, 0.74, -0.28, 0.20, -0.88, -0.22, -0.35, -0.70],
                                     [0.63, -0.24, 0.96, 0.18, 0.21, 0.28, 0.35, -0.70],
                                     [-0.12, -0.52, -0.20, -0.81, 0.94, -0.57, 0.34, -0.40],
                                     [0.75, 0.32, -0.74, 0.69, 0.89, 0.81, 0.14, -0.71],
                                     [-0.62, 0.86, 0.10, -0.64, 0.77, 0.28, 0.14, -0.25],
                                     [-0.18, -0.52, -0.92, 0.75, -0.06, 0.10, -0.36, 0.50],
                                     [-0.95, -0.26, -0.94, -0.75, 0.93, 0.32, -0.14, 0.05]]> : tensor<8x8xf32>,
                     bias = dense<[0.75, -0.31, 0.18, 0.37, -0.29, 0.04, 0.53, 0.82]> : tensor<8xf32>}
    nnx.tanh @act2
    nnx.linear @head {weight = dense<[[-0.70, 0.87, -0.99, 0.51, 0.62, -0.73, -0.16, 0.63],
                                      [-0.97, 0.26, 0.59, 0.03, 0.45, -0.55, -0.60, -0.27],
                                      [-0.64, -0.31, 0.90, 0.15, -0.32, -0.46, 0.90, -0.11]]> : tensor<3x8xf32>,
                      bias = dense<[0.96, 0.03, 0.04]> : tensor<3xf32>}
  }
}
