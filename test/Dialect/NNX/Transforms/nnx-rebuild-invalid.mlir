// nnx-rebuild refuses, before any tensor is loaded: a model without a base
// descriptor; an unknown recorded operation or version or malformed
// recorded options (naming the operation's index); a recorded target the
// replay does not find in its recorded shape; and weights that were
// transformed without their recipe.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-rebuild

// expected-error @+1 {{nnx-rebuild: model '@m' has no base descriptor, so it cannot be rebuilt (use the surgery passes directly on such a model)}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
}

// -----

// expected-error @+1 {{nnx-rebuild: recorded operation 0 ('lora'): unknown version 2 of 'lora' (known: 1)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 2, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}, shapes = [tensor<3x4xf32>]>]>} {
  nnx.sequential @net keying = named {
    nnx.lora @fc {alpha = 1.0 : f64, weight = dense<1.0> : tensor<3x4xf32>, lora_A = dense<1.0> : tensor<1x4xf32>, lora_B = dense<0.0> : tensor<3x1xf32>, requires_grad = {weight = false}}
  }
}

// -----

// expected-error @+1 {{nnx-rebuild: recorded operation 0 ('frobnicate'): unknown operation 'frobnicate' (known: lora, low_rank)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "frobnicate", version = 1, targets = ["fc"], config = {}, shapes = [tensor<3x4xf32>]>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// expected-error @+1 {{nnx-rebuild: recorded operation 0 ('low_rank'): option 'rank' must be a positive integer, got "2"}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "low_rank", version = 1, targets = ["fc"], config = {rank = "2"}, shapes = [tensor<3x4xf32>]>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// expected-error @+1 {{nnx-rebuild: operation 0 ('lora'), target 'fc': was recorded with weight 'tensor<5x4xf32>', the replay finds 'tensor<3x4xf32>'}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}, shapes = [tensor<5x4xf32>]>]>} {
  nnx.sequential @net keying = named {
    nnx.lora @fc {alpha = 1.0 : f64, weight = dense<1.0> : tensor<5x4xf32>, lora_A = dense<1.0> : tensor<1x4xf32>, lora_B = dense<0.0> : tensor<5x1xf32>, requires_grad = {weight = false}}
  }
}

// -----

// LoRA weights without the recipe that made them.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-rebuild: module 'fc' differs from base + recorded recipe: it is nnx.lora, expected nnx.linear; these weights were transformed without their recipe (materialize the recipe on the model and load into it, or keep the recipe with the checkpoint)}}
    nnx.lora @fc {alpha = 1.0 : f64, weight = dense<1.0> : tensor<3x4xf32>, lora_A = dense<1.0> : tensor<1x4xf32>, lora_B = dense<0.0> : tensor<3x1xf32>, requires_grad = {weight = false}}
  }
}

// -----

// Low-rank factors without their recipe (unrecorded nnx-low-rank).
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-rebuild: module 'fc' differs from base + recorded recipe: it is nnx.sequential, expected nnx.linear; these weights were transformed without their recipe}}
    nnx.sequential @fc keying = positional {
      // expected-error @+1 {{nnx-rebuild: module 'fc.0' (nnx.linear) is not part of base + recorded recipe}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<1x4xf32>}
      // expected-error @+1 {{nnx-rebuild: module 'fc.1' (nnx.linear) is not part of base + recorded recipe}}
      nnx.linear @"1" {weight = dense<1.0> : tensor<3x1xf32>}
    }
  }
}
