// One case per verifier rule of the nnx.fn ops.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics

func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'nnx.fn.add' op lhs has element type 'f32', but rhs has 'f16'}}
  %0 = nnx.fn.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error @+1 {{'nnx.fn.div' op operand element types must be floats, got 'i32'}}
  %0 = nnx.fn.div %a, %a : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @f(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nnx.fn.add' op operand element types must be floats or integers other than i1, got 'i1'}}
  %0 = nnx.fn.add %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nnx.fn.lt' op operand element types must be floats or integers other than i1, got 'i1'}}
  %0 = nnx.fn.lt %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.eq' op result element type must be 'i1', got 'f32'}}
  %0 = nnx.fn.eq %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.mul' op result element type must be 'f32', got 'f16'}}
  %0 = nnx.fn.mul %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf16>
  return
}

// -----

func.func @f(%a: tensor<?x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.add' op dim 1 of lhs has size 3, which does not broadcast to size 4 of result dim 1}}
  %0 = nnx.fn.add %a, %b : tensor<?x3xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.add' op result has rank 3, but the largest operand rank is 2}}
  %0 = nnx.fn.add %a, %b : tensor<?x4xf32>, tensor<4xf32> -> tensor<1x?x4xf32>
  return
}

// -----

func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.sub' op lhs has rank 2, more than the result's 1}}
  %0 = nnx.fn.sub %a, %b : tensor<?x4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<3x1xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'nnx.fn.add' op dim 1 of rhs has size 4, which does not broadcast to size ? of result dim 1}}
  %0 = nnx.fn.add %a, %b : tensor<3x1xf32>, tensor<1x4xf32> -> tensor<3x?xf32>
  return
}

// -----

func.func @f(%a: tensor<?x1xf32>, %b: tensor<1x1xf32>) {
  // expected-error @+1 {{'nnx.fn.add' op result dim 1 has size ?, but the operands determine size 1}}
  %0 = nnx.fn.add %a, %b : tensor<?x1xf32>, tensor<1x1xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.maximum' op result dim 0 has size 2, but the operands determine size ?}}
  %0 = nnx.fn.maximum %a, %b : tensor<?x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.where' op the condition's elements must be i1, got 'f32'}}
  %0 = nnx.fn.where %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f16>) {
  // expected-error @+1 {{'nnx.fn.where' op a has element type 'f32', but b has 'f16'}}
  %0 = nnx.fn.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f16> -> tensor<4xf32>
  return
}

// -----

func.func @f(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'nnx.fn.where' op a has element type 'f32', but the result has 'f16'}}
  %0 = nnx.fn.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf16>
  return
}

// -----

func.func @f(%c: tensor<3xi1>, %a: tensor<2x4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'nnx.fn.where' op dim 0 of cond has size 3, which does not broadcast to size 4 of result dim 1}}
  %0 = nnx.fn.where %c, %a, %b : tensor<3xi1>, tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'nnx.fn.matmul' op lhs must have rank >= 2, got 'tensor<4xf32>'}}
  %0 = nnx.fn.matmul %a, %b : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<3x4xi32>, %b: tensor<4x2xi32>) {
  // expected-error @+1 {{'nnx.fn.matmul' op operand element types must be floats, got 'i32'}}
  %0 = nnx.fn.matmul %a, %b : tensor<3x4xi32>, tensor<4x2xi32> -> tensor<3x2xi32>
  return
}

// -----

func.func @f(%a: tensor<3x4xf32>, %b: tensor<4x2xf16>) {
  // expected-error @+1 {{'nnx.fn.matmul' op lhs has element type 'f32', but rhs has 'f16'}}
  %0 = nnx.fn.matmul %a, %b : tensor<3x4xf32>, tensor<4x2xf16> -> tensor<3x2xf32>
  return
}

// -----

func.func @f(%a: tensor<?x3x4xf32>, %b: tensor<2x5xf32>) {
  // expected-error @+1 {{'nnx.fn.matmul' op contraction sizes differ: dim 2 of lhs has size 4, dim 1 of rhs has size 5}}
  %0 = nnx.fn.matmul %a, %b {transpose_b} : tensor<?x3x4xf32>, tensor<2x5xf32> -> tensor<?x3x2xf32>
  return
}

