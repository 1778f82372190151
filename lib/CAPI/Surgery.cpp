//===- Surgery.cpp - C API: model surgery and recipes ---------------------===//
//
// Each entry point runs its registered pass through a PassManager, as
// nnx-opt does, so that the C API refuses and changes exactly what the
// command line does; the diagnostics are captured for the caller.
//
//===----------------------------------------------------------------------===//
#include "nnx-c/Surgery.h"

#include "Diagnostics.h"

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Recipes.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using mlir::nnx::capi::CapturedDiagnostics;

namespace {
/// Where a pass runs: on each nnx.model, or on the module itself.
enum class Anchor { Models, Module };
} // namespace

/// Runs `pm` on `module`; on failure, reports the diagnostics (or, when the
/// pass emitted none, that `what` failed).
static MlirLogicalResult runReporting(PassManager &pm, ModuleOp module,
                                      llvm::StringRef what,
                                      MlirStringCallback onError,
                                      void *userData) {
  CapturedDiagnostics diags(module.getContext());
  if (succeeded(pm.run(module)))
    return mlirLogicalResultSuccess();
  std::string text = diags.take();
  if (text.empty())
    return capi::fail(onError, userData,
                      (what + " failed (no diagnostic)").str(), text);
  return capi::fail(onError, userData, "", text);
}

/// Runs `pass` on every nnx.model of `module` (or on the module).
static MlirLogicalResult runPass(MlirModule module, std::unique_ptr<Pass> pass,
                                 MlirStringCallback onError, void *userData,
                                 Anchor anchor = Anchor::Models) {
  ModuleOp m = unwrap(module);
  std::string what = pass->getArgument().str();
  PassManager pm(m.getContext());
  if (anchor == Anchor::Models)
    pm.nest<ModelOp>().addPass(std::move(pass));
  else
    pm.addPass(std::move(pass));
  return runReporting(pm, m, what, onError, userData);
}

/// `value`, or `fallback` when it is empty.
static std::string orDefault(MlirStringRef value, llvm::StringRef fallback) {
  return value.length ? unwrap(value).str() : fallback.str();
}

//===----------------------------------------------------------------------===//
// Surgery
//===----------------------------------------------------------------------===//

MlirLogicalResult nnxWiden(MlirModule module, MlirStringRef layer,
                           int64_t width, uint64_t seed, bool throughBatchNorm,
                           MlirStringRef init, MlirStringCallback onError,
                           void *userData) {
  NNXWidenPassOptions options;
  options.layer = unwrap(layer).str();
  options.width = width;
  options.seed = seed;
  options.throughBatchNorm = throughBatchNorm;
  options.init = orDefault(init, options.init);
  return runPass(module, createNNXWidenPass(options), onError, userData);
}

MlirLogicalResult nnxPrune(MlirModule module, MlirStringRef layer, int64_t keep,
                           int64_t heads, MlirStringRef importance,
                           MlirStringCallback onError, void *userData) {
  NNXPrunePassOptions options;
  options.layer = unwrap(layer).str();
  options.keep = keep;
  options.heads = heads;
  options.importance = unwrap(importance).str();
  return runPass(module, createNNXPrunePass(options), onError, userData);
}

MlirLogicalResult nnxGrowAttention(MlirModule module, MlirStringRef layer,
                                   int64_t heads, int64_t kvHeads,
                                   int64_t headDim, uint64_t seed,
                                   MlirStringCallback onError, void *userData) {
  NNXGrowAttentionPassOptions options;
  options.layer = unwrap(layer).str();
  options.heads = heads;
  options.kvHeads = kvHeads;
  options.headDim = headDim;
  options.seed = seed;
  return runPass(module, createNNXGrowAttentionPass(options), onError,
                 userData);
}

MlirLogicalResult nnxWidenResidual(MlirModule module, int64_t width,
                                   uint64_t seed, MlirStringCallback onError,
                                   void *userData) {
  NNXWidenResidualPassOptions options;
  options.width = width;
  options.seed = seed;
  return runPass(module, createNNXWidenResidualPass(options), onError,
                 userData);
}

MlirLogicalResult nnxDeepen(MlirModule module, MlirStringRef after,
                            int64_t kernelSize, MlirStringCallback onError,
                            void *userData) {
  NNXDeepenPassOptions options;
  options.after = unwrap(after).str();
  options.kernelSize = kernelSize;
  return runPass(module, createNNXDeepenPass(options), onError, userData);
}

