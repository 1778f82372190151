// nnx-rebuild builds the base from the descriptor, replays the recorded
// operations as shapes (LoRA wrappers, low-rank factors: no SVD) and loads
// the saved tensors: the result equals the saved model, text and bytecode,
// including custom modules (LoRA on transformer.h.0.attn.{q,v}_proj).
// RUN: nnx-opt %S/recipes/Inputs/mlp.mlir --nnx-record-base --nnx-materialize-recipe=seed=1 -o %t.mlp.mlir
// RUN: nnx-opt %t.mlp.mlir --nnx-rebuild -o %t.mlp.rebuilt.mlir
// RUN: diff %t.mlp.mlir %t.mlp.rebuilt.mlir
// RUN: nnx-opt %t.mlp.mlir --emit-bytecode | nnx-opt --nnx-rebuild -o %t.mlp.bc.mlir
// RUN: diff %t.mlp.mlir %t.mlp.bc.mlir
// RUN: nnx-opt %S/recipes/Inputs/transformer.mlir --nnx-record-base --nnx-materialize-recipe=seed=1 -o %t.gpt.mlir
// RUN: nnx-opt %t.gpt.mlir --nnx-rebuild | diff %t.gpt.mlir -
// RUN: FileCheck %s --input-file=%t.gpt.mlir
// A merged adapter is rebuilt merged.
// RUN: nnx-opt %t.gpt.mlir --nnx-lora-merge -o %t.merged.mlir
// RUN: nnx-opt %t.merged.mlir --nnx-rebuild | diff %t.merged.mlir -

// CHECK: nnx.lora @q_proj {alpha = 1.600000e+01 : f64, bias = {{.*}}, lora_A = {{.*}} : tensor<2x4xf32>, lora_B = dense<0.000000e+00> : tensor<4x2xf32>, requires_grad = {bias = false, weight = false}, weight = {{.*}} : tensor<4x4xf32>}
// CHECK: nnx.lora @v_proj {alpha = 1.600000e+01 : f64, lora_A = {{.*}} : tensor<2x4xf32>, lora_B = dense<0.000000e+00> : tensor<4x2xf32>, requires_grad = {weight = false}, weight = {{.*}} : tensor<4x4xf32>}
