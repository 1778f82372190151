//===- Deepen.cpp - Net2DeeperNet after a ReLU ------------------*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include "mlir/IR/Builders.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXDEEPENPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-deepen";

namespace {
/// What the checks decided; the edit only reads this.
struct DeepenPlan {
  Operation *container = nullptr; // sequential or the feed_fwd's layers
  Operation *site = nullptr;      // the slot the new modules follow
  int64_t dim = 0;
  Type elementType;
  FeedFwdOp feedFwd; // set for a feed_fwd site
  unsigned hiddenIndex = 0;
};
} // namespace

/// `dim x dim` identity and zero bias of `elt`.
static LinearOp createIdentityLinear(OpBuilder &b, Location loc, StringRef key,
                                     int64_t dim, Type elt) {
  std::vector<double> eye(dim * dim, 0.0), zeros(dim, 0.0);
  for (int64_t i = 0; i < dim; ++i)
    eye[i * dim + i] = 1.0;
  return LinearOp::create(
      b, loc, key, /*train=*/false, /*hooks=*/nullptr,
      /*requires_grad=*/nullptr, /*parametrizations=*/nullptr,
      /*pruned=*/nullptr, /*subclass=*/nullptr,
      makeTensor(RankedTensorType::get({dim, dim}, elt), eye),
      makeTensor(RankedTensorType::get({dim}, elt), zeros), /*lazy=*/false,
      /*out_features=*/nullptr);
}

static int64_t indexIn(Operation *container, Operation *slot) {
  int64_t i = 0;
  for (Operation &op : container->getRegion(0).front()) {
    if (&op == slot)
      return i;
    ++i;
  }
  return -1;
}

/// Renames every child after `slot` of a positional container from key k to
/// k + shift (last first, so keys never collide).
static void shiftPositionalKeys(Operation *container, Operation *slot,
                                int64_t shift) {
  SmallVector<Operation *> later;
  for (Operation *op = slot->getNextNode(); op; op = op->getNextNode())
    later.push_back(op);
  int64_t first = indexIn(container, slot) + 1;
  for (int64_t i = later.size() - 1; i >= 0; --i)
    SymbolTable::setSymbolName(later[i], positionalKey(first + i + shift));
}

static FailureOr<DeepenPlan> planFeedFwd(ModuleListOp list, Operation *slot) {
  DeepenPlan plan;
  auto ff = dyn_cast<FeedFwdOp>(list->getParentOp());
  if (!ff || ff.getLayers() != list) {
    InFlightDiagnostic diag =
        refuse(slot, kPass, "site")
        << "is in an 'nnx.module_list' that is not the 'layers' of a stock "
           "'nnx.feed_fwd'";
    diag.attachNote(list.getLoc()) << "container is here";
    return diag;
  }
  if (failed(checkRefusable(ff, Subclass | Hooks | OwnState, kPass,
                            "container")) ||
      failed(checkRefusable(list, Subclass | Hooks | OwnState, kPass,
                            "container")))
    return failure();
  unsigned i = indexIn(list, slot);
  size_t numHidden = ff.getHiddenDims().size();
  if (i >= numHidden) {
    InFlightDiagnostic diag = refuse(slot, kPass, "site")
                              << "is the output layer of feed_fwd '"
                              << getDisplayPath(ff)
                              << "': no activation follows it";
    diag.attachNote(ff.getLoc()) << "feed_fwd is here";
    return diag;
  }
  ActivationKind act = ff.activationFor(i);
  if (act != ActivationKind::relu) {
    bool overridden = ff.getActivationsAttr() != nullptr;
    InFlightDiagnostic diag =
        refuse(ff, kPass, "container")
        << "applies activation_for(" << i << ") = '" << stringifyEnum(act)
        << "' after 'layers." << i << "' ("
        << (overridden ? "per-layer override" : "the default")
        << "); deepen only preserves the function after a ReLU";
    diag.attachNote(slot->getLoc()) << "site is here";
    return diag;
  }
  auto feeder = dyn_cast<LinearOp>(slot);
  if (!feeder) {
    InFlightDiagnostic diag = refuse(slot, kPass, "site")
                              << "is not an 'nnx.linear': the ReLU is not fed "
                                 "by a Linear";
    return diag;
  }
  if (failed(checkRefusable(feeder, Lazy, kPass, "feeding Linear")))
    return failure();
  plan.container = list;
  plan.site = slot;
  plan.feedFwd = ff;
  plan.hiddenIndex = i;
  plan.dim = ff.getHiddenDims()[i];
  plan.elementType =
      cast<ShapedType>(feeder.getWeightAttr().getType()).getElementType();
  return plan;
}

static FailureOr<DeepenPlan> planSequential(SequentialOp seq, Operation *slot) {
  DeepenPlan plan;
  ModuleOpInterface site = resolveAlias(slot);
  if (!isa<ReLUOp>(site)) {
    InFlightDiagnostic diag =
        slot->emitError() << kPass << ": type error: site '"
                          << getDisplayPath(slot) << "' is '" << site->getName()
                          << "', not 'nnx.relu'; the identity-Linear "
                             "insertion only preserves the function after "
                             "a ReLU";
    return diag;
  }
  if (failed(checkRefusable(site, Subclass | Hooks, kPass, "site")))
    return failure();
  if (failed(
          checkRefusable(seq, Subclass | Hooks | OwnState, kPass, "container")))
    return failure();
  LogicalResult result = success();
  LinearOp feeder;
  walkSiblings(slot, /*forward=*/false, [&](Operation *s) {
    Operation *m = resolveAlias(s);
    if (auto lin = dyn_cast_or_null<LinearOp>(m)) {
      feeder = lin;
      result = checkRefusable(lin, Lazy, kPass, "feeding Linear");
      return true;
    }
    if (m && (isElementwiseModule(m) || isNormModule(m)))
      return false;
    InFlightDiagnostic diag = refuse(s, kPass, "module before the site")
                              << "is neither elementwise nor a norm: the ReLU "
                                 "must be fed by an 'nnx.linear' through "
                                 "elementwise or norm modules only";
    diag.attachNote(slot->getLoc()) << "site is here";
    result = diag;
    return true;
  });
  if (failed(result))
    return failure();
  if (!feeder) {
    InFlightDiagnostic diag = refuse(slot, kPass, "site")
                              << "is not fed by an 'nnx.linear' in its "
                                 "sequential '"
                              << getDisplayPath(seq) << "'";
    diag.attachNote(seq.getLoc()) << "container is here";
    return diag;
  }
  plan.container = seq;
  plan.site = slot;
  plan.dim = feeder.getOutFeaturesCount();
  plan.elementType =
      cast<ShapedType>(feeder.getWeightAttr().getType()).getElementType();
  return plan;
}

