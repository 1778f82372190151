// The seed's §3.4 table, expand_embedding: 10 -> 16 rows of dim 4 adds
// (16 - 10) * 4 = 24 parameters, whatever the init.
// RUN: nnx-opt %s --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: nnx-opt %s --nnx-expand-embedding="layer=embed num=16 init=zeros" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=AFTER
// RUN: nnx-opt %s --nnx-expand-embedding="layer=embed num=16 init=copy_mean" --nnx-param-count -o /dev/null | FileCheck %s --check-prefix=AFTER

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
