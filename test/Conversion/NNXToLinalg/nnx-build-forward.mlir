// RUN: nnx-opt %s -split-input-file --nnx-build-forward=parameters=constants | FileCheck %s

// Linear: a linalg.matmul reading the weight as stored (out x in) through
// its indexing maps, the bias broadcast into the matmul's init; the batch
// dim stays dynamic and the model is erased.
// CHECK-DAG:   #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-NOT: nnx.model
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>) -> tensor<?x2xf32>
// CHECK-SAME:      attributes {llvm.emit_c_interface}
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>
// CHECK:         %[[B:.*]] = arith.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK:         %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:         %[[Y:.*]] = linalg.matmul indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]] ins(%[[X]], %[[W]] : tensor<?x4xf32>, tensor<2x4xf32>) outs(%[[INIT]] : tensor<?x2xf32>)
// CHECK:         return %[[Y]] : tensor<?x2xf32>
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.linear @fc {weight = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>,
                  bias = dense<[0.5, -0.5]> : tensor<2xf32>}
}

// -----

// Linear on a rank-3 input without bias: collapse, matmul on a zero init,
// expand back. The element type comes from the parameters (f64 here).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x3x4xf64>) -> tensor<?x3x2xf64>
// CHECK:         %[[W:.*]] = arith.constant dense<1.000000e+00> : tensor<2x4xf64>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x4xf64>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x3x4xf64> into tensor<?x4xf64>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<?x2xf64>)
// CHECK:         %[[Y:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[C]], %[[W]] : tensor<?x4xf64>, tensor<2x4xf64>) outs(%[[Z]] : tensor<?x2xf64>)
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [%[[N]], 3, 2] : tensor<?x2xf64> into tensor<?x3x2xf64>
// CHECK:         return %[[E]]
nnx.model @m inputs(tensor<?x3x4xf64>) {
  nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf64>}
}

// -----

// Linear with two dynamic leading dims: the rows folded into one and the
// result unfolded with tensor.reshape (a shape operand), never a
// collapse/expand of two dynamic dims (MLIR 22.1's expand-strided-metadata
// crashes on a memref.expand_shape of two dynamic dims, llvm-project
// #186830), so the Linear is still one 2-D linalg.matmul.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x?x4xf32>) -> tensor<?x?x2xf32>
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[T:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[N:.*]] = arith.muli %[[B]], %[[T]] : index
// CHECK:         %[[S:.*]] = tensor.from_elements %[[N]], %c4 : tensor<2xindex>
// CHECK:         %[[X2:.*]] = tensor.reshape %[[X]](%[[S]]) : (tensor<?x?x4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
// CHECK:         %[[Y:.*]] = linalg.matmul {{.*}} ins(%[[X2]], %{{.*}} : tensor<?x4xf32>, tensor<2x4xf32>)
// CHECK:         %[[S3:.*]] = tensor.from_elements %[[B]], %[[T]], %c2 : tensor<3xindex>
// CHECK:         %[[R:.*]] = tensor.reshape %[[Y]](%[[S3]]) : (tensor<?x2xf32>, tensor<3xindex>) -> tensor<?x?x2xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return %[[R]]
nnx.model @m inputs(tensor<?x?x4xf32>) {
  nnx.linear @fc {weight = dense<1.0> : tensor<2x4xf32>}
}

// -----

// Embedding: a check of the ids (the first out-of-range position, as
// INT64_MAX - p, and its id become results after the output), then a gather
// of rows that clamps the ids into the table.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[IDS:.*]]: tensor<?x5xi64>) -> (tensor<?x5x3xf32>, tensor<i64>, tensor<i64>)
// CHECK-SAME:      nnx.index_checks = [{bound = 10 : i64, input = 0 : i64, layer = "<root>", op = "nnx.embedding"}]
// CHECK:         %[[T:.*]] = arith.constant dense<1.000000e+00> : tensor<10x3xf32>
// CHECK:         %[[CHECK:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[IDS]] : tensor<?x5xi64>) outs(%{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>)
// CHECK:           arith.cmpi slt, %{{.*}}, %c0_i64
// CHECK:           arith.cmpi sge, %{{.*}}, %c10_i64
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[IDS]] : tensor<?x5xi64>) outs(%{{.*}} : tensor<?x5x3xf32>)
// CHECK:         ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK:           %[[ROW:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK:           %[[COL:.*]] = linalg.index 2 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<10x3xf32>
// CHECK:           linalg.yield %[[V]] : f32
// CHECK:         return %[[Y]], %[[CHECK]]#0, %[[CHECK]]#1
nnx.model @m inputs(tensor<?x5xi64>) {
  nnx.embedding @e {weight = dense<1.0> : tensor<10x3xf32>}
}

