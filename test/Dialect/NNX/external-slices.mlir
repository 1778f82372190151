// RUN: nnx-opt %s | FileCheck %s
// #nnx.external with slices (a rank's shard of the stored tensor) round
// trips through text, generic form and bytecode; the plain form prints as
// before.
// RUN: nnx-opt %s | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s

// CHECK-LABEL: nnx.model @rows inputs(tensor<?x32xf32>) attributes {weights = "gpt2.safetensors"}
// CHECK-NEXT:    nnx.linear @qkv {bias = #nnx.external<"h.0.attn.c_attn.bias", slices = [array<i64: 0, 16, 32, 16, 64, 16>]> : tensor<48xf32>, weight = #nnx.external<"h.0.attn.c_attn.weight", slices = [array<i64: 0, 16, 32, 16, 64, 16>, array<i64>]> : tensor<48x32xf32>}
nnx.model @rows inputs(tensor<?x32xf32>) attributes {weights = "gpt2.safetensors"} {
  nnx.linear @qkv {weight = #nnx.external<"h.0.attn.c_attn.weight", slices = [array<i64: 0, 16, 32, 16, 64, 16>, array<i64>]> : tensor<48x32xf32>,
                   bias = #nnx.external<"h.0.attn.c_attn.bias", slices = [array<i64: 0, 16, 32, 16, 64, 16>]> : tensor<48xf32>}
}

// CHECK-LABEL: nnx.model @cols inputs(tensor<?x16xf32>) attributes {weights = "gpt2.safetensors"}
// CHECK-NEXT:    nnx.linear @proj {weight = #nnx.external<"h.0.attn.c_proj.weight", slices = [array<i64>, array<i64: 16, 16>]> : tensor<32x16xf32>}
nnx.model @cols inputs(tensor<?x16xf32>) attributes {weights = "gpt2.safetensors"} {
  nnx.linear @proj {weight = #nnx.external<"h.0.attn.c_proj.weight", slices = [array<i64>, array<i64: 16, 16>]> : tensor<32x16xf32>}
}

// CHECK-LABEL: nnx.model @plain inputs(tensor<?x32xf32>) attributes {weights = "gpt2.safetensors"}
// CHECK-NEXT:    nnx.linear @fc {weight = #nnx.external<"h.0.mlp.c_fc.weight"> : tensor<32x32xf32>}
nnx.model @plain inputs(tensor<?x32xf32>) attributes {weights = "gpt2.safetensors"} {
  nnx.linear @fc {weight = #nnx.external<"h.0.mlp.c_fc.weight"> : tensor<32x32xf32>}
}
