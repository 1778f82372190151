//===- ConsumerChain.cpp - where a widen target's units go ------*- C++ -*-===//
//
// The walk nnx-widen proves its consumer with: from a Linear (units: its
// output features) or a convolution (units: its output channels) through the
// modules that keep each unit separate, to the Linear or convolution whose
// input the units are.
//
//===----------------------------------------------------------------------===//
#include "SurgeryUtils.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

/// Refuses a container whose forward is not the stock one or that carries
/// hooks: its execution order is not proven by its children.
static LogicalResult checkOrderingContainer(Operation *container,
                                            StringRef pass) {
  return checkRefusable(container, Subclass | Hooks, pass, "container");
}

/// What a rebuild of the consumer may not drop or change.
static constexpr unsigned kConsumerProperties = AllRebuildProperties | Called;
/// What a module between a widen target and its consumer may not carry.
static constexpr unsigned kPathProperties = Hooks | Subclass | Aliases;

int64_t surgery::getUnitCount(Operation *target) {
  if (auto conv = dyn_cast<ConvLayerOpInterface>(target))
    return conv.getOutChannelCount();
  return cast<LinearOp>(target).getOutFeaturesCount();
}

namespace {
/// The walk from a widen target over the following siblings of its
/// `nnx.sequential`. A Linear target's units are its output's last dim; a
/// convolution's are dim 1 (the channels), which keep their blocks of
/// positions through pooling, and through an `nnx.flatten` of every dim
/// after the batch, after which each channel owns `block` consecutive
/// features.
class SequentialWalk {
public:
  SequentialWalk(Operation *target, bool throughBatchNorm, StringRef pass,
                 ConsumerChain &chain)
      : target(target), conv(dyn_cast<ConvLayerOpInterface>(target)),
        units(getUnitCount(target)), throughBatchNorm(throughBatchNorm),
        pass(pass), chain(chain) {}

  /// Decides sibling `s`; true ends the walk: `s` is the consumer, or it was
  /// refused (then `result` is a failure).
  bool visit(Operation *s);

  LogicalResult result = success();

private:
  LogicalResult acceptConsumer(Operation *s);
  LogicalResult acceptLinearConsumer(LinearOp lin);
  LogicalResult acceptConvConsumer(ConvLayerOpInterface consumer);
  LogicalResult acceptBatchNorm(BatchNormOp bn);
  LogicalResult acceptFlatten(FlattenOp flatten);
  LogicalResult acceptBlock(Operation *s, int64_t features, StringRef what);
  LogicalResult refuseOnPath(Operation *s);

  Operation *target;
  ConvLayerOpInterface conv; // null for a Linear target
  int64_t units;
  bool throughBatchNorm;
  StringRef pass;
  ConsumerChain &chain;
  bool flattened = false;
  int64_t block = 1; // features per unit; 0: after a flatten, not known yet
};
} // namespace

bool SequentialWalk::visit(Operation *s) {
  if (auto alias = dyn_cast<AliasOp>(s)) {
    result = refuseAliasSlot(alias, pass, "module on the path");
    return true;
  }
  if (isa<LinearOp, ConvLayerOpInterface>(s)) {
    result = acceptConsumer(s);
    return true;
  }
  std::optional<FeatureDependence> dep = getFeatureDependence(s);
  bool perUnit = dep == FeatureDependence::Elementwise ||
                 (conv && !flattened && dep == FeatureDependence::PerChannel);
  if (auto bn = dyn_cast<BatchNormOp>(s); bn && conv && throughBatchNorm)
    result = acceptBatchNorm(bn);
  else if (auto flatten = dyn_cast<FlattenOp>(s); flatten && conv)
    result = acceptFlatten(flatten);
  else if (!perUnit)
    result = refuseOnPath(s);
  if (succeeded(result))
    result = checkRefusable(s, kPathProperties, pass, "module on the path");
  if (failed(result))
    return true;
  chain.path.push_back(s);
  return false;
}

