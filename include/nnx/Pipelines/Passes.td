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
       arguments) and marks it `llvm.emit_c_interface`; with `generate`
       (`prefill` or `decode`), runs `nnx-derive-kv-cache` (with
       `max-length`) and keeps the function named, as `@forward` (read
       probes, lowered first, stay its last results; patches are refused);
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
    Option<"generate", "generate", "std::string", /*default=*/"\"\"",
           "prefill or decode: after step 4, nnx-derive-kv-cache derives "
           "both and the one named becomes @forward (empty: the forward)">,
    Option<"maxLength", "max-length", "int64_t", /*default=*/"1024",
           "Positions the KV cache holds (with generate)">,
  ];
}

def NNXDeriveKVCachePass
    : NNX_Pass<"nnx-derive-kv-cache", "::mlir::ModuleOp"> {
  let summary = "Derive prefill and decode functions with a KV cache from "
                "a causal forward";
  let description = [{
    Writes `func.func @prefill` and `func.func @decode` beside the
    forward-level `@forward` (after `nnx-build-forward`, before
    `nnx-lower-functional`), so that nobody writes a cache into a model
    (docs/Generation.md).

    The attention cores are found from data flow: a `nnx.fn.softmax` whose
    input is a `nnx.fn.matmul` (the scores) through elementwise ops, and
    whose result is the left operand of a `nnx.fn.matmul` (the mix). The
    pass proves, and refuses with a diagnostic on the op at fault otherwise:

    * each core is masked causally: the chain from the scores to the
      softmax (elementwise ops, and reshapes that regroup only leading
      dims, as GPT-NeoX's `baddbmm` scores) is read at every element
      `[..., i, j]` with `i < j < max-length` (lib/Pipelines/CausalMask.h):
      each mask must be a function of the positions alone (aranges,
      constants, registered buffers, their slices at constant offsets,
      elementwise ops, comparisons, `where`, broadcasts, `(un)squeeze`,
      permutations, `tril` / `triu`), and what reaches the softmax there
      must be `a * scores + b` with `|a| <= 1e3` and `b <= -1e4`, or such
      a constant (a core with no mask is a bidirectional encoder);
    * the positions shift: every `nnx.fn.arange` of a run-time length counts
      T (learned position embeddings, rotary tables), and a table sliced to
      T outside the masks is `table[:T]` read row by row with the data, or
      only indexed by positions (`cos_cached[:T][position_ids]`);
    * nothing else mixes positions: no softmax, matmul, reduction (a norm
      over the sequence) or cumsum over T outside the cores;
    * the keys and values are `B x kv_heads x T x head_dim` before the keys'
      transpose, `repeat_kv` and a merge of the heads into the batch (a GQA
      cache holds the kv heads only).

    In decode, the guards of Python's decisions on sizes that depend on T
    are checked for all `position + T` positions, as a full recompute
    would check them.

    `@prefill(ids, params...)` returns the forward's outputs, then one key
    and one value cache per core (`B x kv_heads x max-length x head_dim`,
    the prompt's rows written at 0), then the index checks. `@decode(ids,
    position: tensor<i64>, caches..., params...)` takes the new tokens,
    the number of cached positions and the caches; it writes the new rows
    in place (`tensor.insert_slice` into the cache arguments), attends over
    the first `position + T` rows, and returns the same results. A
    position mask is computed for all `position + T` positions and its last
    T rows are kept; an `arange(T)` becomes `arange(position + T)[position:]`.
    A call past `max-length` fails at run time (`nnx.fn.guard`).

    Before (a one-layer causal attention):

    ```mlir
    %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
    %pos = nnx.fn.arange %t : tensor<?xi64>
    ...
    %m = nnx.fn.triu %ones {diagonal = 1 : i64} : tensor<?x?xi1>
    %mask = nnx.fn.where %m, %ninf, %zeros : ...
    %s = nnx.fn.matmul %q, %kt : ...
    %a = nnx.fn.add %s, %mask : ...
    %p = nnx.fn.softmax %a {dim = -1 : i64} : tensor<?x2x?x?xf32>
    %o = nnx.fn.matmul %p, %v : ...
    ```

    After (`@decode`, `max-length=64`):

    ```mlir
    func.func @decode(%ids: tensor<?x?xi64>, %position: tensor<i64>,
                      %k0: tensor<?x2x64x8xf32>, %v0: tensor<?x2x64x8xf32>, ...)
      %all = arith.addi %p, %t : index
      nnx.fn.guard sle, %all, %c64, "..." : index
      %pos_all = nnx.fn.arange %all : tensor<?xi64>
      %pos = tensor.extract_slice %pos_all[%p] [%t] [1] : ...
      %k1 = tensor.insert_slice %k into %k0[0, 0, %p, 0] [%b, 2, %t, 8] [1, 1, 1, 1]
      %kall = tensor.extract_slice %k1[0, 0, 0, 0] [%b, 2, %all, 8] [1, 1, 1, 1]
      ...
      return %logits, %k1, %v1, ...
    ```
  }];
  let options = [
    Option<"maxLength", "max-length", "int64_t", /*default=*/"1024",
           "Positions the cache holds (prompt and generated tokens)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // NNX_PIPELINES_PASSES_TD
