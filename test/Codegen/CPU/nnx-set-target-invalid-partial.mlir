// nnx-set-target refuses features, cpu or avx512-bf16 without vector-bits:
// they spell a whole target, which the module's would otherwise lose.
// RUN: nnx-opt %s --nnx-set-target="features=-avx" -verify-diagnostics

// expected-error @+1 {{nnx-set-target: avx512-bf16, features and cpu spell a whole target: give vector-bits with them}}
module attributes {nnx.target = #nnx.target<vector_bits = 256>} {
}