LogicalResult SequentialWalk::refuseOnPath(Operation *s) {
  InFlightDiagnostic diag = refuse(s, pass, "module on the path");
  if (isWidthDependent(s))
    diag << "is width-dependent: duplicating units through it changes "
            "the output";
  else
    diag << "is not elementwise: the consumer of '" << getDisplayPath(target)
         << "' cannot be proven through it";
  if (isa<BatchNormOp>(s) && conv)
    diag << " (option through-batchnorm=true copies the statistics of each "
            "replicated channel, in eval mode)";
  diag.attachNote(target->getLoc()) << "target is here";
  return diag;
}

/// Accepts `features` (the size of a module that reads the units) as
/// `units` blocks; after a flatten the first such size fixes the block.
LogicalResult SequentialWalk::acceptBlock(Operation *s, int64_t features,
                                          StringRef what) {
  int64_t expected = block ? units * block : 0;
  if (block == 0 && features % units == 0) {
    block = features / units;
    return success();
  }
  if (features == expected)
    return success();
  InFlightDiagnostic diag = refuse(s, pass, what)
                            << "takes " << features << " features, ";
  if (block == 0)
    diag << "not a multiple of the " << units << " channels of '"
         << getDisplayPath(target) << "'";
  else
    diag << "not the " << expected << " that '" << getDisplayPath(target)
         << "' produces";
  return diag;
}

LogicalResult SequentialWalk::acceptBatchNorm(BatchNormOp bn) {
  if (bn.getTrain()) {
    InFlightDiagnostic diag =
        refuse(bn, pass, "module on the path")
        << "is in train mode: it normalizes by the batch's statistics, which "
           "replicated units change; option through-batchnorm=true needs "
           "eval mode";
    diag.attachNote(target->getLoc()) << "target is here";
    return diag;
  }
  int64_t features =
      cast<ShapedType>(bn.getRunningMean().getType()).getDimSize(0);
  if (failed(acceptBlock(bn, features, "module on the path")))
    return failure();
  chain.batchNorms.push_back({bn, block});
  return success();
}

LogicalResult SequentialWalk::acceptFlatten(FlattenOp flatten) {
  int64_t rank = conv.getSpatialRank() + 2;
  int64_t start = static_cast<int64_t>(flatten.getStartDim());
  int64_t end = static_cast<int64_t>(flatten.getEndDim());
  start += start < 0 ? rank : 0;
  end += end < 0 ? rank : 0;
  if (flattened || start != 1 || end != rank - 1) {
    InFlightDiagnostic diag = refuse(flatten, pass, "module on the path");
    if (flattened)
      diag << "follows another 'nnx.flatten'";
    else
      diag << "flattens dims " << static_cast<int64_t>(flatten.getStartDim())
           << " to " << static_cast<int64_t>(flatten.getEndDim())
           << " of a rank-" << rank
           << " input; only dims 1 to -1 keep each channel of '"
           << getDisplayPath(target) << "' one block of features";
    diag.attachNote(target->getLoc()) << "target is here";
    return diag;
  }
  flattened = true;
  block = 0;
  return success();
}

LogicalResult SequentialWalk::acceptConsumer(Operation *s) {
  if (auto lin = dyn_cast<LinearOp>(s))
    return acceptLinearConsumer(lin);
  return acceptConvConsumer(cast<ConvLayerOpInterface>(s));
}

LogicalResult SequentialWalk::acceptLinearConsumer(LinearOp lin) {
  if (conv && !flattened) {
    InFlightDiagnostic diag =
        refuse(lin, pass, "consumer")
        << "reads the last dim of the output of '" << getDisplayPath(target)
        << "', not its channels (dim 1); an 'nnx.flatten' of dims 1 to -1 "
           "between them makes the channels its input features";
    diag.attachNote(target->getLoc()) << "target is here";
    return diag;
  }
  if (failed(checkRefusable(lin, kConsumerProperties, pass, "consumer")))
    return failure();
  int64_t features =
      cast<ShapedType>(lin.getWeightAttr().getType()).getDimSize(1);
  if (failed(acceptBlock(lin, features, "consumer")))
    return failure();
  chain.consumer = lin;
  chain.columnsPerUnit = block;
  return success();
}

