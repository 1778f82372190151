// Recipes, base descriptors and nnx.lora round-trip through text, generic
// form and bytecode; recipes compare by value (the attributes are uniqued).
// RUN: nnx-opt %s | FileCheck %s
// RUN: nnx-opt %s | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s
// RUN: nnx-opt %s > %t.txt && nnx-opt %s --emit-bytecode | nnx-opt > %t.bc.txt && diff %t.txt %t.bc.txt

// CHECK-LABEL: nnx.model @lora inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net", modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>, #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {bias = tensor<3xf32>, weight = tensor<3x4xf32>}>]>, nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {alpha = 4.000000e+00 : f64, r = 2 : i64}, shapes = [tensor<3x4xf32>]>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["x.y"], config = {rank = 1 : i64}>]>} {
// CHECK-NEXT:    nnx.sequential @net keying = named {
// CHECK-NEXT:      nnx.lora @fc {alpha = 4.000000e+00 : f64, bias = dense<1.000000e+00> : tensor<3xf32>, lora_A = dense<5.000000e-01> : tensor<2x4xf32>, lora_B = dense<0.000000e+00> : tensor<3x2xf32>, requires_grad = {bias = false, weight = false}, weight = dense<2.500000e-01> : tensor<3x4xf32>}
// CHECK-NEXT:    }
nnx.model @lora inputs(tensor<?x4xf32>) attributes {
    nnx.base = #nnx.base<root = "net", modules = [
      #nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>,
      #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<3x4xf32>, bias = tensor<3xf32>}>]>,
    nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 1, operations = [
      #nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 2 : i64, alpha = 4.0 : f64}, shapes = [tensor<3x4xf32>]>,
      #nnx.recipe_op<id = "low_rank", version = 1, targets = ["x.y"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.lora @fc {alpha = 4.0 : f64, weight = dense<0.25> : tensor<3x4xf32>, bias = dense<1.0> : tensor<3xf32>,
                  lora_A = dense<0.5> : tensor<2x4xf32>, lora_B = dense<0.0> : tensor<3x2xf32>,
                  requires_grad = {weight = false, bias = false}}
  }
}

// A merged adapter and a fresh recipe.
// CHECK-LABEL: nnx.model @merged
// CHECK-SAME:    nnx.recipe = #nnx.recipe<materialization = fresh, materialized = 0, operations = []>
// CHECK:         nnx.lora @fc {alpha = 1.000000e+00 : f64, lora_A = {{.*}}, merged, weight
nnx.model @merged inputs(tensor<?x4xf32>) attributes {
    nnx.recipe = #nnx.recipe<materialization = fresh, materialized = 0, operations = []>} {
  nnx.lora @fc {alpha = 1.0 : f64, merged, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<1x4xf32>, lora_B = dense<0.0> : tensor<3x1xf32>}
}
