// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-build-forward=parameters=constants

// A tensor in the weights file cannot become a constant (the default,
// parameters=arguments, takes it: nnx-build-forward-parameters.mlir).
nnx.model @m inputs(tensor<?x4xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{'nnx.linear' op at '<root>': tensor 'weight' is in the weights file; a forward with constant parameters needs it inline (nnx-internalize-weights), or build the forward with parameters=arguments}}
  nnx.linear @lin {weight = #nnx.external<"lin.weight"> : tensor<3x4xf32>}
}

// -----

// Inline tensors become constants; the refusal names the layer whose tensor
// is in the file.
nnx.model @m inputs(tensor<?x4xf32>) attributes {weights = "w.safetensors"} {
  nnx.sequential @body keying = named {
    nnx.linear @a {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{'nnx.linear' op at 'b': tensor 'bias' is in the weights file}}
    nnx.linear @b {weight = dense<1.0> : tensor<4x4xf32>, bias = #nnx.external<"b.bias"> : tensor<4xf32>}
  }
}
