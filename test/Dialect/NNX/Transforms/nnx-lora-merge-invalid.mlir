// Merge and unmerge refusals: an error on the layer, nothing changed.
// RUN: split-file %s %t
// RUN: nnx-opt %t/merge.mlir -split-input-file -verify-diagnostics --nnx-lora-merge="layer=fc"
// RUN: nnx-opt %t/unmerge.mlir -verify-diagnostics --nnx-lora-unmerge

//--- merge.mlir
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-lora-merge: layer 'fc' (nnx.lora) is already merged}}
    nnx.lora @fc {alpha = 1.0 : f64, merged, weight = dense<1.0> : tensor<2x2xf32>,
                  lora_A = dense<1.0> : tensor<1x2xf32>, lora_B = dense<1.0> : tensor<2x1xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-lora-merge: layer 'fc' (nnx.linear) is not an 'nnx.lora'}}
    nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
  }
}

//--- unmerge.mlir
// Every layer is checked before any is edited: 'a' is merged, 'b' is not.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.lora @a {alpha = 1.0 : f64, merged, weight = dense<1.0> : tensor<2x2xf32>,
                 lora_A = dense<1.0> : tensor<1x2xf32>, lora_B = dense<1.0> : tensor<2x1xf32>}
    // expected-error @+1 {{nnx-lora-unmerge: layer 'b' (nnx.lora) is not merged}}
    nnx.lora @b {alpha = 1.0 : f64, weight = dense<1.0> : tensor<2x2xf32>,
                 lora_A = dense<1.0> : tensor<1x2xf32>, lora_B = dense<1.0> : tensor<2x1xf32>}
  }
}
