// nnx-widen on a Linear inside a custom module, proven on its forward:
// a GELU MLP (c_fc -> gelu -> dropout -> c_proj) and a SwiGLU MLP, whose
// up_proj is widened in lockstep with gate_proj. The types of every value
// on the path follow the new width; nothing else changes.
// RUN: split-file %s %t
// RUN: nnx-opt %t/gelu.mlir --nnx-widen="layer=c_fc width=3 seed=0" | FileCheck %s --check-prefix=GELU
// RUN: nnx-opt %t/swiglu.mlir --nnx-widen="layer=gate_proj width=3 seed=0" | FileCheck %s --check-prefix=SWIGLU
// RUN: nnx-opt %t/swiglu.mlir --nnx-widen="layer=up_proj width=3 seed=0 init=zero" | FileCheck %s --check-prefix=ZERO
// RUN: nnx-opt %t/selfgate.mlir --nnx-widen="layer=fc width=3" | FileCheck %s --check-prefix=SELFGATE
// RUN: not nnx-opt %t/gelu.mlir --nnx-widen="layer=c_fc width=3 init=random" 2>&1 | FileCheck %s --check-prefix=BADINIT

// Unit 2 replicates unit 0: its row and bias entry are copies, and unit 0's
// two consumer columns are halved.
// GELU:      nnx.linear @c_fc {bias = dense<[1.000000e-01, 2.000000e-01, 1.000000e-01]> : tensor<3xf32>, weight = dense<{{\[\[}}1.000000e+00], [2.000000e+00], [1.000000e+00]]> : tensor<3x1xf32>}
// GELU:      nnx.linear @c_proj {weight = dense<{{\[\[}}1.500000e+00, 4.000000e+00, 1.500000e+00]]> : tensor<1x3xf32>}
// GELU:      nnx.call @c_fc(%{{.*}}) : (tensor<?x?x1xf32>) -> tensor<?x?x3xf32>
// GELU:      tensor.dim %{{.*}}, %c0 : tensor<?x?x3xf32>
// GELU:      nnx.fn.gelu %{{.*}} : tensor<?x?x3xf32>
// GELU:      nnx.call @drop(%{{.*}}) : (tensor<?x?x3xf32>) -> tensor<?x?x3xf32>
// GELU:      nnx.fn.mul %{{.*}}, %{{.*}} : tensor<?x?x3xf32>, tensor<f32> -> tensor<?x?x3xf32>
// GELU:      nnx.call @c_proj(%{{.*}}) : (tensor<?x?x3xf32>) -> tensor<?x?x1xf32>

// SWIGLU:      nnx.linear @gate_proj {weight = dense<{{\[\[}}1.000000e+00], [2.000000e+00], [1.000000e+00]]> : tensor<3x1xf32>}
// SWIGLU-NEXT: nnx.linear @up_proj {weight = dense<{{\[\[}}5.000000e+00], [6.000000e+00], [5.000000e+00]]> : tensor<3x1xf32>}
// SWIGLU-NEXT: nnx.linear @down_proj {weight = dense<{{\[\[}}1.500000e+00, 4.000000e+00, 1.500000e+00]]> : tensor<1x3xf32>}
// SWIGLU:      nnx.call @gate_proj(%{{.*}}) : (tensor<?x?x1xf32>) -> tensor<?x?x3xf32>
// SWIGLU-NEXT: nnx.call @act_fn(%{{.*}}) : (tensor<?x?x3xf32>) -> tensor<?x?x3xf32>
// SWIGLU-NEXT: nnx.call @up_proj(%{{.*}}) : (tensor<?x?x1xf32>) -> tensor<?x?x3xf32>
// SWIGLU-NEXT: nnx.fn.mul %{{.*}}, %{{.*}} : tensor<?x?x3xf32>, tensor<?x?x3xf32> -> tensor<?x?x3xf32>
// SWIGLU-NEXT: nnx.call @down_proj(%{{.*}}) : (tensor<?x?x3xf32>) -> tensor<?x?x1xf32>

