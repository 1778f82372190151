// Modules a rebuild from a descriptor would drop are refused, each named;
// such models take the surgery passes directly.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-record-base

nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-record-base: module 'fc' has forward hooks, which a rebuild from a descriptor would drop (use the surgery passes directly on this model)}}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>, hooks = ["h"]}
    // expected-error @+1 {{nnx-record-base: module 'g' is a subclass with its own forward}}
    nnx.linear @g {weight = dense<1.0> : tensor<3x3xf32>, subclass = "FakeQuantLinear"}
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{nnx-record-base: module '<root>' is a runtime-only module without a registered class}}
  nnx.module @blk class = "" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "r", modules = [#nnx.module_desc<path = "", kind = "nnx.relu", attributes = {}>]>} {
  // expected-error @-1 {{nnx-record-base: model '@m' already records a base descriptor}}
  nnx.relu @r
}

// -----

// A tree that recipe operations already transformed is not a base.
// expected-error @+1 {{nnx-record-base: model '@m' has 1 materialized recipe operations: its tree is no longer the base}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["r"], config = {r = 1 : i64, alpha = 1.0 : f64}, shapes = [tensor<4x4xf32>]>]>} {
  nnx.relu @r
}
