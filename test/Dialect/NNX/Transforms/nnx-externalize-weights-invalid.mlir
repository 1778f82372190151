// Refusals: a missing or empty `file` option, tensors whose bytes cannot be
// stored or read, a file that cannot be written. Every tensor is checked
// before the file is written, so a refused pass writes nothing.

// RUN: rm -rf %t && split-file %s %t && cd %t
// RUN: %python %S/Inputs/safetensors.py write %t/old.safetensors fc.weight:F32:3x2

// RUN: nnx-opt options.mlir --nnx-externalize-weights -verify-diagnostics
// RUN: nnx-opt options.mlir --nnx-externalize-weights=file= -verify-diagnostics

// RUN: nnx-opt refusals.mlir --split-input-file --nnx-externalize-weights=file=w.safetensors -verify-diagnostics
// RUN: test ! -e w.safetensors

// RUN: nnx-opt unwritable.mlir --nnx-externalize-weights=file=%t/no-such-dir/w.safetensors -verify-diagnostics

//--- options.mlir
// expected-error @below {{nnx-externalize-weights needs the file to write: --nnx-externalize-weights=file=<path>}}
module {
  nnx.model @m inputs(tensor<?x2xf32>) {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>}
  }
}

//--- refusals.mlir
// Both bad tensors of the model are reported.
nnx.model @types inputs(tensor<?x2xf32>) {
  // expected-error @+2 {{nnx-externalize-weights: tensor 'ids' of '<root>' has type 'tensor<2xindex>', whose element type safetensors cannot store}}
  // expected-error @+1 {{nnx-externalize-weights: tensor 'z' of '<root>' has type 'tensor<2xcomplex<f32>>', whose element type safetensors cannot store}}
  nnx.sequential @net keying = named attributes {state = {ids = dense<[1, 2]> : tensor<2xindex>, z = dense<(1.0, 0.0)> : tensor<2xcomplex<f32>>}} {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>}
  }
}

// -----

nnx.model @elided inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-externalize-weights: tensor 'weight' of 'fc': dense_resource<no_blob> has no data (its blob is not in the file)}}
    nnx.linear @fc {weight = dense_resource<no_blob> : tensor<3x2xf32>}
  }
}

// -----

// An external tensor is copied from the old file, which must hold it.
nnx.model @old_file inputs(tensor<?x2xf32>) attributes {weights = "old.safetensors"} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
    nnx.relu @act
    // expected-error-re @+1 {{nnx-externalize-weights: tensor 'weight' of 'head': the weights file '{{.*}}/old.safetensors' has no tensor 'head.weight'}}
    nnx.linear @head {weight = #nnx.external<"head.weight"> : tensor<2x3xf32>}
  }
}

// -----

nnx.model @no_weights inputs(tensor<?x2xf32>) {
  // expected-error @+1 {{nnx-externalize-weights: tensor 'weight' of '<root>' is #nnx.external<"fc.weight">, but the model names no weights file (give it one: its 'weights' attribute, or a tool's --weights)}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
}

//--- unwritable.mlir
// expected-error-re @below {{nnx-externalize-weights: cannot write the weights file: {{.*}}/no-such-dir/w.safetensors: cannot create a temporary file beside it: {{.*}}}}
module {
  nnx.model @m inputs(tensor<?x2xf32>) {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>}
  }
}
