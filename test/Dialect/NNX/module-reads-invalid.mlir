// RUN: nnx-opt %s -split-input-file -verify-diagnostics

nnx.model @uncalled_with_forward inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{is marked 'nnx.uncalled' (never called by the model's forward) but has an 'nnx.forward'}}
  nnx.module @m class = "M" attributes {nnx.uncalled} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @no_forward inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{must have exactly one 'nnx.forward' (found 0)}}
  nnx.module @m class = "M" {
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
  }
}

// -----

nnx.model @call_uncalled inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" {
    // expected-note @+1 {{module defined here}}
    nnx.module @aux class = "Aux" attributes {nnx.uncalled} {
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{is marked 'nnx.uncalled': the model's forward never called it when it was exported, so it has no forward to run}}
      %y = nnx.call @aux(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @uncalled_not_unit inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.uncalled' must be a unit attribute on an 'nnx.module'}}
  nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>, nnx.uncalled}
}

// -----

nnx.model @of_names_nothing inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" {
    nnx.linear @q {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'nnx.state' op reads 'bias' of @k, which names no module below the enclosing module}}
      %b = nnx.state "bias" {nnx.of = @k} : tensor<4xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @of_no_tensor inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" {
    nnx.linear @q {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'nnx.state' op reads 'bias' of @q, which has no tensor of that name}}
      %b = nnx.state "bias" {nnx.of = @q} : tensor<4xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @of_type inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" {
    nnx.linear @q {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{result type 'tensor<8x4xf32>' differs from the type of state tensor 'weight', 'tensor<4x4xf32>'}}
      %w = nnx.state "weight" {nnx.of = @q} : tensor<8x4xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @of_not_a_ref inputs(tensor<?x4xf32>) {
  nnx.module @m class = "M" attributes {state = {s = dense<1.0> : tensor<4xf32>}} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-error @+1 {{'nnx.of' must be a module reference on an 'nnx.state'}}
      %s = nnx.state "s" {nnx.of = "q"} : tensor<4xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @entry_not_forward inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.entry' must be a string on an 'nnx.forward'}}
  nnx.module @m class = "M" attributes {nnx.entry = "decode"} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}
