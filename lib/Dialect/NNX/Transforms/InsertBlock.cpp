//===- InsertBlock.cpp - an identity copy of a residual block ---*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXINSERTBLOCKPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-insert-block";

namespace {
/// Everything nnx-insert-block reads, checked before anything changes.
struct InsertPlan {
  CustomModuleOp block;
  /// The `nnx.module_list` (its parent's forward calls each block) or the
  /// positional `nnx.sequential` (it runs its children in order).
  Operation *list;
  /// The block's call in the chain (a module_list's block only).
  CallOp call;
  SmallVector<Operation *> zeroed;
};
} // namespace

/// Refuses a list whose keys are not its positions 0 .. n-1.
static LogicalResult checkPositional(Operation *list, Operation *slot) {
  int64_t i = 0;
  for (Operation &child : list->getRegion(0).front()) {
    if (SymbolTable::getSymbolName(&child).getValue() != positionalKey(i++)) {
      InFlightDiagnostic diag =
          refuse(slot, kPass, "block")
          << "is in a module_list whose keys are not its positions";
      diag.attachNote(child.getLoc())
          << "key '" << SymbolTable::getSymbolName(&child) << "' is here";
      return diag;
    }
  }
  return success();
}

/// The plan of a block in a positional sequential: its forward takes one
/// value and returns one of the same type (the copy runs on its output).
static FailureOr<InsertPlan> checkSequentialChain(CustomModuleOp block,
                                                  Operation *seq) {
  ForwardOp f = block.getForward();
  if (f && f.getNumArguments() == 1 && f.getNumResults() == 1 &&
      f.getArgument(0).getType() ==
          f.getBodyBlock().getTerminator()->getOperand(0).getType())
    return InsertPlan{block, seq, CallOp(), {}};
  return refuse(block, kPass, "block")
         << "does not return one value of its one input's type: a copy "
            "cannot follow it in the sequential";
}

/// The block at `after`, its list, its call in the chain.
static FailureOr<InsertPlan> findBlock(ModelOp model, StringRef after) {
  FailureOr<Operation *> slot =
      lookupEditModule(model, after, kPass, "after", "block");
  if (failed(slot))
    return failure();
  Operation *list = (*slot)->getParentOp();
  auto seq = dyn_cast<SequentialOp>(list);
  bool inSequential = seq && seq.getKeying() == Keying::positional;
  if (!(isa<ModuleListOp>(list) || inSequential) || getStockNetOf(*slot))
    return refuse(*slot, kPass, "block")
           << "is not a block of an 'nnx.module_list' or of a positional "
              "'nnx.sequential' (a stock net's layers grow with nnx-deepen)";
  auto block = dyn_cast<CustomModuleOp>(*slot);
  if (!block)
    return refuse(*slot, kPass, "block")
           << "is not an 'nnx.module' with a forward: there is no residual "
              "to keep";
  if (failed(checkPositional(list, block)) ||
      failed(checkRefusable(list, Hooks, kPass, "container")) ||
      failed(checkRefusable(block, Hooks, kPass, "block")))
    return failure();
  if (inSequential)
    return checkSequentialChain(block, list);
  FailureOr<CallOp> call = getChainCall(block, kPass, "block",
                                        "a copy cannot follow it in the chain");
  if (failed(call))
    return failure();
  return InsertPlan{block, list, *call, {}};
}

static FailureOr<InsertPlan> planInsert(ModelOp model, StringRef after) {
  FailureOr<InsertPlan> plan = findBlock(model, after);
  if (failed(plan))
    return failure();
  FailureOr<SmallVector<Operation *>> zeroed =
      findBranchProjections(plan->block, kPass);
  if (failed(zeroed))
    return failure();
  plan->zeroed = std::move(*zeroed);
  // The copy runs on the block's own output: a ReLU's is never negative,
  // and a ReLU of it is the identity.
  if (isIdentityWithZeroed(plan->block, plan->zeroed,
                           returnsNonNegative(plan->block)))
    return plan;
  SmallVector<std::string> names = llvm::map_to_vector(
      plan->zeroed, [](Operation *op) { return getDisplayPath(op); });
  InFlightDiagnostic diag =
      refuse(plan->block, kPass, "block")
      << "cannot be made an identity: with its branches' last affine layers "
         "('"
      << llvm::join(names, "', '")
      << "') zero, its forward is not proven to return its input (only "
         "sums with the input, products and reshapes of zeros, dropout, "
         "bias-free norms of zeros, and ReLUs of a block ending in a ReLU "
         "are followed)";
  for (Operation *op : plan->zeroed)
    diag.attachNote(op->getLoc()) << "zeroed here";
  return diag;
}

/// Gives `op`'s tensor `name`, if set, the value zero everywhere.
static void zeroTensor(Operation *op, StringRef name) {
  auto attr = op->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return;
  auto type = cast<ShapedType>(attr.getType());
  Attribute zero = OpBuilder(op).getZeroAttr(type.getElementType());
  replaceTensor(op, name, DenseElementsAttr::get(type, zero));
}

static void applyInsert(InsertPlan plan) {
  ReferenceSnapshot refs(getParentModel(plan.block));
  shiftPositionalKeys(plan.block, 1);
  IRMapping map;
  OpBuilder b(plan.block);
  b.setInsertionPointAfter(plan.block);
  Operation *copy = b.clone(*plan.block, map);
  SymbolTable::setSymbolName(copy,
                             positionalKey(positionInBlock(plan.block) + 1));
  refs.retarget();
  // A new block: trainable, in the mode of the list it joins.
  copy->walk([&](ModuleOpInterface m) {
    m->removeAttr("requires_grad");
    copyMode(plan.list, m);
  });
  for (Operation *op : plan.zeroed) {
    Operation *zero = map.lookup(op);
    zeroTensor(zero, "weight");
    zeroTensor(zero, "bias");
  }
  // A sequential runs the copy after the block by its position.
  if (!plan.call)
    return;
  // Its call follows the block's in the chain, with the same other inputs.
  b.setInsertionPointAfter(plan.call);
  Operation *call = b.clone(*plan.call);
  call->removeAttr("nnx.source");
  SymbolRefAttr ref = plan.call.getCallee();
  SmallVector<FlatSymbolRefAttr> nested(ref.getNestedReferences());
  auto key =
      FlatSymbolRefAttr::get(b.getContext(), SymbolTable::getSymbolName(copy));
  if (nested.empty())
    ref = key;
  else {
    nested.back() = key;
    ref = SymbolRefAttr::get(ref.getRootReference(), nested);
  }
  cast<CallOp>(call).setCalleeAttr(ref);
  Value out = plan.call.getResult(0);
  call->setOperand(0, out);
  out.replaceAllUsesExcept(call->getResult(0), call);
}

LogicalResult mlir::nnx::insertBlock(ModelOp model, StringRef after) {
  FailureOr<InsertPlan> plan = planInsert(model, after);
  if (failed(plan))
    return failure();
  applyInsert(*plan);
  return success();
}

namespace {
struct NNXInsertBlockPass
    : public mlir::nnx::impl::NNXInsertBlockPassBase<NNXInsertBlockPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(insertBlock(getOperation(), after)))
      signalPassFailure();
  }
};
} // namespace
