// nnx-insert-block copies a residual block after itself with the Linears
// that end its branches zeroed (here a pre-norm block with an attention-like
// branch through a custom module and an MLP branch), renumbers the later
// blocks and chains the copy's call right after the block's.
// RUN: nnx-opt %s --nnx-insert-block="after=layers.0" | FileCheck %s
// Executed: the model's output is unchanged (the copy returns its input).
// RUN: %python %S/preservation/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-insert-block{after=layers.0}" --edit "nnx-insert-block{after=layers.2}" --batch 3

// CHECK:      nnx.module_list @layers {
// CHECK-NEXT:   nnx.module @"0" class = "Block" {
// CHECK:          nnx.linear @o_proj {bias = dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>, weight = dense<{{\[\[}}5.000000e-01,
// CHECK:        nnx.module @"1" class = "Block" {
// CHECK:          nnx.module @attn class = "Attention" {
// CHECK-NEXT:       nnx.linear @v_proj {weight = dense<{{\[\[}}2.500000e-01,
// CHECK-NEXT:       nnx.linear @o_proj {bias = dense<0.000000e+00> : tensor<2xf32>, weight = dense<0.000000e+00> : tensor<2x2xf32>}
// CHECK:          nnx.linear @up {weight = dense<{{\[\[}}1.000000e+00,
// CHECK-NEXT:     nnx.relu @act
// CHECK-NEXT:     nnx.linear @down {bias = dense<0.000000e+00> : tensor<2xf32>, weight = dense<0.000000e+00> : tensor<2x3xf32>}
// CHECK:        nnx.module @"2" class = "Block" {
// CHECK:      nnx.forward @forward(%[[X:.*]]: tensor<?x2xf32>)
// CHECK:        %[[H0:.*]] = nnx.call @layers::@"0"(%[[X]]) {nnx.source = "layers_0"}
// CHECK-NEXT:   %[[H1:.*]] = nnx.call @layers::@"1"(%[[H0]]) : (tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT:   %[[H2:.*]] = nnx.call @layers::@"2"(%[[H1]]) {nnx.source = "layers_1"}
// CHECK-NEXT:   nnx.return %[[H2]]

nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      nnx.module @"0" class = "Block" {
        nnx.rms_norm @norm {normalized_shape = array<i64: 2>, eps = 1.0e-05 : f64, weight = dense<[1.5, 0.5]> : tensor<2xf32>}
        nnx.module @attn class = "Attention" {
          nnx.linear @v_proj {weight = dense<[[0.25, -1.0], [0.75, 0.5]]> : tensor<2x2xf32>}
          nnx.linear @o_proj {weight = dense<[[0.5, 1.0], [-0.5, 2.0]]> : tensor<2x2xf32>, bias = dense<[0.1, 0.2]> : tensor<2xf32>}
          nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
            %v = nnx.call @v_proj(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
            %t = math.tanh %v : tensor<?x2xf32>
            %o = nnx.call @o_proj(%t) : (tensor<?x2xf32>) -> tensor<?x2xf32>
            nnx.return %o : tensor<?x2xf32>
          }
        }
        nnx.linear @up {weight = dense<[[1.0, 0.5], [-1.0, 0.25], [0.5, 0.5]]> : tensor<3x2xf32>}
        nnx.relu @act
        nnx.linear @down {weight = dense<[[1.0, 2.0, 3.0], [0.5, -0.5, 1.0]]> : tensor<2x3xf32>, bias = dense<[0.3, -0.3]> : tensor<2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %n = nnx.call @norm(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %a = nnx.call @attn(%n) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %r = nnx.fn.add %x, %a : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          %n2 = nnx.call @norm(%r) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %u = nnx.call @up(%n2) : (tensor<?x2xf32>) -> tensor<?x3xf32>
          %g = nnx.call @act(%u) : (tensor<?x3xf32>) -> tensor<?x3xf32>
          %d = nnx.call @down(%g) : (tensor<?x3xf32>) -> tensor<?x2xf32>
          %y = nnx.fn.add %r, %d : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
      nnx.module @"1" class = "Block" {
        nnx.linear @up {weight = dense<[[2.0, 0.5], [1.0, 0.25], [0.5, -0.5]]> : tensor<3x2xf32>}
        nnx.relu @act
        nnx.linear @down {weight = dense<[[1.0, -2.0, 3.0], [0.5, 0.5, 1.0]]> : tensor<2x3xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %u = nnx.call @up(%x) : (tensor<?x2xf32>) -> tensor<?x3xf32>
          %g = nnx.call @act(%u) : (tensor<?x3xf32>) -> tensor<?x3xf32>
          %d = nnx.call @down(%g) : (tensor<?x3xf32>) -> tensor<?x2xf32>
          %y = nnx.fn.add %d, %x : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h0 = nnx.call @layers::@"0"(%x) {nnx.source = "layers_0"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %h1 = nnx.call @layers::@"1"(%h0) {nnx.source = "layers_1"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h1 : tensor<?x2xf32>
    }
  }
}
