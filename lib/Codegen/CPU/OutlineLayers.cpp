//===- OutlineLayers.cpp - linalg ops into shared kernels -------*- C++ -*-===//
//
// `nnx-outline-layers`: every top-level linalg op of a function on tensors
// (with the fill of its destination and the padding of its input) becomes
// a call of a private kernel function; equal kernels are kept once (see
// the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "KernelOutliner.h"
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXOUTLINELAYERSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// A transpose of a function argument (or of a reshape of one) read by one
/// op: a weight permuted to the layout its reader wants, as
/// nnx-channels-last writes a conv's filter. It moves into its reader's
/// kernel, where the parameter layouts fold it into the argument
/// (nnx/Codegen/CPU/Layouts.h); a reshape stays, and its result is the
/// kernel's argument.
bool isArgumentLayout(Operation *op) {
  auto transpose = dyn_cast_or_null<linalg::TransposeOp>(op);
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      !transpose->getResult(0).hasOneUse())
    return false;
  Value input = transpose.getInput();
  if (auto reshape = input.getDefiningOp<tensor::ExpandShapeOp>())
    input = reshape.getSrc();
  else if (auto reshape = input.getDefiningOp<tensor::CollapseShapeOp>())
    input = reshape.getSrc();
  return isa<BlockArgument>(input);
}

/// Whether `op`'s body reads nothing from outside but constants (a gather
/// reading a captured table stays where the table's layout can follow it).
bool readsOnlyConstants(Operation *op) {
  SetVector<Value> captured;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  return llvm::all_of(captured, [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->hasTrait<OpTrait::ConstantLike>();
  });
}

/// Whether `op` is a broadcast producer: an elementwise generic whose one
/// use is a linalg op of its block reading it through a projected
/// permutation onto fewer loops than the reader has (BatchNorm's
/// per-channel scale, which fusion keeps apart so as not to compute it per
/// element). It is computed in its reader's
/// kernel: a kernel of its own would be one more call per layer.
bool isBroadcastProducer(Operation *op) {
  auto producer = dyn_cast<linalg::GenericOp>(op);
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer->getNumResults() != 1 || !producer->getResult(0).hasOneUse() ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      !readsOnlyConstants(op))
    return false;
  OpOperand &use = *producer->getResult(0).getUses().begin();
  auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!reader || reader->getBlock() != op->getBlock())
    return false;
  AffineMap map = reader.getMatchingIndexingMap(&use);
  return map.isProjectedPermutation() && map.getNumResults() < map.getNumDims();
}

/// Whether `op` is a layer a kernel is made of: a linalg op on tensors
/// whose body reads nothing from outside but constants, that is not a
/// lone fill, and that does not move into its reader's kernel (an argument
/// layout, a broadcast producer).
bool isLayerRoot(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      isa<linalg::FillOp>(op) || isArgumentLayout(op) ||
      isBroadcastProducer(op))
    return false;
  return readsOnlyConstants(op);
}

/// The producer of `operand` that moves into `root`'s kernel, if any: used
/// by `root` alone, in the same block, and one of a destination's fill, an
/// input's zero padding (a convolution folds it into its own copy of the
/// input), an argument's layout (isArgumentLayout), a broadcast producer
/// (isBroadcastProducer) or a static empty input (a pooling window).
Operation *getPulledProducer(OpOperand &operand, Operation *root) {
  Operation *def = operand.get().getDefiningOp();
  if (!def || def->getBlock() != root->getBlock() || !operand.get().hasOneUse())
    return nullptr;
  auto dps = cast<DestinationStyleOpInterface>(root);
  if (dps.isDpsInit(&operand))
    return isa<linalg::FillOp>(def) ? def : nullptr;
  if (isa<tensor::PadOp>(def) || isArgumentLayout(def) ||
      isBroadcastProducer(def))
    return def;
  auto empty = dyn_cast<tensor::EmptyOp>(def);
  return empty && empty->getNumOperands() == 0 ? def : nullptr;
}

