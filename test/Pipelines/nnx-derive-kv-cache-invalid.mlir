// nnx-derive-kv-cache's refusals: each names the op at fault, and nothing
// changes (the refused module keeps only its @forward).
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-derive-kv-cache=max-length=16
// The option is the module's (every split gets it), so it is checked apart.
// RUN: not nnx-opt %s -split-input-file --nnx-derive-kv-cache=max-length=0 \
// RUN:   2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: nnx-derive-kv-cache: max-length must be positive, got 0

// A mask that lets each position see the next one: not causal.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  // expected-note @below {{the scores are computed here}}
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 2 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot prove this attention causal: its masks leave a later key (j > i) visible to query i}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// A norm over the sequence mixes positions.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: this op mixes positions (it reduces dim 1, the sequence, outside an attention core, as a norm over the sequence does): a cached decode cannot compute it}}
  %mu = nnx.fn.mean %h {dims = array<i64: 1>, keepdim} : tensor<?x?xf32> -> tensor<?x1xf32>
  %hn = nnx.fn.sub %h, %mu : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %hn [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Positions 0, 2, 4, ... from arange(2T): not arange(T), which shifts.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %c2 = arith.constant 2 : index
  %t2 = arith.muli %t, %c2 : index
  // expected-error @below {{nnx-derive-kv-cache: cannot shift these positions by the cache length: the arange's length is not the sequence length T}}
  %pos2 = nnx.fn.arange %t2 {nnx.source = "arange_0"} : tensor<?xi64>
  %pos = tensor.extract_slice %pos2[0] [%t] [2] : tensor<?xi64> to tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// No mask: a bidirectional encoder.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  // expected-note @below {{the scores are computed here}}
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: the attention core has no causal mask (a bidirectional encoder): every position attends to later ones, which a cache cannot give}}
  %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// No attention at all: nothing to cache.
// expected-error @below {{nnx-derive-kv-cache: the forward has no attention core (`softmax(q @ k^T ...) @ v`): nothing to cache}}
func.func @forward(%ids: tensor<?x?xi64>) -> tensor<?x?xf32> {
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  return %f : tensor<?x?xf32>
}

// -----

// The first input is not token ids.
// expected-error @below {{nnx-derive-kv-cache: the forward's first input is not token ids (`tensor<B x ? x i64>`)}}
func.func @forward(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %x : tensor<?x?xf32>
}

// -----

// A bias over the key positions (ALiBi) and no mask: still bidirectional.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  // expected-note @below {{the scores are computed here}}
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %kp = nnx.fn.arange %t : tensor<?xi64>
  %kf = arith.sitofp %kp : tensor<?xi64> to tensor<?xf32>
  %bias = nnx.fn.reshape %kf [1, %t] : tensor<?xf32> -> tensor<1x?xf32>
  %a = nnx.fn.add %s, %bias : tensor<?x2x?x?xf32>, tensor<1x?xf32> -> tensor<?x2x?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot prove this attention causal: its masks leave a later key (j > i) visible to query i}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Positions read from a table sliced to T from row 1 (`freqs[1:T + 1]`):
// only `table[:T]` shifts.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}, %table: tensor<16xf32> {bufferization.writable = false, nnx.parameter = "table"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot shift these positions by the cache length: a table sliced to the sequence length T shifts only as `table[:T]` along one dim whose rows reach the data one per position (through reshapes and elementwise ops)}}
  %posf = tensor.extract_slice %table[1] [%t] [1] : tensor<16xf32> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// A table sliced to T whose rows are summed by a matmul before they reach