// init=zero: the old columns are kept, the new unit's column is zero.
// ZERO:      nnx.linear @gate_proj {weight = dense<{{\[\[}}1.000000e+00], [2.000000e+00], [1.000000e+00]]> : tensor<3x1xf32>}
// ZERO-NEXT: nnx.linear @up_proj {weight = dense<{{\[\[}}5.000000e+00], [6.000000e+00], [5.000000e+00]]> : tensor<3x1xf32>}
// ZERO-NEXT: nnx.linear @down_proj {weight = dense<{{\[\[}}3.000000e+00, 4.000000e+00, 0.000000e+00]]> : tensor<1x3xf32>}

// Two elementwise paths from the same units meet again (a product of two
// functions of h): no sibling, one region.
// SELFGATE:      nnx.fn.mul %{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
// SELFGATE-NEXT: nnx.call @proj(%{{.*}}) : (tensor<?x3xf32>) -> tensor<?x1xf32>

// BADINIT: error: nnx-widen: option init='random' is not one of 'copy', 'zero'

//--- gelu.mlir
nnx.model @m inputs(tensor<?x?x1xf32>) {
  nnx.module @mlp class = "GPT2MLP" {
    nnx.linear @c_fc {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, bias = dense<[0.1, 0.2]> : tensor<2xf32>}
    nnx.linear @c_proj {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
    nnx.dropout @drop {p = 0.1 : f64}
    nnx.forward @forward(%x: tensor<?x?x1xf32>) -> tensor<?x?x1xf32> {
      %h = nnx.call @c_fc(%x) : (tensor<?x?x1xf32>) -> tensor<?x?x2xf32>
      %c0 = arith.constant 0 : index
      %d0 = tensor.dim %h, %c0 : tensor<?x?x2xf32>
      %g = nnx.fn.gelu %h : tensor<?x?x2xf32>
      %d = nnx.call @drop(%g) : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
      %s = arith.constant dense<1.0> : tensor<f32>
      %m = nnx.fn.mul %d, %s : tensor<?x?x2xf32>, tensor<f32> -> tensor<?x?x2xf32>
      %y = nnx.call @c_proj(%m) : (tensor<?x?x2xf32>) -> tensor<?x?x1xf32>
      nnx.return %y : tensor<?x?x1xf32>
    }
  }
}

//--- swiglu.mlir
nnx.model @m inputs(tensor<?x?x1xf32>) {
  nnx.module @mlp class = "LlamaMLP" {
    nnx.linear @gate_proj {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
    nnx.linear @up_proj {weight = dense<[[5.0], [6.0]]> : tensor<2x1xf32>}
    nnx.linear @down_proj {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
    nnx.silu @act_fn
    nnx.forward @forward(%x: tensor<?x?x1xf32>) -> tensor<?x?x1xf32> {
      %g = nnx.call @gate_proj(%x) : (tensor<?x?x1xf32>) -> tensor<?x?x2xf32>
      %a = nnx.call @act_fn(%g) : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
      %u = nnx.call @up_proj(%x) : (tensor<?x?x1xf32>) -> tensor<?x?x2xf32>
      %m = nnx.fn.mul %a, %u : tensor<?x?x2xf32>, tensor<?x?x2xf32> -> tensor<?x?x2xf32>
      %y = nnx.call @down_proj(%m) : (tensor<?x?x2xf32>) -> tensor<?x?x1xf32>
      nnx.return %y : tensor<?x?x1xf32>
    }
  }
}

//--- selfgate.mlir
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.module @net class = "SelfGated" {
    nnx.linear @fc {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
    nnx.linear @proj {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
    nnx.forward @forward(%x: tensor<?x1xf32>) -> tensor<?x1xf32> {
      %h = nnx.call @fc(%x) : (tensor<?x1xf32>) -> tensor<?x2xf32>
      %a = nnx.fn.gelu %h : tensor<?x2xf32>
      %a2 = math.tanh %a : tensor<?x2xf32>
      %b = nnx.fn.sigmoid %h : tensor<?x2xf32>
      %b2 = math.exp %b : tensor<?x2xf32>
      %m = nnx.fn.mul %b2, %a2 : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
      %y = nnx.call @proj(%m) : (tensor<?x2xf32>) -> tensor<?x1xf32>
      nnx.return %y : tensor<?x1xf32>
    }
  }
}
