// The seed's §3.3 table: low_rank of Linear(in=64, out=32): 2080 parameters;
// 800 at rank 8, 1568 at rank 16, 3104 at rank 32 (max, exact).
// RUN: nnx-opt %s --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-low-rank="layer=fc rank=8" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=R8
// RUN: nnx-opt %s --nnx-low-rank="layer=fc rank=16" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=R16
// RUN: nnx-opt %s --nnx-low-rank="layer=fc rank=32" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=R32

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