// -----

// LayerNorm: row sums -> mean, centred sum of squares -> rstd, then
// (x - mean) * rstd * weight + bias.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x8xf32>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<?xf32>)
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<?x8xf32>, tensor<?xf32>)
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[RSTD:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<?xf32>)
// CHECK:           %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK:           math.sqrt
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[RSTD]], %[[MEAN]], %[[W]], %[[B]] : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK:         return %[[Y]]
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.layer_norm @ln {normalized_shape = array<i64: 8>, weight = dense<1.0> : tensor<8xf32>,
                      bias = dense<0.0> : tensor<8xf32>}
}

// -----

// RMSNorm: x * 1/sqrt(mean(x^2) + eps) * weight.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK:         %[[W:.*]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK:         %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x8xf32>)
// CHECK:           %[[S:.*]] = arith.mulf %[[IN:.*]], %[[IN]] : f32
// CHECK:         %[[RSTD:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<?xf32>)
// CHECK:           arith.constant 9.99999997E-7 : f32
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[RSTD]], %[[W]] : tensor<?x8xf32>, tensor<?xf32>, tensor<8xf32>)
// CHECK-NOT:       arith.subf
// CHECK:         return %[[Y]]
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.rms_norm @n {normalized_shape = array<i64: 8>, eps = 1.0e-06 : f64, weight = dense<2.0> : tensor<8xf32>}
}

// -----

// BatchNorm, eval: alpha = w / sqrt(running_var + eps), beta = b - mean * alpha
// from the running statistics; y = x * alpha + beta over channel dim 1.
// CHECK-DAG:   #[[$CH:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x2xf32>
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[RM:.*]] = arith.constant dense<[5.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[RV:.*]] = arith.constant dense<[7.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK-NOT:     iterator_types = ["reduction"
// CHECK:         %[[ALPHA:.*]] = linalg.generic {{.*}} ins(%[[RV]], %[[W]] : tensor<2xf32>, tensor<2xf32>)
// CHECK:         %[[BETA:.*]] = linalg.generic {{.*}} ins(%[[RM]], %[[ALPHA]], %[[B]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$CH]], #[[$CH]], #{{.*}}], {{.*}} ins(%[[X]], %[[ALPHA]], %[[BETA]] :
// CHECK:           %[[M:.*]] = arith.mulf
// CHECK:           arith.addf %[[M]]
// CHECK:         return %[[Y]]
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.batch_norm @bn {weight = dense<[1.0, 2.0]> : tensor<2xf32>, bias = dense<[3.0, 4.0]> : tensor<2xf32>,
                      running_mean = dense<[5.0, 6.0]> : tensor<2xf32>, running_var = dense<[7.0, 8.0]> : tensor<2xf32>}
}

// -----

// BatchNorm, train, 3-D: batch statistics reduced over dims 0 and 2, the
// count N * L taken from the runtime shape; running statistics unused.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x2x3xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[L:.*]] = tensor.dim %[[X]], %c2
// CHECK:         %[[NL:.*]] = arith.muli %[[N]], %[[L]] : index
// CHECK:         %[[I:.*]] = arith.index_cast %[[NL]] : index to i64
// CHECK:         %[[CNT:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[X]] : tensor<?x2x3xf32>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2xf32>)
// CHECK:           arith.divf %{{.*}}, %[[CNT]] : f32
// CHECK:         %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<?x2x3xf32>, tensor<2xf32>)
// CHECK:         %[[ALPHA:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2xf32>)
// CHECK:           arith.divf %{{.*}}, %[[CNT]] : f32
// CHECK:         %[[BETA:.*]] = linalg.generic {{.*}} ins(%[[MEAN]], %[[ALPHA]] : tensor<2xf32>, tensor<2xf32>)
// CHECK:           arith.negf
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[ALPHA]], %[[BETA]] :
nnx.model @m inputs(tensor<?x2x3xf32>) {
  nnx.batch_norm @bn {train, running_mean = dense<0.0> : tensor<2xf32>, running_var = dense<1.0> : tensor<2xf32>}
}

