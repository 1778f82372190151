//===- Deepen.cpp - Net2DeeperNet after a ReLU ------------------*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"
#include "nnx/Support/ErrorKind.h"

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
  Operation *container = nullptr; // sequential or a stock net's layer list
  Operation *site = nullptr;      // the slot the new modules follow
  int64_t dim = 0;
  Type elementType;
  StockNetOpInterface net; // set for a stock net's site
  unsigned hiddenIndex = 0;
  /// Set when a convolution feeds the site: the identity is a convolution
  /// of its spatial rank with a `kernelSize` window.
  ConvLayerOpInterface feederConv;
  int64_t kernelSize = 0;
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

/// A `dim x dim` convolution of spatial rank `rank` whose centre tap is the
/// identity (`kernel` odd, "same" padding, stride 1, groups 1), bias 0.
template <typename ConvOp>
static ConvOp createIdentityConv(OpBuilder &b, Location loc, StringRef key,
                                 int64_t dim, int64_t kernel, unsigned rank,
                                 Type elt) {
  int64_t taps = rank == 1 ? kernel : kernel * kernel;
  std::vector<double> weight(dim * dim * taps, 0.0), zeros(dim, 0.0);
  for (int64_t c = 0; c < dim; ++c)
    weight[(c * dim + c) * taps + taps / 2] = 1.0;
  SmallVector<int64_t> shape{dim, dim}, window(rank, kernel), ones(rank, 1),
      pad(rank, kernel / 2);
  shape.append(rank, kernel);
  return ConvOp::create(b, loc, key, /*train=*/false, /*hooks=*/nullptr,
                        /*requires_grad=*/nullptr, /*parametrizations=*/nullptr,
                        /*pruned=*/nullptr, /*subclass=*/nullptr, dim, dim,
                        window, ones, pad, ones, /*groups=*/1,
                        makeTensor(RankedTensorType::get(shape, elt), weight),
                        makeTensor(RankedTensorType::get({dim}, elt), zeros));
}

/// The identity layer `plan` inserts: a Linear, or a convolution after a
/// convolution.
static Operation *createIdentity(OpBuilder &b, Location loc, StringRef key,
                                 const DeepenPlan &plan) {
  ConvLayerOpInterface feeder = plan.feederConv;
  if (!feeder)
    return createIdentityLinear(b, loc, key, plan.dim, plan.elementType);
  unsigned rank = feeder.getSpatialRank();
  if (rank == 1)
    return createIdentityConv<Conv1dOp>(b, loc, key, plan.dim, plan.kernelSize,
                                        rank, plan.elementType);
  return createIdentityConv<Conv2dOp>(b, loc, key, plan.dim, plan.kernelSize,
                                      rank, plan.elementType);
}

/// Refuses a site of `net` (layer `i`) whose activation is not a ReLU.
static LogicalResult checkReluSite(StockNetOpInterface net, Operation *slot,
                                   unsigned i) {
  if (i >= net.getSiteCount()) {
    InFlightDiagnostic diag = refuse(slot, kPass, "site")
                              << "is the output layer of "
                              << describeStockNet(net)
                              << ": no activation follows it";
    diag.attachNote(net.getLoc())
        << net->getName().stripDialect() << " is here";
    return diag;
  }
  ActivationKind act = net.activationFor(i);
  if (act == ActivationKind::relu)
    return success();
  InFlightDiagnostic diag =
      refuse(net, kPass, "container")
      << "applies activation_for(" << i << ") = '" << stringifyEnum(act)
      << "' after '" << getSlotName(slot) << "' ("
      << (net.hasActivationOverrides() ? "per-layer override" : "the default")
      << "); deepen only preserves the function after a ReLU";
  diag.attachNote(slot->getLoc()) << "site is here";
  return diag;
}

