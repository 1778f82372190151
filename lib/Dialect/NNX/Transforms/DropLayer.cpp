//===- DropLayer.cpp - replace a module by identity -------------*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include "mlir/IR/Builders.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXDROPLAYERPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-drop-layer";

/// The sizes an identity in `slot` must keep: for a stock net's layer the
/// params' in/out of that slot, else the module's own signature.
static FeatureSignature slotSignature(Operation *module) {
  if (StockNetOpInterface net = getStockNetOf(module)) {
    auto [in, out] = net.getLayerSizes(*net.getLayerIndex(module));
    return FeatureSignature::projecting(FeatureSignature::Last, in, out);
  }
  return getFeatureSignature(module);
}

/// Refuses `op` if an identity in place of `module` would feed the next
/// module other sizes: it takes ids, or it maps a feature axis it fixes to
/// another size.
static LogicalResult checkKeepsSizes(Operation *op, Operation *module) {
  if (isa<CustomModuleOp>(module))
    return success(); // its forward's types say more: checkForwardKeepsType
  FeatureSignature sig = slotSignature(module);
  if (sig.integerInput)
    return refuse(op, kPass, "layer")
           << "takes integer ids; an identity in its place would break the "
              "chain";
  for (unsigned axis = 0; axis < FeatureSignature::NumAxes; ++axis) {
    const FeatureSignature::Effect &e = sig.out[axis];
    if (!sig.in[axis] || e.kind != FeatureSignature::Effect::Sets ||
        e.size == *sig.in[axis])
      continue;
    return refuse(op, kPass, "layer")
           << "maps " << *sig.in[axis] << " to " << e.size << " "
           << (axis == FeatureSignature::Channel ? "channels" : "features")
           << "; an identity in its place would break the chain";
  }
  return success();
}

/// Refuses `op` if `module` is a custom module whose forward returns another
/// type than it takes, which its types state exactly (where no call site
/// shows it: a sequential's child).
static LogicalResult checkForwardKeepsType(Operation *op, Operation *module) {
  auto custom = dyn_cast<CustomModuleOp>(module);
  ForwardOp fwd = custom ? custom.getForward() : ForwardOp();
  if (!fwd)
    return success();
  FunctionType ft = fwd.getFunctionType();
  if (ft.getNumInputs() != 1 || ft.getNumResults() != 1)
    return success();
  Type in = ft.getInput(0), out = ft.getResult(0);
  if (succeeded(verifyCompatibleShape(in, out)) &&
      getElementTypeOrSelf(in) == getElementTypeOrSelf(out))
    return success();
  InFlightDiagnostic diag = refuse(op, kPass, "layer")
                            << "has a forward from " << in << " to " << out
                            << "; an identity in its place would break the "
                               "chain";
  diag.attachNote(fwd.getLoc()) << "forward is here";
  return diag;
}

/// The spatial dim (from 0) of `layer`'s windows whose output size differs
/// from its input size, if any.
static std::optional<unsigned>
resizedDim(unsigned rank, llvm::function_ref<Window(unsigned)> window) {
  for (unsigned i = 0; i < rank; ++i)
    if (!window(i).keepsSize())
      return i;
  return std::nullopt;
}

/// Refuses `op` if `module` (or a layer inside it) changes the spatial size
/// or the rank of its input: a strided or not "same"-padded window, an
/// adaptive pool, a flatten. An identity in its place would feed the next
/// module another shape.
static LogicalResult checkKeepsShape(Operation *op, Operation *module) {
  LogicalResult result = success();
  module->walk([&](Operation *inner) {
    std::optional<unsigned> dim;
    if (auto conv = dyn_cast<ConvLayerOpInterface>(inner))
      dim = resizedDim(conv.getSpatialRank(),
                       [&](unsigned i) { return conv.getSpatialWindow(i); });
    else if (auto pool = dyn_cast<MaxPool2dOp>(inner))
      dim = resizedDim(2, [&](unsigned i) { return pool.getWindow(i); });
    else if (auto pool = dyn_cast<AvgPool2dOp>(inner))
      dim = resizedDim(2, [&](unsigned i) { return pool.getWindow(i); });
    bool reshapes = isa<AdaptiveAvgPool2dOp, FlattenOp>(inner);
    if (!dim && !reshapes)
      return WalkResult::advance();
    InFlightDiagnostic diag = refuse(op, kPass, "layer");
    if (inner != module)
      diag << "contains '" << getDisplayPath(inner) << "' (" << inner->getName()
           << "), which ";
    if (isa<FlattenOp>(inner))
      diag << "flattens its input";
    else if (reshapes)
      diag << "pools its input to a fixed size";
    else
      diag << "changes the size of spatial dim " << *dim + 2
           << " (a window that is not stride 1 with \"same\" padding)";
    diag << "; an identity in its place would break the chain";
    result = diag;
    return WalkResult::interrupt();
  });
  return result;
}

