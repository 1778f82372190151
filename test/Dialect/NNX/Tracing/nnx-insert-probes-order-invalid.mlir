// Requests out of execution order: a value inside a module's forward asked
// for after that module's output. Each list (reads, writes) is checked on its
// own, and a name may be listed once.
// RUN: nnx-opt %s -verify-diagnostics --nnx-insert-probes="family=%S/Inputs/tiny.json reads=layers.0.p_output_select,layers.0.p_call_source,layers.0.p_input,layers.0.p_input writes=layers.0.p_output,layers.0.p_child_output"

// expected-error @+4 {{'layers.0.p_call_source' (output 0 of 'source.mul_0' (arith.mulf) in the forward of 'h.0.attn.attention_interface') is computed before 'layers.0.p_output_select' (output 1 of module 'h.0.attn' (nnx.module)), which comes first in 'reads': list values in execution order}}
// expected-error @+3 {{'layers.0.p_input' (input 0 of module 'h.0' (nnx.module)) is computed before 'layers.0.p_output_select'}}
// expected-error @+2 {{'layers.0.p_input' is listed twice in 'reads'}}
// expected-error @+1 {{'layers.0.p_child_output' (output 0 of module 'h.0.ln_1' (nnx.layer_norm)) is computed before 'layers.0.p_output' (output 0 of module 'h.0' (nnx.module)), which comes first in 'writes'}}
nnx.model @tiny inputs(tensor<?x4xf32>, tensor<?x4xf32>) {
  nnx.module @net class = "Tiny" attributes {config = {flag = true}} {
    nnx.module_list @h {
      // expected-note @+2 {{'layers.0.p_input' is computed here}}
      // expected-note @+1 {{'layers.0.p_output' is computed here}}
      nnx.module @"0" class = "Block" {
        // expected-note @+1 {{'layers.0.p_child_output' is computed here}}
        nnx.layer_norm @ln_1 {normalized_shape = array<i64: 4>}
        // (both order errors attach this note; one expectation matches both)
        // expected-note @+1 {{'layers.0.p_output_select' is computed here}}
        nnx.module @attn class = "Attn" {
          nnx.linear @proj {weight = dense<0.5> : tensor<4x4xf32>}
          nnx.module @attention_interface class = "attention_interface" {
            nnx.forward @forward(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>) -> tensor<?x4xf32> {
              // expected-note @+1 {{'layers.0.p_call_source' is computed here}}
              %s = arith.mulf %q, %k {nnx.source = "mul_0"} : tensor<?x4xf32>
              nnx.return %s : tensor<?x4xf32>
            }
          }
          nnx.forward @forward(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
            %p = nnx.call @proj(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
            %c = nnx.call @attention_interface(%p, %x) {nnx.source = "attention_interface_0", nnx.kwargs = ["key"]} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
            nnx.return %c, %p : tensor<?x4xf32>, tensor<?x4xf32>
          }
        }
        nnx.layer_norm @ln_2 {normalized_shape = array<i64: 4>}
        nnx.linear @mlp {weight = dense<0.25> : tensor<4x4xf32>}
        nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
          %h = nnx.call @ln_1(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
          %a, %w = nnx.call @attn(%h) {nnx.source = "attn_0"} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
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