// -----

func.func @f(%a: tensor<?x?x4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'nnx.fn.matmul' op result dim 1 (m) has size 3, but dim 1 of lhs has size ?}}
  %0 = nnx.fn.matmul %a, %b : tensor<?x?x4xf32>, tensor<4x2xf32> -> tensor<?x3x2xf32>
  return
}

// -----

func.func @f(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'nnx.fn.matmul' op result dim 1 (n) has size 4, but dim 1 of rhs has size 2}}
  %0 = nnx.fn.matmul %a, %b : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<5x4x2xf32>) {
  // expected-error @+1 {{'nnx.fn.matmul' op dim 0 of lhs batch dims has size 2, which does not broadcast to size 5 of result dim 0}}
  %0 = nnx.fn.matmul %a, %b : tensor<2x3x4xf32>, tensor<5x4x2xf32> -> tensor<5x3x2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x64xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.reshape' op the size list has 3 entries, but the result has rank 2}}
  %0 = nnx.fn.reshape %x [%b, 4, 16] : tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @f(%x: tensor<?x64xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.reshape' op result dim 1 must be dynamic, as entry 1 of the size list is a value}}
  %0 = nnx.fn.reshape %x [4, %b] : tensor<?x64xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%x: tensor<?x64xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.reshape' op entry 1 of the size list is -1, a negative size}}
  %0 = nnx.fn.reshape %x [%b, -1] : tensor<?x64xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x64xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.reshape' op result dim 1 has size 32, but the size list says 64}}
  %0 = nnx.fn.reshape %x [%b, 64] : tensor<?x64xf32> -> tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'nnx.fn.reshape' op changes the element count from 64 to 60}}
  %0 = nnx.fn.reshape %x [4, 15] : tensor<4x16xf32> -> tensor<4x15xf32>
  return
}

// -----

func.func @f(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'nnx.fn.reshape' op the input has element type 'f32', but the result has 'f16'}}
  %0 = nnx.fn.reshape %x [64] : tensor<4x16xf32> -> tensor<64xf16>
  return
}

// -----

func.func @f(%kv: tensor<?x2x1x16xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.expand' op dim 1 of the input has size 2, which does not broadcast to size 4 of result dim 1}}
  %0 = nnx.fn.expand %kv [%b, 4, 2, 16] : tensor<?x2x1x16xf32> -> tensor<?x4x2x16xf32>
  return
}

// -----

func.func @f(%kv: tensor<?x2x16xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.expand' op the input has rank 3, more than the result's 2}}
  %0 = nnx.fn.expand %kv [%b, 16] : tensor<?x2x16xf32> -> tensor<?x16xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4x16xf32>) {
  // expected-error @+1 {{'nnx.fn.permute' op the permutation has 2 entries, the input rank 3 and the result rank 3; all three must agree}}
  %0 = nnx.fn.permute %x [1, 0] : tensor<?x4x16xf32> -> tensor<4x?x16xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4x16xf32>) {
  // expected-error @+1 {{'nnx.fn.permute' op entry 2 of the permutation (1) is out of range or repeated}}
  %0 = nnx.fn.permute %x [0, 1, 1] : tensor<?x4x16xf32> -> tensor<?x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4x16xf32>) {
  // expected-error @+1 {{'nnx.fn.permute' op result dim 1 must be input dim 2 (16), got 'tensor<?x4x16xf32>'}}
  %0 = nnx.fn.permute %x [0, 2, 1] : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.softmax' op dim 2 is out of range for rank 2}}
  %0 = nnx.fn.softmax %x {dim = 2 : i64} : tensor<?x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xi32>) {
  // expected-error @+1 {{'nnx.fn.softmax' op the input's elements must be floats, got 'i32'}}
  %0 = nnx.fn.softmax %x {dim = -1 : i64} : tensor<?x4xi32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.mean' op dim -3 is out of range for rank 2}}
  %0 = nnx.fn.mean %x {dims = array<i64: -3>} : tensor<?x4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.sum' op dim -1 is reduced twice}}
  %0 = nnx.fn.sum %x {dims = array<i64: 1, -1>} : tensor<?x4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.mean' op result type must be 'tensor<?x1xf32>', got 'tensor<?xf32>'}}
  %0 = nnx.fn.mean %x {dims = array<i64: 1>, keepdim} : tensor<?x4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xi32>) {
  // expected-error @+1 {{'nnx.fn.mean' op the input's elements must be floats, got 'i32'}}
  %0 = nnx.fn.mean %x {dims = array<i64: 1>} : tensor<?x4xi32> -> tensor<?xi32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.sum' op the input has element type 'f32', but the result has 'f64'}}
  %0 = nnx.fn.sum %x {dims = array<i64: 1>} : tensor<?x4xf32> -> tensor<?xf64>
  return
}

