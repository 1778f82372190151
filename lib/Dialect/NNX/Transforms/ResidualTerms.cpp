//===- ResidualTerms.cpp - a block as input plus branch terms ---*- C++ -*-===//
//
// What nnx-insert-block proves about a residual block: which affine layers
// end its branches (the output projections: attention's o_proj, the MLP's
// down_proj; a conv block's last batch norm or conv), and that with them
// zero the forward returns its input exactly. The choice walks back from the
// forward's result through the residual adds; the proof evaluates the forward
// on a three-value lattice (Zero, Input, Other), entering custom modules'
// forwards.
//
//===----------------------------------------------------------------------===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

namespace {
/// Where a value lives while the walks cross `nnx.call`s: the calls
/// entered, innermost last.
using CallStack = SmallVector<CallOp, 4>;

/// The walk back from a branch value to the affine layer that computes it.
class BranchWalk {
public:
  explicit BranchWalk(Operation *block) : block(block) {}

  /// Splits `v` (a value of the forward entered through `stack`) into the
  /// block's input and branch terms, adding each branch's last affine layer
  /// to `out`. Fails (with the value) where a branch ends in none of the
  /// block.
  FailureOr<Value> decompose(Value v, CallStack stack,
                             SmallVectorImpl<Operation *> &out);

private:
  Operation *findAffine(Value v, CallStack stack, unsigned depth);

  Operation *block;
};
} // namespace

/// The callee forward of `call`, or null for a leaf module.
static ForwardOp getCalleeForward(CallOp call) {
  auto custom = dyn_cast_or_null<CustomModuleOp>(
      call.resolveCalleeModule().getOperation());
  return custom ? custom.getForward() : ForwardOp();
}

bool surgery::isZeroableAffine(Operation *m) {
  // A norm's output is its weight times the normalized input (plus its
  // bias): zero with them.
  if (isa<LinearOp>(m) || isNormModule(m))
    return static_cast<bool>(m->getAttr("weight"));
  return isa<ConvLayerOpInterface>(m);
}

/// The affine layer a sequential ends with (dropout and identities after
/// it pass its output on), or null.
static Operation *getLastAffine(SequentialOp seq) {
  for (Operation &child : llvm::reverse(seq.getBody().front())) {
    Operation *m = resolveAlias(&child).getOperation();
    if (m && isZeroableAffine(m))
      return seq->isProperAncestor(m) ? m : nullptr;
    if (!isa_and_nonnull<DropoutOp, IdentityOp>(m))
      return nullptr;
  }
  return nullptr;
}

/// The caller's value for block argument `arg` of the forward entered last.
static Value leaveForward(BlockArgument arg, CallStack &stack) {
  CallOp call = stack.pop_back_val();
  return call.getOperand(arg.getArgNumber());
}

FailureOr<Value> BranchWalk::decompose(Value v, CallStack stack,
                                       SmallVectorImpl<Operation *> &out) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (stack.empty())
      return Value(); // the block's input: the residual itself
    Value outer = leaveForward(arg, stack);
    return decompose(outer, stack, out);
  }
  Operation *def = v.getDefiningOp();
  // Dropout passes sums on (in eval mode, where the promise holds); a ReLU
  // after the sum (ResNet's blocks) is left to the proof, which knows
  // whether the input is non-negative.
  if (isa<FnDropoutOp, FnReluOp>(def))
    return decompose(def->getOperand(0), stack, out);
  if (auto call = dyn_cast<CallOp>(def);
      call && isa<DropoutOp, IdentityOp, ReLUOp>(call.resolveCalleeModule()))
    return decompose(call.getOperand(0), stack, out);
  if (isa<FnAddOp>(def)) {
    for (Value operand : def->getOperands())
      if (FailureOr<Value> bad = decompose(operand, stack, out);
          failed(bad) || *bad)
        return bad;
    return Value();
  }
  if (auto call = dyn_cast<CallOp>(def))
    if (ForwardOp f = getCalleeForward(call)) {
      stack.push_back(call);
      Operation *ret = f.getBodyBlock().getTerminator();
      return decompose(ret->getOperand(cast<OpResult>(v).getResultNumber()),
                       stack, out);
    }
  Operation *affine = findAffine(v, stack, 0);
  if (!affine)
    return v;
  if (!llvm::is_contained(out, affine))
    out.push_back(affine);
  return Value();
}

