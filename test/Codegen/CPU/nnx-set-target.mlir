// nnx-set-target writes the module's #nnx.target from its options; without
// vector-bits it keeps the module's target (the default one when there is
// none) and max-isa caps it. Nothing depends on the host or the
// environment: NNX_JIT_MAX_ISA is for drivers.
// RUN: nnx-opt %s --nnx-set-target | FileCheck %s --check-prefix=DEFAULT
// RUN: env NNX_JIT_MAX_ISA=sse4.2 nnx-opt %s --nnx-set-target="vector-bits=512 avx512-bf16=true cpu=sapphirerapids" | FileCheck %s --check-prefix=FULL
// RUN: nnx-opt %s --nnx-set-target="vector-bits=512 avx512-bf16=true cpu=sapphirerapids max-isa=avx2" | FileCheck %s --check-prefix=AVX2
// RUN: nnx-opt %s --nnx-set-target="vector-bits=512 avx512-bf16=true max-isa=avx512" | FileCheck %s --check-prefix=AVX512
// RUN: nnx-opt %s --nnx-set-target="vector-bits=256 features=+avx2,+fma" --nnx-set-target=max-isa=sse4.2 | FileCheck %s --check-prefix=SSE
// RUN: nnx-opt %s --nnx-set-target="vector-bits=256 cpu=haswell" --nnx-set-target="vector-bits=512" | FileCheck %s --check-prefix=REPLACE

// DEFAULT: module attributes {nnx.target = #nnx.target<vector_bits = 128>}
// FULL: module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = true, cpu = "sapphirerapids">}
// AVX2: module attributes {nnx.target = #nnx.target<vector_bits = 256, features = "-avx512f", cpu = "sapphirerapids">}
// AVX512: module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = true>}
// SSE: module attributes {nnx.target = #nnx.target<vector_bits = 128, features = "+avx2,+fma,-avx">}
// REPLACE: module attributes {nnx.target = #nnx.target<vector_bits = 512>}
module {
}