MlirLogicalResult nnxInsertBlock(MlirModule module, MlirStringRef after,
                                 MlirStringCallback onError, void *userData) {
  NNXInsertBlockPassOptions options;
  options.after = unwrap(after).str();
  return runPass(module, createNNXInsertBlockPass(options), onError, userData);
}

MlirLogicalResult nnxDropLayer(MlirModule module, MlirStringRef layer,
                               bool remove, MlirStringCallback onError,
                               void *userData) {
  NNXDropLayerPassOptions options;
  options.layer = unwrap(layer).str();
  options.remove = remove;
  return runPass(module, createNNXDropLayerPass(options), onError, userData);
}

MlirLogicalResult nnxLowRank(MlirModule module, MlirStringRef layer,
                             int64_t rank, MlirStringCallback onError,
                             void *userData) {
  NNXLowRankPassOptions options;
  options.layer = unwrap(layer).str();
  options.rank = rank;
  return runPass(module, createNNXLowRankPass(options), onError, userData);
}

MlirLogicalResult nnxExpandEmbedding(MlirModule module, MlirStringRef layer,
                                     int64_t num, MlirStringRef init,
                                     MlirStringCallback onError,
                                     void *userData) {
  NNXExpandEmbeddingPassOptions options;
  options.layer = unwrap(layer).str();
  options.num = num;
  options.init = orDefault(init, options.init);
  return runPass(module, createNNXExpandEmbeddingPass(options), onError,
                 userData);
}

//===----------------------------------------------------------------------===//
// Recipes and LoRA
//===----------------------------------------------------------------------===//

MlirLogicalResult nnxRecordBase(MlirModule module, MlirStringCallback onError,
                                void *userData) {
  return runPass(module, createNNXRecordBasePass(), onError, userData);
}

MlirLogicalResult nnxValidateRecipe(MlirModule module,
                                    MlirStringCallback onError,
                                    void *userData) {
  return runPass(module, createNNXValidateRecipePass(), onError, userData);
}

MlirLogicalResult nnxMaterializeRecipe(MlirModule module, uint64_t seed,
                                       MlirStringCallback onError,
                                       void *userData) {
  NNXMaterializeRecipePassOptions options;
  options.seed = seed;
  return runPass(module, createNNXMaterializeRecipePass(options), onError,
                 userData, Anchor::Module);
}

MlirLogicalResult nnxRebuild(MlirModule module, MlirStringCallback onError,
                             void *userData) {
  return runPass(module, createNNXRebuildPass(), onError, userData);
}

MlirLogicalResult nnxLoraMerge(MlirModule module, MlirStringRef layer,
                               MlirStringCallback onError, void *userData) {
  NNXLoraMergePassOptions options;
  options.layer = unwrap(layer).str();
  return runPass(module, createNNXLoraMergePass(options), onError, userData);
}

MlirLogicalResult nnxLoraUnmerge(MlirModule module, MlirStringRef layer,
                                 MlirStringCallback onError, void *userData) {
  NNXLoraUnmergePassOptions options;
  options.layer = unwrap(layer).str();
  return runPass(module, createNNXLoraUnmergePass(options), onError, userData);
}

/// The module's only nnx.model, else an error (emitted) naming how many it
/// holds.
static FailureOr<ModelOp> getOnlyModel(ModuleOp module, llvm::StringRef what) {
  auto models = llvm::to_vector(module.getOps<ModelOp>());
  if (models.size() == 1)
    return models.front();
  return module.emitError() << what << ": the module holds " << models.size()
                            << " nnx.model ops, expected exactly one";
}

/// Appends the pending operation `id` (version 1) with `targets` and
/// `config` to the recipe of the module's only model.
static LogicalResult appendRecipeOp(ModuleOp module, llvm::StringRef what,
                                    llvm::StringRef id,
                                    llvm::ArrayRef<MlirStringRef> targets,
                                    llvm::ArrayRef<NamedAttribute> config) {
  FailureOr<ModelOp> model = getOnlyModel(module, what);
  if (failed(model))
    return failure();
  if (targets.empty())
    return model->emitError() << what << ": no targets given";
  MLIRContext *ctx = module.getContext();
  SmallVector<Attribute> names;
  for (MlirStringRef target : targets)
    names.push_back(StringAttr::get(ctx, unwrap(target)));
  RecipeAttr recipe = model->getRecipeAttr();
  SmallVector<Attribute> operations;
  if (recipe)
    llvm::append_range(operations, recipe.getOperations());
  operations.push_back(RecipeOpAttr::get(
      ctx, StringAttr::get(ctx, id), /*version=*/1, ArrayAttr::get(ctx, names),
      DictionaryAttr::get(ctx, config),
      /*shapes=*/ArrayAttr()));
  model->setRecipeAttr(RecipeAttr::get(
      ctx, recipe ? recipe.getMaterialization() : Materialization::in_place,
      recipe ? recipe.getMaterialized() : 0, ArrayAttr::get(ctx, operations)));
  return success();
}