static FailureOr<DeepenPlan> planStockNet(ModuleListOp list, Operation *slot) {
  DeepenPlan plan;
  StockNetOpInterface net = getStockNetOf(slot);
  if (!net) {
    InFlightDiagnostic diag =
        refuse(slot, kPass, "site")
        << "is in an 'nnx.module_list' that is not the 'layers' of a stock "
           "'nnx.feed_fwd' (or the 'layers' / 'fcs' of a stock "
           "'nnx.conv_nn')";
    diag.attachNote(list.getLoc()) << "container is here";
    return diag;
  }
  if (failed(checkRefusable(net, Subclass | Hooks | OwnState, kPass,
                            "container")) ||
      failed(checkRefusable(list, Subclass | Hooks | OwnState, kPass,
                            "container")))
    return failure();
  unsigned i = *net.getLayerIndex(slot);
  if (failed(checkReluSite(net, slot, i)))
    return failure();
  if (!isa<LinearOp, ConvLayerOpInterface>(slot)) {
    InFlightDiagnostic diag = refuse(slot, kPass, "site");
    if (isa<FeedFwdOp>(net))
      diag << "is not an 'nnx.linear': the ReLU is not fed by a Linear";
    else
      diag << "is not an 'nnx.linear' or a convolution: the ReLU is not fed "
              "by one";
    return diag;
  }
  if (failed(checkRefusable(slot, Lazy, kPass, "feeding layer")))
    return failure();
  plan.container = list;
  plan.site = slot;
  plan.net = net;
  plan.hiddenIndex = i;
  plan.dim = getUnitCount(slot);
  plan.elementType =
      cast<ShapedType>(slot->getAttrOfType<ElementsAttr>("weight").getType())
          .getElementType();
  plan.feederConv = dyn_cast<ConvLayerOpInterface>(slot);
  if (auto cnn = dyn_cast<ConvNNOp>(net.getOperation()); cnn && plan.feederConv)
    plan.kernelSize = cnn.getKernelSize();
  return plan;
}

/// The Linear or convolution that feeds the ReLU at `slot` of `seq`,
/// through elementwise or norm modules (and, after a convolution, pooling).
static FailureOr<Operation *> findFeeder(SequentialOp seq, Operation *slot) {
  LogicalResult result = success();
  Operation *feeder = nullptr, *pool = nullptr;
  walkSiblings(slot, /*forward=*/false, [&](Operation *s) {
    Operation *m = resolveAlias(s);
    if (m && isa<LinearOp, ConvLayerOpInterface>(m)) {
      feeder = m;
      result = checkRefusable(m, Lazy, kPass, "feeding layer");
      return true;
    }
    if (m && getFeatureDependence(m) == FeatureDependence::PerChannel) {
      pool = pool ? pool : s;
      return false;
    }
    if (m && (isElementwiseModule(m) || isNormModule(m)))
      return false;
    InFlightDiagnostic diag = refuse(s, kPass, "module before the site")
                              << "is neither elementwise nor a norm: the ReLU "
                                 "must be fed by an 'nnx.linear' or a "
                                 "convolution through elementwise or norm "
                                 "modules only (and pooling after a "
                                 "convolution)";
    diag.attachNote(slot->getLoc()) << "site is here";
    result = diag;
    return true;
  });
  if (failed(result))
    return failure();
  if (pool && !isa_and_nonnull<ConvLayerOpInterface>(feeder)) {
    InFlightDiagnostic diag = refuse(pool, kPass, "module before the site")
                              << "pools channels, but the ReLU is not fed by a "
                                 "convolution";
    diag.attachNote(slot->getLoc()) << "site is here";
    return diag;
  }
  if (!feeder) {
    InFlightDiagnostic diag = refuse(slot, kPass, "site")
                              << "is not fed by an 'nnx.linear' or a "
                                 "convolution in its sequential '"
                              << getDisplayPath(seq) << "'";
    diag.attachNote(seq.getLoc()) << "container is here";
    return diag;
  }
  return feeder;
}

/// Option kernel-size: the identity convolution's odd window (0: 3); only
/// for a site a convolution feeds.
static LogicalResult checkKernelSize(DeepenPlan &plan, int64_t kernelSize) {
  if (!plan.feederConv) {
    if (kernelSize == 0)
      return success();
    return refuse(plan.site, kPass, "site")
           << "is fed by an 'nnx.linear'; option kernel-size=" << kernelSize
           << " applies to a site a convolution feeds";
  }
  plan.kernelSize = kernelSize == 0 ? 3 : kernelSize;
  if (plan.kernelSize < 1 || plan.kernelSize % 2 == 0)
    return refuse(plan.site, kPass, "site")
           << "needs an identity convolution with a centre tap; option "
              "kernel-size="
           << kernelSize << " must be odd and positive";
  return success();
}

static FailureOr<DeepenPlan> planSequential(SequentialOp seq, Operation *slot,
                                            int64_t kernelSize) {
  DeepenPlan plan;
  ModuleOpInterface site = resolveAlias(slot);
  if (!isa<ReLUOp>(site)) {
    InFlightDiagnostic diag =
        slot->emitError() << kPass << ": type error: site '"
                          << getDisplayPath(slot) << "' is '" << site->getName()
                          << "', not 'nnx.relu'; the identity-Linear "
                             "insertion only preserves the function after "
                             "a ReLU";
    return setErrorKind(diag, ErrorKind::TypeError);
  }
  if (failed(checkRefusable(site, Subclass | Hooks, kPass, "site")))
    return failure();
  if (failed(
          checkRefusable(seq, Subclass | Hooks | OwnState, kPass, "container")))
    return failure();
  FailureOr<Operation *> feeder = findFeeder(seq, slot);
  if (failed(feeder))
    return failure();
  plan.container = seq;
  plan.site = slot;
  plan.dim = getUnitCount(*feeder);
  plan.elementType =
      cast<ShapedType>(
          (*feeder)->getAttrOfType<ElementsAttr>("weight").getType())
          .getElementType();
  plan.feederConv = dyn_cast<ConvLayerOpInterface>(*feeder);
  if (failed(checkKernelSize(plan, kernelSize)))
    return failure();
  return plan;
}

