// A two-layer toy with every construct the path grammar addresses: a list
// of custom blocks, a tuple-returning attention calling a function module
// with a keyword argument, an in-place update, an alias, a root config.
nnx.model @tiny inputs(tensor<?x4xf32>, tensor<?x4xf32>) {
  nnx.module @net class = "Tiny" attributes {config = {flag = true}} {
    nnx.module_list @h {
      nnx.module @"0" class = "Block" {
        nnx.layer_norm @ln_1 {normalized_shape = array<i64: 4>}
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
      nnx.module @"1" class = "Block" {
        nnx.layer_norm @ln_1 {normalized_shape = array<i64: 4>}
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
      %h1 = nnx.call @h::@"1"(%h0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %h1 : tensor<?x4xf32>
    }
  }
}
