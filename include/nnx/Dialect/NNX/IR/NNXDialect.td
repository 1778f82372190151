//===- NNXDialect.td - nnx dialect definition --------------*- tablegen -*-===//
#ifndef NNX_DIALECT_TD
#define NNX_DIALECT_TD

include "mlir/IR/OpBase.td"

def NNX_Dialect : Dialect {
  let name = "nnx";
  let cppNamespace = "::mlir::nnx";
  let summary = "A neural network as its module tree, for structural editing";
  let description = [{
    The `nnx` dialect describes a neural network the way PyTorch's `nn.Module`
    tree does: containers (`nnx.sequential`, `nnx.feed_fwd`, `nnx.module`,
    `nnx.module_list`), leaf layers (`nnx.linear`, `nnx.embedding`, the norms,
    the activations, `nnx.dropout`, `nnx.identity`), their parameters as tensor
    attributes, and the flags a rebuild must respect (per-tensor
    `requires_grad`, per-module train/eval mode, hooks, parametrizations,
    prune masks, subclasses with their own forward, lazy layers, aliases).

    Every module is a symbol whose name is its registered key, and every
    container is a symbol table, so the dotted path `body.0` is the nested
    reference `@body::@"0"`. Surgery passes rewrite this level;
    `nnx-build-forward` lowers it to `func.func @forward` on tensors.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The discardable attributes nnx puts on ops of other dialects (and its
  // own): each name is defined here once, typed and verified by
  // `verifyOperationAttribute` (NNXDialect.cpp).
  let discardableAttrs = (ins
    // Tracing requests on a module or a forward-region op: #nnx.probe<...>.
    "::mlir::ArrayAttr":$probes,
    // The label of an op in a forward region (`add_0`), unique per forward.
    "::mlir::StringAttr":$source,
    // The keyword arguments of a call, by name, for tracing paths.
    "::mlir::ArrayAttr":$kwargs,
    // On an nnx.forward: each result's Python path in the structure the
    // PyTorch forward returned (`0`, `logits`, `hidden_states.1`); a None
    // the exporter dropped has no entry.
    "::mlir::ArrayAttr":$output_names,
    // On an nnx.forward: each argument's path in the PyTorch call, its
    // position and then its position inside a tuple or list argument (`0`,
    // `1.0`, `1.1` for `model(x, (h, c))`); written where an argument is
    // a tuple or a list.
    "::mlir::ArrayAttr":$input_names,
    // The operand an in-place op (`x += y`) writes.
    "::mlir::IntegerAttr":$in_place,
    // On the forward function: the names of its read / write probes, in the
    // order of the extra results / arguments nnx-lower-probes added.
    "::mlir::ArrayAttr":$read_probes,
    "::mlir::ArrayAttr":$write_probes,
    // On a forward built with parameters as arguments: the tensor attribute
    // (dense, dense_resource or #nnx.external) and the dotted name
    // (`body.fc.weight`) of each parameter argument, in order; they follow
    // the model's inputs.
    "::mlir::ArrayAttr":$parameters,
    "::mlir::ArrayAttr":$parameter_names,
    // The weights file (absolute path) the #nnx.external parameters of a
    // forward are read from.
    "::mlir::StringAttr":$weights,
    // On a forward whose schedule wants parameters in another layout: the
    // permutation of the stored tensor each parameter argument holds, by
    // parameter name (the runner permutes once when it binds the weights);
    // or {shape, permutation}: the stored tensor viewed as `shape` first
    // (the bf16 kernels' pairs of K: N x K as N x K/2 x 2, then [1, 0, 2]).
    "::mlir::DictionaryAttr":$parameter_layouts,
    // On a forward: what its bf16 / f16 ops compute in, "f32" or "storage"
    // (nnx-build-forward's accumulate=, docs/Lowering.md).
    "::mlir::StringAttr":$accumulate,
    // On a forward: its run-time index checks, one dictionary each
    // ({layer = "wte", op = "nnx.embedding", bound = 16, input = 0}), in the
    // order of the result pairs (first bad position, its index) that
    // nnx-build-forward appended after the outputs.
    "::mlir::ArrayAttr":$index_checks,
    // On @forward_shape_checks (nnx-prepare-forward): where the compiled
    // code assumes two argument dims equal, one dictionary per pair of sizes
    // it returns ({op = "...", operand = 1, dim = 0, source_operand = 0,
    // source_dim = 0, argument = 1, source_argument = 0}; argument -1: not
    // an argument).
    "::mlir::ArrayAttr":$shape_checks,
    // On an nnx.model: its base descriptor (#nnx.base) and its recipe
    // (#nnx.recipe), docs/Recipes.md.
    "::mlir::Attribute":$base,
    "::mlir::Attribute":$recipe,
    // On a container: the entries of its `state` that are buffers
    // (PyTorch's register_buffer); the others are parameters.
    "::mlir::ArrayAttr":$buffers,
    // Tensor parallelism (nnx-shard-tensor-parallel): on an nnx.linear whose
    // input is split over the ranks, {ranks = N : i64}: its matmul is summed
    // over the N ranks (shard.all_reduce) before the bias is added; on the
    // nnx.model of one rank, {ranks = N : i64, rank = R : i64}.
    "::mlir::DictionaryAttr":$partial_sum,
    "::mlir::DictionaryAttr":$tensor_parallel,
    // On a builtin.module: the CPU its code is generated for
    // (#nnx.target, written by nnx-set-target; docs/Lowering.md).
    "::mlir::Attribute":$target
  );
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Adds the `nnx.fn` ops (NNXFnOps.td, registered in NNXFnOps.cpp).
    void registerFunctionalOps();

    /// The safetensors files opened in this context, by absolute path
    /// (Weights.cpp): each is mapped once and shared by its users.
    WeightsFileCache &getWeightsFiles() { return *weightsFiles; }

  private:
    std::unique_ptr<WeightsFileCache> weightsFiles;

  public:
  }];
  // tensor: the shape functions of the nnx.fn ops build tensor.dim.
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // NNX_DIALECT_TD
