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

/// Whether `op` is a layer a kernel is made of: a linalg op on tensors
/// whose body reads nothing from outside but constants (a gather reading a
/// captured table stays where the table's layout can follow it), and that
/// is not a lone fill.
bool isLayerRoot(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      isa<linalg::FillOp>(op) || isArgumentLayout(op))
    return false;
  SetVector<Value> captured;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  return llvm::all_of(captured, [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->hasTrait<OpTrait::ConstantLike>();
  });
}

/// The producer of `operand` that moves into `root`'s kernel, if any: used
/// by `root` alone, in the same block, and one of a destination's fill, an
/// input's zero padding (a convolution folds it into its own copy of the
/// input), an argument's layout (isArgumentLayout) or a static empty input
/// (a pooling window).
Operation *getPulledProducer(OpOperand &operand, Operation *root) {
  Operation *def = operand.get().getDefiningOp();
  if (!def || def->getBlock() != root->getBlock() || !operand.get().hasOneUse())
    return nullptr;
  auto dps = cast<DestinationStyleOpInterface>(root);
  if (dps.isDpsInit(&operand))
    return isa<linalg::FillOp>(def) ? def : nullptr;
  if (isa<tensor::PadOp>(def) || isArgumentLayout(def))
    return def;
  auto empty = dyn_cast<tensor::EmptyOp>(def);
  return empty && empty->getNumOperands() == 0 ? def : nullptr;
}

/// Gives each argument layout of `fn` its own static empty destination
/// (CSE merges equal ones), so that the destination moves into the kernel
/// with it: a destination from outside would be a kernel argument, and
/// the layout a permutation at every call rather than a parameter layout.
void privatizeLayoutDestinations(func::FuncOp fn) {
  fn.walk([](linalg::TransposeOp transpose) {
    auto empty = transpose.getInit().getDefiningOp<tensor::EmptyOp>();
    if (!isArgumentLayout(transpose) || !empty ||
        empty->getNumOperands() != 0 || empty->hasOneUse())
      return;
    OpBuilder b(transpose);
    transpose.getInitMutable().assign(b.clone(*empty)->getResult(0));
  });
}

/// The group of `root`: its pulled producers (with an argument layout's
/// static empty destination) in block order, then `root`.
SmallVector<Operation *> getLayerGroup(Operation *root) {
  SmallVector<Operation *> group;
  for (OpOperand &operand : root->getOpOperands()) {
    Operation *producer = getPulledProducer(operand, root);
    if (!producer || llvm::is_contained(group, producer))
      continue;
    group.push_back(producer);
    if (!isArgumentLayout(producer))
      continue;
    auto empty =
        cast<linalg::TransposeOp>(producer).getInit().getDefiningOp<tensor::EmptyOp>();
    if (empty && empty->getNumOperands() == 0 && empty->hasOneUse())
      group.push_back(empty);
  }
  llvm::sort(group,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  group.push_back(root);
  return group;
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
      privatizeLayoutDestinations(fn);
      SmallVector<Operation *> roots;
      for (Operation &op : fn.getBody().front())
        if (isLayerRoot(&op))
          roots.push_back(&op);
      for (Operation *root : roots)
        outliner.outline(fn, getLayerGroup(root));
      if (!roots.empty())
        nnx::markAsGlue(fn);
    }
  }
};
} // namespace
