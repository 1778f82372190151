// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-lower-probes | FileCheck %s

// Reads become copies returned as trailing results in op order, writes
// trailing arguments that replace the value from the probe on; the names are
// recorded in order.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<?x8xf32>)
// CHECK-SAME:    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK-SAME:    attributes {nnx.read_probes = ["in", "sum"], nnx.write_probes = ["w"]}
// CHECK-NEXT:    %[[R:.*]] = bufferization.alloc_tensor() copy(%[[X]])
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT:    %[[P:.*]] = bufferization.alloc_tensor() copy(%[[S]])
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[W]], %[[W]]
// CHECK-NEXT:    return %[[M]], %[[R]], %[[P]]
func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = nnx.probe read "in" %x : tensor<?x8xf32>
  %s = arith.addf %r, %r : tensor<?x8xf32>
  %p = nnx.probe read "sum" %s : tensor<?x8xf32>
  %w = nnx.probe write "w" %p : tensor<?x8xf32>
  %m = arith.mulf %w, %w : tensor<?x8xf32>
  return %m : tensor<?x8xf32>
}

// A function without probes is left alone.
// CHECK-LABEL: func.func @plain(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{nnx-lower-probes: function @callee holds probes but has callers; inline it first}}
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{probe here}}
  %r = nnx.probe read "r" %x : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = nnx.probe read "r" %x : tensor<4xf32>
  // expected-error @+1 {{nnx-lower-probes: probe name "r" is used twice in @twice}}
  %s = nnx.probe write "r" %r : tensor<4xf32>
  return %s : tensor<4xf32>
}