// the data: not one row per position.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}, %table2: tensor<16x4xf32> {bufferization.writable = false, nnx.parameter = "table"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot shift these positions by the cache length: a table sliced to the sequence length T shifts only as `table[:T]` along one dim whose rows reach the data one per position (through reshapes and elementwise ops)}}
  %rows = tensor.extract_slice %table2[0, 0] [%t, 4] [1, 1] : tensor<16x4xf32> to tensor<?x4xf32>
  %rowst = nnx.fn.permute %rows [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  // expected-note @below {{its rows are read here}}
  %gram = nnx.fn.matmul %rows, %rowst : tensor<?x4xf32>, tensor<4x?xf32> -> tensor<?x?xf32>
  %h = nnx.fn.add %f, %gram : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero[%t, %t] : tensor<?x?xf32>
  %mask = nnx.fn.where %upper, %ninf, %zeros {nnx.source = "masked_fill_0"} : tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// A registered -inf buffer that lets each position see the next one
// (`triu(full(-inf), 2)`): not causal.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}, %freqs: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "freqs"}, %buf: tensor<4x4xf32> {bufferization.writable = false, nnx.parameter = "mask"}) -> tensor<?x?x8xf32> attributes {nnx.parameters = [dense<1.0> : tensor<4xf32>, dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>, dense<[[0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %posf = tensor.extract_slice %freqs[0] [%t] [1] : tensor<4xf32> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  // expected-note @below {{the scores are computed here}}
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %mask = tensor.extract_slice %buf[0, 0] [%t, %t] [1, 1] : tensor<4x4xf32> to tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot prove this attention causal: its masks leave a later key (j > i) visible to query i}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// The causal mask transposed (a query sees the later keys only): the proof
// reads the permutation.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  // expected-note @below {{the scores are computed here}}
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %lower = nnx.fn.permute %upper [1, 0] : tensor<?x?xi1> -> tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = nnx.fn.where %lower, %ninf, %s : tensor<?x?xi1>, tensor<f32>, tensor<?x2x?x?xf32> -> tensor<?x2x?x?xf32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %a = nnx.fn.mul %m, %half : tensor<?x2x?x?xf32>, tensor<f32> -> tensor<?x2x?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot prove this attention causal: its masks leave a later key (j > i) visible to query i}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Soft-capping after the mask (`tanh(x / 30) * 30`): tanh brings -inf back
// to -30, so a later key stays visible.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  // expected-note @below {{the scores are computed here}}
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = nnx.fn.where %upper, %ninf, %s : tensor<?x?xi1>, tensor<f32>, tensor<?x2x?x?xf32> -> tensor<?x2x?x?xf32>
  %a = math.tanh %m : tensor<?x2x?x?xf32>
  // expected-error @below {{nnx-derive-kv-cache: cannot prove this attention causal: its masks leave a later key (j > i) visible to query i}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// A buffer sliced at a run-time offset (`mask[T - 1:2 T - 1]`): its rows
// change with the sequence length, not only with the positions.
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}, %buf: tensor<16x16xf32> {bufferization.writable = false, nnx.parameter = "mask"}) -> tensor<?x?x8xf32> attributes {nnx.parameters = [dense<1.0> : tensor<4xf32>, dense<0.0> : tensor<16x16xf32>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %off = arith.subi %t, %c1 : index
  // expected-error @below {{nnx-derive-kv-cache: cannot read this attention mask as a function of the query and key positions alone: a slice at a run-time offset or stride}}
  %mask = tensor.extract_slice %buf[%off, 0] [%t, %t] [1, 1] : tensor<16x16xf32> to tensor<?x?xf32>
  %a = nnx.fn.add %s, %mask : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
  // expected-note @below {{the softmax it masks}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// A mask reshaped so that its elements move (`[T, T] -> [T * T / T, T]`
// is read only as an (un)squeeze).
func.func @forward(%ids: tensor<?x?xi64>, %w: tensor<4xf32> {bufferization.writable = false, nnx.parameter = "w"}) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %f = arith.sitofp %ids : tensor<?x?xi64> to tensor<?x?xf32>
  %pos = nnx.fn.arange %t {nnx.source = "arange_0"} : tensor<?xi64>
  %posf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %h = nnx.fn.add %f, %posf : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %x = nnx.fn.reshape %h [%b, 1, %t, 1] : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %q = nnx.fn.mul %x, %w : tensor<?x1x?x1xf32>, tensor<4xf32> -> tensor<?x1x?x4xf32>
  %k = nnx.fn.expand %q [%b, 2, %t, 4] : tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %kt = nnx.fn.permute %k [0, 1, 3, 2] : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
  %s = nnx.fn.matmul %k, %kt {nnx.source = "matmul_0"} : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
  %true = arith.constant true
  %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
  %upper = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
  %flat = arith.muli %t, %t : index
  %line = nnx.fn.reshape %upper [%flat] : tensor<?x?xi1> -> tensor<?xi1>
  // expected-error @below {{nnx-derive-kv-cache: cannot read this attention mask as a function of the query and key positions alone: a reshape other than an (un)squeeze moves its elements}}
  %sq = nnx.fn.reshape %line [%t, %t] : tensor<?xi1> -> tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %a = nnx.fn.where %sq, %ninf, %s : tensor<?x?xi1>, tensor<f32>, tensor<?x2x?x?xf32> -> tensor<?x2x?x?xf32>
  // expected-note @below {{the softmax it masks}}
  %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
  %o = nnx.fn.matmul %p, %k {nnx.source = "matmul_1"} : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %op = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %y = nnx.fn.reshape %op [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