// -----

func.func @f(%x: tensor<?x4xi32>) {
  // expected-error @+1 {{'nnx.fn.gelu' op the input's elements must be floats, got 'i32'}}
  %0 = nnx.fn.gelu %x : tensor<?x4xi32>
  return
}

// -----

func.func @f(%x: tensor<?x4xi1>) {
  // expected-error @+1 {{'nnx.fn.relu' op the input's elements must be floats or integers other than i1, got 'i1'}}
  %0 = nnx.fn.relu %x : tensor<?x4xi1>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.dropout' op p must be in [0, 1], got 1.5}}
  %0 = nnx.fn.dropout %x {p = 1.5 : f64, train} : tensor<?x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xi32>) {
  // expected-error @+1 {{'nnx.fn.dropout' op the input's elements must be floats, got 'i32'}}
  %0 = nnx.fn.dropout %x {p = 0.5 : f64} : tensor<?x4xi32>
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{'nnx.fn.arange' op result must have rank 1, got 'tensor<?x1xi64>'}}
  %0 = nnx.fn.arange %n : tensor<?x1xi64>
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{'nnx.fn.arange' op the result's elements must be floats or integers other than i1, got 'i1'}}
  %0 = nnx.fn.arange %n : tensor<?xi1>
  return
}

// -----

func.func @f() {
  %n = arith.constant 4 : index
  // expected-error @+1 {{'nnx.fn.arange' op result has size 5, but n is 4}}
  %0 = nnx.fn.arange %n : tensor<5xi64>
  return
}

// -----

func.func @f(%x: tensor<?xf32>) {
  // expected-error @+1 {{'nnx.fn.tril' op input must have rank >= 2, got 'tensor<?xf32>'}}
  %0 = nnx.fn.tril %x : tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'nnx.fn.triu' op failed to verify that all of {input, result} have same type}}
  %0 = "nnx.fn.triu"(%x) : (tensor<?x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x64xf32>, %b: index) {
  // expected-error @+1 {{'nnx.fn.reshape' op the size list has 0 dynamic entries for 1 index values}}
  %0 = "nnx.fn.reshape"(%x, %b) <{static_shape = array<i64: 4, 16>}> : (tensor<?x64xf32>, index) -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nnx.fn.logical_and' op operand element types must be i1, got 'f32'}}
  %0 = nnx.fn.logical_and %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nnx.fn.logical_or' op result element type must be 'i1', got 'i8'}}
  %0 = nnx.fn.logical_or %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi8>
  return
}

// -----

func.func @f(%a: tensor<?x4xi1>, %b: tensor<3xi1>) {
  // expected-error @+1 {{'nnx.fn.logical_xor' op dim 0 of rhs has size 3, which does not broadcast to size 4 of result dim 1}}
  %0 = nnx.fn.logical_xor %a, %b : tensor<?x4xi1>, tensor<3xi1> -> tensor<?x4xi1>
  return
}

// -----

