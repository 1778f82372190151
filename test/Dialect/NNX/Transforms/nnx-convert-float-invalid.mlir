// nnx-convert-float refuses, before anything changes: a tensor of the
// weights file (its bytes are not in the IR), a type it does not know, and
// from = to.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-convert-float="from=bf16 to=f16"
// RUN: not nnx-opt %s -split-input-file --nnx-convert-float="from=bf16 to=f8" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not nnx-opt %s -split-input-file --nnx-convert-float="from=f32 to=f32" 2>&1 | FileCheck %s --check-prefix=SAME

// TYPE: error: nnx-convert-float: to=f8 is not a float type nnx converts (expected f16, bf16, f32 or f64)
// SAME: error: nnx-convert-float: from and to are both f32

nnx.model @mlp inputs(tensor<?x4xbf16>) attributes {weights = "mlp.safetensors"} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-convert-float: tensor 'weight' of 'fc' is in the weights file (#nnx.external<"fc.weight">); run nnx-internalize-weights first, or convert the checkpoint}}
    nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<2x4xbf16>}
  }
}
