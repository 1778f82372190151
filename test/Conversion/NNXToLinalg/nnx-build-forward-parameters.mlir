// RUN: nnx-opt %s -split-input-file --nnx-build-forward | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-build-forward=parameters=arguments | FileCheck %s
// RUN: not nnx-opt %s -split-input-file --nnx-build-forward=parameters=globals 2>&1 | FileCheck %s --check-prefix=BADOPT

// BADOPT: for the --parameters option: Cannot find option named 'globals'!

// Parameters as arguments (the default): one read-only argument per
// distinct tensor after the inputs, in the order the forward reads them,
// listed by value and dotted name. An alias reuses its target's arguments.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x2xf32>,
// CHECK-SAME:      %[[W:[^:]*]]: tensor<2x2xf32> {bufferization.writable = false, nnx.parameter = "fc.weight"},
// CHECK-SAME:      %[[B:[^:]*]]: tensor<2xf32> {bufferization.writable = false, nnx.parameter = "fc.bias"},
// CHECK-SAME:      %[[G:[^:]*]]: tensor<2xf32> {bufferization.writable = false, nnx.parameter = "norm.weight"})
// CHECK-SAME:      -> tensor<?x2xf32>
// CHECK-SAME:      nnx.parameter_names = ["fc.weight", "fc.bias", "norm.weight"]
// CHECK-SAME:      nnx.parameters = [dense<2.000000e+00> : tensor<2x2xf32>, dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>, dense<3.000000e+00> : tensor<2xf32>]
// CHECK-NOT:     arith.constant dense<{{.*}}> : tensor<2x2xf32>
// CHECK:         ins(%[[B]] : tensor<2xf32>)
// CHECK:         linalg.matmul {{.*}}ins(%[[X]], %[[W]]
// CHECK:         ins(%[[B]] : tensor<2xf32>)
// CHECK:         linalg.matmul {{.*}}ins(%{{.*}}, %[[W]]
// CHECK:         %[[G]]
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @body keying = named {
    nnx.linear @fc {weight = dense<2.0> : tensor<2x2xf32>,
                    bias = dense<[1.0, -1.0]> : tensor<2xf32>}
    nnx.alias @again = @fc
    nnx.rms_norm @norm {normalized_shape = array<i64: 2>,
                        weight = dense<3.0> : tensor<2xf32>}
  }
}

// -----

// #nnx.external tensors stay references: the forward records the weights
// file as an absolute path (relative paths are taken from the model file's
// directory), and the tensor's data is never read. (With
// parameters=constants the model is refused: nnx-build-forward-invalid.mlir.)
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %{{[^:]*}}: tensor<?x4xf32>, %{{[^:]*}}: tensor<3x4xf32> {bufferization.writable = false, nnx.parameter = "weight"}) -> tensor<?x3xf32>
// CHECK-SAME:      nnx.parameter_names = ["weight"]
// CHECK-SAME:      nnx.parameters = [#nnx.external<"lin.weight"> : tensor<3x4xf32>]
// CHECK-SAME:      nnx.weights = "/{{.*}}NNXToLinalg/no-such-file.safetensors"
nnx.model @m inputs(tensor<?x4xf32>) attributes {weights = "no-such-file.safetensors"} {
  nnx.linear @lin {weight = #nnx.external<"lin.weight"> : tensor<3x4xf32>}
}
