//===- RecipeValidate.cpp - nnx-validate-recipe -----------------*- C++ -*-===//
//
// Every rule a recipe operation must satisfy before anything changes, each
// violation one error naming the operation's index and the target. The
// checks never stop at the first problem: one failure lists them all.
//
//===----------------------------------------------------------------------===//
#include "RecipeUtils.h"
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Recipes.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXVALIDATERECIPEPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::recipe;

namespace {

/// A well-formed target path of operation `op`.
struct Target {
  int64_t op;
  std::string path;
  unsigned position; // in the operation's `targets`
};

/// Validates pending operations against the tree of `tree`; diagnostics
/// that have no module go to `model` (the given model).
class RecipeChecker {
public:
  RecipeChecker(ModelOp model, ModelOp tree, StringRef pass)
      : model(model), tree(tree), pass(pass) {}

  /// Checks operations [first, end) of `recipe`; operations before `first`
  /// are the earlier, materialized ones.
  LogicalResult check(RecipeAttr recipe, int64_t first);

private:
  InFlightDiagnostic error(Operation *at, int64_t index, RecipeOpAttr op,
                           StringRef target) {
    problems = true;
    InFlightDiagnostic diag = at ? at->emitError() : model.emitError();
    diag << pass << ": operation " << index << " ('" << op.getId().getValue()
         << "')";
    if (!target.empty())
      diag << ", target '" << target << "'";
    diag << ": ";
    return diag;
  }
  void checkSyntax(int64_t index, RecipeOpAttr op,
                   SmallVectorImpl<Target> &valid);
  void checkOverlaps(int64_t index, RecipeOpAttr op, ArrayRef<Target> own,
                     ArrayRef<Target> earlier, int64_t first,
                     llvm::SmallDenseSet<unsigned> &conflicted);
  void checkTarget(int64_t index, RecipeOpAttr op, unsigned j, StringRef path,
                   std::optional<OpOptions> options);

  ModelOp model, tree;
  StringRef pass;
  bool problems = false;
};

} // namespace

/// `a` is `b` or a module inside it.
static bool within(StringRef a, StringRef b) {
  return a == b || (a.starts_with(b) && a[b.size()] == '.');
}

void RecipeChecker::checkSyntax(int64_t index, RecipeOpAttr op,
                                SmallVectorImpl<Target> &valid) {
  if (op.getTargets().empty())
    error(nullptr, index, op, "") << "has no targets";
  for (auto [j, t] : llvm::enumerate(op.getTargets())) {
    auto str = dyn_cast<StringAttr>(t);
    if (!str) {
      error(nullptr, index, op, "")
          << "target " << j << " is not a string: " << t;
      continue;
    }
    StringRef path = str.getValue();
    size_t glob = path.find_first_of("*?[]");
    if (glob != StringRef::npos) {
      error(nullptr, index, op, path)
          << "contains the glob character '" << path[glob]
          << "' (targets are explicit dotted paths)";
      continue;
    }
    if (llvm::is_contained(splitPath(path), "") || path.empty() ||
        path.back() == '.') {
      error(nullptr, index, op, path)
          << "has an empty path segment (targets are explicit dotted paths)";
      continue;
    }
    valid.push_back({index, path.str(), (unsigned)j});
  }
}

void RecipeChecker::checkOverlaps(int64_t index, RecipeOpAttr op,
                                  ArrayRef<Target> own,
                                  ArrayRef<Target> earlier, int64_t first,
                                  llvm::SmallDenseSet<unsigned> &conflicted) {
  for (auto [j, a] : llvm::enumerate(own))
    for (const Target &b : own.take_front(j)) {
      if (a.path == b.path)
        error(nullptr, index, op, a.path) << "is listed twice";
      else if (within(a.path, b.path) || within(b.path, a.path))
        error(nullptr, index, op, a.path)
            << "and target '" << b.path << "' are nested";
      else
        continue;
      conflicted.insert(j);
    }
  for (auto [j, a] : llvm::enumerate(own))
    for (const Target &b : earlier) {
      if (!within(a.path, b.path) && !within(b.path, a.path))
        continue;
      error(nullptr, index, op, a.path)
          << "is inside the subtree '" << b.path << "' that operation " << b.op
          << (b.op < first ? " (an earlier, materialized recipe)" : "")
          << " transforms";
      conflicted.insert(j);
    }
}