static void applyFeedFwd(const DeepenPlan &plan) {
  FeedFwdOp ff = plan.feedFwd;
  MLIRContext *ctx = ff.getContext();
  unsigned at = plan.hiddenIndex + 1; // the new hidden site
  size_t numHidden = ff.getHiddenDims().size();

  ReferenceSnapshot refs(getParentModel(ff));
  shiftPositionalKeys(plan.container, plan.site, 1);
  OpBuilder b(ctx);
  b.setInsertionPointAfter(plan.site);
  LinearOp lin = createIdentityLinear(b, plan.site->getLoc(), positionalKey(at),
                                      plan.dim, plan.elementType);
  copyMode(plan.container, lin);
  refs.retarget();

  SmallVector<int64_t> hidden(ff.getHiddenDims());
  hidden.insert(hidden.begin() + at, plan.dim);
  ff.setHiddenDims(hidden);
  if (ArrayAttr acts = ff.getActivationsAttr()) {
    SmallVector<Attribute> list(acts.begin(), acts.end());
    list.insert(list.begin() + at,
                ActivationKindAttr::get(ctx, ActivationKind::relu));
    ff.setActivationsAttr(ArrayAttr::get(ctx, list));
  }
  double scalar = ff.getDropout().convertToDouble();
  if (ff.getDropoutProbsAttr() || scalar != 0.0) {
    SmallVector<double> probs;
    for (unsigned i = 0; i < numHidden; ++i)
      probs.push_back(ff.dropoutFor(i));
    probs.insert(probs.begin() + at, 0.0);
    SmallVector<Attribute> attrs;
    for (double p : probs)
      attrs.push_back(FloatAttr::get(Float64Type::get(ctx), p));
    ff.setDropoutProbsAttr(ArrayAttr::get(ctx, attrs));
  }
}

static void applySequential(const DeepenPlan &plan) {
  auto seq = cast<SequentialOp>(plan.container);
  MLIRContext *ctx = seq.getContext();
  std::string linKey, reluKey;
  ReferenceSnapshot refs(getParentModel(seq));
  if (seq.getKeying() == Keying::positional) {
    int64_t at = indexIn(seq, plan.site) + 1;
    shiftPositionalKeys(seq, plan.site, 2);
    linKey = positionalKey(at);
    reluKey = positionalKey(at + 1);
  } else {
    for (unsigned n = 0;; ++n) {
      linKey = "_nnx_deepen_linear_" + std::to_string(n);
      reluKey = "_nnx_deepen_relu_" + std::to_string(n);
      if (!lookupChild(seq, linKey) && !lookupChild(seq, reluKey))
        break;
    }
  }
  OpBuilder b(ctx);
  b.setInsertionPointAfter(plan.site);
  Location loc = plan.site->getLoc();
  LinearOp lin =
      createIdentityLinear(b, loc, linKey, plan.dim, plan.elementType);
  copyMode(seq, lin);
  auto relu = ReLUOp::create(b, loc, reluKey, /*train=*/false, nullptr, nullptr,
                             nullptr, nullptr, nullptr);
  copyMode(seq, relu);
  refs.retarget();
}

LogicalResult mlir::nnx::deepen(ModelOp model, StringRef after) {
  if (failed(refuseRecipeModel(model, kPass)))
    return failure();
  FailureOr<Operation *> slot = lookupSlot(model, after, kPass, "after");
  if (failed(slot))
    return failure();
  Operation *container = (*slot)->getParentOp();
  FailureOr<DeepenPlan> plan = failure();
  if (auto list = dyn_cast<ModuleListOp>(container)) {
    plan = planFeedFwd(list, *slot);
  } else if (auto seq = dyn_cast<SequentialOp>(container)) {
    plan = planSequential(seq, *slot);
  } else {
    InFlightDiagnostic diag = refuse(*slot, kPass, "site");
    if (isa<ModelOp>(container))
      diag << "is the root module: there is no container to insert into";
    else
      diag << "is a child of '" << container->getName()
           << "': only 'nnx.sequential' and a feed_fwd's 'layers' are "
              "rebuilt";
    if (!isa<ModelOp>(container))
      diag.attachNote(container->getLoc()) << "container is here";
    return diag;
  }
  if (failed(plan) ||
      failed(checkHoldable(plan->site, {plan->dim, plan->dim}, kPass, "site",
                           "would insert an identity Linear of")))
    return failure();
  if (plan->feedFwd)
    applyFeedFwd(*plan);
  else
    applySequential(*plan);
  return success();
}

namespace {
struct NNXDeepenPass
    : public mlir::nnx::impl::NNXDeepenPassBase<NNXDeepenPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(deepen(getOperation(), after)))
      signalPassFailure();
  }
};
} // namespace
