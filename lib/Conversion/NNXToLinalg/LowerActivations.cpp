//===- LowerActivations.cpp - activations, softmax, dropout -----*- C++ -*-===//
//
// The elementwise layers, each one scalar function applied by a
// `linalg.generic` (`scalarForward` below, one overload per op), plus
// softmax (`linalg.softmax`) and dropout (a counter-based hash mask).
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

/// Scalar constants of the element type, at one insertion point.
struct Consts {
  OpBuilder &b;
  Location l;
  Type elt;
  Value operator()(double v) const {
    return LayerEmitter::scalar(b, l, elt, v);
  }
};

/// 1 + exp(-v).
Value sigmoidDenominator(const Consts &c, Value v) {
  Value e = math::ExpOp::create(c.b, c.l, arith::NegFOp::create(c.b, c.l, v));
  return arith::AddFOp::create(c.b, c.l, c(1.0), e);
}

//===----------------------------------------------------------------------===//
// Scalar functions, one per elementwise layer
//===----------------------------------------------------------------------===//

Value scalarForward(ReLUOp, const Consts &c, Value v) {
  return arith::MaximumFOp::create(c.b, c.l, v, c(0.0));
}

Value scalarForward(TanhOp, const Consts &c, Value v) {
  return math::TanhOp::create(c.b, c.l, v);
}

Value scalarForward(SigmoidOp, const Consts &c, Value v) {
  return arith::DivFOp::create(c.b, c.l, c(1.0), sigmoidDenominator(c, v));
}

Value scalarForward(SiLUOp, const Consts &c, Value v) {
  return arith::DivFOp::create(c.b, c.l, v, sigmoidDenominator(c, v));
}

Value scalarForward(LeakyReLUOp op, const Consts &c, Value v) {
  Value pos =
      arith::CmpFOp::create(c.b, c.l, arith::CmpFPredicate::OGT, v, c(0.0));
  Value neg = arith::MulFOp::create(c.b, c.l, v,
                                    c(op.getNegativeSlope().convertToDouble()));
  return arith::SelectOp::create(c.b, c.l, pos, v, neg);
}

Value scalarForward(GELUOp op, const Consts &c, Value v) {
  OpBuilder &b = c.b;
  Location l = c.l;
  Value half = arith::MulFOp::create(b, l, v, c(0.5));
  Value inner;
  if (op.getApproximate() == GeluApproximation::none) {
    // x/2 * (1 + erf(x / sqrt(2)))
    inner =
        math::ErfOp::create(b, l, arith::MulFOp::create(b, l, v, c(M_SQRT1_2)));
  } else {
    // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    Value cube =
        arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, v, v), v);
    Value poly = arith::AddFOp::create(
        b, l, v, arith::MulFOp::create(b, l, c(0.044715), cube));
    inner = math::TanhOp::create(
        b, l, arith::MulFOp::create(b, l, c(M_SQRT2 * M_2_SQRTPI * 0.5), poly));
  }
  return arith::MulFOp::create(b, l, half,
                               arith::AddFOp::create(b, l, c(1.0), inner));
}

/// x * relu6(x + 3) / 6.
Value scalarForward(HardswishOp, const Consts &c, Value v) {
  Value shifted = arith::AddFOp::create(c.b, c.l, v, c(3.0));
  Value relu6 = arith::MinimumFOp::create(
      c.b, c.l, arith::MaximumFOp::create(c.b, c.l, shifted, c(0.0)), c(6.0));
  return arith::DivFOp::create(
      c.b, c.l, arith::MulFOp::create(c.b, c.l, v, relu6), c(6.0));
}

/// An elementwise layer: its scalar function mapped over the input.
template <typename OpT>
struct ElementwiseLowering
    : public LayerLoweringOpInterface::ExternalModel<ElementwiseLowering<OpT>,
                                                     OpT> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    Type elt = cast<RankedTensorType>(x.getType()).getElementType();
    return e.map(x, [&](OpBuilder &b, Location l, Value v) {
      return scalarForward(cast<OpT>(layer), Consts{b, l, elt}, v);
    });
  }
};

struct IdentityLowering
    : public LayerLoweringOpInterface::ExternalModel<IdentityLowering,
                                                     IdentityOp> {
  FailureOr<Value> emitForward(Operation *, LayerEmitter &, Value x) const {
    return x;
  }
};

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// `linalg.softmax` (decomposed later by nnx-decompose-aggregates).
struct SoftmaxLowering
    : public LayerLoweringOpInterface::ExternalModel<SoftmaxLowering,
                                                     SoftmaxOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto t = cast<RankedTensorType>(x.getType());
    int64_t dim = cast<SoftmaxOp>(layer).getDim();
    if (dim < 0)
      dim += t.getRank();
    Value init = e.empty(e.sizesOf(x), t.getElementType());
    return linalg::SoftmaxOp::create(e.getBuilder(), e.getLoc(), t, x, init,
                                     static_cast<uint64_t>(dim))
        .getResult()[0];
  }
};

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// splitmix64's finalizer on the i64 `z`.
Value splitmix64(OpBuilder &b, Location l, Value z) {
  auto k = [&](uint64_t c) {
    return arith::ConstantIntOp::create(b, l, b.getI64Type(), (int64_t)c);
  };
  auto mix = [&](Value z, unsigned shift, uint64_t mul) -> Value {
    Value s = arith::ShRUIOp::create(b, l, z, k(shift));
    Value x = arith::XOrIOp::create(b, l, z, s);
    return mul ? arith::MulIOp::create(b, l, x, k(mul)).getResult() : x;
  };
  z = mix(z, 30, 0xBF58476D1CE4E5B9ULL);
  z = mix(z, 27, 0x94D049BB133111EBULL);
  return mix(z, 31, 0);
}

