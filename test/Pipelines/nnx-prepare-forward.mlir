// nnx-prepare-forward: what nnx-run does before the target pipeline, as one
// pass. The shape functions and the ABI attributes the runtime reads.
// RUN: split-file %s %t
// RUN: nnx-opt %t/mlp.mlir --nnx-prepare-forward | FileCheck %s --check-prefix=MLP
// RUN: nnx-opt %t/two.mlir --nnx-prepare-forward=model=b | FileCheck %s --check-prefix=SELECT
// RUN: nnx-opt %t/meet.mlir --nnx-prepare-forward | FileCheck %s --check-prefix=CHECKS
// RUN: nnx-opt %t/repeat.mlir --nnx-prepare-forward | FileCheck %s --check-prefix=REPEAT
// RUN: nnx-opt %S/../nnx-run/Inputs/llama_bs.mlir \
// RUN:   --nnx-prepare-forward="family=llama reads=layers.0.attention_probabilities writes=layers.0.attention_output" \
// RUN: | FileCheck %s --check-prefix=PROBES

//--- mlp.mlir
nnx.model @mlp inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>}
    nnx.relu @act
  }
}
// The forward (parameters as arguments, marked for the C interface), then
// the batch of its result computed from the input's alone.
// MLP-NOT: nnx.model
// MLP-LABEL: func.func @forward(
// MLP-SAME: %{{.*}}: tensor<?x2xf32>, %{{.*}}: tensor<3x2xf32> {{{.*}}}) -> tensor<?x3xf32>
// MLP-SAME: llvm.emit_c_interface
// MLP-SAME: nnx.parameter_names = ["fc.weight"]
// MLP-LABEL: func.func @forward_result_shapes(
// MLP-SAME: %[[X:[^:]*]]: tensor<?x2xf32> {bufferization.writable = false}
// MLP-SAME: -> tensor<1xi64>
// MLP: %[[N:.*]] = tensor.dim %[[X]], %c0
// MLP-NEXT: %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// MLP: tensor.from_elements %[[I]] : tensor<1xi64>
// MLP-NOT: linalg
// MLP-NOT: func.func @forward_shape_checks

//--- two.mlir
nnx.model @a inputs(tensor<2x2xf32>) { nnx.relu @act }
nnx.model @b inputs(tensor<2x3xf32>) { nnx.tanh @act }
// The chosen model only; every result static: no shape function.
// SELECT-NOT: nnx.model
// SELECT: func.func @forward(%{{.*}}: tensor<2x3xf32>) -> tensor<2x3xf32>
// SELECT: math.tanh
// SELECT-NOT: func.func

//--- meet.mlir
// Two inputs whose batches meet in an add: the sizes the code assumes
// equal, described by nnx.shape_checks.
func.func @forward(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c = arith.addf %a, %b {nnx.source = "add_0"} : tensor<?x3xf32>
  return %c : tensor<?x3xf32>
}
// CHECKS-LABEL: func.func @forward(
// CHECKS-SAME: llvm.emit_c_interface
// CHECKS-LABEL: func.func @forward_shape_checks(
// CHECKS-SAME: %[[A:.*]]: tensor<?x3xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<?x3xf32> {bufferization.writable = false}
// CHECKS-SAME: -> tensor<2xi64>
// CHECKS-SAME: nnx.shape_checks = [{argument = 1 : i64, dim = 0 : i64, op = "'linalg.generic' (add_0) at {{.*}}meet.mlir:4:8", operand = 1 : i64, source_argument = 0 : i64, source_dim = 0 : i64, source_operand = 0 : i64}]
// CHECKS-DAG: tensor.dim %[[A]], %c0
// CHECKS-DAG: tensor.dim %[[B]], %c0
// CHECKS: tensor.from_elements
// CHECKS-LABEL: func.func @forward_result_shapes(

//--- repeat.mlir
// A result returned twice gets a buffer of its own.
func.func @forward(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %b = math.exp %a : tensor<2xf32>
  return %b, %b : tensor<2xf32>, tensor<2xf32>
}
// REPEAT: %[[E:.*]] = math.exp
// REPEAT: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[E]])
// REPEAT: return %[[E]], %[[C]]

// The probes: the write's shape is measured before the call (the batch and
// the sequence of the ids), then the probes become a trailing argument and
// a trailing result.
// PROBES-LABEL: func.func @forward(
// PROBES-SAME: %{{.*}}: tensor<?x?xi64>
// PROBES-SAME: %{{.*}}: tensor<?x?x8xf32>) -> (tensor<?x?x16xf32>, {{.*}}tensor<?x2x?x?xf32>)
// PROBES-SAME: nnx.read_probes = ["layers.0.attention_probabilities"]
// PROBES-SAME: nnx.write_probes = ["layers.0.attention_output"]
// PROBES-LABEL: func.func @forward_result_shapes(
// PROBES-LABEL: func.func @forward_write_shapes(
// PROBES-SAME: -> tensor<2xi64>
// PROBES-SAME: nnx.write_probes = ["layers.0.attention_output"]
// PROBES-NOT: nnx.probe
