//===- Recipes.h - recorded recipes and LoRA as C++ functions ---*- C++ -*-===//
//
// The entry points behind nnx-record-base, nnx-validate-recipe,
// nnx-materialize-recipe, nnx-rebuild, nnx-lora-merge and nnx-lora-unmerge
// (docs/Recipes.md). Each checks everything first: on failure it has emitted
// one error per problem and left the IR untouched.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_TRANSFORMS_RECIPES_H
#define NNX_DIALECT_NNX_TRANSFORMS_RECIPES_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

namespace mlir::nnx {

/// Records `model`'s current structure as its base descriptor (`base`).
/// Refuses a model that already has one and modules a rebuild could not
/// reproduce (hooks, parametrizations, prune masks, subclasses).
LogicalResult recordBase(ModelOp model);

/// Checks the pending operations of `model`'s recipe (and, in place, that
/// the model equals base + recorded recipe). Mutates nothing. `pass` names
/// the caller in the diagnostics.
LogicalResult validateRecipe(ModelOp model,
                             llvm::StringRef pass = "nnx-validate-recipe");

/// Validates, then applies the pending operations: in place on `model`, or
/// (`fresh`) on a new model `<name>_fresh` inserted after `model`, built from
/// the base descriptor with tensors drawn from std::mt19937_64(`seed`).
/// LoRA adapters A are drawn from the same generator. Records the operations
/// (target shapes, `materialized`). All or nothing.
LogicalResult materializeRecipe(ModelOp model, uint64_t seed = 0);

/// Rebuilds `model` from its base descriptor and recorded recipe: the base
/// tree, the recorded operations replayed as shapes (no SVD), then the
/// model's own tensors loaded into it. Refuses unknown or malformed recorded
/// operations before any tensor is loaded, and a tree that base + recipe
/// does not explain (weights transformed without their recipe).
LogicalResult rebuildModel(ModelOp model);

/// Merges the adapter of the `nnx.lora` at `layer` (every one when empty)
/// into its base weight: `W + scaling * B A`, computed in double precision
/// and rounded once to the weight's element type.
LogicalResult mergeLora(ModelOp model, llvm::StringRef layer);
/// The inverse: `W - scaling * B A`, computed and rounded the same way.
LogicalResult unmergeLora(ModelOp model, llvm::StringRef layer);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_TRANSFORMS_RECIPES_H
