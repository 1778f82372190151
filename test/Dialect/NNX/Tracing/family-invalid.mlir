// Family files that cannot be used are refused before anything resolves.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-insert-probes="family=no_such_family reads=layer_input"
// RUN: not nnx-opt %s --nnx-insert-probes="family=%S/Inputs/bad-key.json reads=layer_input" 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not nnx-opt %s --nnx-insert-probes="family=%S/Inputs/bad-host.json reads=layer_input" 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not nnx-opt %s --nnx-support="family=%S/Inputs/cycle.json" 2>&1 | FileCheck %s --check-prefix=CYCLE
// RUN: not nnx-opt %s --nnx-support="family=%S/Inputs/bad-classes.json" 2>&1 | FileCheck %s --check-prefix=CLASSES

// The expectation below is for the first RUN line; the others check their
// message with FileCheck (it holds the checkout's path).
// KEY: value "layer_input": unknown key "colour"
// HOST: value "new_value": unknown host "vision"
// CYCLE: "extends" forms a cycle
// CLASSES: "classes": unknown host "layer"

// expected-error-re @+1 {{nnx-insert-probes: cannot read family 'no_such_family' ({{.*}}no_such_family.json): No such file or directory}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.linear @net {weight = dense<1.0> : tensor<4x4xf32>}
}