void RecipeChecker::checkTarget(int64_t index, RecipeOpAttr op, unsigned j,
                                StringRef path,
                                std::optional<OpOptions> options) {
  Operation *slot = lookupRegistered(tree.getRootModule(), path);
  if (!slot) {
    std::string why;
    (void)lookupModule(tree, path, &why);
    error(nullptr, index, op, path) << "names no module: " << why;
    return;
  }
  ModuleOpInterface module = resolveAlias(slot);
  SmallVector<AliasOp> aliases;
  if (module)
    aliases = getAliasesReaching(module);
  if (isa<AliasOp>(slot) || !aliases.empty()) {
    InFlightDiagnostic diag = error(slot, index, op, path)
                              << "is registered under more than one name";
    for (AliasOp alias : aliases)
      diag.attachNote(alias.getLoc())
          << "also registered here as '" << getModulePath(alias) << "'";
    return;
  }
  auto lin = dyn_cast<LinearOp>(slot);
  if (!lin || lin.getSubclass()) {
    InFlightDiagnostic diag = error(slot, index, op, path)
                              << "is not exactly a Linear: it is ";
    if (lin)
      diag << "a subclass '" << *lin.getSubclass() << "' of nnx.linear";
    else
      diag << "'" << slot->getName() << "'";
    return;
  }
  if (lin.getLazy()) {
    error(slot, index, op, path)
        << "was an uninitialized lazy Linear when the model was built, and "
           "a rebuild starts lazy again (use the surgery passes directly)";
    return;
  }
  if (StockNetOpInterface net = surgery::getStockNetOf(lin)) {
    error(slot, index, op, path)
        << "is a layer of a " << net->getName().stripDialect()
        << ", whose layers must stay Linears (its params describe them)";
    return;
  }
  auto weight = cast<RankedTensorType>(lin.getWeightAttr().getType());
  if (ArrayAttr shapes = op.getShapes())
    if (cast<TypeAttr>(shapes[j]).getValue() != weight)
      error(slot, index, op, path)
          << "has weight " << weight << ", but the recipe recorded "
          << cast<TypeAttr>(shapes[j]).getValue()
          << " for it (a replay onto a resized target)";
  if (options && op.getId().getValue() == kLora &&
      !LoraOp::isScalingFinite(options->alpha, options->rank,
                               weight.getElementType()))
    error(slot, index, op, path)
        << "the scaling alpha / r = " << options->alpha << " / "
        << options->rank << " is not finite in " << weight.getElementType()
        << ", its weight's type (the adapter's output would be inf or NaN)";
  int64_t limit = std::min(weight.getDimSize(0), weight.getDimSize(1));
  if (options && options->rank > limit)
    error(slot, index, op, path)
        << "option " << (op.getId().getValue() == kLora ? "r" : "rank") << "="
        << options->rank << " is above min(in, out) = " << limit << " of its "
        << weight.getDimSize(0) << "x" << weight.getDimSize(1) << " weight";
}