// -----

// The elementwise activations, each a linalg.generic, in sequence.
// CHECK-LABEL: func.func @forward(
// relu
// CHECK:         linalg.generic
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
// gelu (exact): x/2 * (1 + erf(x / sqrt(2)))
// CHECK:         linalg.generic
// CHECK:           %[[H:.*]] = arith.mulf %[[V:.*]], %{{.*}} : f32
// CHECK:           arith.constant 0.707106769 : f32
// CHECK:           %[[E:.*]] = math.erf
// CHECK:           %[[S:.*]] = arith.addf %{{.*}}, %[[E]] : f32
// CHECK:           arith.mulf %[[H]], %[[S]] : f32
// gelu (tanh)
// CHECK:         linalg.generic
// CHECK:           arith.constant 4.471500e-02 : f32
// CHECK:           arith.constant 0.797884583 : f32
// CHECK:           math.tanh
// tanh
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[T]] : f32
// sigmoid: 1 / (1 + exp(-x))
// CHECK:         linalg.generic
// CHECK:           arith.negf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:           arith.divf
// silu: x / (1 + exp(-x))
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[D:.*]] = arith.addf
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[IN]], %[[D]] : f32
// leaky_relu (slope 0.2)
// CHECK:         linalg.generic
// CHECK:           %[[P:.*]] = arith.cmpf ogt
// CHECK:           %[[SL:.*]] = arith.constant 2.000000e-01 : f32
// CHECK:           %[[N:.*]] = arith.mulf %{{.*}}, %[[SL]] : f32
// CHECK:           arith.select %[[P]], %{{.*}}, %[[N]] : f32
// hardswish: x * min(max(x + 3, 0), 6) / 6
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[S:.*]] = arith.addf %[[IN]], %{{.*}} : f32
// CHECK:           %[[LO:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK:           %[[R6:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK:           %[[P:.*]] = arith.mulf %[[IN]], %[[R6]] : f32
// CHECK:           arith.divf %[[P]], %{{.*}} : f32
// identity: nothing
// CHECK-NOT:     linalg.generic
// CHECK:         return
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @acts keying = named {
    nnx.relu @relu
    nnx.gelu @gelu
    nnx.gelu @gelu_tanh {approximate = #nnx.gelu_approximation<tanh>}
    nnx.tanh @tanh
    nnx.sigmoid @sigmoid
    nnx.silu @silu
    nnx.leaky_relu @leaky {negative_slope = 0.2 : f64}
    nnx.hardswish @hs
    nnx.identity @id
  }
}

// -----

// Softmax along dim 0: upstream linalg.softmax (decomposed by
// nnx-decompose-aggregates in the pipelines).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x4xf32>
// CHECK:         %[[S:.*]] = linalg.softmax dimension(0) ins(%[[X]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK:         return %[[S]]
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.softmax @sm {dim = 0 : i64}
}

// -----

// Dropout in eval mode is the identity.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>
// CHECK-NEXT:    return %[[X]] : tensor<?x4xf32>
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.dropout @d {p = 0.3 : f64}
}

// -----

// Dropout in train mode: a counter-based hash (splitmix64) of the row-major
// element index and the seed, compared with p * 2^24; kept elements scaled
// by 1/(1-p).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>
// CHECK:         %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK:         linalg.generic
// CHECK:           %[[I0:.*]] = linalg.index 0 : index
// CHECK:           %[[I1:.*]] = linalg.index 1 : index
// CHECK:           %[[R:.*]] = arith.muli %[[I0]], %[[D1]] : index
// CHECK:           %[[LIN:.*]] = arith.addi %[[R]], %[[I1]] : index
// CHECK:           %[[Z:.*]] = arith.index_cast %[[LIN]] : index to i64
// (seed 5 + 1) * 0x9E3779B97F4A7C15 mod 2^64
// CHECK:           arith.constant -5382687378899015554 : i64
// CHECK:           arith.constant -4658895280553007687 : i64
// CHECK:           arith.constant -7723592293110705685 : i64
// CHECK:           %[[U:.*]] = arith.shrui %{{.*}}, %c40_i64 : i64
// round(0.25 * 2^24)
// CHECK:           %[[T:.*]] = arith.constant 4194304 : i64
// CHECK:           %[[K:.*]] = arith.cmpi uge, %[[U]], %[[T]] : i64
// CHECK:           %[[SC:.*]] = arith.constant 1.33333337 : f32
// CHECK:           %[[S:.*]] = arith.mulf %{{.*}}, %[[SC]] : f32
// CHECK:           arith.select %[[K]], %[[S]], %{{.*}} : f32
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.dropout @d {train, p = 0.25 : f64, seed = 5 : i64}
}

