// nnx-set-target refuses an instruction set it does not know, naming it.
// RUN: nnx-opt %s --nnx-set-target=max-isa=avx3 -verify-diagnostics

// expected-error @+1 {{nnx-set-target: max-isa=avx3: not an instruction set nnx knows (expected avx512, avx2 or sse4.2)}}
module {
}
