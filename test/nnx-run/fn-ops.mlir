// The nnx.fn ops executed through nnx-run (nnx-build-forward, then the CPU
// pipeline with nnx-lower-functional) on an attention block whose input has
// batch AND sequence dynamic: one IR file run at two (batch, seq) pairs, every
// output compared with NumPy (Inputs/fn_ops.py) at rtol = atol = 1e-5, masks
// exactly, -inf exactly. Covered: broadcasting binary ops with rank-0
// scalars, comparisons, where with -inf, matmul with and without transpose_b
// and with batch broadcasting, reshape (split last dim, merge last dims,
// unsqueeze) and permute, GQA expand, softmax over dims -1 and 1 with -inf
// entries, mean keepdim, sum, a causal mask from arange / tril / triu of the
// run-time sequence length, tensor.splat / tensor.concat / extract_slice with
// a dynamic size and offset (rank-reducing), gelu tanh, silu, and Linears on
// rank-3 inputs with two dynamic dims.

// RUN: %python %S/Inputs/fn_ops.py make %t 2 5
// RUN: nnx-run %s --input %t/x_2_5.npy \
// RUN:   --output %t/same_2_5.npy --output %t/masked_2_5.npy --output %t/masked2_2_5.npy --output %t/p_2_5.npy \
// RUN:   --output %t/p1_2_5.npy --output %t/tail_2_5.npy --output %t/last_2_5.npy --output %t/tot_2_5.npy \
// RUN:   --output %t/proj_2_5.npy --output %t/pos_2_5.npy
// RUN: %python %S/Inputs/fn_ops.py check %t 2 5 | FileCheck %s --check-prefix=OK25
// OK25: ok 2 5

// RUN: %python %S/Inputs/fn_ops.py make %t 3 7
// RUN: nnx-run %s --input %t/x_3_7.npy \
// RUN:   --output %t/same_3_7.npy --output %t/masked_3_7.npy --output %t/masked2_3_7.npy --output %t/p_3_7.npy \
// RUN:   --output %t/p1_3_7.npy --output %t/tail_3_7.npy --output %t/last_3_7.npy --output %t/tot_3_7.npy \
// RUN:   --output %t/proj_3_7.npy --output %t/pos_3_7.npy
// RUN: %python %S/Inputs/fn_ops.py check %t 3 7 | FileCheck %s --check-prefix=OK37
// OK37: ok 3 7