// -----

// Sequential: children in order; an alias applies its target again.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x2xf32>
// CHECK:         %[[W1:.*]] = arith.constant dense<2.000000e+00> : tensor<2x2xf32>
// CHECK:         %[[Y1:.*]] = linalg.matmul {{.*}}ins(%[[X]], %[[W1]]
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[Y1]] :
// CHECK:           arith.maximumf
// CHECK:         %[[W2:.*]] = arith.constant dense<2.000000e+00> : tensor<2x2xf32>
// CHECK:         %[[Y2:.*]] = linalg.matmul {{.*}}ins(%[[R]], %[[W2]]
// CHECK:         return %[[Y2]]
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @body keying = named {
    nnx.linear @fc {weight = dense<2.0> : tensor<2x2xf32>}
    nnx.relu @act
    nnx.alias @again = @fc
  }
}

// -----

// FeedFwdNN: Linear -> activation_for(i) -> dropout_for(i) for the hidden
// layers (train mode: dropout with seed i), the last Linear bare.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x4xf32>
// CHECK:         %[[H0:.*]] = linalg.matmul {{.*}}ins(%[[X]], %{{.*}} : tensor<?x4xf32>, tensor<8x4xf32>)
// CHECK:         %[[A0:.*]] = linalg.generic {{.*}} ins(%[[H0]] :
// CHECK:           math.tanh
// CHECK:         %[[D0:.*]] = linalg.generic {{.*}} ins(%[[A0]] :
// seed 0
// CHECK:           arith.constant -7046029254386353131 : i64
// CHECK:           arith.cmpi uge
// CHECK:         %[[H1:.*]] = linalg.matmul {{.*}}ins(%[[D0]], %{{.*}} : tensor<?x8xf32>, tensor<6x8xf32>)
// CHECK:         %[[A1:.*]] = linalg.generic {{.*}} ins(%[[H1]] :
// CHECK:           arith.maximumf
// p = 0 for layer 1: no dropout
// CHECK-NOT:       arith.cmpi
// CHECK:         %[[H2:.*]] = linalg.matmul {{.*}}ins(%[[A1]], %{{.*}} : tensor<?x6xf32>, tensor<2x6xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[H2]] : tensor<?x2xf32>
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {train, input_dim = 4, hidden_dims = array<i64: 8, 6>, output_dim = 2,
                                activation = #nnx.activation<relu>, activations = [#nnx.activation<tanh>, #nnx.activation<relu>],
                                dropout_probs = [0.5, 0.0]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<6x8xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x6xf32>}
    }
  }
}

// -----

// nnx.module: the forward region is cloned, each nnx.call replaced by the
// callee's forward; arith ops on tensors stay (the CPU pipeline turns them
// into linalg).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>)
// CHECK:         %[[P:.*]] = linalg.matmul {{.*}}ins(%[[H]], %{{.*}} : tensor<?x8xf32>, tensor<8x8xf32>)
// CHECK:         %[[Y:.*]] = arith.addf %[[X]], %[[P]] {nnx.source = "add_0"} : tensor<?x8xf32>
// CHECK:         return %[[Y]] : tensor<?x8xf32>
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.module @block class = "ResidualBlock" {
    nnx.layer_norm @norm {normalized_shape = array<i64: 8>}
    nnx.linear @proj {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %p = nnx.call @proj(%h) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %y = arith.addf %x, %p {nnx.source = "add_0"} : tensor<?x8xf32>
      nnx.return %y : tensor<?x8xf32>
    }
  }
}

// -----

