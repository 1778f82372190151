// RUN: nnx-opt %s -split-input-file --nnx-build-forward | FileCheck %s --enable-var-scope

// An LSTM with h_0 and c_0: the input projection of every step is one
// matmul before the loop; the loop runs over the run-time sequence length
// (dim 0 of x), slices step t of the projection, projects h (one matmul
// inside the loop), slices the four gate blocks out of both projections and
// applies the gates in one linalg.generic writing c in place (h' is a new
// tensor materialized into h's buffer); the outputs go into
// tensors whose sizes come from x, not from the loop. h_0's and c_0's
// batch and the sequence length (>= 1) are checked at run time.
// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   llvm.mlir.global internal constant @{{.*}}("'nnx.lstm' at {{.*}}: h_0 has {0} in dim 1, expected {1}\00")
// CHECK-DAG:   llvm.mlir.global internal constant @{{.*}}("'nnx.lstm' at {{.*}}: the sequence length is {0}, it must be at least {1}\00")
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?x3xf32>, %[[H0:[^:]*]]: tensor<1x?x2xf32>, %[[C0:[^:]*]]: tensor<1x?x2xf32>,
// CHECK-SAME:      %[[WIH:[^:]*]]: tensor<8x3xf32> {{{.*}}nnx.parameter = "weight_ih_l0"}, %[[WHH:[^:]*]]: tensor<8x2xf32> {{{.*}}nnx.parameter = "weight_hh_l0"}
// CHECK-SAME:      -> (tensor<?x?x2xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>)
// CHECK:         call @nnxRuntimeFail
// CHECK:         call @nnxRuntimeFail
// CHECK:         %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK:         arith.cmpi slt, %[[T]], %c1
// CHECK:         call @nnxRuntimeFail
// CHECK:         %[[H:.*]] = tensor.extract_slice %[[H0]][0, 0, 0] [1, %{{.*}}, 2] [1, 1, 1] : tensor<1x?x2xf32> to tensor<?x2xf32>
// CHECK:         %[[C:.*]] = tensor.extract_slice %[[C0]][0, 0, 0] [1, %{{.*}}, 2] [1, 1, 1] : tensor<1x?x2xf32> to tensor<?x2xf32>
// CHECK:         %[[XP:.*]] = linalg.matmul {{.*}} ins(%{{.*}}, %[[WIH]] : tensor<?x3xf32>, tensor<8x3xf32>)
// CHECK:         %[[P:.*]] = tensor.reshape %[[XP]]
// CHECK:         %[[STEPS:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[LOOP:.*]]:3 = scf.for %[[I:.*]] = %{{.*}} to %[[STEPS]] step %{{.*}} iter_args(%[[HI:.*]] = %[[H]], %[[CI:.*]] = %[[C]], %[[OI:.*]] = %{{.*}}) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x2xf32>) {
// CHECK:           %[[PT:.*]] = tensor.extract_slice %[[P]][%[[I]], 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x8xf32>
// CHECK:           %[[HP:.*]] = linalg.matmul {{.*}} ins(%[[HI]], %[[WHH]] : tensor<?x2xf32>, tensor<8x2xf32>)
// CHECK:           %[[PI:.*]] = tensor.extract_slice %[[PT]][0, 0] [%{{.*}}, 2] [1, 1] : tensor<?x8xf32> to tensor<?x2xf32>
// CHECK:           %[[PF:.*]] = tensor.extract_slice %[[PT]][0, 2] [%{{.*}}, 2]
// CHECK:           %[[PG:.*]] = tensor.extract_slice %[[PT]][0, 4] [%{{.*}}, 2]
// CHECK:           %[[PO:.*]] = tensor.extract_slice %[[PT]][0, 6] [%{{.*}}, 2]
// CHECK:           %[[RI:.*]] = tensor.extract_slice %[[HP]][0, 0] [%{{.*}}, 2]
// CHECK:           %[[RF:.*]] = tensor.extract_slice %[[HP]][0, 2] [%{{.*}}, 2]
// CHECK:           %[[RG:.*]] = tensor.extract_slice %[[HP]][0, 4] [%{{.*}}, 2]
// CHECK:           %[[RO:.*]] = tensor.extract_slice %[[HP]][0, 6] [%{{.*}}, 2]
// CHECK:           %[[NEW:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:          ins(%[[PI]], %[[PF]], %[[PG]], %[[PO]], %[[RI]], %[[RF]], %[[RG]], %[[RO]] :
// CHECK-SAME:          outs(%{{.*}}, %[[CI]] :
// CHECK:             math.exp
// CHECK:             math.tanh
// CHECK:             linalg.yield
// CHECK:           %[[OUT:.*]] = tensor.insert_slice %[[NEW]]#0 into %[[OI]][%[[I]], 0, 0] [1, %{{.*}}, 2] [1, 1, 1]
// CHECK:           %[[HNEW:.*]] = bufferization.materialize_in_destination %[[NEW]]#0 in %[[HI]]
// CHECK:           %[[CNEW:.*]] = bufferization.materialize_in_destination %[[NEW]]#1 in %[[CI]]
// CHECK:           scf.yield %[[HNEW]], %[[CNEW]], %[[OUT]]
// CHECK:         }
// CHECK:         %[[R:.*]] = tensor.insert_slice %[[LOOP]]#2 into %{{.*}}[0, 0, 0]
// CHECK:         %[[HN:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, %{{.*}}, 2] [1, 1, 1] : tensor<1x?x2xf32> into tensor<1x?x2xf32>
// CHECK:         %[[CN:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, %{{.*}}, 2] [1, 1, 1] : tensor<1x?x2xf32> into tensor<1x?x2xf32>
// CHECK:         return %[[R]], %[[HN]], %[[CN]]
nnx.model @m inputs(tensor<?x?x3xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
  nnx.lstm @rnn {input_size = 3, hidden_size = 2,
                 weight_ih_l0 = dense<0.1> : tensor<8x3xf32>, weight_hh_l0 = dense<0.2> : tensor<8x2xf32>,
                 bias_ih_l0 = dense<0.0> : tensor<8xf32>, bias_hh_l0 = dense<0.5> : tensor<8xf32>}
}

