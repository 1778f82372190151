//===- ForwardFlow.cpp - a Linear's units in a custom forward ---*- C++ -*-===//
//
// The SSA proof nnx-widen and nnx-prune check for a Linear inside a custom
// module (`nnx.module`), whose registration order is not data flow but whose
// forward region is. The forward's one `nnx.call` of the target yields the
// units in the last dim. Every use of every value that holds them must keep
// the units apart: an elementwise op or leaf module, a binary op with a value
// broadcast across the units, a binary op with the units of a sibling Linear
// (SwiGLU's `silu(gate_proj(x)) * up_proj(x)`, widened in lockstep), a
// `tensor.dim` of another dim; and exactly one Linear reads them.
//
//===----------------------------------------------------------------------===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

/// What a rebuild of a Linear the walk edits (consumer, sibling) may not drop.
static constexpr unsigned kEditedProperties = AllRebuildProperties;
/// What an elementwise module on the path may not carry.
static constexpr unsigned kPathProperties = Hooks | Subclass | Aliases;

/// True for ops that compute each element from the same element of their
/// operands, with no broadcasting (math.*, arith.negf on tensors) or as a
/// functional activation / dropout.
static bool isUnaryElementwise(Operation *op) {
  if (isa<FnActivationOpInterface, FnDropoutOp>(op))
    return true;
  return op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 1 &&
         op->getNumResults() == 1 &&
         op->getOperand(0).getType() == op->getResult(0).getType();
}

namespace {
/// The forward walk from the target's call over the values holding its
/// units; `chain` collects the consumer, the path and the siblings.
class ForwardWalk {
public:
  ForwardWalk(LinearOp target, StringRef pass, ConsumerChain &chain)
      : target(target), units(target.getOutFeaturesCount()), pass(pass),
        chain(chain) {}

  /// Proves the flow from `call` (the target's only call).
  LogicalResult run(CallOp call);

private:
  LogicalResult visitUse(OpOperand &use);
  LogicalResult visitCall(CallOp call);
  LogicalResult visitConsumer(LinearOp lin, CallOp call);
  LogicalResult visitBinary(Operation *op, Value other);
  LogicalResult addSibling(Value other, Operation *join);
  /// The target's refusal for a use at `user`, with a note there.
  InFlightDiagnostic refuseUse(Operation *user, StringRef what) {
    InFlightDiagnostic diag = refuse(target, pass, "target") << what;
    diag.attachNote(user->getLoc()) << "use is here";
    return diag;
  }
  void add(Value v) {
    if (values.insert(v))
      worklist.push_back(v);
  }

  LinearOp target;
  int64_t units;
  StringRef pass;
  ConsumerChain &chain;
  llvm::SetVector<Value> values;
  SmallVector<Value> worklist;
  CallOp consumerCall;
};
} // namespace

LogicalResult ForwardWalk::run(CallOp call) {
  add(call.getResult(0));
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    // In program order (an op's operands in their order), so that a
    // refusal names the first offending use.
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : v.getUses())
      uses.push_back(&use);
    llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
      if (a->getOwner() == b->getOwner())
        return a->getOperandNumber() < b->getOperandNumber();
      return a->getOwner()->isBeforeInBlock(b->getOwner());
    });
    for (OpOperand *use : uses)
      if (failed(visitUse(*use)))
        return failure();
  }
  if (!chain.consumer) {
    InFlightDiagnostic diag =
        refuse(target, pass, "target")
        << "has no consumer: its units reach no 'nnx.linear' in the forward "
           "of '"
        << getDisplayPath(chain.container) << "'";
    diag.attachNote(call.getLoc()) << "call is here";
    return diag;
  }
  chain.unitValues.assign(values.begin(), values.end());
  return success();
}

LogicalResult ForwardWalk::visitUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto dim = dyn_cast<tensor::DimOp>(user)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = cast<RankedTensorType>(use.get().getType());
    if (index && *index != type.getRank() - 1)
      return success();
    return refuseUse(user, "reaches a 'tensor.dim' of the unit dim: the "
                           "forward computes with the width the edit changes");
  }
  if (auto call = dyn_cast<CallOp>(user))
    return visitCall(call);
  if (isa<ReturnOp>(user))
    return refuseUse(user, "reaches the forward's 'nnx.return': a second use "
                           "of the units outside the module, where the proof "
                           "cannot follow them");
  if (isUnaryElementwise(user)) {
    add(user->getResult(0));
    return success();
  }
  if (auto binary = dyn_cast<FnBinaryOpInterface>(user))
    return visitBinary(user, use.getOperandNumber() == 0 ? binary.getRhs()
                                                         : binary.getLhs());
  if (isa<FnMeanOp, FnSumOp, FnAmaxOp, FnAminOp, FnSoftmaxOp, FnCumsumOp>(user))
    return refuseUse(user, ("reaches a reduction ('" +
                            user->getName().getStringRef() +
                            "'): its result depends on every unit")
                               .str());
  if (isa<FnReshapeOp, FnExpandOp, FnPermuteOp, tensor::ExtractSliceOp,
          tensor::ConcatOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
          user))
    return refuseUse(user,
                     ("reaches a reshape ('" + user->getName().getStringRef() +
                      "') that moves or mixes the unit dim")
                         .str());
  return refuseUse(user, ("reaches '" + user->getName().getStringRef() +
                          "', which the proof cannot follow")
                             .str());
}