func.func @f(%x: tensor<?x8xi1>) {
  // expected-error @+1 {{'nnx.fn.amax' op the input's elements must be floats or integers other than i1, got 'i1'}}
  %0 = nnx.fn.amax %x {dims = array<i64: -1>} : tensor<?x8xi1> -> tensor<?xi1>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.amin' op result type must be 'tensor<?x1xf32>', got 'tensor<?xf32>'}}
  %0 = nnx.fn.amin %x {dims = array<i64: 1>, keepdim} : tensor<?x8xf32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.amax' op dim 2 is out of range for rank 2}}
  %0 = nnx.fn.amax %x {dims = array<i64: 2>} : tensor<?x8xf32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<?x2xf32>) {
  // expected-error @+1 {{'nnx.fn.gather' op the index's elements must be i64 or i32, got 'f32'}}
  %0 = nnx.fn.gather %x, %i {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'nnx.fn.gather' op the index must have the input's rank 2, got 'tensor<2xi64>'}}
  %0 = nnx.fn.gather %x, %i {dim = 1 : i64} : tensor<?x8xf32>, tensor<2xi64> -> tensor<2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<?x2xi64>) {
  // expected-error @+1 {{'nnx.fn.gather' op dim -3 is out of range for rank 2}}
  %0 = nnx.fn.gather %x, %i {dim = -3 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<?x2xi64>) {
  // expected-error @+1 {{'nnx.fn.gather' op result type must be 'tensor<?x2xf32>', got 'tensor<?x8xf32>'}}
  %0 = nnx.fn.gather %x, %i {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %i: tensor<5x2xi64>) {
  // expected-error @+1 {{'nnx.fn.gather' op dim 0 of the index has size 5, larger than the input's 4}}
  %0 = nnx.fn.gather %x, %i {dim = 1 : i64} : tensor<4x8xf32>, tensor<5x2xi64> -> tensor<5x2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<2x2xi64>) {
  // expected-error @+1 {{'nnx.fn.index_select' op the index must have rank 1, got 'tensor<2x2xi64>'}}
  %0 = nnx.fn.index_select %x, %i {dim = 0 : i64} : tensor<?x8xf32>, tensor<2x2xi64> -> tensor<2x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<?xi16>) {
  // expected-error @+1 {{'nnx.fn.index_select' op the index's elements must be i64 or i32, got 'i16'}}
  %0 = nnx.fn.index_select %x, %i {dim = 0 : i64} : tensor<?x8xf32>, tensor<?xi16> -> tensor<?x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'nnx.fn.index_select' op result type must be 'tensor<?x3xf32>', got 'tensor<3x8xf32>'}}
  %0 = nnx.fn.index_select %x, %i {dim = -1 : i64} : tensor<?x8xf32>, tensor<3xi64> -> tensor<3x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.topk' op k (9) is larger than dim 1 of the input (8)}}
  %v, %i = nnx.fn.topk %x {k = 9 : i64, dim = -1 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x9xf32>, tensor<?x9xi64>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.topk' op k must not be negative, got -1}}
  %v, %i = nnx.fn.topk %x {k = -1 : i64, dim = -1 : i64} : tensor<?x8xf32> -> tensor<?x1xf32>, tensor<?x1xi64>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.topk' op the indices' type must be 'tensor<?x2xi64>', got 'tensor<?x2xi32>'}}
  %v, %i = nnx.fn.topk %x {k = 2 : i64, dim = 1 : i64} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.topk' op the values' type must be 'tensor<?x2xf32>', got 'tensor<2x8xf32>'}}
  %v, %i = nnx.fn.topk %x {k = 2 : i64, dim = 1 : i64} : tensor<?x8xf32> -> tensor<2x8xf32>, tensor<?x2xi64>
  return
}

// -----

func.func @f(%x: tensor<?x8xi1>) {
  // expected-error @+1 {{'nnx.fn.topk' op the input's elements must be floats or integers other than i1, got 'i1'}}
  %v, %i = nnx.fn.topk %x {k = 2 : i64, dim = 1 : i64} : tensor<?x8xi1> -> tensor<?x2xi1>, tensor<?x2xi64>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'nnx.fn.cumsum' op dim 2 is out of range for rank 2}}
  %0 = nnx.fn.cumsum %x {dim = 2 : i64} : tensor<?x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xi1>) {
  // expected-error @+1 {{'nnx.fn.cumsum' op the input's elements must be floats or integers other than i1, got 'i1'}}
  %0 = nnx.fn.cumsum %x {dim = 1 : i64} : tensor<?x8xi1>
  return
}

