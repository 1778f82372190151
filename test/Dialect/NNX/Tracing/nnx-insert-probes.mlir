// nnx-insert-probes marks each resolved request on its module or labeled op
// as {name, point, index, kind}; nnx-build-forward turns the marks into
// nnx.probe ops. Reads come before writes on one location.
// RUN: nnx-opt %S/Inputs/tiny.mlir --nnx-insert-probes="family=%S/Inputs/tiny.json reads=p_inputs_select,layers.0.p_input,layers.0.p_call_inputs_keyword,layers.0.p_call_source,layers.0.p_output_select,layers.0.p_source_input,layers.0.p_inplace,layers.1.p_inplace_copy,layers.1.p_output writes=layers.0.p_child_output,layers.0.p_output_select,layers.1.p_inplace" | FileCheck %s
//
// A BLOOM value inside the sublayer's forward, a Gemma-2 value on a sibling.
// RUN: nnx-opt %nnx_src/examples/families/bloom.mlir --nnx-insert-probes="family=bloom reads=layers.1.attention_output" | FileCheck %s --check-prefix=BLOOM
// RUN: nnx-opt %nnx_src/examples/families/gemma2.mlir --nnx-insert-probes="family=gemma2 writes=layers.0.attention_output" | FileCheck %s --check-prefix=GEMMA2
//
// A name read and written is one value: the read, first, sees it before the
// write, so it stays where the write lands and follows no in-place update.
// RUN: nnx-opt %S/Inputs/tiny.mlir --nnx-insert-probes="family=%S/Inputs/tiny.json reads=layers.0.p_inplace writes=layers.0.p_inplace" | FileCheck %s --check-prefix=RW
//
// No request: nothing to load, nothing changes.
// RUN: nnx-opt %S/Inputs/tiny.mlir --nnx-insert-probes > %t.mlir
// RUN: nnx-opt %S/Inputs/tiny.mlir | diff - %t.mlir

// CHECK-LABEL: nnx.model @tiny
// CHECK:       nnx.module @net class = "Tiny" attributes {config = {flag = true}, nnx.probes = [#nnx.probe<name = "p_inputs_select", point = input, index = 1, kind = read>]}
// CHECK:       nnx.module @"0" class = "Block" attributes {nnx.probes = [#nnx.probe<name = "layers.0.p_input", point = input, index = 0, kind = read>]}
// CHECK-NEXT:  nnx.layer_norm @ln_1 {nnx.probes = [#nnx.probe<name = "layers.0.p_child_output", point = output, index = 0, kind = write>]
// CHECK-NEXT:  nnx.module @attn class = "Attn" attributes {nnx.probes = [#nnx.probe<name = "layers.0.p_output_select", point = output, index = 1, kind = read>, #nnx.probe<name = "layers.0.p_output_select", point = output, index = 1, kind = write>]}
// CHECK:       arith.mulf {{.*}} {nnx.probes = [#nnx.probe<name = "layers.0.p_call_source", point = output, index = 0, kind = read>], nnx.source = "mul_0"}
// CHECK:       nnx.call @attention_interface({{.*}}) {nnx.kwargs = ["key"], nnx.probes = [#nnx.probe<name = "layers.0.p_call_inputs_keyword", point = input, index = 1, kind = read>], nnx.source = "attention_interface_0"}
// CHECK:       arith.addf {{.*}} {nnx.probes = [#nnx.probe<name = "layers.0.p_source_input", point = input, index = 1, kind = read>], nnx.source = "add_0"}
// Without "copy", the read of the MLP output moves past the in-place add.
// CHECK:       arith.addf {{.*}} {nnx.in_place = 0 : i64, nnx.probes = [#nnx.probe<name = "layers.0.p_inplace", point = output, index = 0, kind = read>], nnx.source = "iadd_0"}
// CHECK:       nnx.module @"1" class = "Block" attributes {nnx.probes = [#nnx.probe<name = "layers.1.p_output", point = output, index = 0, kind = read>]}
// With "copy", it stays on the MLP's output; a write always does.
// CHECK:       nnx.linear @mlp {nnx.probes = [#nnx.probe<name = "layers.1.p_inplace_copy", point = output, index = 0, kind = read>, #nnx.probe<name = "layers.1.p_inplace", point = output, index = 0, kind = write>]

// BLOOM-LABEL: nnx.module @"1" class = "BloomBlock"
// BLOOM:       nnx.module @self_attention class = "BloomAttention"
// BLOOM:       nnx.call @dropout_add({{.*}}) {nnx.probes = [#nnx.probe<name = "layers.1.attention_output", point = input, index = 0, kind = read>], nnx.source = "dropout_add_0"}

// GEMMA2-LABEL: nnx.module @"0" class = "Gemma2DecoderLayer"
// GEMMA2:       nnx.module @post_attention_layernorm class = "Gemma2RMSNorm" attributes {nnx.probes = [#nnx.probe<name = "layers.0.attention_output", point = output, index = 0, kind = write>]

// RW-LABEL: nnx.module @"0" class = "Block"
// RW:       nnx.linear @mlp {nnx.probes = [#nnx.probe<name = "layers.0.p_inplace", point = output, index = 0, kind = read>, #nnx.probe<name = "layers.0.p_inplace", point = output, index = 0, kind = write>]
// RW-NOT:   nnx.probes