LogicalResult ForwardWalk::visitCall(CallOp call) {
  Operation *m = call.resolveCalleeModule().getOperation();
  if (auto lin = dyn_cast<LinearOp>(m))
    return visitConsumer(lin, call);
  if (isElementwiseModule(m) && call->getNumOperands() == 1 &&
      call->getNumResults() == 1) {
    if (failed(checkRefusable(m, kPathProperties, pass, "module on the path")))
      return failure();
    chain.path.push_back(m);
    add(call.getResult(0));
    return success();
  }
  std::string what =
      "'" + m->getName().stripDialect().str() + "' '" + getDisplayPath(m) + "'";
  if (isWidthDependent(m))
    return refuseUse(call, "passes the norm " + what +
                               ": its statistics over the units change "
                               "when units are added or removed");
  if (auto custom = dyn_cast<CustomModuleOp>(m))
    return refuseUse(call, "enters the custom module '" + getDisplayPath(m) +
                               "' (class '" + custom.getClassName().str() +
                               "'), whose forward the proof does not follow");
  return refuseUse(call, "reaches " + what + ", which mixes units");
}

LogicalResult ForwardWalk::visitConsumer(LinearOp lin, CallOp call) {
  if (lin == target || llvm::is_contained(chain.siblings, lin.getOperation()))
    return refuseUse(call, "feeds back into a Linear whose units it holds");
  if (chain.consumer) {
    InFlightDiagnostic diag =
        refuseUse(call, "reaches a second Linear ('" + getDisplayPath(lin) +
                            "' after '" + getDisplayPath(chain.consumer) +
                            "'): a second use of the units, which only one "
                            "consumer's columns can rescale");
    diag.attachNote(consumerCall.getLoc()) << "first consumer is here";
    return diag;
  }
  FailureOr<CallOp> only = getOnlyCall(lin, pass, "consumer");
  if (failed(only) ||
      failed(checkRefusable(lin, kEditedProperties, pass, "consumer")))
    return failure();
  chain.consumer = lin;
  consumerCall = call;
  return success();
}

LogicalResult ForwardWalk::visitBinary(Operation *op, Value other) {
  auto type = cast<RankedTensorType>(other.getType());
  bool broadcast = type.getRank() == 0 ||
                   (type.getShape().back() == 1 && units != 1) ||
                   values.contains(other);
  if (!broadcast && failed(addSibling(other, op)))
    return failure();
  add(op->getResult(0));
  return success();
}

/// `other` meets the units in `join`: it must be a sibling Linear's output
/// (through unary elementwise ops), whose units follow the target's.
LogicalResult ForwardWalk::addSibling(Value other, Operation *join) {
  SmallVector<Value> between;
  Value v = other;
  while (Operation *def = v.getDefiningOp()) {
    // Back on the units' own path (`gelu(h) * tanh(h)`): no sibling.
    if (values.contains(v)) {
      for (Value b : between)
        add(b);
      return success();
    }
    auto call = dyn_cast<CallOp>(def);
    Operation *m = call ? call.resolveCalleeModule().getOperation() : nullptr;
    if (!(call ? isElementwiseModule(m) && call->getNumOperands() == 1
               : isUnaryElementwise(def)))
      break;
    between.push_back(v);
    v = def->getOperand(0);
  }
  auto call = v.getDefiningOp<CallOp>();
  auto lin = call
                 ? dyn_cast<LinearOp>(call.resolveCalleeModule().getOperation())
                 : LinearOp();
  if (!lin || lin == target || lin.getOutFeaturesCount() != units) {
    InFlightDiagnostic diag =
        refuseUse(join, "meets a value per unit that is not the output of a "
                        "Linear of the same width: only such a sibling can "
                        "be widened in lockstep");
    if (Operation *def = v.getDefiningOp())
      diag.attachNote(def->getLoc()) << "the value comes from here";
    return diag;
  }
  if (failed(getOnlyCall(lin, pass, "sibling")) ||
      failed(checkRefusable(lin, kEditedProperties, pass, "sibling")))
    return failure();
  if (!llvm::is_contained(chain.siblings, lin.getOperation()))
    chain.siblings.push_back(lin);
  add(v);
  for (Value b : between)
    add(b);
  return success();
}

FailureOr<ConsumerChain> surgery::findForwardConsumer(LinearOp target,
                                                      CustomModuleOp module,
                                                      StringRef pass) {
  if (failed(checkRefusable(module, Hooks, pass, "container")))
    return failure();
  FailureOr<CallOp> call = getOnlyCall(target, pass, "target");
  if (failed(call))
    return failure();
  ConsumerChain chain;
  chain.container = module;
  ForwardWalk walk(target, pass, chain);
  if (failed(walk.run(*call)))
    return failure();
  return chain;
}

void surgery::setUnitCount(const ConsumerChain &chain, int64_t width) {
  for (Value v : chain.unitValues) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = width;
    v.setType(type.clone(shape));
  }
}
