// Every #nnx.external tensor becomes a dense_resource blob named after its
// key with the file's bytes; tensors that name one key share one blob; inline
// tensors stay as they are; `weights` is removed. The model computes the same
// bytes before and after.
// The IR is copied next to the weights file it names (relative to the IR).

// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %s %t/model.mlir
// RUN: %python %S/Inputs/safetensors.py write %t/w.safetensors \
// RUN:   fc.weight:F32:3x2:0000803f00000040000080bf0000003f000000000000803f \
// RUN:   tied:F32:3x3:0000803f000000000000000000000000000000400000000000000000000000000000003f \
// RUN:   head.weight:F32:2x3:0000803f0000803f0000803f0000004000000000000080bf \
// RUN:   unused:F32:1:00000000
// RUN: nnx-opt %t/model.mlir --nnx-internalize-weights -o %t/in.mlir
// RUN: FileCheck %s < %t/in.mlir
// RUN: %python %S/../../../nnx-run/Inputs/make_inputs.py %t
// RUN: nnx-run %t/model.mlir --input %t/x3.npy --output %t/y-ext.npy
// RUN: nnx-run %t/in.mlir --input %t/x3.npy --output %t/y-in.npy
// RUN: cmp %t/y-ext.npy %t/y-in.npy
// Externalized again, the tied tensors share one key, stored once.
// RUN: cd %t && nnx-opt in.mlir --nnx-externalize-weights=file=again.safetensors | FileCheck %s --check-prefix=AGAIN
// RUN: %python %S/Inputs/safetensors.py dump %t/again.safetensors | FileCheck %s --check-prefix=AGAIN-FILE
// So do tensors that name one external key.
// RUN: cd %t && nnx-opt model.mlir --nnx-externalize-weights=file=moved.safetensors | FileCheck %s --check-prefix=AGAIN
// RUN: cmp %t/again.safetensors %t/moved.safetensors

// AGAIN:      nnx.linear @mid {weight = #nnx.external<"mid.weight"> : tensor<3x3xf32>}
// AGAIN-NEXT: nnx.linear @mid2 {weight = #nnx.external<"mid.weight"> : tensor<3x3xf32>}
// AGAIN-FILE:      metadata
// AGAIN-FILE-NEXT: fc.weight F32 [3, 2]
// AGAIN-FILE-NEXT: fc.bias F32 [3]
// AGAIN-FILE-NEXT: mid.weight F32 [3, 3]
// AGAIN-FILE-NEXT: head.weight F32 [2, 3]

// CHECK-LABEL: nnx.model @tiny inputs(tensor<?x2xf32>) {
// CHECK-NEXT:  nnx.sequential @net keying = named {
// CHECK-NEXT:  nnx.linear @fc {bias = dense<[5.000000e-01, 0.000000e+00, -1.000000e+00]> : tensor<3xf32>, weight = dense_resource<fc.weight> : tensor<3x2xf32>}
// CHECK-NEXT:  nnx.relu @act
// CHECK-NEXT:  nnx.linear @mid {weight = dense_resource<tied> : tensor<3x3xf32>}
// CHECK-NEXT:  nnx.linear @mid2 {weight = dense_resource<tied> : tensor<3x3xf32>}
// CHECK-NEXT:  nnx.linear @head {weight = dense_resource<head.weight> : tensor<2x3xf32>}
// CHECK-NOT:   weights
// CHECK-LABEL: dialect_resources: {
// CHECK-NEXT:  builtin: {
// CHECK-NEXT:  fc.weight: "0x040000000000803F00000040000080BF0000003F000000000000803F",
// CHECK-NEXT:  tied: "0x040000000000803F000000000000000000000000000000400000000000000000000000000000003F",
// CHECK-NEXT:  head.weight: "0x040000000000803F0000803F0000803F0000004000000000000080BF"
// CHECK-NEXT:  }

nnx.model @tiny inputs(tensor<?x2xf32>) attributes {weights = "w.safetensors"} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @mid {weight = #nnx.external<"tied"> : tensor<3x3xf32>}
    nnx.linear @mid2 {weight = #nnx.external<"tied"> : tensor<3x3xf32>}
    nnx.linear @head {weight = #nnx.external<"head.weight"> : tensor<2x3xf32>}
  }
}