nnx.model @fn inputs(tensor<?x?x8xf32>) {
  nnx.module @root class = "FnBlock" {
    nnx.linear @q {weight = dense<[[-0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125], [0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875], [0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125], [-0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375], [0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625], [-0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25], [-0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25], [0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625]]> : tensor<8x8xf32>,
                   bias = dense<[-0.25, 0.0625, 0.375, -0.125, 0.1875, -0.3125, 0.0, 0.3125]> : tensor<8xf32>}
    nnx.linear @k {weight = dense<[[-0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375], [0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625], [-0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25], [-0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25]]> : tensor<4x8xf32>}
    nnx.linear @v {weight = dense<[[-0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125], [0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0], [-0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125], [0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875]]> : tensor<4x8xf32>}
    nnx.linear @o {weight = dense<[[-0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25], [0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625], [-0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375], [0.0625, -0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125], [0.375, 0.0, -0.375, 0.0625, -0.3125, 0.125, -0.25, 0.1875], [-0.125, 0.3125, -0.0625, 0.375, 0.0, -0.375, 0.0625, -0.3125], [0.1875, -0.1875, 0.25, -0.125, 0.3125, -0.0625, 0.375, 0.0], [-0.3125, 0.125, -0.25, 0.1875, -0.1875, 0.25, -0.125, 0.3125]]> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x?x8xf32>)
        -> (tensor<?x?xi1>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>,
            tensor<?x2x?x?xf32>, tensor<?x?x?x2xf32>, tensor<?x?x16xf32>,
            tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x2x?x3xf32>,
            tensor<?x?x8xi1>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
      %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
      %q = nnx.call @q(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      %k = nnx.call @k(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
      %v = nnx.call @v(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
      // Two query heads of 4; one key/value head repeated for both (GQA).
      %qh = nnx.fn.reshape %q [%b, %t, 2, 4] : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
      %qp = nnx.fn.permute %qh [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
      %kh = nnx.fn.reshape %k [%b, 1, 1, %t, 4] : tensor<?x?x4xf32> -> tensor<?x1x1x?x4xf32>
      %ke = nnx.fn.expand %kh [%b, 1, 2, %t, 4] : tensor<?x1x1x?x4xf32> -> tensor<?x1x2x?x4xf32>
      %kr = nnx.fn.reshape %ke [%b, 2, %t, 4] : tensor<?x1x2x?x4xf32> -> tensor<?x2x?x4xf32>
      %vh = nnx.fn.reshape %v [%b, %t, 1, 4] : tensor<?x?x4xf32> -> tensor<?x?x1x4xf32>
      %vp = nnx.fn.permute %vh [0, 2, 1, 3] : tensor<?x?x1x4xf32> -> tensor<?x1x?x4xf32>
      %s = nnx.fn.matmul %qp, %kr {transpose_b} : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x?xf32>
      %half = arith.constant dense<5.000000e-01> : tensor<f32>
      %ss = nnx.fn.mul %s, %half : tensor<?x2x?x?xf32>, tensor<f32> -> tensor<?x2x?x?xf32>
      // The causal mask, from arange and from tril of ones: the same.
      %ar = nnx.fn.arange %t : tensor<?xi64>
      %row = nnx.fn.reshape %ar [%t, 1] : tensor<?xi64> -> tensor<?x1xi64>
      %col = nnx.fn.reshape %ar [1, %t] : tensor<?xi64> -> tensor<1x?xi64>
      %allowed = nnx.fn.le %col, %row : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
      %true = arith.constant true
      %ones = tensor.splat %true[%t, %t] : tensor<?x?xi1>
      %tril = nnx.fn.tril %ones {diagonal = 0 : i64} : tensor<?x?xi1>
      %same = nnx.fn.eq %allowed, %tril : tensor<?x?xi1>, tensor<?x?xi1> -> tensor<?x?xi1>
      %m4 = nnx.fn.reshape %allowed [1, 1, %t, %t] : tensor<?x?xi1> -> tensor<1x1x?x?xi1>
      %ninf = arith.constant dense<0xFF800000> : tensor<f32>
      %masked = nnx.fn.where %m4, %ss, %ninf : tensor<1x1x?x?xi1>, tensor<?x2x?x?xf32>, tensor<f32> -> tensor<?x2x?x?xf32>
      // The additive mask of HF models: full(-inf).triu(1).
      %ninf_s = arith.constant 0xFF800000 : f32
      %full = tensor.splat %ninf_s[%t, %t] : tensor<?x?xf32>
      %triu = nnx.fn.triu %full {diagonal = 1 : i64} : tensor<?x?xf32>
      %masked2 = nnx.fn.add %ss, %triu : tensor<?x2x?x?xf32>, tensor<?x?xf32> -> tensor<?x2x?x?xf32>
      %p = nnx.fn.softmax %masked {dim = -1 : i64} : tensor<?x2x?x?xf32>
      %mt = nnx.fn.permute %masked [0, 3, 2, 1] : tensor<?x2x?x?xf32> -> tensor<?x?x?x2xf32>
      %p1 = nnx.fn.softmax %mt {dim = 1 : i64} : tensor<?x?x?x2xf32>
      // Value heads broadcast over the query heads (batch dim 1 vs 2).
      %ctx = nnx.fn.matmul %p, %vp : tensor<?x2x?x?xf32>, tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
      %cp = nnx.fn.permute %ctx [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
      %cm = nnx.fn.reshape %cp [%b, %t, 8] : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
      %o = nnx.call @o(%cm) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      %h = nnx.fn.add %x, %o : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
      // A layer norm spelled out: mean keepdim, pow, div by sqrt.
      %mu = nnx.fn.mean %h {dims = array<i64: -1>, keepdim} : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
      %dc = nnx.fn.sub %h, %mu : tensor<?x?x8xf32>, tensor<?x?x1xf32> -> tensor<?x?x8xf32>
      %two = arith.constant dense<2.000000e+00> : tensor<f32>
      %sq = nnx.fn.pow %dc, %two : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xf32>
      %var = nnx.fn.mean %sq {dims = array<i64: 2>, keepdim} : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
      %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
      %ve = nnx.fn.add %var, %eps : tensor<?x?x1xf32>, tensor<f32> -> tensor<?x?x1xf32>
      %sd = math.sqrt %ve : tensor<?x?x1xf32>
      %n = nnx.fn.div %dc, %sd : tensor<?x?x8xf32>, tensor<?x?x1xf32> -> tensor<?x?x8xf32>
      %g = nnx.fn.gelu %n {approximate = #nnx.gelu_approximation<tanh>} : tensor<?x?x8xf32>
      %si = nnx.fn.silu %n : tensor<?x?x8xf32>
      %gs = nnx.fn.maximum %g, %si : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
      // cat, x[:, 1:], x[:, -1] (a dynamic size and a dynamic offset).
      %cat = tensor.concat dim(2) %x, %gs : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x16xf32>
      %tm1 = arith.subi %t, %c1 : index
      %tail = tensor.extract_slice %cat[0, 1, 0] [%b, %tm1, 16] [1, 1, 1] : tensor<?x?x16xf32> to tensor<?x?x16xf32>
      %last = tensor.extract_slice %cat[0, %tm1, 0] [%b, 1, 16] [1, 1, 1] : tensor<?x?x16xf32> to tensor<?x16xf32>
      %tot = nnx.fn.sum %tail {dims = array<i64: 1>} : tensor<?x?x16xf32> -> tensor<?x16xf32>
      %w3 = arith.constant dense<[[[[0.0, -0.125, -0.25], [-0.25, -0.375, 0.3125], [0.3125, 0.1875, 0.0625], [0.0625, -0.0625, -0.1875]], [[-0.375, 0.3125, 0.1875], [0.1875, 0.0625, -0.0625], [-0.0625, -0.1875, -0.3125], [-0.3125, 0.375, 0.25]]]]> : tensor<1x2x4x3xf32>
      %proj = nnx.fn.matmul %ctx, %w3 : tensor<?x2x?x4xf32>, tensor<1x2x4x3xf32> -> tensor<?x2x?x3xf32>
      %zero = arith.constant dense<0.000000e+00> : tensor<f32>
      %pos = nnx.fn.gt %x, %zero : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xi1>
      nnx.return %same, %masked, %masked2, %p, %p1, %tail, %last, %tot, %proj, %pos
          : tensor<?x?xi1>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>,
            tensor<?x2x?x?xf32>, tensor<?x?x?x2xf32>, tensor<?x?x16xf32>,
            tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x2x?x3xf32>,
            tensor<?x?x8xi1>
    }
  }
}