/// The affine layer of the block whose output `v` passes on unchanged up
/// to factors (dropout, reshapes, products: a zero stays zero), or null.
Operation *BranchWalk::findAffine(Value v, CallStack stack, unsigned depth) {
  if (depth > 256)
    return nullptr;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (stack.empty())
      return nullptr;
    Value outer = leaveForward(arg, stack);
    return findAffine(outer, stack, depth + 1);
  }
  Operation *def = v.getDefiningOp();
  if (auto call = dyn_cast<CallOp>(def)) {
    Operation *m = call.resolveCalleeModule().getOperation();
    if (isZeroableAffine(m))
      return block->isProperAncestor(m) ? m : nullptr;
    if (isa<DropoutOp, IdentityOp>(m))
      return findAffine(call.getOperand(0), stack, depth + 1);
    if (auto seq = dyn_cast<SequentialOp>(m))
      return getLastAffine(seq);
    ForwardOp f = getCalleeForward(call);
    if (!f)
      return nullptr;
    stack.push_back(call);
    Operation *ret = f.getBodyBlock().getTerminator();
    return findAffine(ret->getOperand(cast<OpResult>(v).getResultNumber()),
                      stack, depth + 1);
  }
  if (isa<FnMulOp, FnMatmulOp>(def)) {
    for (Value operand : def->getOperands())
      if (Operation *affine = findAffine(operand, stack, depth + 1))
        return affine;
    return nullptr;
  }
  if (isa<FnDivOp>(def) ||
      isa<FnDropoutOp, FnReshapeOp, FnPermuteOp, FnExpandOp,
          tensor::ExtractSliceOp, tensor::CollapseShapeOp,
          tensor::ExpandShapeOp>(def))
    return findAffine(def->getOperand(0), stack, depth + 1);
  return nullptr;
}

FailureOr<SmallVector<Operation *>>
surgery::findBranchProjections(CustomModuleOp block, StringRef pass) {
  ForwardOp f = block.getForward();
  if (!f)
    return refuse(block, pass, "block")
           << "has no forward (the model's forward never called it when it "
              "was exported), so its residual branches are unknown";
  SmallVector<Operation *> out;
  BranchWalk walk(block);
  FailureOr<Value> bad =
      walk.decompose(f.getBodyBlock().getTerminator()->getOperand(0), {}, out);
  if (succeeded(bad) && !*bad)
    return out;
  InFlightDiagnostic diag =
      refuse(block, pass, "block")
      << "has a residual branch that ends in no Linear, convolution or "
         "affine norm of the block: nothing can be zeroed to make the branch "
         "vanish";
  if (succeeded(bad))
    if (Operation *def = (*bad).getDefiningOp())
      diag.attachNote(def->getLoc()) << "the branch ends here";
  return diag;
}

//===----------------------------------------------------------------------===//
// The proof: the forward evaluated on {Zero, Input, Other}
//===----------------------------------------------------------------------===//

namespace {
enum class Term { Zero, Input, Other };

/// Evaluates forwards with the chosen layers' weights and biases zero; an
/// input known non-negative passes ReLUs unchanged.
class TermEvaluator {
public:
  TermEvaluator(ArrayRef<Operation *> zeroed, Type inputType,
                bool inputNonNegative)
      : zeroed(zeroed), inputType(inputType),
        inputNonNegative(inputNonNegative) {}

  SmallVector<Term> run(ForwardOp f, ArrayRef<Term> args, unsigned depth);

private:
  SmallVector<Term> evalCall(CallOp call, ArrayRef<Term> in, unsigned depth);
  Term evalLeafCall(Operation *m, ArrayRef<Term> in);
  Term evalSequential(SequentialOp seq, Term in);
  Term evalOp(Operation *op, ArrayRef<Term> in);

  ArrayRef<Operation *> zeroed;
  Type inputType;
  bool inputNonNegative;
};
} // namespace

SmallVector<Term> TermEvaluator::run(ForwardOp f, ArrayRef<Term> args,
                                     unsigned depth) {
  DenseMap<Value, Term> env;
  for (auto [arg, t] : llvm::zip(f.getArguments(), args))
    env[arg] = t;
  auto termOf = [&](Value v) {
    auto it = env.find(v);
    return it == env.end() ? Term::Other : it->second;
  };
  for (Operation &op : f.getBodyBlock()) {
    SmallVector<Term> in = llvm::map_to_vector(op.getOperands(), termOf);
    if (isa<ReturnOp>(op))
      return in;
    SmallVector<Term> out =
        isa<CallOp>(op)
            ? evalCall(cast<CallOp>(op), in, depth)
            : SmallVector<Term>(op.getNumResults(), evalOp(&op, in));
    for (auto [r, t] : llvm::zip(op.getResults(), out))
      env[r] = t;
  }
  return {};
}

