// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-lower-probes | FileCheck %s

// Reads become copies returned as trailing results in op order, writes
// trailing arguments that replace the value from the probe on (a value with
// dynamic dims: by a slice of all of the argument with the value's sizes,
// so what follows keeps the sizes of the inputs); the names are recorded in
// order.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<?x8xf32>)
// CHECK-SAME:    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK-SAME:    attributes {nnx.read_probes = ["in", "sum"], nnx.write_probes = ["w"]}
// CHECK-NEXT:    %[[R:.*]] = bufferization.alloc_tensor() copy(%[[X]])
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT:    %[[P:.*]] = bufferization.alloc_tensor() copy(%[[S]])
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = tensor.dim %[[S]], %[[C0]]
// CHECK-NEXT:    %[[WS:.*]] = tensor.extract_slice %[[W]][0, 0] [%[[N]], 8] [1, 1]
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[WS]], %[[WS]]
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

// One name read and written: the read copies the value before the write,
// the written argument replaces it from there on (docs/Tracing.md).
// CHECK-LABEL: func.func @read_and_write
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK-SAME:    -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    attributes {nnx.read_probes = ["r"], nnx.write_probes = ["r"]}
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT:    %[[R:.*]] = bufferization.alloc_tensor() copy(%[[S]])
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[W]], %[[W]]
// CHECK-NEXT:    return %[[M]], %[[R]]
func.func @read_and_write(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = arith.addf %x, %x : tensor<4xf32>
  %r = nnx.probe read "r" %s : tensor<4xf32>
  %w = nnx.probe write "r" %r : tensor<4xf32>
  %m = arith.mulf %w, %w : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

func.func @read_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = nnx.probe read "r" %x : tensor<4xf32>
  // expected-error @+1 {{nnx-lower-probes: probe name "r" is read twice in @read_twice}}
  %s = nnx.probe read "r" %r : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @write_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = nnx.probe write "w" %x : tensor<4xf32>
  // expected-error @+1 {{nnx-lower-probes: probe name "w" is written twice in @write_twice}}
  %s = nnx.probe write "w" %r : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Written before: the function already takes "w" as an argument.
func.func @write_again(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32>
    attributes {nnx.write_probes = ["w"]} {
  // expected-error @+1 {{nnx-lower-probes: probe name "w" is written twice in @write_again}}
  %s = nnx.probe write "w" %x : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// The read would see the written value: refused.
func.func @read_after_write(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = nnx.probe write "r" %x : tensor<4xf32>
  // expected-error @+1 {{nnx-lower-probes: probe "r" is read after its write in @read_after_write; the read of a written name comes first (it sees the value before the write)}}
  %r = nnx.probe read "r" %w : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// One name on two values.
func.func @two_values(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{the read is here}}
  %r = nnx.probe read "r" %x : tensor<4xf32>
  %s = arith.addf %r, %r : tensor<4xf32>
  // expected-error @+1 {{nnx-lower-probes: probe "r" is read and written in @two_values, but the write does not replace the value the read copies}}
  %w = nnx.probe write "r" %s : tensor<4xf32>
  return %w : tensor<4xf32>
}
