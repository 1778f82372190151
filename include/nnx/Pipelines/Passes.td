//===- Passes.td - the compile path's passes ---------------*- tablegen -*-===//
#ifndef NNX_PIPELINES_PASSES_TD
#define NNX_PIPELINES_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXPrepareForwardPass
    : NNX_Pass<"nnx-prepare-forward", "::mlir::ModuleOp"> {
  let summary = "Everything nnx-run does before the target pipeline";
  let description = [{
    Turns a module into what `nnx-run` (and `nnx.compile`, and
    `CompiledModel::compile`) hands to `nnx-cpu-pipeline` or
    `nnx-cuda-pipeline`, so that

    ```
    nnx-opt model.mlir --nnx-prepare-forward --nnx-cpu-pipeline
    ```

    produces the module the JIT compiles. In order:

    1. keeps the `nnx.model` named by `model` (or the only one) and erases
       the others; a module with no model keeps its `func.func @forward`;
    2. with `reads` / `writes`, runs `nnx-insert-probes` (with `family` and
       `families-dir`) on the model;
    3. with `tensor-parallel-ranks` N > 0, makes the model rank
       `tensor-parallel-rank`'s of N (`shardTensorParallel`, after the
       probes); a model already split (it carries `nnx.tensor_parallel`,
       which must then name the same ranks and rank, or Linears with
       `nnx.partial_sum`) is kept as it is;
    4. builds `@forward` (`nnx-build-forward`'s defaults: parameters as
       arguments) and marks it `llvm.emit_c_interface`;
    5. adds `@forward_write_shapes` when a written value has a dynamic dim
       (the probe names it measures in its `nnx.write_probes`), then lowers
       the probes (`nnx-lower-probes`);
    6. gives every result of `@forward` a buffer of its own (a repeated
       result becomes a copy);
    7. adds `@forward_result_shapes` (the dynamic result dims) and
       `@forward_shape_checks` (the sizes the code assumes equal, described
       by its `nnx.shape_checks`), then the run-time checks that each
       temporary's size fits in int64.

    The functions' signatures and attributes are the ABI the runtime reads
    (`include/nnx/Execution/CompiledModel.h`). Errors are diagnostics on the
    op at fault (an unknown model lists the ones there are).
  }];
  let options = [
    Option<"model", "model", "std::string", /*default=*/"\"\"",
           "The nnx.model to compile (default: the module's only one)">,
    Option<"family", "family", "std::string", /*default=*/"\"\"",
           "Tracing family of the probe requests (nnx-insert-probes)">,
    ListOption<"reads", "reads", "std::string",
               "Standardized names to read, in execution order">,
    ListOption<"writes", "writes", "std::string",
               "Standardized names to write, in execution order">,
    Option<"familiesDir", "families-dir", "std::string", /*default=*/"\"\"",
           "Directory of family files (nnx-insert-probes' families-dir)">,
    Option<"tensorParallelRanks", "tensor-parallel-ranks", "int64_t",
           /*default=*/"0",
           "Tensor parallelism over this many ranks (0: none)">,
    Option<"tensorParallelRank", "tensor-parallel-rank", "int64_t",
           /*default=*/"0",
           "The rank whose part of the model to compile">,
  ];
}

#endif // NNX_PIPELINES_PASSES_TD