SmallVector<Term> TermEvaluator::evalCall(CallOp call, ArrayRef<Term> in,
                                          unsigned depth) {
  Operation *m = call.resolveCalleeModule().getOperation();
  SmallVector<Term> out(call.getNumResults(), Term::Other);
  ForwardOp f = getCalleeForward(call);
  if (auto seq = dyn_cast<SequentialOp>(m)) {
    if (!out.empty() && !in.empty())
      out[0] = evalSequential(seq, in[0]);
    return out;
  }
  if (!f) {
    if (!out.empty() && !in.empty())
      out[0] = evalLeafCall(m, in);
    return out;
  }
  if (depth > 64)
    return out;
  SmallVector<Term> results = run(f, in, depth + 1);
  for (auto [o, r] : llvm::zip(out, results))
    o = r;
  return out;
}

/// A sequential of leaf modules applied to `in`, child by child.
Term TermEvaluator::evalSequential(SequentialOp seq, Term in) {
  for (Operation &child : seq.getBody().front()) {
    Operation *m = resolveAlias(&child).getOperation();
    if (!m || isa<SequentialOp, CustomModuleOp>(m) ||
        !m->hasTrait<OpTrait::ZeroRegions>())
      return Term::Other;
    in = evalLeafCall(m, in);
  }
  return in;
}

/// A leaf module applied to terms `in`.
Term TermEvaluator::evalLeafCall(Operation *m, ArrayRef<Term> in) {
  if (llvm::is_contained(zeroed, m))
    return Term::Zero;
  // A bias-free contraction of zeros is zero.
  if (isa<LinearOp, ConvLayerOpInterface>(m))
    return in[0] == Term::Zero && !m->getAttr("bias") ? Term::Zero
                                                      : Term::Other;
  if (isa<DropoutOp, IdentityOp>(m))
    return in[0];
  if (isa<ReLUOp>(m))
    return in[0] == Term::Input && !inputNonNegative ? Term::Other : in[0];
  if (auto layer = dyn_cast<LayerOpInterface>(m);
      layer && layer.mapsZeroToZero())
    return in[0] == Term::Zero ? Term::Zero : Term::Other;
  return Term::Other;
}

Term TermEvaluator::evalOp(Operation *op, ArrayRef<Term> in) {
  bool anyZero = llvm::is_contained(in, Term::Zero);
  bool allZero =
      !in.empty() && llvm::all_of(in, [](Term t) { return t == Term::Zero; });
  Type type = op->getNumResults() ? op->getResult(0).getType() : Type();
  if (isa<FnAddOp, FnSubOp>(op)) {
    if (allZero)
      return Term::Zero;
    // x + 0, 0 + x and x - 0 are x, when the sum keeps x's type.
    bool inputPlusZero =
        (in[0] == Term::Input && in[1] == Term::Zero) ||
        (isa<FnAddOp>(op) && in[0] == Term::Zero && in[1] == Term::Input);
    return inputPlusZero && type == inputType ? Term::Input : Term::Other;
  }
  if (isa<FnMulOp, FnMatmulOp>(op))
    return anyZero ? Term::Zero : Term::Other;
  if (isa<FnDivOp>(op))
    return in[0] == Term::Zero ? Term::Zero : Term::Other;
  if (isa<FnDropoutOp>(op))
    return in[0];
  if (isa<FnReluOp>(op))
    return in[0] == Term::Input && !inputNonNegative ? Term::Other : in[0];
  if (isa<FnReshapeOp, FnPermuteOp, FnExpandOp, tensor::ExtractSliceOp,
          tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ConcatOp,
          arith::NegFOp>(op))
    return allZero ? Term::Zero : Term::Other;
  return Term::Other;
}

bool surgery::isIdentityWithZeroed(CustomModuleOp block,
                                   ArrayRef<Operation *> zeroed,
                                   bool inputNonNegative) {
  ForwardOp f = block.getForward();
  if (!f || f.getNumArguments() == 0 || f.getNumResults() == 0)
    return false;
  SmallVector<Term> args(f.getNumArguments(), Term::Other);
  args[0] = Term::Input;
  TermEvaluator eval(zeroed, f.getArgument(0).getType(), inputNonNegative);
  SmallVector<Term> results = eval.run(f, args, 0);
  return !results.empty() && results[0] == Term::Input;
}

bool surgery::returnsNonNegative(CustomModuleOp block) {
  ForwardOp f = block.getForward();
  if (!f || f.getNumResults() == 0)
    return false;
  Operation *def =
      f.getBodyBlock().getTerminator()->getOperand(0).getDefiningOp();
  if (auto call = dyn_cast_or_null<CallOp>(def))
    return isa<ReLUOp>(call.resolveCalleeModule().getOperation());
  return isa_and_nonnull<FnReluOp>(def);
}
