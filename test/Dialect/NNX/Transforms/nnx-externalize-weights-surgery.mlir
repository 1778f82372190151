// Surgery on an externalized model reads the tensors from the weights file
// and computes what it computes on the inline model: the same outputs, the
// same parameter counts, and (externalized again) the same bytes.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %S/../../../nnx-run/Inputs/make_inputs.py %t
// RUN: nnx-opt %s -o inline.mlir
// RUN: nnx-opt %s --nnx-externalize-weights=file=w.safetensors -o ext.mlir

// nnx-param-count reads types only.
// RUN: nnx-opt inline.mlir --nnx-param-count -o /dev/null > count-inline.txt
// RUN: nnx-opt ext.mlir --nnx-param-count -o /dev/null > count-ext.txt
// RUN: diff count-inline.txt count-ext.txt
// RUN: FileCheck %s --check-prefix=COUNT < count-ext.txt

// nnx-widen: the widened tensors become inline, head.bias stays external.
// RUN: nnx-opt inline.mlir --nnx-widen="layer=fc width=5 seed=0" -o widen-inline.mlir
// RUN: nnx-opt ext.mlir --nnx-widen="layer=fc width=5 seed=0" -o widen-ext.mlir
// RUN: FileCheck %s --check-prefix=WIDEN < widen-ext.mlir
// RUN: nnx-run widen-inline.mlir --input x3.npy --output y-widen-inline.npy
// RUN: nnx-run widen-ext.mlir --input x3.npy --output y-widen-ext.npy
// RUN: cmp y-widen-inline.npy y-widen-ext.npy
// RUN: nnx-opt widen-inline.mlir --nnx-param-count -o /dev/null > count-widen-inline.txt
// RUN: nnx-opt widen-ext.mlir --nnx-param-count -o /dev/null > count-widen-ext.txt
// RUN: diff count-widen-inline.txt count-widen-ext.txt
// RUN: nnx-opt widen-inline.mlir --nnx-externalize-weights=file=widen-inline.safetensors -o /dev/null
// RUN: nnx-opt widen-ext.mlir --nnx-externalize-weights=file=widen-ext.safetensors -o /dev/null
// RUN: cmp widen-inline.safetensors widen-ext.safetensors

// nnx-low-rank at full rank.
// RUN: nnx-opt inline.mlir --nnx-low-rank="layer=head rank=2" -o lr-inline.mlir
// RUN: nnx-opt ext.mlir --nnx-low-rank="layer=head rank=2" -o lr-ext.mlir
// RUN: nnx-run lr-inline.mlir --input x3.npy --output y-lr-inline.npy
// RUN: nnx-run lr-ext.mlir --input x3.npy --output y-lr-ext.npy
// RUN: cmp y-lr-inline.npy y-lr-ext.npy
// RUN: nnx-opt lr-inline.mlir --nnx-param-count -o /dev/null > count-lr-inline.txt
// RUN: nnx-opt lr-ext.mlir --nnx-param-count -o /dev/null > count-lr-ext.txt
// RUN: diff count-lr-inline.txt count-lr-ext.txt
// RUN: nnx-opt lr-inline.mlir --nnx-externalize-weights=file=lr-inline.safetensors -o /dev/null
// RUN: nnx-opt lr-ext.mlir --nnx-externalize-weights=file=lr-ext.safetensors -o /dev/null
// RUN: cmp lr-inline.safetensors lr-ext.safetensors

// COUNT-LABEL: model @tiny
// COUNT:       fc nnx.linear 9
// COUNT-NEXT:  act nnx.relu 0
// COUNT-NEXT:  head nnx.linear 8
// COUNT-NEXT:  total 17

// WIDEN-LABEL: nnx.model @tiny inputs(tensor<?x2xf32>) attributes {weights = "w.safetensors"}
// WIDEN:       nnx.linear @fc {bias = dense<{{.*}}> : tensor<5xf32>, weight = dense<{{.*}}> : tensor<5x2xf32>}
// WIDEN:       nnx.linear @head {bias = #nnx.external<"head.bias"> : tensor<2xf32>, weight = dense<{{.*}}> : tensor<2x5xf32>}

nnx.model @tiny inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<[[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>,
                      bias = dense<[0.25, -0.75]> : tensor<2xf32>}
  }
}
