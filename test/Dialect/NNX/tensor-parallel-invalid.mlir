// RUN: nnx-opt %s -split-input-file -verify-diagnostics

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.partial_sum' must be {ranks = N : i64} with N >= 2, got {ranks = 1 : i64}}}
  nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf32>,
                  nnx.partial_sum = {ranks = 1 : i64}}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.partial_sum' must be {ranks = N : i64} with N >= 2, got {rank = 0 : i64, ranks = 2 : i64}}}
  nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf32>,
                  nnx.partial_sum = {ranks = 2 : i64, rank = 0 : i64}}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.partial_sum' must be on an 'nnx.linear', not on 'nnx.relu'}}
  nnx.relu @act {nnx.partial_sum = {ranks = 2 : i64}}
}

// -----

// expected-error @+1 {{'nnx.tensor_parallel' must be {ranks = N : i64, rank = R : i64} with N >= 2 and 0 <= R < N, got {rank = 2 : i64, ranks = 2 : i64}}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.tensor_parallel = {ranks = 2 : i64, rank = 2 : i64}} {
  nnx.relu @act
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.relu' op 'nnx.tensor_parallel' must be on an 'nnx.model'}}
  nnx.relu @act {nnx.tensor_parallel = {ranks = 2 : i64, rank = 0 : i64}}
}
