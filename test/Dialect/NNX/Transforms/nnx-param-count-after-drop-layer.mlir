// The seed's §3.4 table, drop_layer: dropping a square Linear(8, 8) removes
// 8*8 + 8 = 72 parameters.
// RUN: nnx-opt %s --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-drop-layer="layer=2" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=AFTER

// BEFORE-LABEL: model @table_3_4_drop
// BEFORE:      2 nnx.linear 72
// BEFORE:      total 130
// AFTER-LABEL: model @table_3_4_drop
// AFTER:      2 nnx.identity 0
// AFTER-NEXT: 3 nnx.linear 18
// AFTER-NEXT: total 58
nnx.model @table_3_4_drop inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.1> : tensor<8xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<0.5> : tensor<8x8xf32>, bias = dense<0.1> : tensor<8xf32>}
    nnx.linear @"3" {weight = dense<0.25> : tensor<2x8xf32>, bias = dense<0.0> : tensor<2xf32>}
  }
}
