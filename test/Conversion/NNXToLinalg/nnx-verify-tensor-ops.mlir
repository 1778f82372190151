// RUN: nnx-opt %s -split-input-file -nnx-verify-tensor-ops -verify-diagnostics | FileCheck %s

// Ops within their ranges pass unchanged.
// CHECK-LABEL: func.func @fine
// CHECK: tensor.dim
// CHECK: tensor.extract_slice
func.func @fine(%x: tensor<?x?xf32>) -> (index, tensor<2x2xf32>) {
  %c1 = arith.constant 1 : index
  %d = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.extract_slice %x[0, 1] [2, 2] [1, 2] : tensor<?x?xf32> to tensor<2x2xf32>
  return %d, %s : index, tensor<2x2xf32>
}

// -----

// A negative index: upstream's value-bounds analysis crashed on it.
func.func @negative_dim(%x: tensor<?x?xf32>) -> index {
  %c = arith.constant -2 : index
  // expected-error @+1 {{'tensor.dim' op index -2 is out of range for a source of rank 2 (valid: 0 to 1)}}
  %d = tensor.dim %x, %c : tensor<?x?xf32>
  return %d : index
}

// -----

// An index past the rank yielded a garbage size.
func.func @dim_past_rank(%x: tensor<?x?xf32>) -> index {
  %c = arith.constant 8 : index
  // expected-error @+1 {{'tensor.dim' op index 8 is out of range for a source of rank 2 (valid: 0 to 1)}}
  %d = tensor.dim %x, %c : tensor<?x?xf32>
  return %d : index
}

// -----

func.func @memref_dim(%x: memref<?xf32>) -> index {
  %c = arith.constant 1 : index
  // expected-error @+1 {{'memref.dim' op index 1 is out of range for a source of rank 1 (valid: 0 to 0)}}
  %d = memref.dim %x, %c : memref<?xf32>
  return %d : index
}

// -----

// A negative stride read before the tensor.
func.func @negative_stride(%x: tensor<4x4xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op stride -1 of dimension 1 is not positive (a slice steps forward, at least 1)}}
  %s = tensor.extract_slice %x[0, 3] [1, 2] [1, -1] : tensor<4x4xf32> to tensor<1x2xf32>
  return %s : tensor<1x2xf32>
}

// -----

func.func @huge_negative_stride(%x: tensor<4x4xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op stride -100000000 of dimension 0 is not positive}}
  %s = tensor.extract_slice %x[3, 0] [1, 1] [-100000000, 1] : tensor<4x4xf32> to tensor<1x1xf32>
  return %s : tensor<1x1xf32>
}

// -----

func.func @zero_stride_insert(%x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tensor.insert_slice' op stride 0 of dimension 0 is not positive}}
  %r = tensor.insert_slice %y into %x[0] [2] [0] : tensor<2xf32> into tensor<4xf32>
  return %r : tensor<4xf32>
}
