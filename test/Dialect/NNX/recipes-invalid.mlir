// Verifier errors of nnx.lora and the recipe attributes.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'lora_A' has shape 2x3 but the layer needs 2x4}}
  nnx.lora @fc {alpha = 1.0 : f64, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<2x3xf32>, lora_B = dense<0.0> : tensor<3x2xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'lora_B' has shape 2x2 but the layer needs 3x2}}
  nnx.lora @fc {alpha = 1.0 : f64, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<2x4xf32>, lora_B = dense<0.0> : tensor<2x2xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{tensors mix element types 'f32' and 'f16'}}
  nnx.lora @fc {alpha = 1.0 : f64, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<2x4xf16>, lora_B = dense<0.0> : tensor<3x2xf32>}
}

// -----

nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'alpha' must be finite}}
  nnx.lora @fc {alpha = 0x7FF0000000000000 : f64, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<2x4xf32>, lora_B = dense<0.0> : tensor<3x2xf32>}
}

// -----

// Finite as f64, but alpha / r overflows the weights' f32.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{the scaling alpha / r = 1.000000e+300 / 2 is not finite in 'f32', the weights' type (the adapter's output would be inf or NaN)}}
  nnx.lora @fc {alpha = 1.0e300 : f64, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<2x4xf32>, lora_B = dense<0.0> : tensor<3x2xf32>}
}

// -----

// expected-error @+1 {{a recipe of 1 operations cannot have 2 materialized}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 2, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {}>]>} {
  nnx.relu @r
}

// -----

// expected-error @+1 {{materialized recipe operation 0 records no target shapes}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {}>]>} {
  nnx.relu @r
}

// -----

// expected-error @+2 {{recipe operation 'lora' records 1 shapes for 2 targets}}
// expected-error @+1 {{failed to parse NNX_RecipeAttr parameter 'operations'}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["a", "b"], config = {}, shapes = [tensor<2x2xf32>]>]>} {
  nnx.relu @r
}

// -----

// expected-error @+1 {{recipe operation 0 is not an #nnx.recipe_op: 1 : i64}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [1]>} {
  nnx.relu @r
}

// -----

// expected-error @+1 {{the first base descriptor entry must be the root module (path "")}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "r", modules = [#nnx.module_desc<path = "x", kind = "nnx.relu", attributes = {}>]>} {
  nnx.relu @r
}

// -----

// The discardable attributes belong on an nnx.model and hold their kind.
nnx.model @m inputs(tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.relu' op 'nnx.recipe' must be an #nnx.recipe on an 'nnx.model'}}
  nnx.relu @r {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = []>}
}

// -----

// expected-error @+1 {{'nnx.model' op 'nnx.base' must be an #nnx.base on an 'nnx.model'}}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = "net"} {
  nnx.relu @r
}
