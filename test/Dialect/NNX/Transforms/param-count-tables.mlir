// The seed's §3 parameter-count tables, reproduced by nnx-param-count before
// and after each surgery pass.
// RUN: split-file %s %t
//
// 3.1 widen: Linear(4, 8) then Linear(8, 2), new_width = 16: 58 -> 114.
// RUN: nnx-opt %t/widen.mlir --nnx-param-count -o /dev/null | FileCheck %t/widen.mlir --check-prefix=BEFORE
// RUN: nnx-opt %t/widen.mlir --nnx-widen="layer=0 width=16" --nnx-param-count -o /dev/null | FileCheck %t/widen.mlir --check-prefix=AFTER
//
// 3.2 deepen: Sequential(Linear(4, 8), ReLU(), Linear(8, 2)) after the ReLU:
// 58 -> 130.
// RUN: nnx-opt %t/deepen.mlir --nnx-param-count -o /dev/null | FileCheck %t/deepen.mlir --check-prefix=BEFORE
// RUN: nnx-opt %t/deepen.mlir --nnx-deepen="after=1" --nnx-param-count -o /dev/null | FileCheck %t/deepen.mlir --check-prefix=AFTER
//
// 3.3 low_rank on Linear(in=64, out=32): 2080 -> 800 / 1568 / 3104.
// RUN: nnx-opt %t/low_rank.mlir --nnx-param-count -o /dev/null | FileCheck %t/low_rank.mlir --check-prefix=BEFORE
// RUN: nnx-opt %t/low_rank.mlir --nnx-low-rank="layer=fc rank=8" --nnx-param-count -o /dev/null | FileCheck %t/low_rank.mlir --check-prefix=R8
// RUN: nnx-opt %t/low_rank.mlir --nnx-low-rank="layer=fc rank=16" --nnx-param-count -o /dev/null | FileCheck %t/low_rank.mlir --check-prefix=R16
// RUN: nnx-opt %t/low_rank.mlir --nnx-low-rank="layer=fc rank=32" --nnx-param-count -o /dev/null | FileCheck %t/low_rank.mlir --check-prefix=R32
//
// 3.4 drop_layer: dropping a square Linear(8, 8) removes 8*8 + 8 = 72.
// RUN: nnx-opt %t/drop.mlir --nnx-param-count -o /dev/null | FileCheck %t/drop.mlir --check-prefix=BEFORE
// RUN: nnx-opt %t/drop.mlir --nnx-drop-layer="layer=2" --nnx-param-count -o /dev/null | FileCheck %t/drop.mlir --check-prefix=AFTER
//
// 3.4 expand_embedding: 10 -> 16 rows of dim 4 adds (16 - 10) * 4 = 24,
// whatever the init.
// RUN: nnx-opt %t/embed.mlir --nnx-param-count -o /dev/null | FileCheck %t/embed.mlir --check-prefix=BEFORE
// RUN: nnx-opt %t/embed.mlir --nnx-expand-embedding="layer=embed num=16 init=zeros" --nnx-param-count -o /dev/null | FileCheck %t/embed.mlir --check-prefix=AFTER
// RUN: nnx-opt %t/embed.mlir --nnx-expand-embedding="layer=embed num=16 init=copy_mean" --nnx-param-count -o /dev/null | FileCheck %t/embed.mlir --check-prefix=AFTER

//--- widen.mlir
// BEFORE-LABEL: model @table_3_1
// BEFORE:      0 nnx.linear 40
// BEFORE-NEXT: 1 nnx.relu 0
// BEFORE-NEXT: 2 nnx.linear 18
// BEFORE-NEXT: total 58
// AFTER-LABEL: model @table_3_1
// AFTER:      0 nnx.linear 80
// AFTER-NEXT: 1 nnx.relu 0
// AFTER-NEXT: 2 nnx.linear 34
// AFTER-NEXT: total 114
nnx.model @table_3_1 inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.1> : tensor<8xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<0.25> : tensor<2x8xf32>, bias = dense<0.0> : tensor<2xf32>}
  }
}

//--- deepen.mlir
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

//--- low_rank.mlir
// BEFORE-LABEL: model @table_3_3
// BEFORE:      fc nnx.linear 2080
// BEFORE-NEXT: total 2080
// R8-LABEL: model @table_3_3
// R8:      fc nnx.sequential 0
// R8-NEXT: fc.0 nnx.linear 512
// R8-NEXT: fc.1 nnx.linear 288
// R8-NEXT: total 800
// R16-LABEL: model @table_3_3
// R16:      fc.0 nnx.linear 1024
// R16-NEXT: fc.1 nnx.linear 544
// R16-NEXT: total 1568
// R32-LABEL: model @table_3_3
// R32:      fc.0 nnx.linear 2048
// R32-NEXT: fc.1 nnx.linear 1056
// R32-NEXT: total 3104
nnx.model @table_3_3 inputs(tensor<?x64xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.125> : tensor<32x64xf32>, bias = dense<0.0> : tensor<32xf32>}
  }
}

//--- drop.mlir
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

//--- embed.mlir
// BEFORE-LABEL: model @table_3_4_embed
// BEFORE:      embed nnx.embedding 40
// BEFORE:      total 40
// AFTER-LABEL: model @table_3_4_embed
// AFTER:      embed nnx.embedding 64
// AFTER:      total 64
nnx.model @table_3_4_embed inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @embed {weight = dense<0.5> : tensor<10x4xf32>}
    nnx.relu @act
  }
}
