// nnx-drop-layer remove=true takes a block out of its module_list: the
// chain skips its call, later blocks shift one key down and their calls
// follow them.
// RUN: split-file %s %t
// RUN: nnx-opt %t/chain.mlir --nnx-drop-layer="layer=layers.0 remove=true" | FileCheck %s
// RUN: nnx-opt %t/chain.mlir --nnx-drop-layer="layer=layers.0 remove=true" --nnx-param-count -o %t/out.mlir | FileCheck %s --check-prefix=COUNT
// RUN: nnx-opt %t/used.mlir -verify-diagnostics --nnx-drop-layer="layer=layers.0 remove=true"
// RUN: nnx-opt %t/seq.mlir -verify-diagnostics --nnx-drop-layer="layer=0 remove=true"

// CHECK:      nnx.module_list @layers {
// CHECK-NEXT:   nnx.module @"0" class = "Second" {
// CHECK-NOT:    nnx.module @"1"
// CHECK-NOT:  nnx.source = "first"
// CHECK:      %[[H:.*]] = nnx.call @layers::@"0"(%arg0) {nnx.source = "second"}
// CHECK-NEXT: nnx.return %[[H]]

// Block "0" held 4 parameters, block "1" holds 6.
// COUNT: total{{ +}}6

//--- chain.mlir
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      nnx.module @"0" class = "First" {
        nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %y = nnx.fn.add %x, %h : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
      nnx.module @"1" class = "Second" {
        nnx.linear @fc {weight = dense<2.0> : tensor<2x2xf32>, bias = dense<1.0> : tensor<2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          nnx.return %h : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h0 = nnx.call @layers::@"0"(%x) {nnx.source = "first"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %h1 = nnx.call @layers::@"1"(%h0) {nnx.source = "second"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h1 : tensor<?x2xf32>
    }
  }
}

//--- used.mlir
// A second result in use (attention weights read by the parent).
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-drop-layer: layer 'layers.0' (nnx.module) has result 1 used: nothing can stand in for it once the block is gone}}
      nnx.module @"0" class = "Block" {
        nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          nnx.return %x, %h : tensor<?x2xf32>, tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h:2 = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
      // expected-note @+1 {{use is here}}
      %s = nnx.fn.add %h#0, %h#1 : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
      nnx.return %s : tensor<?x2xf32>
    }
  }
}

//--- seq.mlir
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = positional {
    // expected-error @+1 {{nnx-drop-layer: layer '0' (nnx.linear) is not a block of a plain 'nnx.module_list': option remove=true takes a block out of a list (a stock net keeps its slots; drop it without remove)}}
    nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
    nnx.relu @"1"
  }
}
