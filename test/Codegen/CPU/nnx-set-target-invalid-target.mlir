// nnx-set-target refuses a target that #nnx.target refuses (AVX512_BF16
// below 512 bits), leaving the module unchanged.
// RUN: nnx-opt %s --nnx-set-target="vector-bits=256 avx512-bf16=true" -verify-diagnostics

// expected-error @+1 {{nnx-set-target: #nnx.target: avx512_bf16 needs vector_bits = 512, got 256}}
module {
}