// -----

// A bidirectional batch-first GRU on x alone: zero initial states, time is
// dim 1; the reverse loop reads step T - 1 - i; the two directions are
// written side by side (features 0..1 and 2..3), h_n stacks them.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?x3xf32>
// CHECK-SAME:      -> (tensor<?x?x4xf32>, tensor<2x?x2xf32>)
// CHECK:         %[[T:.*]] = tensor.dim %[[X]], %c1
// CHECK:         linalg.fill
// CHECK:         %[[FWD:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           tensor.extract_slice %{{.*}}[0, %[[I]], 0]
// CHECK:           scf.yield
// CHECK:         %[[BWD:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[LAST:.*]] = arith.subi %{{.*}}, %c1
// CHECK:           %[[REV:.*]] = arith.subi %[[LAST]], %[[J]]
// CHECK:           tensor.extract_slice %{{.*}}[0, %[[REV]], 0]
// CHECK:           scf.yield
// CHECK:         %[[O1:.*]] = tensor.insert_slice %[[FWD]]#1 into %{{.*}}[0, 0, 0]
// CHECK:         tensor.insert_slice %[[BWD]]#1 into %[[O1]][0, 0, 2]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[1, 0, 0] [1, %{{.*}}, 2]
nnx.model @m inputs(tensor<?x?x3xf32>) {
  nnx.gru @rnn {input_size = 3, hidden_size = 2, bias = false, batch_first, bidirectional,
                weight_ih_l0 = dense<0.1> : tensor<6x3xf32>, weight_hh_l0 = dense<0.2> : tensor<6x2xf32>,
                weight_ih_l0_reverse = dense<0.1> : tensor<6x3xf32>, weight_hh_l0_reverse = dense<0.2> : tensor<6x2xf32>}
}

// -----

// A cell: one step, no loop; relu.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x3xf32>, %[[H:[^:]*]]: tensor<?x2xf32>
// CHECK-SAME:      -> tensor<?x2xf32>
// CHECK-NOT:     scf.for
// CHECK:         linalg.matmul {{.*}} ins(%[[X]],
// CHECK:         linalg.matmul {{.*}} ins(%[[H]],
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
// CHECK-NOT:     scf.for
nnx.model @m inputs(tensor<?x3xf32>, tensor<?x2xf32>) {
  nnx.rnn_cell @cell {input_size = 3, hidden_size = 2, nonlinearity = #nnx.activation<relu>,
                      weight_ih = dense<0.1> : tensor<2x3xf32>, weight_hh = dense<0.2> : tensor<2x2xf32>}
}
