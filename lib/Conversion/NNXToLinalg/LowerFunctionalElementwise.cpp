//===- LowerFunctionalElementwise.cpp - nnx.fn ops, one generic each ------===//
//
// The nnx.fn ops that become one `linalg.generic` over their result: the
// broadcasting binary ops and where (operands read through the broadcasting
// rule's maps), the activations and dropout (the leaf layers' lowerings),
// tril/triu and arange.
//
//===----------------------------------------------------------------------===//
#include "FunctionalLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// A `linalg.generic` over `op`'s result reading `inputs` through the
/// broadcasting rule, each element computed by `body`; the dims the rule
/// assumes equal are checked at run time (`names`: the operands').
FailureOr<Value> emitBroadcastGeneric(PatternRewriter &rewriter, Operation *op,
                                      ValueRange inputs,
                                      LayerEmitter::BodyFn body,
                                      ArrayRef<StringRef> names = {}) {
  FailureOr<Value> init = emptyResult(rewriter, op);
  if (failed(init))
    return failure();
  ArrayRef<int64_t> result = shapeOf(op->getResult(0));
  unsigned rank = result.size();
  MLIRContext *ctx = op->getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(shapeOf(in), result, rank, {}, ctx));
  LayerEmitter e(rewriter);
  e.setLoc(op->getLoc());
  Value out = e.generic(inputs, maps, *init,
                        AffineMap::getMultiDimIdentityMap(rank, ctx),
                        SmallVector<IT>(rank, IT::parallel), body);
  if (auto generic = out.getDefiningOp<linalg::LinalgOp>())
    emitLoopChecks(rewriter, generic, op, names);
  return out;
}

//===----------------------------------------------------------------------===//
// Binary ops and where
//===----------------------------------------------------------------------===//

arith::CmpFPredicate floatPredicate(FnBinaryKind kind) {
  switch (kind) {
  case FnBinaryKind::eq:
    return arith::CmpFPredicate::OEQ;
  case FnBinaryKind::ne:
    return arith::CmpFPredicate::UNE; // as torch: true where NaN
  case FnBinaryKind::lt:
    return arith::CmpFPredicate::OLT;
  case FnBinaryKind::le:
    return arith::CmpFPredicate::OLE;
  case FnBinaryKind::gt:
    return arith::CmpFPredicate::OGT;
  default:
    return arith::CmpFPredicate::OGE;
  }
}

arith::CmpIPredicate intPredicate(FnBinaryKind kind) {
  switch (kind) {
  case FnBinaryKind::eq:
    return arith::CmpIPredicate::eq;
  case FnBinaryKind::ne:
    return arith::CmpIPredicate::ne;
  case FnBinaryKind::lt:
    return arith::CmpIPredicate::slt;
  case FnBinaryKind::le:
    return arith::CmpIPredicate::sle;
  case FnBinaryKind::gt:
    return arith::CmpIPredicate::sgt;
  default:
    return arith::CmpIPredicate::sge;
  }
}

/// `kind` on float scalars.
Value floatBinary(OpBuilder &b, Location l, FnBinaryKind kind, Value x,
                  Value y) {
  switch (kind) {
  case FnBinaryKind::add:
    return arith::AddFOp::create(b, l, x, y);
  case FnBinaryKind::sub:
    return arith::SubFOp::create(b, l, x, y);
  case FnBinaryKind::mul:
    return arith::MulFOp::create(b, l, x, y);
  case FnBinaryKind::div:
    return arith::DivFOp::create(b, l, x, y);
  case FnBinaryKind::pow:
    return math::PowFOp::create(b, l, x, y);
  case FnBinaryKind::maximum: // NaN-propagating, as torch.maximum
    return arith::MaximumFOp::create(b, l, x, y);
  case FnBinaryKind::minimum:
    return arith::MinimumFOp::create(b, l, x, y);
  default:
    return arith::CmpFOp::create(b, l, floatPredicate(kind), x, y);
  }
}

/// `kind` on (signed) integer scalars, the logical ops on i1; the verifier
/// refuses div and pow.
Value intBinary(OpBuilder &b, Location l, FnBinaryKind kind, Value x, Value y) {
  switch (kind) {
  case FnBinaryKind::add:
    return arith::AddIOp::create(b, l, x, y);
  case FnBinaryKind::sub:
    return arith::SubIOp::create(b, l, x, y);
  case FnBinaryKind::mul:
    return arith::MulIOp::create(b, l, x, y);
  case FnBinaryKind::maximum:
    return arith::MaxSIOp::create(b, l, x, y);
  case FnBinaryKind::minimum:
    return arith::MinSIOp::create(b, l, x, y);
  case FnBinaryKind::logical_and:
    return arith::AndIOp::create(b, l, x, y);
  case FnBinaryKind::logical_or:
    return arith::OrIOp::create(b, l, x, y);
  case FnBinaryKind::logical_xor:
    return arith::XOrIOp::create(b, l, x, y);
  default:
    return arith::CmpIOp::create(b, l, intPredicate(kind), x, y);
  }
}