/// The static empty destination of `op`, a producer that moves into its
/// reader's kernel (an argument layout, a broadcast producer), if it has
/// one.
tensor::EmptyOp getStaticDestination(Operation *op) {
  if (!isArgumentLayout(op) && !isBroadcastProducer(op))
    return {};
  auto empty = cast<DestinationStyleOpInterface>(op)
                   .getDpsInits()[0]
                   .getDefiningOp<tensor::EmptyOp>();
  return empty && empty->getNumOperands() == 0 ? empty : tensor::EmptyOp();
}

/// Gives each producer that moves into its reader's kernel its own static
/// empty destination (CSE merges equal ones), so that the destination
/// moves with it: from outside it would be a kernel argument, and an
/// argument's layout a permutation at every call rather than a parameter
/// layout.
void privatizeDestinations(func::FuncOp fn) {
  for (Operation &op : fn.getBody().front()) {
    tensor::EmptyOp empty = getStaticDestination(&op);
    if (!empty || empty->hasOneUse())
      continue;
    OpBuilder b(&op);
    cast<DestinationStyleOpInterface>(op).getDpsInitsMutable()[0].assign(
        b.clone(*empty)->getResult(0));
  }
}

/// The group of `root`: its pulled producers in the order of the operands
/// they produce (each after its static empty destination), then `root`.
/// Not block order: where CSE left the producers must not make equal
/// layers' kernels differ (their arguments follow the group's order).
SmallVector<Operation *> getLayerGroup(Operation *root) {
  SmallVector<Operation *> group;
  for (OpOperand &operand : root->getOpOperands()) {
    Operation *producer = getPulledProducer(operand, root);
    if (!producer || llvm::is_contained(group, producer))
      continue;
    tensor::EmptyOp empty = getStaticDestination(producer);
    if (empty && empty->hasOneUse())
      group.push_back(empty);
    group.push_back(producer);
  }
  group.push_back(root);
  return group;
}

/// The elementwise consumer of convolution `root` that joins its kernel
/// as its epilogue (BatchNorm, ReLU, a residual add), if any: the one use
/// of the conv's result, in the same block, a layer root itself, an
/// all-parallel generic reading the result through the identity over its
/// own loops (so the result's shape is the consumer's iteration space).
/// The schedule then applies it to each block of the conv's result while
/// the block is in cache (ConvEpilogues.cpp).
linalg::GenericOp getEpilogue(Operation *root) {
  if (!linalg::isaConvolutionOpInterface(cast<linalg::LinalgOp>(root)) ||
      root->getNumResults() != 1 || !root->getResult(0).hasOneUse())
    return {};
  OpOperand &use = *root->getResult(0).getUses().begin();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || consumer->getBlock() != root->getBlock() ||
      !isLayerRoot(consumer) || consumer->getNumResults() != 1 ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      !consumer.getMatchingIndexingMap(&use).isIdentity() ||
      !consumer.getIndexingMapMatchingResult(consumer->getResult(0))
           .isIdentity())
    return {};
  return consumer;
}

struct NNXOutlineLayersPass
    : public mlir::nnx::impl::NNXOutlineLayersPassBase<NNXOutlineLayersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    nnx::KernelOutliner outliner(module, "_layer_");
    for (func::FuncOp fn : functions) {
      if (fn.isExternal())
        continue;
      privatizeDestinations(fn);
      SmallVector<Operation *> roots;
      for (Operation &op : fn.getBody().front())
        if (isLayerRoot(&op))
          roots.push_back(&op);
      // A convolution and its epilogue make one kernel: the conv's group,
      // then the epilogue's own producers and the epilogue.
      llvm::SmallPtrSet<Operation *, 8> epilogues;
      for (Operation *root : roots) {
        if (epilogues.contains(root))
          continue;
        SmallVector<Operation *> group = getLayerGroup(root);
        if (linalg::GenericOp epilogue = getEpilogue(root)) {
          epilogues.insert(epilogue);
          for (Operation *op : getLayerGroup(epilogue))
            if (op != root)
              group.push_back(op);
        }
        outliner.outline(fn, group);
      }
      if (!roots.empty())
        nnx::markAsGlue(fn);
    }
  }
};
} // namespace
