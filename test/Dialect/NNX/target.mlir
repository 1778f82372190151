// #nnx.target (the CPU a module's code is generated for, docs/Lowering.md)
// round trips through text, generic form and bytecode; parameters at their
// defaults (avx512_bf16 = false, empty features and cpu) are not printed.
// RUN: nnx-opt %s -split-input-file | FileCheck %s
// RUN: nnx-opt %s -split-input-file | nnx-opt -split-input-file | FileCheck %s
// RUN: nnx-opt %s -split-input-file --mlir-print-op-generic | nnx-opt -split-input-file | FileCheck %s
// RUN: nnx-opt %s -emit-bytecode | nnx-opt | FileCheck %s --check-prefix=FIRST

// CHECK: module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = true, features = "+avx512f,+avx512bf16", cpu = "sapphirerapids">}
// FIRST: module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = true, features = "+avx512f,+avx512bf16", cpu = "sapphirerapids">}
module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = true, features = "+avx512f,+avx512bf16", cpu = "sapphirerapids">} {
}

// -----

// CHECK: module attributes {nnx.target = #nnx.target<vector_bits = 256, features = "-avx512f">}
module attributes {nnx.target = #nnx.target<vector_bits = 256, avx512_bf16 = false, features = "-avx512f", cpu = "">} {
}

// -----

// CHECK: module attributes {nnx.target = #nnx.target<vector_bits = 128, cpu = "znver4">}
module attributes {nnx.target = #nnx.target<cpu = "znver4", vector_bits = 128>} {
}
