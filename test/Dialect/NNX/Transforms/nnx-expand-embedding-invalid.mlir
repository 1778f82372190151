// Every expand-embedding refusal is an error on the offending op, before any
// change.
// RUN: split-file %s %t
// RUN: nnx-opt %t/main.mlir -split-input-file -verify-diagnostics --nnx-expand-embedding="layer=e num=3"
// RUN: nnx-opt %t/overflow.mlir -verify-diagnostics --nnx-expand-embedding="layer=e num=9223372036854775807"
// RUN: nnx-opt %t/huge.mlir -verify-diagnostics --nnx-expand-embedding="layer=e num=4000000000"
// RUN: nnx-opt %t/init.mlir -verify-diagnostics --nnx-expand-embedding="layer=e num=8 init=random"

//--- main.mlir

// A smaller new size.
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) has 5 rows; option num=3 would shrink it}}
    nnx.embedding @e {weight = dense<1.0> : tensor<5x4xf32>}
  }
}

// -----

nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) has a 'weight_norm' parametrization on 'weight'}}
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>, parametrizations = {weight = "weight_norm"}}
  }
}

// -----

nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) has an unbaked prune mask on 'weight'}}
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>, pruned = ["weight"]}
  }
}

// -----

nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) is a subclass ('ScaledEmbedding') with its own forward}}
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>, subclass = "ScaledEmbedding"}
  }
}

// -----

nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) has hooks (h)}}
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>, hooks = ["h"]}
  }
}

// -----

nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @x {weight = dense<1.0> : tensor<2x4xf32>}
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.relu) is not an 'nnx.embedding'}}
    nnx.relu @e
  }
}

//--- init.mlir

// expected-error @+1 {{nnx-expand-embedding: option init='random' is not one of 'zeros', 'copy_mean'}}
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>}
  }
}

//--- overflow.mlir

// A size whose element count overflows is refused before allocating (was:
// std::length_error).
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) option num=9223372036854775807 would grow its weight to 9223372036854775807x4, whose size overflows 64 bits; a surgery pass holds at most 16 GiB per tensor (kMaxExpandedTensorBytes)}}
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>}
  }
}

//--- huge.mlir

// A size that cannot be held is refused before allocating (was: LLVM out of
// memory).
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-expand-embedding: target 'e' (nnx.embedding) option num=4000000000 would grow its weight to 4000000000x4, which takes 128000000000 bytes as doubles; a surgery pass holds at most 16 GiB per tensor (kMaxExpandedTensorBytes)}}
    nnx.embedding @e {weight = dense<1.0> : tensor<2x4xf32>}
  }
}
