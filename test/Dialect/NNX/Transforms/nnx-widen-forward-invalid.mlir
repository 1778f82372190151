// Every refusal of nnx-widen's proof on a custom module's forward: an error
// at the target naming what breaks the proof, a note at the use, and the IR
// unchanged.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-widen="layer=t width=6"
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-prune="layer=t keep=2"

// A second use of the units: the forward returns them.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) reaches the forward's 'nnx.return': a second use of the units outside the module, where the proof cannot follow them}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @c(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      nnx.return %y, %h : tensor<?x4xf32>, tensor<?x4xf32>
    }
  }
}

// -----

// A second use of the units: two Linears read them.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) reaches a second Linear ('c2' after 'c'): a second use of the units, which only one consumer's columns can rescale}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c2 {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{first consumer is here}}
      %a = nnx.call @c(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      %b = nnx.call @c2(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %s = nnx.fn.add %a, %b : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
      nnx.return %s : tensor<?x4xf32>
    }
  }
}

// -----

// A reduction over the units.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) reaches a reduction ('nnx.fn.mean'): its result depends on every unit}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      %m = nnx.fn.mean %h {dims = array<i64: 1>, keepdim} : tensor<?x4xf32> -> tensor<?x1xf32>
      %s = nnx.fn.sub %h, %m : tensor<?x4xf32>, tensor<?x1xf32> -> tensor<?x4xf32>
      %y = nnx.call @c(%s) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// A reshape that splits the units (attention's heads).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) reaches a reshape ('nnx.fn.reshape') that moves or mixes the unit dim}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %c0 = arith.constant 0 : index
      %b = tensor.dim %h, %c0 : tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      %r = nnx.fn.reshape %h [%b, 2, 2] : tensor<?x4xf32> -> tensor<?x2x2xf32>
      %f = nnx.fn.reshape %r [%b, 4] : tensor<?x2x2xf32> -> tensor<?x4xf32>
      %y = nnx.call @c(%f) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// A norm on the path.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) passes the norm 'layer_norm' 'ln': its statistics over the units change when units are added or removed}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.layer_norm @ln {normalized_shape = array<i64: 4>, eps = 1.0e-05 : f64}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      %n = nnx.call @ln(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @c(%n) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// A custom forward the proof does not follow (an activation written as a
// module of its own, HF's NewGELUActivation).
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) enters the custom module 'act' (class 'NewGELUActivation'), whose forward the proof does not follow}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.module @act class = "NewGELUActivation" {
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %t = math.tanh %x : tensor<?x4xf32>
        nnx.return %t : tensor<?x4xf32>
      }
    }
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      %a = nnx.call @act(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @c(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// The forward reads the width of the units.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) reaches a 'tensor.dim' of the unit dim: the forward computes with the width the edit changes}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %c1 = arith.constant 1 : index
      // expected-note @+1 {{use is here}}
      %w = tensor.dim %h, %c1 : tensor<?x4xf32>
      %y = nnx.call @c(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// The units meet a value per unit that no Linear computes.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) meets a value per unit that is not the output of a Linear of the same width: only such a sibling can be widened in lockstep}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{use is here}}
      %m = nnx.fn.mul %h, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
      %y = nnx.call @c(%m) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// The target runs twice: each call would change.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) is run by 2 'nnx.call's: the edit would change what each of them computes}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-note @+1 {{call is here}}
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{call is here}}
      %h2 = nnx.call @t(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @c(%h2) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// The target never runs.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) is never run by an 'nnx.call' in its module's forward: there is no data flow to prove}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %y = nnx.call @c(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// -----

// The units reach no Linear.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    // expected-error @+1 {{target 't' (nnx.linear) has no consumer: its units reach no 'nnx.linear' in the forward of '<root>'}}
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      // expected-note @+1 {{call is here}}
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %g = nnx.fn.gelu %h : tensor<?x4xf32>
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

// The consumer also runs on another value.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{consumer 'c' (nnx.linear) is run by 2 'nnx.call's: the edit would change what each of them computes}}
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{call is here}}
      %y = nnx.call @c(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      // expected-note @+1 {{call is here}}
      %z = nnx.call @c(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %s = nnx.fn.add %y, %z : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
      nnx.return %s : tensor<?x4xf32>
    }
  }
}
