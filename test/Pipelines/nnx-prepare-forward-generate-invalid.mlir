// nnx-prepare-forward's generate= refusals.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics \
// RUN:   --nnx-prepare-forward="generate=sample"

// expected-error @below {{nnx-prepare-forward: generate must be prefill or decode, got 'sample'}}
module {
  func.func @forward(%ids: tensor<?x?xi64>) -> tensor<?x?xi64> {
    return %ids : tensor<?x?xi64>
  }
}
