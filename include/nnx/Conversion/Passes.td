//===- Passes.td - nnx lowerings ---------------------------*- tablegen -*-===//
#ifndef NNX_CONVERSION_PASSES_TD
#define NNX_CONVERSION_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXBuildForwardPass : NNX_Pass<"nnx-build-forward", "::mlir::ModuleOp"> {
  let summary = "Lower every nnx.model to a func.func on tensors";
  let description = [{
    Turns each `nnx.model` into a `func.func` on tensors built from upstream
    `linalg`, `arith`, `math` and `tensor` ops, and erases the model. The
    function is `@forward` when the module holds one model and
    `@<model>_forward` when it holds several; it carries
    `llvm.emit_c_interface`. The batch dimension stays dynamic; element
    types come from the parameters.

    Parameters and buffers (`parameters=arguments`, the default) become
    arguments after the inputs, one per distinct tensor, marked
    `bufferization.writable = false`; the function lists their tensor
    attributes in `nnx.parameters`, their dotted names (`body.fc.weight`) in
    `nnx.parameter_names`, and the weights file of `#nnx.external` tensors
    in `nnx.weights`. The compiled code then depends on the architecture
    only: the runner binds the stored bytes (a mapped safetensors file, a
    resource blob) at call time. `parameters=constants` embeds inline
    tensors as `arith.constant`s instead, for a self-contained function.
    Train/eval mode is per module (dropout, batch_norm).

    A module (or an op of a forward region) carrying `nnx.probes` gets
    `nnx.probe` ops on the requested inputs/outputs.

    Refused, with a diagnostic on the offending module naming its path:
    uninitialized lazy layers, a `module_list` used as a forward, subclasses
    with their own forward, ops in forward regions that are not upstream
    arith/math/tensor/linalg ops or `nnx.call`.

    Before:

    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) {
      nnx.sequential @net keying = positional {
        nnx.linear @"0" {weight = dense<0.5> : tensor<2x4xf32>}
        nnx.relu @"1"
      }
    }
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<?x4xf32>,
                       %w: tensor<2x4xf32> {bufferization.writable = false})
        -> tensor<?x2xf32>
        attributes {llvm.emit_c_interface,
                    nnx.parameter_names = ["0.weight"],
                    nnx.parameters = [dense<5.0e-01> : tensor<2x4xf32>]} {
      ...
      %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                          affine_map<(m, n, k) -> (n, k)>,
                                          affine_map<(m, n, k) -> (m, n)>]
                         ins(%x, %w : tensor<?x4xf32>, tensor<2x4xf32>)
                         outs(%zero : tensor<?x2xf32>) -> tensor<?x2xf32>
      %r = linalg.generic ... { arith.maximumf ... }
      return %r : tensor<?x2xf32>
    }
    ```
  }];
  let options = [
    Option<"parameters", "parameters", "::mlir::nnx::ParameterMode",
           /*default=*/"::mlir::nnx::ParameterMode::Arguments",
           "How the forward gets the parameters and buffers",
           [{::llvm::cl::values(
             clEnumValN(::mlir::nnx::ParameterMode::Arguments, "arguments",
                        "trailing arguments the runner binds (the default)"),
             clEnumValN(::mlir::nnx::ParameterMode::Constants, "constants",
                        "arith.constant tensors (inline tensors only)"))}]>,
    Option<"checkIndices", "check-indices", "bool", /*default=*/"true",
           "Check an embedding's ids at run time: the forward returns the "
           "first out-of-range position and id of each lookup after its "
           "outputs (nnx.index_checks), which nnx-run reports as an error; "
           "false clamps bad ids into the table">,
    Option<"accumulate", "accumulate", "std::string", /*default=*/"\"f32\"",
           "What bf16 / f16 ops compute and accumulate in: f32 (each op "
           "reads its narrow operands, computes in f32 and rounds its result "
           "once, as PyTorch's CPU kernels) or storage (the tensors' own "
           "type); recorded on the forward as nnx.accumulate, which "
           "nnx-lower-functional follows">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::bufferization::BufferizationDialect",
    // The run-time checks (RuntimeChecks.h) of the layers' sizes.
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect",
    // The partial sums of tensor-parallel Linears (nnx.partial_sum).
    "::mlir::shard::ShardDialect"
  ];
}

def NNXLowerFunctionalPass : NNX_Pass<"nnx-lower-functional"> {
  let summary = "Lower the nnx.fn functional ops to linalg and tensor ops";
  let description = [{
    Rewrites every `nnx.fn` op (the functional code of forward regions) into
    upstream ops on tensors, and makes the upstream ops the exporter emits
    beside them fit both pipelines:

    * broadcasting binary ops, comparisons, `where`, `expand`, `tril` /
      `triu`, `arange`: one `linalg.generic` each, broadcast operand dims
      read at index 0 (no `linalg.broadcast`, no reshape);
    * `matmul`: one `linalg.generic` contraction (parallel batch, m, n;
      reduction k) into a zero-filled init, batch dims broadcast the same
      way, `transpose_b` in the indexing map;
    * `reshape`: `tensor.expand_shape` / `tensor.collapse_shape` when the
      reshape is a pure expansion or collapse whose every group holds at
      most one dynamic dim, else `tensor.reshape` with a shape tensor
      (never a reshape group with two dynamic dims: MLIR 22.1's
      `expand-strided-metadata` crashes on it, llvm-project #186830);
    * `permute`: `linalg.transpose`; `softmax`: `linalg.softmax` (the
      lowering of `nnx.softmax`); `mean` / `sum`: a `linalg.generic`
      reduction (plus `tensor.expand_shape` to unit dims for `keepdim`);
    * activations and dropout: the lowerings of the leaf ops (`nnx.gelu`,
      `nnx.dropout`, ...), so the numerics are the same;
    * `tensor.concat` becomes `tensor.empty` + `tensor.insert_slice`s and a
      ranked `tensor.splat` a `linalg.fill`, which both bufferize.
    * `guard` (a decision the exported Python made on run-time sizes): the
      run-time check it states, failing with its own message.

    Every dynamic size the lowering assumes (dims the broadcasting rule
    pairs, matmul's contracted dim, a reshape's element count or groups,
    `tensor.concat`'s other dims, a slice inside its source) is checked at
    run time beside the op: an `scf.if` that calls `nnxRuntimeFail` with
    a message naming the op, its label and location, and both sizes
    (`RuntimeChecks.h`; docs/Lowering.md, "Run-time checks"). Checks that
    hold in every run are folded away.

    Before:

    ```mlir
    %s = nnx.fn.matmul %q, %k {transpose_b}
        : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
    ```

    After:

    ```mlir
    %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %s = linalg.generic {indexing_maps = [
             affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>,
             affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>,
             affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
           iterator_types = ["parallel", "parallel", "parallel", "parallel",
                             "reduction"]}
        ins(%q, %k : ...) outs(%z : tensor<?x4x?x?xf32>) { mulf, addf }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def NNXVerifyTensorOpsPass : NNX_Pass<"nnx-verify-tensor-ops"> {
  let summary = "Refuse upstream tensor ops whose behaviour is undefined";
  let description = [{
    The first step of the CPU and CUDA pipelines. Upstream's verifiers accept
    some ops whose behaviour MLIR leaves undefined, and its passes then
    crash on them (a `tensor.dim` index of -2 in the value-bounds analysis)
    or the compiled code reads out of bounds (a slice with stride -1). This
    pass checks every op of the module with `mlir::nnx::verifyUpstreamOp`
    (nnx/Dialect/NNX/IR/UpstreamOpChecks.h), the check `nnx.forward`'s
    verifier runs on its body, and reports each offending op:

    ```mlir
    %c = arith.constant -2 : index
    // error: 'tensor.dim' op index -2 is out of range for a source of rank 2
    %d = tensor.dim %x, %c : tensor<?x?xf32>
    ```
  }];
}

def NNXCheckNoProbesPass : NNX_Pass<"nnx-check-no-probes", "::mlir::ModuleOp"> {
  let summary = "Fail if nnx.probe ops remain (run nnx-lower-probes first)";
  let description = [{
    The first step of the CPU pipeline: `nnx.probe` ops have no lowering of
    their own; `nnx-lower-probes` turns them into function results and
    arguments. This pass reports every remaining probe as an error.
  }];
}

def NNXDecomposeAggregatesPass : NNX_Pass<"nnx-decompose-aggregates"> {
  let summary = "Decompose aggregated linalg ops (linalg.softmax) into generics";
  let description = [{
    `nnx-build-forward` emits upstream named ops where they exist, such as
    `linalg.softmax`. Ops implementing `linalg::AggregatedOpInterface` have
    no loop lowering of their own; this pass replaces each by its upstream
    decomposition (for softmax: a max reduction, `exp(x - max)`, a sum
    reduction and a division), which both the CPU and the CUDA pipelines
    run as their first tensor-level step.

    Before:

    ```mlir
    %e = tensor.empty(%n) : tensor<?x5xf32>
    %s = linalg.softmax dimension(1) ins(%x : tensor<?x5xf32>)
                                     outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
    ```

    After: two `linalg.generic` reductions (max, then sum of exponentials)
    and two elementwise `linalg.generic`s (`exp(x - max)`, the division).
  }];
}

#endif // NNX_CONVERSION_PASSES_TD