// Probes hook: `nnx.probes` on a module (input / output of the module) and
// on ops of a forward region (an operand / a result). An input probe's
// result is what the module or op consumes; an output probe's result
// replaces the value for all later uses. The attribute is not copied.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>
// CHECK:         %[[IN:.*]] = nnx.probe read "block.input" %[[X]] : tensor<?x8xf32>
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} ins(%[[IN]],
// CHECK:         %[[P:.*]] = linalg.matmul {{.*}}ins(%[[H]],
// CHECK:         %[[PR:.*]] = nnx.probe read "proj.out" %[[P]] : tensor<?x8xf32>
// CHECK:         %[[PW:.*]] = nnx.probe write "add.rhs" %[[PR]] : tensor<?x8xf32>
// CHECK:         %[[Y:.*]] = arith.addf %[[IN]], %[[PW]] {nnx.source = "add_0"} : tensor<?x8xf32>
// CHECK:         %[[YO:.*]] = nnx.probe write "add.out" %[[Y]] : tensor<?x8xf32>
// CHECK:         %[[Z:.*]] = arith.mulf %[[YO]], %[[PR]] : tensor<?x8xf32>
// CHECK:         %[[OUT:.*]] = nnx.probe read "block.output" %[[Z]] : tensor<?x8xf32>
// CHECK:         return %[[OUT]] : tensor<?x8xf32>
// CHECK-NOT:     nnx.probes
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.module @block class = "ResidualBlock" attributes {nnx.probes = [
      #nnx.probe<name = "block.input", point = input, index = 0, kind = read>,
      #nnx.probe<name = "block.output", point = output, index = 0, kind = read>]} {
    nnx.rms_norm @norm {normalized_shape = array<i64: 8>}
    nnx.linear @proj {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %p = nnx.call @proj(%h) {nnx.probes = [#nnx.probe<name = "proj.out", point = output, index = 0, kind = read>]} : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %y = arith.addf %x, %p {nnx.source = "add_0", nnx.probes = [
          #nnx.probe<name = "add.rhs", point = input, index = 1, kind = write>,
          #nnx.probe<name = "add.out", point = output, index = 0, kind = write>]} : tensor<?x8xf32>
      %z = arith.mulf %y, %p : tensor<?x8xf32>
      nnx.return %z : tensor<?x8xf32>
    }
  }
}

// -----

// dense_resource parameters are copied into dense constants (rows [1, 2]
// and [3, 4] of W).
// CHECK-LABEL: func.func @forward(
// CHECK:         arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT:     dense_resource
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.linear @fc {weight = dense_resource<fc_w> : tensor<2x2xf32>}
}
{-#
  dialect_resources: {
    builtin: {
      fc_w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Several models: one function each, named @<model>_forward; a declaration
// of the function (e.g. for a test driver) is replaced by the definition.
// CHECK-LABEL: func.func @a_forward(
// CHECK-SAME:      tensor<?x2xf32>) -> tensor<?x2xf32> attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @b_forward(
// CHECK-SAME:      tensor<?x3xf32>) -> tensor<?x3xf32> attributes {llvm.emit_c_interface}
// CHECK:       func.func @main
// CHECK:         call @a_forward
// CHECK-NOT:   func.func private @a_forward
nnx.model @a inputs(tensor<?x2xf32>) { nnx.relu @r }
nnx.model @b inputs(tensor<?x3xf32>) { nnx.tanh @t }
func.func private @a_forward(tensor<?x2xf32>) -> tensor<?x2xf32>
func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %y = call @a_forward(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// conv_nn on a dynamic image: each block is its conv, its activation and
// (pool_for(i) = 2) a 2 x 2 max pool of stride 2; then the global average
// pool (a reduction over the rows and columns, divided by their count), the
// flatten to N x channels[-1], and the fcs with the hidden site's ReLU.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      tensor<?x2x?x?xf32>) -> tensor<?x1xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} tensor<2x2x3x3xf32>
// CHECK:         arith.maximumf
// CHECK:         linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} {{.*}} tensor<2x2xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} tensor<3x2x3x3xf32>
// CHECK:         arith.maximumf
// CHECK:         linalg.pooling_nchw_max
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]
// CHECK:         arith.divf
// CHECK:         tensor.collapse_shape {{.*}} {{\[}}[0], [1, 2, 3]] : tensor<?x3x1x1xf32> into tensor<?x3xf32>
// CHECK:         linalg.matmul {{.*}} tensor<2x3xf32>
// CHECK:         arith.maximumf
// CHECK:         linalg.matmul {{.*}} tensor<1x2xf32>
// CHECK-NOT:     arith.maximumf
// CHECK:         return
nnx.model @cnn inputs(tensor<?x2x?x?xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1, pool = 2, dropout = 0.25 : f64} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>, bias = dense<0.1> : tensor<2xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.25> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
