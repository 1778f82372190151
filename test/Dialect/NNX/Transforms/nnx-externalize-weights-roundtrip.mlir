// Bit-exact round trip through both passes, over every element type a
// safetensors file stores, with two models in one IR (keys `<model>/...`):
// original -> externalize (a) -> internalize -> externalize (b) gives the
// same file twice, and internalizing prints the same IR every time.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: nnx-opt %s --nnx-externalize-weights=file=a.safetensors -o a.mlir
// RUN: FileCheck %s < a.mlir
// RUN: %python %S/Inputs/safetensors.py dump a.safetensors | FileCheck %s --check-prefix=FILE
// RUN: nnx-opt a.mlir --nnx-internalize-weights -o in.mlir
// RUN: nnx-opt a.mlir --nnx-internalize-weights -o in2.mlir
// RUN: cmp in.mlir in2.mlir
// RUN: nnx-opt in.mlir -o in3.mlir
// RUN: cmp in.mlir in3.mlir
// RUN: nnx-opt in.mlir --nnx-externalize-weights=file=b.safetensors -o b.mlir
// RUN: cmp a.safetensors b.safetensors
// RUN: sed 's/b[.]safetensors/a.safetensors/' b.mlir | cmp - a.mlir
// Both passes in one pipeline: the blobs are the file's bytes. (An absolute
// path: a relative `weights` is read relative to the input IR file, here the
// source directory, while `file` is written relative to the current one.)
// RUN: nnx-opt %s --nnx-externalize-weights=file=%t/c.safetensors --nnx-internalize-weights -o c.mlir
// RUN: cmp in.mlir c.mlir

// The models compute the same outputs from every form.
// RUN: %python -c "import numpy as np; x = np.array([[1, 2], [3, 4]]); np.save('x64.npy', x.astype(np.float64)); np.save('x16.npy', x.astype(np.float16))"
// RUN: nnx-run %s --model m64 --input x64.npy --output y64.npy
// RUN: nnx-run %s --model m16 --input x16.npy --output y16.npy
// RUN: nnx-run a.mlir --model m64 --input x64.npy --output y64-a.npy
// RUN: nnx-run a.mlir --model m16 --input x16.npy --output y16-a.npy
// RUN: nnx-run in.mlir --model m64 --input x64.npy --output y64-in.npy
// RUN: nnx-run in.mlir --model m16 --input x16.npy --output y16-in.npy
// RUN: cmp y64.npy y64-a.npy
// RUN: cmp y16.npy y16-a.npy
// RUN: cmp y64.npy y64-in.npy
// RUN: cmp y16.npy y16-in.npy

// CHECK-LABEL: nnx.model @m64 inputs(tensor<?x2xf64>) attributes {weights = "a.safetensors"}
// CHECK:       nnx.linear @fc {bias = #nnx.external<"m64/fc.bias"> : tensor<2xf64>, weight = #nnx.external<"m64/fc.weight"> : tensor<2x2xf64>}
// CHECK-LABEL: nnx.model @m16 inputs(tensor<?x2xf16>) attributes {weights = "a.safetensors"}
// CHECK:       state = {bf16 = #nnx.external<"m16/bf16"> : tensor<2xbf16>, f8 = #nnx.external<"m16/f8"> : tensor<2xf8E4M3FN>, i1 = #nnx.external<"m16/i1"> : tensor<5xi1>, i32 = #nnx.external<"m16/i32"> : tensor<2xi32>, i64 = #nnx.external<"m16/i64"> : tensor<i64>, i8 = #nnx.external<"m16/i8"> : tensor<3xi8>, u8 = #nnx.external<"m16/u8"> : tensor<2xui8>}
// CHECK:       nnx.linear @fc {bias = #nnx.external<"m16/fc.bias"> : tensor<2xf16>, weight = #nnx.external<"m16/fc.weight"> : tensor<2x2xf16>}

// FILE:      metadata {"format": "pt"}
// FILE-NEXT: m64/fc.weight F64 [2, 2] 000000000000c03f000000000000d03f000000000000d83f000000000000e0bf
// FILE-NEXT: m64/fc.bias F64 [2] 000000000000e03f0000000000000000
// FILE-NEXT: m16/bf16 BF16 [2] 803fc0bf
// FILE-NEXT: m16/f8 F8_E4M3 [2] 3840
// FILE-NEXT: m16/i1 BOOL [5] 0100010100
// FILE-NEXT: m16/i32 I32 [2] ffffffff07000000
// FILE-NEXT: m16/i64 I64 [] 0300000000000000
// FILE-NEXT: m16/i8 I8 [3] 7f80ff
// FILE-NEXT: m16/u8 U8 [2] 00ff
// FILE-NEXT: m16/fc.weight F16 [2, 2] 0030003400368cbc
// FILE-NEXT: m16/fc.bias F16 [2] 00380000

nnx.model @m64 inputs(tensor<?x2xf64>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[0.125, 0.25], [0.375, -0.5]]> : tensor<2x2xf64>,
                    bias = dense<[0.5, 0.0]> : tensor<2xf64>}
    nnx.tanh @act
  }
}
nnx.model @m16 inputs(tensor<?x2xf16>) {
  nnx.sequential @net keying = named attributes {state = {
      bf16 = dense<[1.0, -1.5]> : tensor<2xbf16>,
      f8 = dense<[1.0, 2.0]> : tensor<2xf8E4M3FN>,
      i1 = dense<[true, false, true, true, false]> : tensor<5xi1>,
      i32 = dense<[-1, 7]> : tensor<2xi32>,
      i64 = dense<3> : tensor<i64>,
      i8 = dense<[127, -128, -1]> : tensor<3xi8>,
      u8 = dense<[0, 255]> : tensor<2xui8>}} {
    nnx.linear @fc {weight = dense<[[0.125, 0.25], [0.375, -1.137]]> : tensor<2x2xf16>,
                    bias = dense<[0.5, 0.0]> : tensor<2xf16>}
    nnx.tanh @act
  }
}