LogicalResult
SequentialWalk::acceptConvConsumer(ConvLayerOpInterface consumer) {
  if (!conv || flattened) {
    InFlightDiagnostic diag = refuse(consumer, pass, "consumer")
                              << "reads channels (dim 1), but '"
                              << getDisplayPath(target) << "' "
                              << (conv ? "reaches it through an 'nnx.flatten'"
                                       : "grows the last dim of its input");
    diag.attachNote(target->getLoc()) << "target is here";
    return diag;
  }
  if (consumer.getGroupCount() != 1) {
    InFlightDiagnostic diag =
        refuse(consumer, pass, "consumer")
        << "has groups = " << consumer.getGroupCount()
        << ": each filter reads one group of the input channels, so "
           "replicated channels cannot be rescaled within it";
    diag.attachNote(target->getLoc()) << "target is here";
    return diag;
  }
  if (failed(checkRefusable(consumer, kConsumerProperties, pass, "consumer")))
    return failure();
  chain.consumer = consumer;
  chain.columnsPerUnit = 1;
  for (int64_t k : consumer.getKernelSizes())
    chain.columnsPerUnit *= k;
  return success();
}

/// The consumer of `target` in `seq`: the next Linear or convolution,
/// through modules that keep the units apart (the chain's path).
static FailureOr<ConsumerChain> findSequentialConsumer(Operation *target,
                                                       SequentialOp seq,
                                                       bool throughBatchNorm,
                                                       StringRef pass) {
  if (failed(checkOrderingContainer(seq, pass)))
    return failure();
  ConsumerChain chain;
  chain.container = seq;
  SequentialWalk walk(target, throughBatchNorm, pass, chain);
  Operation *stopAt = walkSiblings(target, /*forward=*/true,
                                   [&](Operation *s) { return walk.visit(s); });
  if (failed(walk.result))
    return failure();
  if (!stopAt) {
    InFlightDiagnostic diag =
        refuse(target, pass, "target")
        << "has no consumer: no 'nnx.linear'"
        << (isa<LinearOp>(target) ? "" : " or convolution")
        << " follows it in its sequential '" << getDisplayPath(seq) << "'";
    diag.attachNote(seq.getLoc()) << "container is here";
    return diag;
  }
  return chain;
}

/// The refusal of a module_list child that is not a stock net's layer.
static InFlightDiagnostic refuseNotStock(Operation *slot, ModuleListOp list,
                                         StringRef pass, StringRef role) {
  InFlightDiagnostic diag =
      refuse(slot, pass, role)
      << "is in an 'nnx.module_list' that is not the 'layers' of a stock "
         "'nnx.feed_fwd' (or the 'layers' / 'fcs' of a stock "
         "'nnx.conv_nn'): registration order is not data flow";
  diag.attachNote(list.getLoc()) << "container is here";
  return diag;
}

/// Refuses layer `index` of `net` unless it is a hidden site whose
/// activation keeps duplicated units duplicated.
static LogicalResult checkHiddenLayer(Operation *target,
                                      StockNetOpInterface net, unsigned index,
                                      StringRef pass) {
  if (index >= net.getSiteCount()) {
    InFlightDiagnostic diag = refuse(target, pass, "target")
                              << "has no consumer: it is the output layer "
                                 "of "
                              << describeStockNet(net);
    diag.attachNote(net.getLoc()) << "container is here";
    return diag;
  }
  if (net.activationFor(index) == ActivationKind::softmax) {
    InFlightDiagnostic diag =
        refuse(net, pass, "container")
        << "applies activation_for(" << index << ") = 'softmax' after '"
        << getSlotName(target)
        << "', which is width-dependent: duplicating units through it "
           "changes the output";
    diag.attachNote(target->getLoc()) << "target is here";
    return diag;
  }
  return success();
}

