// RUN: nnx-opt %s -split-input-file -verify-diagnostics
// The verifier of #nnx.external's slices: one entry per dim, starts >= 0,
// lengths > 0, a non-empty entry's lengths summing to the type's dim.

nnx.model @m inputs(tensor<?x32xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight' has 1 slice entries for 'tensor<48x32xf32>' (one per dim: 2)}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight", slices = [array<i64: 0, 48>]> : tensor<48x32xf32>}
}

// -----

nnx.model @m inputs(tensor<?x32xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight': dim 0 has the run (start -16, length 16); starts are >= 0 and lengths > 0}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight", slices = [array<i64: -16, 16, 0, 32>, array<i64>]> : tensor<48x32xf32>}
}

// -----

nnx.model @m inputs(tensor<?x32xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight': dim 1 has the run (start 8, length 0); starts are >= 0 and lengths > 0}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight", slices = [array<i64>, array<i64: 0, 32, 8, 0>]> : tensor<48x32xf32>}
}

// -----

nnx.model @m inputs(tensor<?x32xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight': dim 0's runs take 32 elements, but the type's dim is 48}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight", slices = [array<i64: 0, 16, 32, 16>, array<i64>]> : tensor<48x32xf32>}
}

// -----

nnx.model @m inputs(tensor<?x32xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight': slice entry 0 has 3 values, not pairs (start, length)}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight", slices = [array<i64: 0, 16, 32>, array<i64>]> : tensor<48x32xf32>}
}

// -----

nnx.model @m inputs(tensor<?x32xf32>) attributes {weights = "w.safetensors"} {
  // expected-error @+1 {{external tensor 'fc.weight': slice entry 1 is 7 : i64, not an array<i64> of runs}}
  nnx.linear @fc {weight = #nnx.external<"fc.weight", slices = [array<i64>, 7]> : tensor<48x32xf32>}
}