// -----

func.func @f(%x: tensor<?x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op takes (N, C, H, W) input, got 'tensor<?x8x8xf32>'}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x8x8xf32> -> tensor<?x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op 'kernel_size' must be two sizes (H, W), each at least 1}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op 'dilation' must be two sizes (H, W), each at least 1}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 0, 1>} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.avg_pool2d' op 'stride' must be two sizes (H, W), each at least 1}}
  %0 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 0, 2>, padding = array<i64: 0, 0>} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.avg_pool2d' op 'padding' must be two sizes (H, W), each at least 0}}
  %0 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, -1>} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.avg_pool2d' op padding 2 in dim 3 is more than half the kernel size 3}}
  %0 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 2>} : tensor<?x3x8x8xf32> -> tensor<?x3x8x10xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x2x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op has a window (3) larger than the padded input (2 + 2 * 0 in dim 2)}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x3x2x8xf32> -> tensor<?x3x0x6xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op result type must be 'tensor<?x3x4x4xf32>', got 'tensor<?x3x?x4xf32>'}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x3x8x8xf32> -> tensor<?x3x?x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xi32>) {
  // expected-error @+1 {{'nnx.fn.avg_pool2d' op the input's elements must be floats, got 'i32'}}
  %0 = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<?x3x8x8xi32> -> tensor<?x3x4x4xi32>
  return
}

// -----

// A static size that is not a multiple pools by PyTorch's windows; beside a
// dynamic one, it is refused (the run-time split needs multiples).
func.func @f(%x: tensor<?x3x7x?xf32>) {
  // expected-error @+1 {{'nnx.fn.adaptive_avg_pool2d' op needs an input size that is a multiple of the output size where the other spatial size is dynamic, got 7 for 2 in dim 2}}
  %0 = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 2, 2>} : tensor<?x3x7x?xf32> -> tensor<?x3x2x2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.adaptive_avg_pool2d' op 'output_size' must be two sizes (H, W), each at least 1}}
  %0 = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 0, 2>} : tensor<?x3x8x8xf32> -> tensor<?x3x0x2xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.adaptive_avg_pool2d' op result type must be 'tensor<?x3x2x2xf32>', got 'tensor<?x3x2x4xf32>'}}
  %0 = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 2, 2>} : tensor<?x3x8x8xf32> -> tensor<?x3x2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op stride 9223372036854775807 in dim 3 is more than 2^62 (4611686018427387904)}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 9223372036854775807>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x3x8x8xf32> -> tensor<?x3x4x1xf32>
  return
}

// -----

func.func @f(%a: index) {
  // expected-error @+1 {{'nnx.fn.guard' op needs a message saying what the export assumed}}
  nnx.fn.guard eq, %a, %a, "" : index
  return
}

// -----

func.func @f(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'nnx.fn.max_pool2d' op window in dim 2 spans more than 2^60 (1152921504606846976) with its padding: 2 * padding 0 + dilation 9223372036854775807 * (kernel_size 2 - 1) + 1}}
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 9223372036854775807, 1>} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  return
}

// -----

func.func @f(%a: index, %b: i64) {
  // expected-error @+1 {{'nnx.fn.guard' op failed to verify that all of {lhs, rhs} have same type}}
  "nnx.fn.guard"(%a, %b) <{predicate = 0 : i64, message = "m"}> : (index, i64) -> ()
  return
}

// -----

func.func @f(%a: f32) {
  // expected-error @+1 {{'nnx.fn.guard' op operand #0 must be signless integer or index, but got 'f32'}}
  "nnx.fn.guard"(%a, %a) <{predicate = 0 : i64, message = "m"}> : (f32, f32) -> ()
  return
}