/// Refuses `op` if anything outside its subtree reaches into it, or (for
/// an identity, `!remove`) if a call of its slot passes types an identity
/// cannot return.
static LogicalResult checkReferences(ModelOp model, Operation *op,
                                     bool remove) {
  Operation *reaching = nullptr, *reached = nullptr;
  CallOp badCall;
  model.walk([&](Operation *user) {
    if (reaching || badCall)
      return;
    if (auto call = dyn_cast<CallOp>(user)) {
      if (!remove && call.lookupCalleeSlot() == op &&
          (call.getNumOperands() != 1 || call.getNumResults() != 1 ||
           call.getOperand(0).getType() != call.getResult(0).getType())) {
        badCall = call;
        return;
      }
    }
    if (isa<AliasOp>(op))
      return;
    Operation *target = nullptr;
    if (auto alias = dyn_cast<AliasOp>(user))
      target = resolveAlias(alias);
    else if (auto call = dyn_cast<CallOp>(user))
      target = call.resolveCalleeModule();
    if (target && target != op && op->isProperAncestor(target) &&
        !op->isAncestor(user)) {
      reaching = user;
      reached = target;
    }
  });
  if (badCall) {
    InFlightDiagnostic diag = refuse(op, kPass, "layer")
                              << "is called with types an identity cannot "
                                 "produce";
    diag.attachNote(badCall.getLoc()) << "call is here";
    return diag;
  }
  if (reaching) {
    InFlightDiagnostic diag = refuse(op, kPass, "layer")
                              << "contains '" << getDisplayPath(reached)
                              << "', which is referenced from outside it";
    diag.attachNote(reaching->getLoc()) << "reference is here";
    return diag;
  }
  return success();
}

/// Option `remove`: takes block `op` out of its positional module_list, the
/// later blocks one key down, its call out of the chain (its first result
/// replaced by its first input).
static LogicalResult removeFromList(Operation *op) {
  auto list = dyn_cast<ModuleListOp>(op->getParentOp());
  if (!list || getStockNetOf(op) || isa<AliasOp>(op))
    return refuse(op, kPass, "layer")
           << "is not a block of a plain 'nnx.module_list': option "
              "remove=true takes a block out of a list (a stock net keeps "
              "its slots; drop it without remove)";
  FailureOr<CallOp> call =
      getChainCall(op, kPass, "layer", "the chain cannot skip it");
  if (failed(call))
    return failure();
  for (OpResult r : call->getResults().drop_front())
    if (!r.use_empty()) {
      InFlightDiagnostic diag =
          refuse(op, kPass, "layer")
          << "has result " << r.getResultNumber()
          << " used: nothing can stand in for it once the block is gone";
      diag.attachNote(r.getUses().begin()->getOwner()->getLoc())
          << "use is here";
      return diag;
    }
  (*call)->getResult(0).replaceAllUsesWith(call->getOperand(0));
  (*call)->erase();
  // The snapshot records the calls inside `op` too: erase it only after the
  // retargeting, under a key no path names.
  ReferenceSnapshot refs(getParentModel(op));
  SymbolTable::setSymbolName(op, "_nnx_removed");
  shiftPositionalKeys(op, -1);
  refs.retarget();
  op->erase();
  return success();
}

LogicalResult mlir::nnx::dropLayer(ModelOp model, StringRef layer,
                                   bool remove) {
  FailureOr<Operation *> slot = lookupEditSlot(model, layer, kPass, "layer");
  if (failed(slot))
    return failure();
  Operation *op = *slot;

  // For an alias slot only the registration goes; the module stays.
  ModuleOpInterface module = resolveAlias(op);
  if (isForwardlessContainer(module)) {
    InFlightDiagnostic diag =
        refuse(op, kPass, "layer")
        << "is a " << module->getName().stripDialect()
        << ", which has no forward of its own: its owner runs its elements, "
           "so an identity cannot stand in for it";
    diag.attachNote(op->getParentOp()->getLoc()) << "owner is here";
    return diag;
  }
  if (failed(checkKeepsSizes(op, module)) ||
      failed(checkKeepsShape(op, module)))
    return failure();
  if (!isa<AliasOp>(op)) {
    if (failed(checkRefusable(op, Aliases, kPass, "layer")))
      return failure();
  }
  if (failed(checkReferences(model, op, remove)) ||
      failed(checkForwardKeepsType(op, module)))
    return failure();
  if (remove)
    return removeFromList(op);
  OpBuilder b(op);
  bool train = module.getTrain();
  IdentityOp::create(b, op->getLoc(), SymbolTable::getSymbolName(op).getValue(),
                     train, nullptr, nullptr, nullptr, nullptr, nullptr);
  op->erase();
  return success();
}

namespace {
struct NNXDropLayerPass
    : public mlir::nnx::impl::NNXDropLayerPassBase<NNXDropLayerPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(dropLayer(getOperation(), layer, remove)))
      signalPassFailure();
  }
};
} // namespace