static void applyStockNet(const DeepenPlan &plan) {
  StockNetOpInterface net = plan.net;
  ReferenceSnapshot refs(getParentModel(net));
  shiftPositionalKeys(plan.site, 1);
  OpBuilder b(net.getContext());
  b.setInsertionPointAfter(plan.site);
  Operation *identity =
      createIdentity(b, plan.site->getLoc(),
                     positionalKey(positionInBlock(plan.site) + 1), plan);
  copyMode(plan.container, identity);
  refs.retarget();
  net.insertSite(plan.hiddenIndex + 1, plan.dim,
                 plan.feederConv ? plan.kernelSize : 0);
}

static void applySequential(const DeepenPlan &plan) {
  auto seq = cast<SequentialOp>(plan.container);
  MLIRContext *ctx = seq.getContext();
  std::string linKey, reluKey;
  ReferenceSnapshot refs(getParentModel(seq));
  if (seq.getKeying() == Keying::positional) {
    int64_t at = positionInBlock(plan.site) + 1;
    shiftPositionalKeys(plan.site, 2);
    linKey = positionalKey(at);
    reluKey = positionalKey(at + 1);
  } else {
    StringRef kind = plan.feederConv ? "conv" : "linear";
    for (unsigned n = 0;; ++n) {
      linKey = ("_nnx_deepen_" + kind + "_" + Twine(n)).str();
      reluKey = "_nnx_deepen_relu_" + std::to_string(n);
      if (!lookupChild(seq, linKey) && !lookupChild(seq, reluKey))
        break;
    }
  }
  OpBuilder b(ctx);
  b.setInsertionPointAfter(plan.site);
  Location loc = plan.site->getLoc();
  Operation *identity = createIdentity(b, loc, linKey, plan);
  copyMode(seq, identity);
  auto relu = ReLUOp::create(b, loc, reluKey, /*train=*/false, nullptr, nullptr,
                             nullptr, nullptr, nullptr);
  copyMode(seq, relu);
  refs.retarget();
}

LogicalResult mlir::nnx::deepen(ModelOp model, StringRef after,
                                int64_t kernelSize) {
  FailureOr<Operation *> slot = lookupEditSlot(model, after, kPass, "after");
  if (failed(slot))
    return failure();
  Operation *container = (*slot)->getParentOp();
  FailureOr<DeepenPlan> plan = failure();
  if (auto list = dyn_cast<ModuleListOp>(container)) {
    plan = planStockNet(list, *slot);
    if (succeeded(plan) && kernelSize != 0 &&
        failed(checkKernelSize(*plan, kernelSize)))
      return failure();
  } else if (auto seq = dyn_cast<SequentialOp>(container)) {
    plan = planSequential(seq, *slot, kernelSize);
  } else {
    InFlightDiagnostic diag = refuse(*slot, kPass, "site");
    if (isa<ModelOp>(container))
      diag << "is the root module: there is no container to insert into";
    else
      diag << "is a child of '" << container->getName()
           << "': only 'nnx.sequential' and a feed_fwd's 'layers' are "
              "rebuilt (or a conv_nn's 'layers' / 'fcs')";
    if (!isa<ModelOp>(container))
      diag.attachNote(container->getLoc()) << "container is here";
    return diag;
  }
  if (failed(plan))
    return failure();
  SmallVector<int64_t> shape{plan->dim, plan->dim};
  if (plan->feederConv)
    shape.append(plan->feederConv.getSpatialRank(), plan->kernelSize);
  if (failed(checkHoldable(plan->site, shape, kPass, "site",
                           plan->feederConv
                               ? "would insert an identity convolution of"
                               : "would insert an identity Linear of")))
    return failure();
  if (plan->net)
    applyStockNet(*plan);
  else
    applySequential(*plan);
  return success();
}

namespace {
struct NNXDeepenPass
    : public mlir::nnx::impl::NNXDeepenPassBase<NNXDeepenPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(deepen(getOperation(), after, kernelSize)))
      signalPassFailure();
  }
};
} // namespace
