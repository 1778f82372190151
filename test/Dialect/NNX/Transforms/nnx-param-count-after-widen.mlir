// The seed's §3.1 table: widen of Linear(4, 8) -> Linear(8, 2) to new_width = 16
// takes 58 parameters to 114 (delta +56).
// RUN: nnx-opt %s --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-widen="layer=0 width=16" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=AFTER

// BEFORE-LABEL: model @table_3_1
// BEFORE:      0 nnx.linear 40
// BEFORE-NEXT: 1 nnx.linear 18
// BEFORE-NEXT: total 58
// AFTER-LABEL: model @table_3_1
// AFTER:      0 nnx.linear 80
// AFTER-NEXT: 1 nnx.linear 34
// AFTER-NEXT: total 114
nnx.model @table_3_1 inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.1> : tensor<8xf32>}
    nnx.linear @"1" {weight = dense<0.25> : tensor<2x8xf32>, bias = dense<0.0> : tensor<2xf32>}
  }
}
