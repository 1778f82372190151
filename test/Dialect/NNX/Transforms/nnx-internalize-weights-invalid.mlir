// Refusals name the tensor, its module, the key and the file, on the module
// that holds the tensor; nothing changes. The IR is copied next to the
// weights files it names (relative to the IR).

// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %s %t/model.mlir
// RUN: %python %S/Inputs/safetensors.py write %t/w.safetensors fc.weight:F32:3x2 half:F16:3x2
// RUN: echo "not a safetensors file" > %t/bad.safetensors
// RUN: nnx-opt %t/model.mlir --split-input-file --nnx-internalize-weights -verify-diagnostics
// Every tensor is checked before anything changes: in the IR the refused
// pass leaves, the good tensor before the bad one is still external.
// RUN: not nnx-opt %t/model.mlir --split-input-file --nnx-internalize-weights --mlir-print-ir-after-failure 2>&1 | FileCheck %s
// CHECK-LABEL: IR Dump After NNXInternalizeWeightsPass Failed
// CHECK:       nnx.model @missing_key inputs(tensor<?x2xf32>) attributes {weights = "w.safetensors"}
// CHECK:       nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}

nnx.model @missing_key inputs(tensor<?x2xf32>) attributes {weights = "w.safetensors"} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
    // expected-error-re @+1 {{nnx-internalize-weights: tensor 'weight' of 'head': the weights file '{{.*}}/w.safetensors' has no tensor 'head.weight'}}
    nnx.linear @head {weight = #nnx.external<"head.weight"> : tensor<2x3xf32>}
  }
}

// -----

nnx.model @wrong_shape inputs(tensor<?x3xf32>) attributes {weights = "w.safetensors"} {
  // expected-error-re @+1 {{nnx-internalize-weights: tensor 'weight' of '<root>': tensor 'fc.weight' of '{{.*}}/w.safetensors' is F32 of shape (3, 2), the model expects F32 of shape (2, 3)}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<2x3xf32>}
}

// -----

nnx.model @wrong_dtype inputs(tensor<?x2xf32>) attributes {weights = "w.safetensors"} {
  // expected-error-re @+1 {{nnx-internalize-weights: tensor 'weight' of '<root>': tensor 'half' of '{{.*}}/w.safetensors' is F16 of shape (3, 2), the model expects F32 of shape (3, 2)}}
  nnx.linear @fc {weight = #nnx.external<"half"> : tensor<3x2xf32>}
}

// -----

// A file problem is reported once, not once per tensor.
nnx.model @missing_file inputs(tensor<?x2xf32>) attributes {weights = "missing.safetensors"} {
  // expected-error-re @+1 {{nnx-internalize-weights: tensor 'weight' of '<root>' is #nnx.external<"fc.weight">, but the weights file cannot be read: {{.*}}/missing.safetensors: cannot open file: {{.*}}}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>, bias = #nnx.external<"fc.bias"> : tensor<3xf32>}
}

// -----

nnx.model @malformed_file inputs(tensor<?x2xf32>) attributes {weights = "bad.safetensors"} {
  // expected-error-re @+1 {{nnx-internalize-weights: tensor 'weight' of '<root>' is #nnx.external<"fc.weight">, but the weights file cannot be read: {{.*}}/bad.safetensors: {{.*}}}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
}

// -----

nnx.model @no_weights inputs(tensor<?x2xf32>) {
  // expected-error @+1 {{nnx-internalize-weights: tensor 'weight' of '<root>' is #nnx.external<"fc.weight">, but the model names no weights file (give it one: its 'weights' attribute, or a tool's --weights)}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
}
