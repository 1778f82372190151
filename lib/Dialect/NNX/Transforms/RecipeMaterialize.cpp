//===- RecipeMaterialize.cpp - record, materialize, rebuild -----*- C++ -*-===//
//
// nnx-record-base writes the base descriptor; nnx-materialize-recipe applies
// the pending operations transactionally (on a clone that replaces the tree
// only when every operation succeeded) and records them; nnx-rebuild builds
// base + recorded recipe from the descriptor and loads the model's tensors.
//
//===----------------------------------------------------------------------===//
#include "RecipeUtils.h"
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Recipes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXRECORDBASEPASS
#define GEN_PASS_DEF_NNXMATERIALIZERECIPEPASS
#define GEN_PASS_DEF_NNXREBUILDPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::recipe;

//===----------------------------------------------------------------------===//
// nnx-record-base
//===----------------------------------------------------------------------===//

/// Why a rebuild from a descriptor could not reproduce `op`, or "".
static std::string undescribable(Operation *op) {
  auto m = dyn_cast<ModuleOpInterface>(op);
  if (!m)
    return "";
  if (m.getHooksAttr())
    return "has forward hooks";
  if (m.getParametrizationsAttr())
    return "has parametrizations";
  if (m.getPrunedAttr())
    return "has unbaked prune masks";
  if (m.getSubclassAttr())
    return "is a subclass with its own forward";
  if (auto custom = dyn_cast<CustomModuleOp>(op);
      custom && custom.getClassName().empty())
    return "is a runtime-only module without a registered class";
  return "";
}

LogicalResult mlir::nnx::recordBase(ModelOp model) {
  static constexpr llvm::StringLiteral pass = "nnx-record-base";
  if (model.getBaseAttr())
    return model.emitError() << pass << ": model '@" << model.getSymName()
                             << "' already records a base descriptor";
  if (RecipeAttr recipe = model.getRecipeAttr();
      recipe && recipe.getMaterialized() > 0)
    return model.emitError()
           << pass << ": model '@" << model.getSymName() << "' has "
           << recipe.getMaterialized()
           << " materialized recipe operations: its tree is no longer the "
              "base";
  ModuleOpInterface root = model.getRootModule();
  if (!root)
    return model.emitError() << pass << ": model has no root module";
  bool problems = false;
  walkTree(root, "", [&](Operation *op, StringRef path) {
    std::string why = undescribable(op);
    if (why.empty())
      return;
    problems = true;
    op->emitError() << pass << ": module '"
                    << (path.empty() ? "<root>" : path.str()) << "' " << why
                    << ", which a rebuild from a descriptor would drop (use "
                       "the surgery passes directly on this model)";
  });
  if (problems)
    return failure();
  model.setBaseAttr(BaseDescriptorAttr::get(
      model.getContext(), SymbolTable::getSymbolName(root), describe(root)));
  return success();
}

//===----------------------------------------------------------------------===//
// nnx-materialize-recipe
//===----------------------------------------------------------------------===//

/// LoRA on `target`: A drawn as PEFT does (kaiming-uniform, bound
/// 1/sqrt(in)), B zero.
static void applyLora(LinearOp target, const OpOptions &options,
                      std::mt19937_64 &rng) {
  auto weight = cast<RankedTensorType>(target.getWeightAttr().getType());
  int64_t out = weight.getDimSize(0), in = weight.getDimSize(1);
  int64_t r = options.rank;
  double bound = 1.0 / std::sqrt((double)std::max<int64_t>(1, in));
  std::uniform_real_distribution<double> dist(-bound, bound);
  std::vector<double> a(r * in);
  for (double &v : a)
    v = dist(rng);
  ElementsAttr b = zeroTensor(weight.clone({out, r}));
  wrapLora(target, makeTensor(weight.clone({r, in}), a), b, options.alpha);
}

/// Applies operations [first, end) of `recipe` to `model` and returns the
/// recipe with their target shapes recorded, all materialized.
static FailureOr<RecipeAttr> applyOperations(ModelOp model, RecipeAttr recipe,
                                             int64_t first, uint64_t seed) {
  MLIRContext *ctx = model.getContext();
  std::mt19937_64 rng(seed);
  RecipeAttr result = recipe;
  int64_t count = recipe.getOperations().size();
  for (int64_t i = first; i < count; ++i) {
    auto op = cast<RecipeOpAttr>(recipe.getOperations()[i]);
    std::string why;
    FailureOr<OpOptions> options = readOptions(op, why);
    if (failed(options))
      return model.emitError()
             << "nnx-materialize-recipe: operation " << i << ": " << why;
    SmallVector<Attribute> shapes;
    for (Attribute t : op.getTargets()) {
      StringRef path = cast<StringAttr>(t).getValue();
      auto lin = cast<LinearOp>(lookupRegistered(model.getRootModule(), path));
      shapes.push_back(TypeAttr::get(lin.getWeightAttr().getType()));
      if (op.getId().getValue() == kLora)
        applyLora(lin, *options, rng);
      else if (failed(surgery::lowRankUnrecorded(model, path, options->rank)))
        return failure();
    }
    result = withOperation(result, i,
                           RecipeOpAttr::get(ctx, op.getId(), op.getVersion(),
                                             op.getTargets(), op.getConfig(),
                                             ArrayAttr::get(ctx, shapes)));
  }
  return RecipeAttr::get(ctx, recipe.getMaterialization(), count,
                         result.getOperations());
}