struct BinaryLowering : public OpInterfaceRewritePattern<FnBinaryOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(FnBinaryOpInterface op,
                                PatternRewriter &rewriter) const override {
    FnBinaryKind kind = op.getBinaryKind();
    bool isFloat = isa<FloatType>(getElementTypeOrSelf(op.getLhs()));
    FailureOr<Value> out =
        emitBroadcastGeneric(rewriter, op, {op.getLhs(), op.getRhs()},
                             [&](OpBuilder &b, Location l, ValueRange a) {
                               return isFloat
                                          ? floatBinary(b, l, kind, a[0], a[1])
                                          : intBinary(b, l, kind, a[0], a[1]);
                             },
                             {"lhs", "rhs", "result"});
    if (failed(out))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    rewriter.replaceOp(op, *out);
    return success();
  }
};

struct WhereLowering : public OpRewritePattern<FnWhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnWhereOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Value> out = emitBroadcastGeneric(
        rewriter, op, op->getOperands(),
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
        },
        {"condition", "input", "other", "result"});
    if (failed(out))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    rewriter.replaceOp(op, *out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Activations, dropout
//===----------------------------------------------------------------------===//

/// The leaf activation's lowering, with the op's attributes of the same
/// names; integer relu is a signed max with 0.
struct ActivationLowering
    : public OpInterfaceRewritePattern<FnActivationOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(FnActivationOpInterface op,
                                PatternRewriter &rewriter) const override {
    LayerEmitter e(rewriter);
    e.setLoc(op->getLoc());
    Value x = op->getOperand(0);
    Type elt = getElementTypeOrSelf(x);
    FailureOr<Value> out;
    if (isa<IntegerType>(elt))
      out = e.map(x, [&](OpBuilder &b, Location l, Value v) -> Value {
        return arith::MaxSIOp::create(b, l, v, zeroOf(b, l, elt));
      });
    else
      out = emitActivationKind(e, op.getActivationKind(), x,
                               op->getAttrDictionary().getValue());
    if (failed(out))
      return failure();
    rewriter.replaceOp(op, *out);
    return success();
  }
};

/// The identity unless `train`; then the leaf's train-mode dropout.
struct DropoutLowering : public OpRewritePattern<FnDropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnDropoutOp op,
                                PatternRewriter &rewriter) const override {
    double p = op.getP().convertToDouble();
    if (!op.getTrain() || p == 0.0) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    LayerEmitter e(rewriter);
    e.setLoc(op.getLoc());
    FailureOr<Value> out =
        emitDropout(e, op.getInput(), p, static_cast<uint64_t>(op.getSeed()));
    if (failed(out))
      return failure();
    rewriter.replaceOp(op, *out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Factories
//===----------------------------------------------------------------------===//

/// tril / triu: element (.., i, j) kept where `j - i <= diagonal` (tril) or
/// `j - i >= diagonal` (triu), zero elsewhere.
template <typename OpT> struct TriangleLowering : public OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    unsigned rank = shapeOf(op.getInput()).size();
    int64_t diagonal = op.getDiagonal();
    auto pred =
        OpT::isLower() ? arith::CmpIPredicate::sle : arith::CmpIPredicate::sge;
    FailureOr<Value> out = emitBroadcastGeneric(
        rewriter, op, op.getInput(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value i = linalg::IndexOp::create(b, l, rank - 2);
          Value j = linalg::IndexOp::create(b, l, rank - 1);
          Value diff = arith::SubIOp::create(b, l, j, i);
          Value diag = arith::ConstantIndexOp::create(b, l, diagonal);
          Value keep = arith::CmpIOp::create(b, l, pred, diff, diag);
          return arith::SelectOp::create(b, l, keep, a[0],
                                         zeroOf(b, l, a[0].getType()));
        });
    if (failed(out))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    rewriter.replaceOp(op, *out);
    return success();
  }
};

/// arange: the loop index, converted to the element type.
struct ArangeLowering : public OpRewritePattern<FnArangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnArangeOp op,
                                PatternRewriter &rewriter) const override {
    Type elt = getElementTypeOrSelf(op.getType());
    FailureOr<Value> out = emitBroadcastGeneric(
        rewriter, op, {}, [&](OpBuilder &b, Location l, ValueRange) -> Value {
          Value i = linalg::IndexOp::create(b, l, 0);
          if (isa<IntegerType>(elt))
            return arith::IndexCastOp::create(b, l, elt, i);
          Value i64 = arith::IndexCastOp::create(b, l, b.getI64Type(), i);
          return arith::SIToFPOp::create(b, l, elt, i64);
        });
    if (failed(out))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    rewriter.replaceOp(op, *out);
    return success();
  }
};

} // namespace

void mlir::nnx::populateFunctionalElementwisePatterns(
    RewritePatternSet &patterns) {
  patterns.add<BinaryLowering, ActivationLowering>(patterns.getContext());
  patterns.add<WhereLowering, DropoutLowering, ArangeLowering,
               TriangleLowering<FnTrilOp>, TriangleLowering<FnTriuOp>>(
      patterns.getContext());
}
