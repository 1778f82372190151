// The seed's §3.2 table: deepen of Sequential(Linear(4, 8), ReLU(), Linear(8, 2))
// after the ReLU takes 58 parameters to 130 (delta +72).
// RUN: nnx-opt %s --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-deepen="after=1" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=AFTER

// BEFORE-LABEL: model @table_3_2
// BEFORE:      0 nnx.linear 40
// BEFORE-NEXT: 1 nnx.relu 0
// BEFORE-NEXT: 2 nnx.linear 18
// BEFORE-NEXT: total 58
// AFTER-LABEL: model @table_3_2
// AFTER:      0 nnx.linear 40
// AFTER-NEXT: 1 nnx.relu 0
// AFTER-NEXT: 2 nnx.linear 72
// AFTER-NEXT: 3 nnx.relu 0
// AFTER-NEXT: 4 nnx.linear 18
// AFTER-NEXT: total 130
nnx.model @table_3_2 inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.1> : tensor<8xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<0.25> : tensor<2x8xf32>, bias = dense<0.0> : tensor<2xf32>}
  }
}
