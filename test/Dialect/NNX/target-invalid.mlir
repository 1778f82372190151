// RUN: nnx-opt %s -split-input-file -verify-diagnostics
// What #nnx.target refuses: a width the CPU code does not know, AVX512_BF16
// below 512 bits, features that are not +name / -name or that clear what
// vector_bits or avx512_bf16 needs, and the attribute anywhere but on a
// builtin.module.

// expected-error @+1 {{#nnx.target: vector_bits = 64 is not a width nnx's CPU code knows (expected 128, 256 or 512)}}
module attributes {nnx.target = #nnx.target<vector_bits = 64>} {
}

// -----

// expected-error @+1 {{#nnx.target: avx512_bf16 needs vector_bits = 512, got 256}}
module attributes {nnx.target = #nnx.target<vector_bits = 256, avx512_bf16 = true>} {
}

// -----

// expected-error @+1 {{#nnx.target: feature 'avx2' does not start with '+' or '-'}}
module attributes {nnx.target = #nnx.target<vector_bits = 256, features = "+fma,avx2">} {
}

// -----

// expected-error @+1 {{#nnx.target: features = "+fma,,+avx2" has an empty entry}}
module attributes {nnx.target = #nnx.target<vector_bits = 256, features = "+fma,,+avx2">} {
}

// -----

// expected-error @+1 {{#nnx.target: features = "-avx512f" clear avx512f, which vector_bits = 512 needs}}
module attributes {nnx.target = #nnx.target<vector_bits = 512, features = "-avx512f">} {
}

// -----

// expected-error @+1 {{#nnx.target: features = "+avx2,-fma" clear fma, which vector_bits = 256 needs}}
module attributes {nnx.target = #nnx.target<vector_bits = 256, features = "+avx2,-fma">} {
}

// -----

// expected-error @+1 {{#nnx.target: features = "-avx512bf16" clear avx512bf16, which avx512_bf16 needs}}
module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = true, features = "-avx512bf16">} {
}

// -----

// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse NNX_TargetAttr parameter 'avx512_bf16' which is to be a `bool`}}
module attributes {nnx.target = #nnx.target<vector_bits = 512, avx512_bf16 = 1>} {
}

// -----

// expected-error @+1 {{struct is missing required parameter: vector_bits}}
module attributes {nnx.target = #nnx.target<features = "-avx">} {
}

// -----

module {
  // expected-error @+1 {{'func.func' op 'nnx.target' must be an #nnx.target on a builtin.module}}
  func.func @f() attributes {nnx.target = #nnx.target<vector_bits = 128>} {
    return
  }
}

// -----

// expected-error @+1 {{'builtin.module' op 'nnx.target' must be an #nnx.target on a builtin.module}}
module attributes {nnx.target = "avx2"} {
}
