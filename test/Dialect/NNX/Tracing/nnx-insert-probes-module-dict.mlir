// Tracing paths step through an nnx.module_dict by key (from the model's
// root, `d.fc.input`, and from a host on the dict, `emb.output`); the dict
// itself has no forward, so it has no output to read.
// RUN: nnx-opt %S/Inputs/module_dict.mlir --nnx-insert-probes="family=%S/Inputs/module_dict.json reads=emb_out,fc_in writes=fc_out" | FileCheck %s
// RUN: nnx-opt %s -verify-diagnostics --nnx-insert-probes="family=%S/Inputs/module_dict.json reads=dict_out"

// CHECK-LABEL: nnx.model @dict
// CHECK:       nnx.module_dict @d {
// CHECK-NEXT:    nnx.linear @fc {{.*}}nnx.probes = [#nnx.probe<name = "fc_in", point = input, index = 0, kind = read>, #nnx.probe<name = "fc_out", point = output, index = 0, kind = write>]
// CHECK-NEXT:    nnx.embedding @emb {nnx.probes = [#nnx.probe<name = "emb_out", point = output, index = 0, kind = read>]

// expected-error @+1 {{'dict_out' (family 'module_dict', path 'output' on 'd'): module 'd' (nnx.module_dict) has no outputs (a module_dict has no forward)}}
nnx.model @dict inputs(tensor<?x3xi64>) {
  nnx.module @net class = "DictNet" {
    // expected-note @+1 {{this op}}
    nnx.module_dict @d {
      nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf32>}
      nnx.embedding @emb {weight = dense<1.0> : tensor<5x4xf32>}
    }
    nnx.forward @forward(%ids: tensor<?x3xi64>) -> tensor<?x3x2xf32> {
      %e = nnx.call @d::@emb(%ids) : (tensor<?x3xi64>) -> tensor<?x3x4xf32>
      %y = nnx.call @d::@fc(%e) : (tensor<?x3x4xf32>) -> tensor<?x3x2xf32>
      nnx.return %y : tensor<?x3x2xf32>
    }
  }
}