/// `fresh`: a new model `<name>_fresh` after `model`, built from the
/// descriptor with random tensors, carrying the whole recipe materialized.
static LogicalResult materializeFresh(ModelOp model, uint64_t seed) {
  static constexpr llvm::StringLiteral pass = "nnx-materialize-recipe";
  std::string name = (model.getSymName() + "_fresh").str();
  Operation *table = SymbolTable::getNearestSymbolTable(model->getParentOp());
  if (!table || SymbolTable::lookupSymbolIn(table, name))
    return model.emitError()
           << pass << ": the fresh model '@" << name
           << "' needs a symbol name that is free in the enclosing module";
  std::mt19937_64 rng(seed);
  FailureOr<OwningOpRef<ModelOp>> fresh =
      buildBase(model, randomFill(rng), pass);
  if (failed(fresh))
    return failure();
  RecipeAttr recipe = model.getRecipeAttr();
  FailureOr<RecipeAttr> recorded = applyOperations(**fresh, recipe, 0, rng());
  if (failed(recorded))
    return failure();
  ModelOp out = fresh->release();
  out.setSymName(name);
  out.setRecipeAttr(*recorded);
  model->getBlock()->getOperations().insert(std::next(model->getIterator()),
                                            out);
  return success();
}

LogicalResult mlir::nnx::materializeRecipe(ModelOp model, uint64_t seed) {
  static constexpr llvm::StringLiteral pass = "nnx-materialize-recipe";
  if (failed(validateRecipe(model, pass)))
    return failure();
  RecipeAttr recipe = model.getRecipeAttr();
  int64_t first = recipe.getMaterialized();
  if (first == (int64_t)recipe.getOperations().size())
    return success();
  if (recipe.getMaterialization() == Materialization::fresh)
    return materializeFresh(model, seed);
  // All or nothing: edit a clone, then move its tree into the model.
  OwningOpRef<ModelOp> clone(cast<ModelOp>(model->clone()));
  FailureOr<RecipeAttr> recorded = applyOperations(*clone, recipe, first, seed);
  if (failed(recorded))
    return failure();
  model.getBody().takeBody(clone->getBody());
  model.setRecipeAttr(*recorded);
  return success();
}

//===----------------------------------------------------------------------===//
// nnx-rebuild
//===----------------------------------------------------------------------===//

/// True if `attr` holds a tensor (directly or in a dictionary).
static bool holdsTensor(Attribute attr) {
  if (isa<ElementsAttr>(attr))
    return true;
  if (auto dict = dyn_cast<DictionaryAttr>(attr))
    return llvm::any_of(dict, [](NamedAttribute entry) {
      return holdsTensor(entry.getValue());
    });
  return false;
}

/// Loads the saved tensors (and LoRA's `merged` state) of `saved` into the
/// rebuilt tree under `rebuilt`; the descriptors already matched.
static void loadTensors(ModuleOpInterface rebuilt, ModuleOpInterface saved) {
  llvm::StringMap<Operation *> from = indexTree(saved);
  for (auto &[path, op] : indexTree(rebuilt)) {
    Operation *source = from.lookup(path);
    for (NamedAttribute attr : op->getAttrDictionary())
      if (holdsTensor(attr.getValue()))
        op->setAttr(attr.getName(), source->getAttr(attr.getName()));
    if (auto lora = dyn_cast<LoraOp>(op))
      lora.setMerged(cast<LoraOp>(source).getMerged());
  }
}

LogicalResult mlir::nnx::rebuildModel(ModelOp model) {
  static constexpr llvm::StringLiteral pass = "nnx-rebuild";
  if (!model.getBaseAttr())
    return model.emitError()
           << pass << ": model '@" << model.getSymName()
           << "' has no base descriptor, so it cannot be rebuilt (use the "
              "surgery passes directly on such a model)";
  RecipeAttr recipe = model.getRecipeAttr();
  if (!recipe)
    recipe = RecipeAttr::get(model.getContext(), Materialization::in_place, 0,
                             ArrayAttr::get(model.getContext(), {}));
  // Every recorded operation is checked before anything is built or loaded.
  FailureOr<OwningOpRef<ModelOp>> rebuilt = buildBase(model, zeroFill(), pass);
  if (failed(rebuilt) ||
      failed(replayShapes(**rebuilt, recipe, recipe.getMaterialized(), pass)))
    return failure();
  if (failed(reportDifferences(
          model, describe(model.getRootModule()),
          describe((*rebuilt)->getRootModule()), pass, "base + recorded recipe",
          "these weights were transformed without their recipe (materialize "
          "the recipe on the model and load into it, or keep the recipe with "
          "the checkpoint)")))
    return failure();
  loadTensors((*rebuilt)->getRootModule(), model.getRootModule());
  model.getBody().takeBody((*rebuilt)->getBody());
  return success();
}

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

namespace {
struct NNXRecordBasePass
    : public mlir::nnx::impl::NNXRecordBasePassBase<NNXRecordBasePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(recordBase(getOperation())))
      signalPassFailure();
  }
};

struct NNXMaterializeRecipePass
    : public mlir::nnx::impl::NNXMaterializeRecipePassBase<
          NNXMaterializeRecipePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<ModelOp> models;
    getOperation().walk([&](ModelOp m) {
      if (m.getRecipeAttr())
        models.push_back(m);
    });
    bool failedAny = false;
    for (ModelOp m : models)
      failedAny |= failed(materializeRecipe(m, seed));
    if (failedAny)
      signalPassFailure();
  }
};

struct NNXRebuildPass
    : public mlir::nnx::impl::NNXRebuildPassBase<NNXRebuildPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(rebuildModel(getOperation())))
      signalPassFailure();
  }
};
} // namespace