LogicalResult RecipeChecker::check(RecipeAttr recipe, int64_t first) {
  SmallVector<Target> earlier;
  for (auto [i, attr] : llvm::enumerate(recipe.getOperations())) {
    auto op = cast<RecipeOpAttr>(attr);
    int64_t index = i;
    SmallVector<Target> own;
    if (index < first) {
      for (Attribute t : op.getTargets())
        if (auto str = dyn_cast<StringAttr>(t))
          earlier.push_back({index, str.str(), 0});
      continue;
    }
    std::string why = checkKnown(op);
    if (!why.empty()) {
      error(nullptr, index, op, "") << why;
      continue;
    }
    std::optional<OpOptions> options;
    if (FailureOr<OpOptions> read = readOptions(op, why); succeeded(read))
      options = *read;
    else
      error(nullptr, index, op, "") << "malformed options: " << why;
    checkSyntax(index, op, own);
    llvm::SmallDenseSet<unsigned> conflicted;
    checkOverlaps(index, op, own, earlier, first, conflicted);
    for (auto [j, target] : llvm::enumerate(own))
      if (!conflicted.contains(j))
        checkTarget(index, op, target.position, target.path, options);
    earlier.append(own);
  }
  return failure(problems);
}

/// Errors for recorded operations a replay could not read.
static LogicalResult checkRecorded(ModelOp model, RecipeAttr recipe,
                                   StringRef pass) {
  bool problems = false;
  for (int64_t i = 0; i < recipe.getMaterialized(); ++i) {
    auto op = cast<RecipeOpAttr>(recipe.getOperations()[i]);
    std::string why = checkKnown(op);
    if (why.empty() && failed(readOptions(op, why)))
      why = "malformed options: " + why;
    if (why.empty() && !llvm::all_of(op.getTargets(), [](Attribute t) {
          return isa<StringAttr>(t);
        }))
      why = "a target is not a string";
    if (why.empty())
      continue;
    problems = true;
    model.emitError() << pass << ": recorded operation " << i << " ('"
                      << op.getId().getValue() << "'): " << why;
  }
  return failure(problems);
}

/// In place: the live tree must be base + the recorded operations.
static LogicalResult checkUnrecorded(ModelOp model, RecipeAttr recipe,
                                     StringRef pass) {
  FailureOr<OwningOpRef<ModelOp>> expected = buildBase(model, zeroFill(), pass);
  if (failed(expected) ||
      failed(replayShapes(**expected, recipe, recipe.getMaterialized(), pass)))
    return failure();
  return reportDifferences(
      model, describe(model.getRootModule()),
      describe((*expected)->getRootModule()), pass, "base + recorded recipe",
      "no checkpoint could rebuild this unrecorded surgery (record it as a "
      "recipe operation)");
}

/// The common refusal of models recipes cannot serve.
static LogicalResult checkRecipeModel(ModelOp model, StringRef pass) {
  if (!model.getBaseAttr())
    return model.emitError()
           << pass << ": model '@" << model.getSymName()
           << "' has no base descriptor, so nothing could replay a recipe on "
              "it (record one with nnx-record-base; for a model a descriptor "
              "cannot describe, use the surgery passes directly)";
  if (!model.getRecipeAttr())
    return model.emitError()
           << pass << ": model '@" << model.getSymName() << "' has no recipe";
  return success();
}

LogicalResult mlir::nnx::validateRecipe(ModelOp model, StringRef pass) {
  if (failed(checkRecipeModel(model, pass)))
    return failure();
  RecipeAttr recipe = model.getRecipeAttr();
  if (failed(checkRecorded(model, recipe, pass)))
    return failure();
  int64_t count = recipe.getOperations().size();
  bool pending = recipe.getMaterialized() < count;
  if (recipe.getMaterialization() == Materialization::fresh && pending) {
    // Validated against the fresh base (shapes only) it would transform.
    FailureOr<OwningOpRef<ModelOp>> base = buildBase(model, zeroFill(), pass);
    if (failed(base))
      return failure();
    return RecipeChecker(model, **base, pass).check(recipe, 0);
  }
  bool unrecorded = failed(checkUnrecorded(model, recipe, pass));
  bool invalid = failed(RecipeChecker(model, model, pass)
                            .check(recipe, recipe.getMaterialized()));
  return failure(unrecorded || invalid);
}

namespace {
struct NNXValidateRecipePass
    : public mlir::nnx::impl::NNXValidateRecipePassBase<NNXValidateRecipePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(validateRecipe(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