/// The `lora` operation's config: {r, alpha}.
static SmallVector<NamedAttribute> loraConfig(MLIRContext *ctx, int64_t r,
                                              double alpha) {
  Builder b(ctx);
  return {b.getNamedAttr("r", b.getI64IntegerAttr(r)),
          b.getNamedAttr("alpha", b.getF64FloatAttr(alpha))};
}

/// Runs `body` on `module` with its diagnostics captured; reports them on
/// failure.
static MlirLogicalResult withReporting(ModuleOp module, llvm::StringRef what,
                                       llvm::function_ref<LogicalResult()> body,
                                       MlirStringCallback onError,
                                       void *userData) {
  CapturedDiagnostics diags(module.getContext());
  if (succeeded(body()))
    return mlirLogicalResultSuccess();
  std::string text = diags.take();
  return capi::fail(onError, userData,
                    text.empty() ? (what + " failed").str() : "", text);
}

MlirLogicalResult nnxRecipeAddLora(MlirModule module,
                                   const MlirStringRef *targets,
                                   intptr_t numTargets, int64_t r, double alpha,
                                   MlirStringCallback onError, void *userData) {
  ModuleOp m = unwrap(module);
  return withReporting(
      m, "nnxRecipeAddLora",
      [&] {
        return appendRecipeOp(m, "nnxRecipeAddLora", "lora",
                              {targets, static_cast<size_t>(numTargets)},
                              loraConfig(m.getContext(), r, alpha));
      },
      onError, userData);
}

MlirLogicalResult nnxRecipeAddLowRank(MlirModule module,
                                      const MlirStringRef *targets,
                                      intptr_t numTargets, int64_t rank,
                                      MlirStringCallback onError,
                                      void *userData) {
  ModuleOp m = unwrap(module);
  Builder b(m.getContext());
  return withReporting(
      m, "nnxRecipeAddLowRank",
      [&] {
        return appendRecipeOp(
            m, "nnxRecipeAddLowRank", "low_rank",
            {targets, static_cast<size_t>(numTargets)},
            {b.getNamedAttr("rank", b.getI64IntegerAttr(rank))});
      },
      onError, userData);
}

MlirLogicalResult nnxLoraApply(MlirModule module, const MlirStringRef *targets,
                               intptr_t numTargets, int64_t r, double alpha,
                               uint64_t seed, MlirStringCallback onError,
                               void *userData) {
  ModuleOp m = unwrap(module);
  // All or nothing: the three steps run on a copy, which replaces the
  // module's body only when every one of them succeeded.
  OwningOpRef<ModuleOp> copy = m.clone();
  auto steps = [&]() -> LogicalResult {
    FailureOr<ModelOp> model = getOnlyModel(*copy, "nnxLoraApply");
    if (failed(model) || (!model->getBaseAttr() && failed(recordBase(*model))))
      return failure();
    if (failed(appendRecipeOp(*copy, "nnxLoraApply", "lora",
                              {targets, static_cast<size_t>(numTargets)},
                              loraConfig(m.getContext(), r, alpha))) ||
        failed(materializeRecipe(*model, seed)))
      return failure();
    return verify(*copy);
  };
  MlirLogicalResult result =
      withReporting(m, "nnxLoraApply", steps, onError, userData);
  if (mlirLogicalResultIsSuccess(result))
    m.getBodyRegion().takeBody(copy->getBodyRegion());
  return result;
}

//===----------------------------------------------------------------------===//
// Any pipeline
//===----------------------------------------------------------------------===//

MlirLogicalResult nnxRunPassPipeline(MlirModule module, MlirStringRef pipeline,
                                     MlirStringCallback onError,
                                     void *userData) {
  ModuleOp m = unwrap(module);
  std::string parseErrors;
  llvm::raw_string_ostream os(parseErrors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(unwrap(pipeline), os);
  if (failed(parsed))
    return capi::fail(onError, userData,
                      ("invalid pass pipeline '" + unwrap(pipeline) +
                       "': " + llvm::StringRef(parseErrors).trim())
                          .str(),
                      "");
  PassManager pm(m.getContext());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  return runReporting(pm, m, unwrap(pipeline), onError, userData);
}
