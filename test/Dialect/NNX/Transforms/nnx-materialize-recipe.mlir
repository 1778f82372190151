// nnx-materialize-recipe in both modes. In place: the targets are replaced
// (LoRA: base frozen, A drawn from the seed, B zero; low_rank: the SVD
// factors of nnx-low-rank) and the operations recorded with their target
// shapes. Fresh: the given model is untouched and @m_fresh is the base built
// from the descriptor with seeded random tensors, transformed.
// RUN: split-file %s %t
// RUN: nnx-opt %t/inplace.mlir --nnx-record-base --nnx-materialize-recipe=seed=5 | FileCheck %t/inplace.mlir
// RUN: nnx-opt %t/fresh.mlir --nnx-record-base --nnx-materialize-recipe=seed=5 | FileCheck %t/fresh.mlir
// A materialized recipe validates, and materializing again changes nothing.
// RUN: nnx-opt %t/inplace.mlir --nnx-record-base --nnx-materialize-recipe=seed=5 -o %t/once.mlir
// RUN: nnx-opt %t/once.mlir --nnx-validate-recipe --nnx-materialize-recipe -o %t/twice.mlir
// RUN: diff %t/once.mlir %t/twice.mlir

//--- inplace.mlir
// CHECK-LABEL: nnx.model @m
// CHECK-SAME:    nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 2, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {alpha = 2.000000e+00 : f64, r = 1 : i64}, shapes = [tensor<2x4xf32>]>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["head"], config = {rank = 1 : i64}, shapes = [tensor<2x2xf32>]>]>
// CHECK:       nnx.lora @fc {alpha = 2.000000e+00 : f64, bias = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>, lora_A = dense<{{\[\[}}[[A:.*]]]]> : tensor<1x4xf32>, lora_B = dense<0.000000e+00> : tensor<2x1xf32>, requires_grad = {bias = false, weight = false}, weight = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>}
// CHECK-NEXT:  nnx.relu @act
// CHECK-NEXT:  nnx.sequential @head keying = positional attributes {train} {
// CHECK-NEXT:    nnx.linear @"0" {train, weight = dense<{{.*}}> : tensor<1x2xf32>}
// CHECK-NEXT:    nnx.linear @"1" {train, weight = dense<{{.*}}> : tensor<2x1xf32>}
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 2.0 : f64}>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["head"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>, train}
  }
}

//--- fresh.mlir
// The given model keeps its weights and its pending recipe.
// CHECK-LABEL: nnx.model @m
// CHECK-SAME:    materialization = fresh, materialized = 0
// CHECK:       nnx.linear @fc {bias = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>, requires_grad = {bias = false}, weight = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>}
// CHECK:       nnx.linear @head {train, weight = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// The fresh model: random base tensors (norms at their defaults), the
// whole recipe materialized and recorded.
// CHECK-LABEL: nnx.model @m_fresh
// CHECK-SAME:    materialization = fresh, materialized = 2, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {alpha = 2.000000e+00 : f64, r = 1 : i64}, shapes = [tensor<2x4xf32>]>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["head"], config = {rank = 1 : i64}, shapes = [tensor<2x2xf32>]>]>
// CHECK:       nnx.lora @fc {alpha = 2.000000e+00 : f64, bias = dense<[0.244750738, -0.652667165]> : tensor<2xf32>, {{.*}}lora_B = dense<0.000000e+00> : tensor<2x1xf32>, requires_grad = {bias = false, weight = false}, weight = dense<{{\[\[}}-0.27471143,
// CHECK-NEXT:  nnx.layer_norm @norm {bias = dense<0.000000e+00> : tensor<2xf32>, normalized_shape = array<i64: 2>, weight = dense<1.000000e+00> : tensor<2xf32>}
// CHECK-NEXT:  nnx.sequential @head keying = positional attributes {train} {
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = fresh, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["fc"], config = {r = 1 : i64, alpha = 2.0 : f64}>, #nnx.recipe_op<id = "low_rank", version = 1, targets = ["head"], config = {rank = 1 : i64}>]>} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>, requires_grad = {bias = false}}
    nnx.layer_norm @norm {normalized_shape = array<i64: 2>, weight = dense<1.0> : tensor<2xf32>, bias = dense<0.0> : tensor<2xf32>}
    nnx.linear @head {weight = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>, train}
  }
}
