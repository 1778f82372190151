// In place, nnx-validate-recipe refuses a model whose tree differs from its
// base descriptor + recorded recipe (unrecorded surgery: no checkpoint could
// rebuild it), one error per differing module, and a target inside the
// subtree an earlier, materialized recipe transforms. Each model writes its
// base (the structure it was recorded with: a named sequential holding a
// 3x4 Linear 'fc').
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-validate-recipe

// An added layer.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = []>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
    // expected-error @+1 {{nnx-validate-recipe: module 'act' (nnx.relu) is not part of base + recorded recipe; no checkpoint could rebuild this unrecorded surgery (record it as a recipe operation)}}
    nnx.relu @act
  }
}

// -----

// A resized layer.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = []>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: module 'fc' differs from base + recorded recipe: its 'weight' is tensor<5x4xf32>, expected tensor<3x4xf32>; no checkpoint could rebuild this unrecorded surgery}}
    nnx.linear @fc {weight = dense<1.0> : tensor<5x4xf32>}
  }
}

// -----

// A layer whose bias was added.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = []>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: module 'fc' differs from base + recorded recipe: its 'bias' is tensor<3xf32>, expected absent}}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>, bias = dense<0.0> : tensor<3xf32>}
  }
}

// -----

// A recorded LoRA whose adapter rank was changed by hand.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}, shapes = [tensor<3x4xf32>]>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: module 'fc' differs from base + recorded recipe: its 'lora_A' is tensor<2x4xf32>, expected tensor<1x4xf32>}}
    nnx.lora @fc {alpha = 1.0 : f64, weight = dense<1.0> : tensor<3x4xf32>, lora_A = dense<1.0> : tensor<2x4xf32>, lora_B = dense<0.0> : tensor<3x2xf32>, requires_grad = {weight = false}}
  }
}

// -----

// A target inside the subtree an earlier, materialized recipe transforms.
// expected-error @+1 {{nnx-validate-recipe: operation 1 ('low_rank'), target 'fc': is inside the subtree 'fc' that operation 0 (an earlier, materialized recipe) transforms}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}, shapes = [tensor<3x4xf32>]>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["fc"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.lora @fc {alpha = 1.0 : f64, weight = dense<1.0> : tensor<3x4xf32>, lora_A = dense<1.0> : tensor<1x4xf32>, lora_B = dense<0.0> : tensor<3x1xf32>, requires_grad = {weight = false}}
  }
}

// -----

// A model without a base descriptor: recipes need a model nnx can rebuild.
// expected-error @+1 {{nnx-validate-recipe: model '@m' has no base descriptor, so nothing could replay a recipe on it (record one with nnx-record-base; for a model a descriptor cannot describe, use the surgery passes directly)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = []>} {
  nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
}

// -----

// A fresh recipe is validated against the base the descriptor builds, not
// the given model (here resized to 9x4: the base's 3x4 refuses r=4). The
// error points at the module of the given model at the target's path.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = fresh, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 4 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': option r=4 is above min(in, out) = 3 of its 3x4 weight}}
    nnx.linear @fc {weight = dense<1.0> : tensor<9x4xf32>}
  }
}

// -----

// A subclass of Linear is not exactly a Linear (its base records the
// subclass, so the tree itself is unchanged).
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {subclass = "FakeQuantLinear", weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': is not exactly a Linear: it is a subclass 'FakeQuantLinear' of nnx.linear}}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>, subclass = "FakeQuantLinear"}
  }
}
