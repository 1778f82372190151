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
  ModuleListOp list;
  CallOp call;
  SmallVector<LinearOp> zeroed;
};
} // namespace

/// Refuses a list whose keys are not its positions 0 .. n-1.
static LogicalResult checkPositional(ModuleListOp list, Operation *slot) {
  int64_t i = 0;
  for (Operation &child : list.getBody().front()) {
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

/// The block at `after`, its list, its call in the chain.
static FailureOr<InsertPlan> findBlock(ModelOp model, StringRef after) {
  FailureOr<Operation *> slot =
      lookupEditModule(model, after, kPass, "after", "block");
  if (failed(slot))
    return failure();
  auto list = dyn_cast<ModuleListOp>((*slot)->getParentOp());
  if (!list || getStockNetOf(*slot))
    return refuse(*slot, kPass, "block")
           << "is not a block of an 'nnx.module_list' (a stock net's layers "
              "grow with nnx-deepen)";
  auto block = dyn_cast<CustomModuleOp>(*slot);
  if (!block)
    return refuse(*slot, kPass, "block")
           << "is not an 'nnx.module' with a forward: there is no residual "
              "to keep";
  if (failed(checkPositional(list, block)) ||
      failed(checkRefusable(list, Hooks, kPass, "container")) ||
      failed(checkRefusable(block, Hooks, kPass, "block")))
    return failure();
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
  FailureOr<SmallVector<LinearOp>> zeroed =
      findBranchProjections(plan->block, kPass);
  if (failed(zeroed))
    return failure();
  plan->zeroed = std::move(*zeroed);
  if (isIdentityWithZeroed(plan->block, plan->zeroed))
    return plan;
  SmallVector<std::string> names = llvm::map_to_vector(
      plan->zeroed, [](LinearOp lin) { return getDisplayPath(lin); });
  InFlightDiagnostic diag =
      refuse(plan->block, kPass, "block")
      << "cannot be made an identity: with its branches' Linears ('"
      << llvm::join(names, "', '")
      << "') zero, its forward is not proven to return its input (only "
         "sums with the input, products and reshapes of zeros, dropout and "
         "bias-free norms of zeros are followed)";
  for (LinearOp lin : plan->zeroed)
    diag.attachNote(lin.getLoc()) << "zeroed here";
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
  for (LinearOp lin : plan.zeroed) {
    Operation *zero = map.lookup(lin.getOperation());
    zeroTensor(zero, "weight");
    zeroTensor(zero, "bias");
  }
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
