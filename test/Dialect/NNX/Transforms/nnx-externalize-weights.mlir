// Every inline tensor (dense, splat, dense_resource; parameters, buffers and
// a container's state) moves to the file under its dotted name, the model
// names the file, and the externalized model computes the same bytes.
// nnx-opt runs in %t: `file` is written relative to the current directory,
// `weights` is read relative to the IR file, both are %t.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %S/../../../nnx-run/Inputs/make_inputs.py %t
// RUN: nnx-opt %s --nnx-externalize-weights=file=w.safetensors -o ext.mlir
// RUN: FileCheck %s < ext.mlir
// RUN: %python %S/Inputs/safetensors.py dump w.safetensors | FileCheck %s --check-prefix=FILE
// RUN: nnx-run %s --input x3.npy --output y-inline.npy
// RUN: nnx-run ext.mlir --input x3.npy --output y-ext.npy
// RUN: cmp y-inline.npy y-ext.npy
// The file also serves the inline model: its keys are the parameter names.
// RUN: nnx-run %s --weights w.safetensors --input x3.npy --output y-weights.npy
// RUN: cmp y-inline.npy y-weights.npy

// min-bytes: tensors under 16 bytes (the 12-byte vectors) stay inline.
// RUN: nnx-opt %s --nnx-externalize-weights="file=big.safetensors min-bytes=16" | FileCheck %s --check-prefix=MIN
// RUN: %python %S/Inputs/safetensors.py dump big.safetensors | FileCheck %s --check-prefix=MIN-FILE

// Externalizing an external model again: into the file it reads (replaced
// after everything was read), and into a new file (the tensors are copied
// over, whatever min-bytes says, so the old file is no longer needed).
// RUN: cp w.safetensors w0.safetensors
// RUN: nnx-opt ext.mlir --nnx-externalize-weights=file=w.safetensors -o same.mlir
// RUN: cmp w.safetensors w0.safetensors
// RUN: cmp ext.mlir same.mlir
// RUN: nnx-opt ext.mlir --nnx-externalize-weights="file=moved.safetensors min-bytes=1000" -o moved.mlir
// RUN: cmp w.safetensors moved.safetensors
// RUN: FileCheck %s --check-prefix=MOVED < moved.mlir
// RUN: mv w.safetensors gone.safetensors
// RUN: nnx-run moved.mlir --input x3.npy --output y-moved.npy
// RUN: cmp y-inline.npy y-moved.npy

// CHECK-LABEL: nnx.model @tiny inputs(tensor<?x2xf32>) attributes {weights = "w.safetensors"}
// CHECK:       nnx.sequential @net keying = named attributes {state = {scale = #nnx.external<"scale"> : tensor<2xf32>}}
// CHECK-NEXT:  nnx.linear @fc {bias = #nnx.external<"fc.bias"> : tensor<3xf32>, weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
// CHECK-NEXT:  nnx.relu @act
// CHECK-NEXT:  nnx.batch_norm @bn {running_mean = #nnx.external<"bn.running_mean"> : tensor<3xf32>, running_var = #nnx.external<"bn.running_var"> : tensor<3xf32>, weight = #nnx.external<"bn.weight"> : tensor<3xf32>}
// CHECK-NEXT:  nnx.sequential @sub keying = named {
// CHECK-NEXT:  nnx.linear @head {weight = #nnx.external<"sub.head.weight"> : tensor<2x3xf32>}
// The blob is no longer referenced, so it is not printed.
// CHECK-NOT:   dense_resource
// CHECK-NOT:   dialect_resources

// Pre-order, parameters before buffers, the splat expanded, bytes as stored.
// FILE:      metadata {"format": "pt"}
// FILE-NEXT: scale F32 [2] 0000803f00000040
// FILE-NEXT: fc.weight F32 [3, 2] 0000803f00000040000080bf0000003f000000000000803f
// FILE-NEXT: fc.bias F32 [3] 0000003f00000000000080bf
// FILE-NEXT: bn.weight F32 [3] 000000400000004000000040
// FILE-NEXT: bn.running_mean F32 [3] 0000003f0000803e00000000
// FILE-NEXT: bn.running_var F32 [3] 0000803f000080400000803e
// FILE-NEXT: sub.head.weight F32 [2, 3] 0000803f0000803f0000803f0000004000000000000080bf
// FILE-NOT:  {{.}}

// MIN-LABEL: nnx.model @tiny inputs(tensor<?x2xf32>) attributes {weights = "big.safetensors"}
// MIN:       state = {scale = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// MIN:       nnx.linear @fc {bias = dense<[5.000000e-01, 0.000000e+00, -1.000000e+00]> : tensor<3xf32>, weight = #nnx.external<"fc.weight"> : tensor<3x2xf32>}
// MIN:       nnx.batch_norm @bn {running_mean = dense<{{.*}}> : tensor<3xf32>, running_var = dense<{{.*}}> : tensor<3xf32>, weight = dense<2.000000e+00> : tensor<3xf32>}
// MIN:       nnx.linear @head {weight = #nnx.external<"sub.head.weight"> : tensor<2x3xf32>}
// MIN-FILE:      metadata
// MIN-FILE-NEXT: fc.weight F32 [3, 2] {{[0-9a-f]+$}}
// MIN-FILE-NEXT: sub.head.weight F32 [2, 3] {{[0-9a-f]+$}}
// MIN-FILE-NOT:  {{.}}

// MOVED:     attributes {weights = "moved.safetensors"}
// MOVED-NOT: w.safetensors

nnx.model @tiny inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named attributes {state = {scale = dense<[1.0, 2.0]> : tensor<2xf32>}} {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.batch_norm @bn {running_mean = dense<[0.5, 0.25, 0.0]> : tensor<3xf32>,
                        running_var = dense<[1.0, 4.0, 0.25]> : tensor<3xf32>,
                        weight = dense<2.0> : tensor<3xf32>}
    nnx.sequential @sub keying = named {
      nnx.linear @head {weight = dense_resource<head_w> : tensor<2x3xf32>}
    }
  }
}

{-#
  dialect_resources: {
    builtin: {
      head_w: "0x040000000000803F0000803F0000803F0000004000000000000080BF"
    }
  }
#-}
