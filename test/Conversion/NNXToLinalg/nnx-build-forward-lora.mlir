// nnx.lora lowers through the layer interface like any layer: three
// projections (base with bias, x A^T, (x A^T) B^T) and one elementwise
// base + scaling * update (scaling = alpha / r = 3 / 2); a merged adapter
// is the base projection alone.
// RUN: nnx-opt %s -split-input-file --nnx-build-forward=parameters=constants | FileCheck %s

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>) -> tensor<?x3xf32>
// CHECK:         %[[BASE:.*]] = linalg.matmul {{.*}}ins(%[[X]], %{{.*}} : tensor<?x4xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// CHECK:         %[[DOWN:.*]] = linalg.matmul {{.*}}ins(%[[X]], %{{.*}} : tensor<?x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:         %[[UP:.*]] = linalg.matmul {{.*}}ins(%[[DOWN]], %{{.*}} : tensor<?x2xf32>, tensor<3x2xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BASE]], %[[UP]] : tensor<?x3xf32>, tensor<?x3xf32>)
// CHECK:           %[[S:.*]] = arith.constant 1.500000e+00 : f32
// CHECK:           %[[D:.*]] = arith.mulf %[[S]], %{{.*}} : f32
// CHECK:           arith.addf %{{.*}}, %[[D]] : f32
nnx.model @lora inputs(tensor<?x4xf32>) {
  nnx.lora @fc {alpha = 3.0 : f64, weight = dense<0.25> : tensor<3x4xf32>, bias = dense<1.0> : tensor<3xf32>,
                lora_A = dense<0.5> : tensor<2x4xf32>, lora_B = dense<0.125> : tensor<3x2xf32>}
}

// -----

// CHECK-LABEL: func.func @forward(
// CHECK:         linalg.matmul
// CHECK-NOT:     linalg.matmul
// CHECK:         return
nnx.model @merged inputs(tensor<?x4xf32>) {
  nnx.lora @fc {alpha = 3.0 : f64, merged, weight = dense<0.25> : tensor<3x4xf32>,
                lora_A = dense<0.5> : tensor<2x4xf32>, lora_B = dense<0.125> : tensor<3x2xf32>}
}
