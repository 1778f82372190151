// One case per rule of nnx-validate-recipe, then one with several problems
// reported together. The base descriptor is recorded from the tree first, so
// only the recipe is wrong (except where a case writes its own base).
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-record-base --nnx-validate-recipe

// A valid recipe: nothing reported, nothing changed.
nnx.model @ok inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 2 : i64, alpha = 4.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// A missing target.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'nope': names no module: no module 'nope' in the root module (path 'nope', segment 0)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["nope"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// A target that is not exactly a Linear.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "low_rank", version = 1, targets = ["act"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('low_rank'), target 'act': is not exactly a Linear: it is 'nnx.relu'}}
    nnx.relu @act
  }
}

// -----

// A target registered under more than one name.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': is registered under more than one name}}
    nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
    // expected-note @+1 {{also registered here as 'again'}}
    nnx.alias @again = @fc
  }
}

// -----

// Two targets of one operation that are the same.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': is listed twice}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc", "fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// Two targets of one operation that are nested.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'blk.fc': and target 'blk' are nested}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["blk", "blk.fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'blk': is not exactly a Linear: it is 'nnx.sequential'}}
    nnx.sequential @blk keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
    }
  }
}

// -----

// A target inside a subtree another operation transforms.
// expected-error @+1 {{nnx-validate-recipe: operation 1 ('low_rank'), target 'fc': is inside the subtree 'fc' that operation 0 transforms}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["fc"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// A rank above min(in, out), for both operations.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["a"], config = {r = 4 : i64, alpha = 1.0 : f64}>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["b"], config = {rank = 3 : i64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'a': option r=4 is above min(in, out) = 3 of its 3x4 weight}}
    nnx.linear @a {weight = dense<1.0> : tensor<3x4xf32>}
    // expected-error @+1 {{nnx-validate-recipe: operation 1 ('low_rank'), target 'b': option rank=3 is above min(in, out) = 2 of its 2x3 weight}}
    nnx.linear @b {weight = dense<1.0> : tensor<2x3xf32>}
  }
}

// -----

// An unknown operation.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('prune'): unknown operation 'prune' (known: lora, low_rank)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "prune", version = 1, targets = ["fc"], config = {}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// An unknown version.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'): unknown version 2 of 'lora' (known: 1)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 2, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// Glob characters.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'blk.*': contains the glob character '*' (targets are explicit dotted paths)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["blk.*"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// An empty path segment.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'blk..fc': has an empty path segment (targets are explicit dotted paths)}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["blk..fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// A target that is not a string.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'): target 0 is not a string: 3 : i64}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = [3], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// Malformed options.
// expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'): malformed options: option 'r' must be a positive integer, got 0 : i64}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 0 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// An uninitialised lazy target.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': was an uninitialized lazy Linear when the model was built, and a rebuild starts lazy again (use the surgery passes directly)}}
    nnx.linear @fc {lazy, out_features = 3 : i64}
  }
}

// -----

// A replay onto a target whose shape differs from the recorded one.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 1.0 : f64}, shapes = [tensor<3x4xf32>]>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': has weight 'tensor<5x4xf32>', but the recipe recorded 'tensor<3x4xf32>' for it (a replay onto a resized target)}}
    nnx.linear @fc {weight = dense<1.0> : tensor<5x4xf32>}
  }
}

// -----

// An alpha that is finite as f64 but whose scaling alpha / r is not in the
// weights' f32: the zero-initialized adapter would give NaN, not the model.
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 2 : i64, alpha = 1.0e300 : f64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'fc': the scaling alpha / r = 1.000000e+300 / 2 is not finite in 'f32', its weight's type (the adapter's output would be inf or NaN)}}
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>}
  }
}

// -----

// The same alpha on f64 weights is fine.
nnx.model @m inputs(tensor<?x4xf64>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 2 : i64, alpha = 1.0e300 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf64>}
  }
}

// -----

// Several problems, all reported by one run.
// expected-error @+3 {{nnx-validate-recipe: operation 0 ('lora'), target 'nope': names no module}}
// expected-error @+2 {{nnx-validate-recipe: operation 1 ('lora'): unknown version 7 of 'lora'}}
// expected-error @+1 {{nnx-validate-recipe: operation 2 ('low_rank'), target 'a?': contains the glob character '?'}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["nope", "a"], config = {r = 9 : i64, alpha = 1.0 : f64}>, #nnx.recipe_op<id = "lora", version = 7, targets = ["a"], config = {r = 1 : i64, alpha = 1.0 : f64}>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["a?"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{nnx-validate-recipe: operation 0 ('lora'), target 'a': option r=9 is above min(in, out) = 3}}
    nnx.linear @a {weight = dense<1.0> : tensor<3x4xf32>}
  }
}
