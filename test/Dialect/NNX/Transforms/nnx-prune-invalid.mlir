// nnx-prune's own refusals (the consumer proof's are shared with nnx-widen:
// nnx-widen-invalid.mlir, nnx-widen-forward-invalid.mlir).
// RUN: split-file %s %t
// RUN: nnx-opt %t/keep.mlir -verify-diagnostics --nnx-prune="layer=0 keep=2"
// RUN: nnx-opt %t/keep.mlir -verify-diagnostics --nnx-prune="layer=0 keep=0"
// Importance files that do not fit: the wrong shape, a non-finite entry,
// integers, no file.
// RUN: %python -c "import numpy; numpy.save('%t/three.npy', numpy.ones(3, numpy.float32)); numpy.save('%t/nan.npy', numpy.array([1.0, numpy.nan])); numpy.save('%t/int.npy', numpy.array([1, 2]))"
// RUN: not nnx-opt %t/keep.mlir --nnx-prune="layer=0 keep=1 importance=%t/three.npy" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not nnx-opt %t/keep.mlir --nnx-prune="layer=0 keep=1 importance=%t/nan.npy" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not nnx-opt %t/keep.mlir --nnx-prune="layer=0 keep=1 importance=%t/int.npy" 2>&1 | FileCheck %s --check-prefix=INT
// RUN: not nnx-opt %t/keep.mlir --nnx-prune="layer=0 keep=1 importance=%t/none.npy" 2>&1 | FileCheck %s --check-prefix=NONE
// SHAPE: error: nnx-prune: target '0' (nnx.linear) has 2 units; option importance='{{.*}}three.npy' holds a float32 array of shape (3,), not a float array of shape (2)
// NAN: error: nnx-prune: target '0' (nnx.linear) is ranked by option importance='{{.*}}nan.npy', whose entry 1 is not finite
// INT: error: nnx-prune: target '0' (nnx.linear) has 2 units; option importance='{{.*}}int.npy' holds a int64 array
// NONE: error: nnx-prune: target '0' (nnx.linear) is ranked by option importance='{{.*}}none.npy', which cannot be read: {{.*}}none.npy: cannot open file

// A norm between target and consumer (the sequential walk's refusal).
// RUN: nnx-opt %t/norm.mlir -verify-diagnostics --nnx-prune="layer=0 keep=1"

//--- keep.mlir
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = positional {
    // expected-error-re @+1 {{nnx-prune: target '0' (nnx.linear) has out_features = 2; option keep={{[02]}} must be in 1..1}}
    nnx.linear @"0" {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
  }
}

//--- norm.mlir
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = positional {
    // expected-note @+1 {{target is here}}
    nnx.linear @"0" {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
    // expected-error @+1 {{nnx-prune: module on the path '1' (nnx.layer_norm) is width-dependent}}
    nnx.layer_norm @"1" {normalized_shape = array<i64: 2>, eps = 1.0e-05 : f64}
    nnx.linear @"2" {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
  }
}
