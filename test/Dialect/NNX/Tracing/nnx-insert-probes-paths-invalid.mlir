// Requests whose path names nothing: each error names the failing segment,
// all are reported at once, and the IR is left unchanged.
// RUN: nnx-opt %s -verify-diagnostics --nnx-insert-probes="family=%S/Inputs/tiny.json reads=attention_output,layers.0.no_such_value,layers.7.p_output,layers.0.e_parent_standard,layers.0.e_child_missing,layers.0.e_label_missing,layers.0.e_inputs_no_select,layers.0.e_select_range,layers.0.e_keyword_missing,layers.0.e_keyword_on_output,layers.0.e_source_of_non_call,layers.0.e_no_point,layers.0.e_leaf_source,layers.0.e_above_root,layers.0.e_trailing"

// expected-error @+15 {{unknown standardized name 'attention_output' for family 'tiny'}}
// expected-error @+14 {{unknown standardized name 'layers.0.no_such_value' for family 'tiny'}}
// expected-error @+13 {{'layers.7.p_output': no such layer: its host 'layer' is 'layers.7', and 'layers' holds 1 module(s), none under key '7'}}
// expected-error @+12 {{segment '../post_attention_layernorm' names no module: 'h.0' has no child 'post_attention_layernorm' (above the host, paths use native names)}}
// expected-error @+11 {{segment 'nope' names no module: 'h.0' has no child or alias 'nope'}}
// expected-error @+10 {{segment 'source.nope_0' names no op: the forward of 'h.0' has no op labeled 'nope_0' (labels: attn_0, add_0, iadd_0, add_1)}}
// expected-error @+9 {{'inputs' is the whole (args, kwargs) pair, not one tensor}}
// expected-error @+8 {{module 'h.0' (nnx.module) has 1 output(s): select=3 is out of range}}
// expected-error @+7 {{has no keyword argument 'value' (keywords: key)}}
// expected-error @+6 {{'output' takes an index as "select", not a keyword}}
// expected-error @+5 {{'source.add_0' (arith.addf) is not an nnx.call: only a call has a source}}
// expected-error @+4 {{the path ends without 'output', 'input' or 'inputs'}}
// expected-error @+3 {{module 'h.0.ln_1' (nnx.layer_norm) has no forward region to take 'source.x' from}}
// expected-error @+2 {{'../' steps above the root: the host 'h.0' is 2 level(s) deep}}
// expected-error @+1 {{unexpected segment 'extra' after 'output'}}
nnx.model @tiny inputs(tensor<?x4xf32>, tensor<?x4xf32>) {
  nnx.module @net class = "Tiny" attributes {config = {flag = true}} {
    nnx.module_list @h {
      // expected-note @+3 {{looked in this module}}
      // expected-note @+2 {{this module}}
      // expected-note @+1 {{this op}}
      nnx.module @"0" class = "Block" {
        // expected-note @+1 {{this module}}
        nnx.layer_norm @ln_1 {normalized_shape = array<i64: 4>}
        // expected-note @+1 {{the host is here}}
        nnx.module @attn class = "Attn" {
          nnx.linear @proj {weight = dense<0.5> : tensor<4x4xf32>}
          nnx.module @attention_interface class = "attention_interface" {
            nnx.forward @forward(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>) -> tensor<?x4xf32> {
              %s = arith.mulf %q, %k {nnx.source = "mul_0"} : tensor<?x4xf32>
              nnx.return %s : tensor<?x4xf32>
            }
          }
          nnx.forward @forward(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
            %p = nnx.call @proj(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
            // expected-note @+1 {{this op}}
            %c = nnx.call @attention_interface(%p, %x) {nnx.source = "attention_interface_0", nnx.kwargs = ["key"]} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
            nnx.return %c, %p : tensor<?x4xf32>, tensor<?x4xf32>
          }
        }
        nnx.layer_norm @ln_2 {normalized_shape = array<i64: 4>}
        nnx.linear @mlp {weight = dense<0.25> : tensor<4x4xf32>}
        nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
          %h = nnx.call @ln_1(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
          %a, %w = nnx.call @attn(%h) {nnx.source = "attn_0"} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
          // expected-note @+1 {{this op}}
          %x1 = arith.addf %x, %a {nnx.source = "add_0"} : tensor<?x4xf32>
          %h2 = nnx.call @ln_2(%x1) : (tensor<?x4xf32>) -> tensor<?x4xf32>
          %m = nnx.call @mlp(%h2) : (tensor<?x4xf32>) -> tensor<?x4xf32>
          %m2 = arith.addf %m, %w {nnx.source = "iadd_0", nnx.in_place = 0 : i64} : tensor<?x4xf32>
          %y = arith.addf %x1, %m2 {nnx.source = "add_1"} : tensor<?x4xf32>
          nnx.return %y : tensor<?x4xf32>
        }
      }
    }
    nnx.alias @first = @h::@"0"
    nnx.forward @forward(%x: tensor<?x4xf32>, %bias: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %x0 = arith.addf %x, %bias {nnx.source = "add_0"} : tensor<?x4xf32>
      %h0 = nnx.call @h::@"0"(%x0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %h0 : tensor<?x4xf32>
    }
  }
}
