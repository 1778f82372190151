// Inputs/tiny.mlir with its tensors in the weights file beside it.
nnx.model @tiny inputs(tensor<?x2xf32>) attributes {weights = "tiny.safetensors"} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>,
                    bias = #nnx.external<"fc.bias"> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @head {weight = #nnx.external<"head.weight"> : tensor<2x3xf32>}
  }
}