/// Train-mode dropout. Element `i` (row-major linear index) is dropped when
/// `(splitmix64(i + (seed + 1) * 0x9E3779B97F4A7C15) >> 40) < round(p * 2^24)`
/// and kept elements are scaled by 1/(1-p). docs/Lowering.md spells out the
/// hash so a reference can reproduce the mask.
Value emitTrainDropout(LayerEmitter &e, Value x, double p, uint64_t seed) {
  OpBuilder &b = e.getBuilder();
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank();
  if (p >= 1.0)
    return e.filled(e.sizesOf(x), elt, 0.0);
  SmallVector<Value> dims;
  for (unsigned d = 0; d < r; ++d)
    dims.push_back(tensor::DimOp::create(b, e.getLoc(), x, d));
  uint64_t offset = (seed + 1) * 0x9E3779B97F4A7C15ULL;
  uint64_t threshold = (uint64_t)std::llround(p * (double)(1 << 24));
  double scale = 1.0 / (1.0 - p);
  return e.map(x, [&](OpBuilder &nb, Location l, Value v) -> Value {
    // Ops are created one statement each: the order in which a call's
    // arguments are evaluated differs between compilers (g++ and clang built
    // different IR here).
    Value lin = linalg::IndexOp::create(nb, l, 0);
    for (unsigned d = 1; d < r; ++d) {
      Value index = linalg::IndexOp::create(nb, l, d);
      Value rows = arith::MulIOp::create(nb, l, lin, dims[d]);
      lin = arith::AddIOp::create(nb, l, rows, index);
    }
    auto i64 = nb.getI64Type();
    Value z = arith::IndexCastOp::create(nb, l, i64, lin);
    z = arith::AddIOp::create(
        nb, l, z, arith::ConstantIntOp::create(nb, l, i64, (int64_t)offset));
    Value shift = arith::ConstantIntOp::create(nb, l, i64, 40);
    Value u = arith::ShRUIOp::create(nb, l, splitmix64(nb, l, z), shift);
    Value keepIt = arith::CmpIOp::create(
        nb, l, arith::CmpIPredicate::uge, u,
        arith::ConstantIntOp::create(nb, l, i64, (int64_t)threshold));
    Consts c{nb, l, elt};
    Value scaled = arith::MulFOp::create(nb, l, v, c(scale));
    return arith::SelectOp::create(nb, l, keepIt, scaled, c(0.0));
  });
}

struct DropoutLowering
    : public LayerLoweringOpInterface::ExternalModel<DropoutLowering,
                                                     DropoutOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<DropoutOp>(layer);
    double p = op.getP().convertToDouble();
    if (!op.getTrain() || p == 0.0)
      return x;
    return emitTrainDropout(e, x, p, (uint64_t)op.getSeed());
  }
};

} // namespace

FailureOr<Value> mlir::nnx::emitDropout(LayerEmitter &emitter, Value input,
                                        double p, uint64_t seed) {
  return emitTrainDropout(emitter, input, p, seed);
}

FailureOr<Value> mlir::nnx::emitActivationKind(LayerEmitter &emitter,
                                               ActivationKind kind,
                                               Value input) {
  return emitActivationKind(emitter, kind, input, {});
}

FailureOr<Value> mlir::nnx::emitActivationKind(LayerEmitter &emitter,
                                               ActivationKind kind, Value input,
                                               ArrayRef<NamedAttribute> attrs) {
  // A detached `nnx.<kind>` with its default attributes (overridden by
  // `attrs`) stands for the activation, so the FeedFwdNN forward and the
  // nnx.fn activations are the leaf's own lowering.
  MLIRContext *ctx = input.getContext();
  OperationState state(emitter.getLoc(),
                       ("nnx." + stringifyActivationKind(kind)).str());
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(state.name.getStringRef(), ctx);
  assert(name && "every ActivationKind names a leaf op");
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     StringAttr::get(ctx, stringifyActivationKind(kind)));
  name->populateDefaultAttrs(state.attributes);
  for (NamedAttribute attr : attrs)
    if (llvm::is_contained(name->getAttributeNames(), attr.getName()) &&
        attr.getName() != SymbolTable::getSymbolAttrName())
      state.attributes.set(attr.getName(), attr.getValue());
  Operation *op = Operation::create(state);
  FailureOr<Value> out =
      cast<LayerLoweringOpInterface>(op).emitForward(emitter, input);
  op->destroy();
  return out;
}

void mlir::nnx::registerActivationLowerings(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NNXDialect *) {
    ReLUOp::attachInterface<ElementwiseLowering<ReLUOp>>(*ctx);
    TanhOp::attachInterface<ElementwiseLowering<TanhOp>>(*ctx);
    SigmoidOp::attachInterface<ElementwiseLowering<SigmoidOp>>(*ctx);
    SiLUOp::attachInterface<ElementwiseLowering<SiLUOp>>(*ctx);
    LeakyReLUOp::attachInterface<ElementwiseLowering<LeakyReLUOp>>(*ctx);
    GELUOp::attachInterface<ElementwiseLowering<GELUOp>>(*ctx);
    HardswishOp::attachInterface<ElementwiseLowering<HardswishOp>>(*ctx);
    IdentityOp::attachInterface<IdentityLowering>(*ctx);
    SoftmaxOp::attachInterface<SoftmaxLowering>(*ctx);
    DropoutOp::attachInterface<DropoutLowering>(*ctx);
  });
}