/// The consumer of layer `index` of `net`: layer `index + 1`, a Linear (or
/// after a conv block, the next block's convolution) a rebuild may change.
static FailureOr<Operation *> nextLayerConsumer(Operation *target,
                                                StockNetOpInterface net,
                                                unsigned index,
                                                StringRef pass) {
  Operation *next = net.getLayerAt(index + 1);
  bool accepted = isa_and_nonnull<LinearOp>(next) ||
                  (isa<ConvLayerOpInterface>(target) &&
                   isa_and_nonnull<ConvLayerOpInterface>(next));
  if (!accepted) {
    InFlightDiagnostic diag =
        refuse(target, pass, "target")
        << "has no consumer: '" << (next ? getSlotName(next) : "?")
        << "' is not an 'nnx.linear'"
        << (isa<LinearOp>(target) ? "" : " or a convolution");
    if (next)
      diag.attachNote(next->getLoc())
          << "'" << getSlotName(next) << "' is here";
    return diag;
  }
  if (failed(checkRefusable(next, kConsumerProperties, pass, "consumer")))
    return failure();
  return next;
}

/// The consumer of `slot` in `list`, which must be a layer list of a stock
/// net: layer `i + 1` through `activation_for(i)` / `dropout_for(i)` (and a
/// conv_nn's pools, which keep channels apart).
static FailureOr<ConsumerChain>
findStockNetConsumer(Operation *slot, ModuleListOp list, StringRef pass) {
  StockNetOpInterface net = getStockNetOf(slot);
  if (!net || !isa<LinearOp, ConvLayerOpInterface>(slot))
    return refuseNotStock(slot, list, pass, "target");
  if (failed(checkOrderingContainer(net, pass)) ||
      failed(checkOrderingContainer(list, pass)))
    return failure();
  unsigned index = *net.getLayerIndex(slot);
  if (failed(checkHiddenLayer(slot, net, index, pass)))
    return failure();
  FailureOr<Operation *> consumer = nextLayerConsumer(slot, net, index, pass);
  if (failed(consumer))
    return failure();
  ConsumerChain chain;
  chain.container = net;
  chain.hiddenIndex = index;
  chain.consumer = *consumer;
  // A conv consumer reads each channel through its kernel taps; after the
  // last conv block the global pool leaves one feature per channel.
  if (auto conv = dyn_cast<ConvLayerOpInterface>(*consumer))
    for (int64_t k : conv.getKernelSizes())
      chain.columnsPerUnit *= k;
  return chain;
}

FailureOr<ConsumerChain> surgery::findConsumer(Operation *target,
                                               bool throughBatchNorm,
                                               StringRef pass) {
  Operation *parent = target->getParentOp();
  if (auto seq = dyn_cast<SequentialOp>(parent))
    return findSequentialConsumer(target, seq, throughBatchNorm, pass);
  if (auto list = dyn_cast<ModuleListOp>(parent))
    return findStockNetConsumer(target, list, pass);
  if (isa<ModelOp>(parent))
    return refuse(target, pass, "target")
           << "is the root module: it has no consumer";
  auto custom = dyn_cast<CustomModuleOp>(parent);
  if (auto lin = dyn_cast<LinearOp>(target); custom && lin)
    return findForwardConsumer(lin, custom, pass);
  InFlightDiagnostic diag =
      refuse(target, pass, "target")
      << "is a child of '" << parent->getName()
      << "', whose registration order is not data flow; only 'nnx.sequential', "
         "the stock nets and, for a Linear, a custom module's forward prove "
         "the consumer";
  if (custom && isa<ConvLayerOpInterface>(target))
    diag << " (nnx-widen-channels and nnx-prune-channels edit a "
            "convolution's whole channel group, proven from the forward)";
  diag.attachNote(parent->getLoc()) << "container is here";
  return diag;
}
