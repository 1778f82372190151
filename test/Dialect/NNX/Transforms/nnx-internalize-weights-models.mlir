// Two models, each with its own weights file, both with a tensor 'fc.weight':
// each reads its own file, and the second blob gets a unique name. Printed
// and parsed again, the IR is the same.

// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %s %t/models.mlir
// RUN: %python %S/Inputs/safetensors.py write %t/a.safetensors fc.weight:F32:1x1:0000803f
// RUN: %python %S/Inputs/safetensors.py write %t/b.safetensors fc.weight:F32:1x1:00000040
// RUN: nnx-opt %t/models.mlir --nnx-internalize-weights -o %t/in.mlir
// RUN: FileCheck %s < %t/in.mlir
// RUN: nnx-opt %t/in.mlir | cmp - %t/in.mlir

// CHECK-LABEL: nnx.model @a inputs(tensor<?x1xf32>) {
// CHECK-NEXT:  nnx.linear @fc {weight = dense_resource<fc.weight> : tensor<1x1xf32>}
// CHECK-LABEL: nnx.model @b inputs(tensor<?x1xf32>) {
// CHECK-NEXT:  nnx.linear @fc {weight = dense_resource<fc.weight_1> : tensor<1x1xf32>}
// CHECK:       fc.weight: "0x040000000000803F",
// CHECK-NEXT:  fc.weight_1: "0x0400000000000040"

nnx.model @a inputs(tensor<?x1xf32>) attributes {weights = "a.safetensors"} {
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<1x1xf32>}
}
nnx.model @b inputs(tensor<?x1xf32>) attributes {weights = "b.safetensors"} {
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<1x1xf32>}
}
