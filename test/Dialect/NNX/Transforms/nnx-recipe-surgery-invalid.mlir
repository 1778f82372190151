// On a model that carries a recipe, every surgery pass refuses unrecorded
// surgery (no checkpoint could rebuild it) and says to record it as a recipe
// operation. The IR is untouched (the pass fails before any edit).
// RUN: nnx-opt %s -verify-diagnostics --nnx-widen="layer=a width=4"
// RUN: nnx-opt %s -verify-diagnostics --nnx-deepen="after=r"
// RUN: nnx-opt %s -verify-diagnostics --nnx-drop-layer="layer=r"
// RUN: nnx-opt %s -verify-diagnostics --nnx-low-rank="layer=a rank=1"
// RUN: nnx-opt %s -verify-diagnostics --nnx-expand-embedding="layer=a num=4"

// expected-error @+1 {{model '@m' carries a recipe (1 operations); unrecorded surgery would make its topology differ from base + recipe, so no checkpoint could rebuild it (record the edit as a recipe operation instead)}}
nnx.model @m inputs(tensor<?x2xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["b"], config = {r = 1 : i64, alpha = 1.0 : f64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @a {weight = dense<1.0> : tensor<2x2xf32>}
    nnx.relu @r
    nnx.linear @b {weight = dense<1.0> : tensor<2x2xf32>}
  }
}
