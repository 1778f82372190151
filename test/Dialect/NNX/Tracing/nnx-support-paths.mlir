// Every form of the path grammar, resolved on a toy model: the support
// report names the location (module or labeled op, point, index) of each.
// RUN: nnx-opt --nnx-support=family=%S/Inputs/tiny.json %S/Inputs/tiny.mlir -o /dev/null | FileCheck %s

// CHECK-LABEL: model @tiny family tiny
// CHECK-NEXT: p_inputs_select available  input 1 of module '<root>' (nnx.module)
// CHECK-NEXT: layers.0.e_above_root error  'layers.0.e_above_root' (family 'tiny', path '../../../x.output' on 'h.0'): '../' steps above the root: the host 'h.0' is 2 level(s) deep
// CHECK-NEXT: layers.0.e_child_missing error  'layers.0.e_child_missing' (family 'tiny', path 'nope.output' on 'h.0'): segment 'nope' names no module: 'h.0' has no child or alias 'nope'
// CHECK-NEXT: layers.0.e_inputs_no_select error  'layers.0.e_inputs_no_select' (family 'tiny', path 'inputs' on 'h.0'): 'inputs' is the whole (args, kwargs) pair, not one tensor: give "select" (an index or a keyword)
// CHECK-NEXT: layers.0.e_keyword_missing error  'layers.0.e_keyword_missing' (family 'tiny', path 'source.attention_interface_0.inputs' on 'h.0.attn'): 'source.attention_interface_0' (nnx.call) in the forward of 'h.0.attn' has no keyword argument 'value' (keywords: key)
// CHECK-NEXT: layers.0.e_keyword_on_output error  'layers.0.e_keyword_on_output' (family 'tiny', path 'output' on 'h.0'): 'output' takes an index as "select", not a keyword
// CHECK-NEXT: layers.0.e_label_missing error  'layers.0.e_label_missing' (family 'tiny', path 'source.nope_0.output' on 'h.0'): segment 'source.nope_0' names no op: the forward of 'h.0' has no op labeled 'nope_0' (labels: attn_0, add_0, iadd_0, add_1)
// CHECK-NEXT: layers.0.e_leaf_source error  'layers.0.e_leaf_source' (family 'tiny', path 'ln_1.source.x.output' on 'h.0'): module 'h.0.ln_1' (nnx.layer_norm) has no forward region to take 'source.x' from
// CHECK-NEXT: layers.0.e_no_point error  'layers.0.e_no_point' (family 'tiny', path 'ln_1' on 'h.0'): the path ends without 'output', 'input' or 'inputs'
// CHECK-NEXT: layers.0.e_parent_standard error  'layers.0.e_parent_standard' (family 'tiny', path '../post_attention_layernorm.output' on 'h.0.attn'): segment '../post_attention_layernorm' names no module: 'h.0' has no child 'post_attention_layernorm' (above the host, paths use native names)
// CHECK-NEXT: layers.0.e_select_range error  'layers.0.e_select_range' (family 'tiny', path 'output' on 'h.0'): module 'h.0' (nnx.module) has 1 output(s): select=3 is out of range
// CHECK-NEXT: layers.0.e_source_of_non_call error  'layers.0.e_source_of_non_call' (family 'tiny', path 'source.add_0.source.x.output' on 'h.0'): 'source.add_0' (arith.addf) is not an nnx.call: only a call has a source
// CHECK-NEXT: layers.0.e_trailing error  'layers.0.e_trailing' (family 'tiny', path 'output.extra' on 'h.0'): unexpected segment 'extra' after 'output'
// CHECK-NEXT: layers.0.p_call_inputs_index available  input 0 of 'source.attention_interface_0' (nnx.call) in the forward of 'h.0.attn'
// CHECK-NEXT: layers.0.p_call_inputs_keyword available  input 1 of 'source.attention_interface_0' (nnx.call) in the forward of 'h.0.attn'
// CHECK-NEXT: layers.0.p_call_output_select available  output 1 of 'source.attn_0' (nnx.call) in the forward of 'h.0'
// CHECK-NEXT: layers.0.p_call_source available  output 0 of 'source.mul_0' (arith.mulf) in the forward of 'h.0.attn.attention_interface'
// CHECK-NEXT: layers.0.p_child_native_input available  input 0 of module 'h.0.ln_2' (nnx.layer_norm)
// CHECK-NEXT: layers.0.p_child_output available  output 0 of module 'h.0.ln_1' (nnx.layer_norm)
// CHECK-NEXT: layers.0.p_child_rename_input available  input 0 of module 'h.0.ln_2' (nnx.layer_norm)
// CHECK-NEXT: layers.0.p_config_available available  output 0 of module 'h.0.attn' (nnx.module)
// CHECK-NEXT: layers.0.p_config_unavailable unavailable  the config sets flag
// CHECK-NEXT: layers.0.p_inplace available  output 0 of 'source.iadd_0' (arith.addf) in the forward of 'h.0' (after an in-place update)
// CHECK-NEXT: layers.0.p_inplace_copy available  output 0 of module 'h.0.mlp' (nnx.linear) (a copy)
// CHECK-NEXT: layers.0.p_input available  input 0 of module 'h.0' (nnx.module)
// CHECK-NEXT: layers.0.p_output available  output 0 of module 'h.0' (nnx.module)
// CHECK-NEXT: layers.0.p_output_select available  output 1 of module 'h.0.attn' (nnx.module)
// CHECK-NEXT: layers.0.p_parent available  output 0 of module 'h.0.ln_2' (nnx.layer_norm)
// CHECK-NEXT: layers.0.p_root_alias available  output 0 of module 'h.0' (nnx.module)
// CHECK-NEXT: layers.0.p_root_inputs available  input 0 of module '<root>' (nnx.module)
// CHECK-NEXT: layers.0.p_root_rename available  input 0 of module 'h.0.mlp' (nnx.linear)
// CHECK-NEXT: layers.0.p_source_input available  input 1 of 'source.add_0' (arith.addf) in the forward of 'h.0'
// CHECK-NEXT: layers.0.p_source_output available  output 0 of 'source.add_1' (arith.addf) in the forward of 'h.0'
// CHECK-NEXT: layers.0.p_unavailable unavailable  this block has no such value
// CHECK-NEXT: layers.1.e_above_root
