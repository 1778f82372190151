// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-check-no-probes

func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'nnx.probe' op 'h' has no lowering of its own: run nnx-lower-probes first}}
  %r = nnx.probe read "h" %x : tensor<?x4xf32>
  // expected-error @+1 {{'nnx.probe' op 'w' has no lowering of its own: run nnx-lower-probes first}}
  %w = nnx.probe write "w" %r : tensor<?x4xf32>
  return %w : tensor<?x4xf32>
}

// -----

// No probe: nothing to report, the IR is unchanged.
func.func @clean(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
