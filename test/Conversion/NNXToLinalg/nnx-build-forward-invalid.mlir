// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-build-forward

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = named {
      // expected-error @+1 {{'nnx.linear' op at 'body.fc': is an uninitialized lazy layer (in_features unknown) and cannot be lowered}}
      nnx.linear @fc {lazy, out_features = 8 : i64}
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @body keying = named {
    nnx.relu @act
    // expected-error @+1 {{'nnx.linear' op at 'fc': is an instance of subclass 'ScaledLinear' with its own forward, which nnx cannot lower}}
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>, subclass = "ScaledLinear"}
  }
}

// -----

nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @body keying = named {
    nnx.module @block class = "Weird" {
      nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
        // expected-error @+1 {{'ub.poison' op in the forward of 'block': only upstream arith/math/tensor/linalg ops, 'nnx.fn' ops and 'nnx.call' can be lowered}}
        %u = ub.poison : tensor<?x8xf32>
        nnx.return %u : tensor<?x8xf32>
      }
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.module @block class = "Nested" {
    nnx.relu @act
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %c = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) {
      ^bb0(%o: f32):
        // expected-error @+1 {{'ub.poison' op in the forward of '<root>': nested in a region, only upstream arith/math/tensor/linalg ops without probes can be lowered}}
        %p = ub.poison : f32
        linalg.yield %p : f32
      } -> tensor<8xf32>
      nnx.return %x : tensor<?x8xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @body keying = named {
    // expected-error @+1 {{'nnx.relu' op at 'r': probe 'x' asks for input #1, but there are 1 inputs}}
    nnx.relu @r {nnx.probes = [#nnx.probe<name = "x", point = input, index = 1, kind = read>]}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @block class = "Block" {
    nnx.relu @act
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'arith.addf' op in the forward of '<root>': probe 's' asks for output #1, but there are 1 outputs}}
      %y = arith.addf %x, %x {nnx.probes = [#nnx.probe<name = "s", point = output, index = 1, kind = read>]} : tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<4xf32>) {
  // expected-error @+1 {{'nnx.linear' op at '<root>': needs an input of rank >= 2 (batch, ..., features), got 'tensor<4xf32>'}}
  nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
}

// -----

// expected-error @+1 {{'nnx.model' op cannot build '@forward': the symbol already exists}}
nnx.model @m inputs(tensor<?x4xf32>) { nnx.relu @r }
func.func @forward() { return }

// -----

// expected-error @+1 {{'nnx.model' op computes '(tensor<?x4xf32>) -> tensor<?x4xf32>', but '@forward' is declared as '(tensor<?x4xf32>) -> tensor<?x5xf32>'}}
nnx.model @m inputs(tensor<?x4xf32>) { nnx.relu @r }
// expected-note @+1 {{declared here}}
func.func private @forward(tensor<?x4xf32>) -> tensor<?x5xf32>

// -----

// A table without rows has nothing to look up (was: read row -1 of an empty
// constant).
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @body keying = named {
    // expected-error @+1 {{'nnx.embedding' op at 'e': the table 'tensor<0x4xf32>' has no rows: no id can be looked up (PyTorch raises on every lookup)}}
    nnx.embedding @e {weight = dense<1.0> : tensor<0x4xf32>}
  }
}
