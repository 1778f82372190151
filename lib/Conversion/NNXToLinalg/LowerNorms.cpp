//===- LowerNorms.cpp - nnx.layer_norm, nnx.rms_norm, nnx.batch_norm ------===//
//
// The normalizations: row statistics as linalg reductions, then one
// elementwise pass that normalizes and applies the affine parameters.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

Value addCombine(OpBuilder &b, Location l, ValueRange a, Value acc) {
  return arith::AddFOp::create(b, l, acc, a[0]);
}

/// acc + (a[0] - a[1])^2, or acc + a[0]^2 without a centre.
Value addSquareCombine(OpBuilder &b, Location l, ValueRange a, Value acc) {
  Value d = a.size() > 1 ? arith::SubFOp::create(b, l, a[0], a[1]) : a[0];
  return arith::AddFOp::create(b, l, acc, arith::MulFOp::create(b, l, d, d));
}

/// 1 / sqrt(v + eps).
Value rsqrtPlusEps(OpBuilder &b, Location l, Type elt, Value v, double eps) {
  Value var =
      arith::AddFOp::create(b, l, v, LayerEmitter::scalar(b, l, elt, eps));
  return arith::DivFOp::create(b, l, LayerEmitter::scalar(b, l, elt, 1.0),
                               math::SqrtOp::create(b, l, var));
}

/// LayerNorm (`rms` false) and RMSNorm (`rms` true) over the trailing
/// `normalized.size()` dims: per row the mean (LayerNorm only) and
/// rstd = 1 / sqrt(mean of squares + eps), then (x - mean) * rstd * w + b.
FailureOr<Value> emitTrailingNorm(LayerEmitter &e, Operation *op, Value x,
                                  ArrayRef<int64_t> normalized, double eps,
                                  bool rms) {
  OpBuilder &b = e.getBuilder();
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank(), lead = r - normalized.size();
  double count = 1;
  for (int64_t d : normalized)
    count *= d;
  SmallVector<bool> keep(r, false), keepParam(r, false);
  for (unsigned d = 0; d < r; ++d)
    (d < lead ? keep : keepParam)[d] = true;
  FailureOr<Value> w = e.getOptionalTensor(op, "weight");
  FailureOr<Value> bias =
      rms ? FailureOr<Value>(Value()) : e.getOptionalTensor(op, "bias");
  if (failed(w) || failed(bias))
    return failure();
  auto divCount = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return arith::DivFOp::create(nb, l, v,
                                 LayerEmitter::scalar(nb, l, elt, count));
  };
  Value mean;
  if (!rms)
    mean = e.map(e.reduce(x, keep, 0.0, {}, addCombine), divCount);
  Value sumsq = e.reduce(x, keep, 0.0, mean ? ValueRange{mean} : ValueRange{},
                         addSquareCombine);
  Value rstd = e.map(sumsq, [&](OpBuilder &nb, Location l, Value s) {
    return rsqrtPlusEps(nb, l, elt, divCount(nb, l, s), eps);
  });

  AffineMap id = b.getMultiDimIdentityMap(r), red = e.keptDims(r, keep),
            par = e.keptDims(r, keepParam);
  SmallVector<Value> ins{x, rstd};
  SmallVector<AffineMap> maps{id, red};
  for (Value v : {mean, *w, *bias}) {
    if (!v)
      continue;
    ins.push_back(v);
    maps.push_back(v == mean ? red : par);
  }
  bool hasW = bool(*w), hasB = bool(*bias);
  return e.generic(ins, maps, e.empty(e.sizesOf(x), elt), id,
                   SmallVector<IT>(r, IT::parallel),
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     unsigned next = 2;
                     Value v = a[0];
                     if (!rms)
                       v = arith::SubFOp::create(nb, l, v, a[next++]);
                     v = arith::MulFOp::create(nb, l, v, a[1]);
                     if (hasW)
                       v = arith::MulFOp::create(nb, l, v, a[next++]);
                     if (hasB)
                       v = arith::AddFOp::create(nb, l, v, a[next++]);
                     return v;
                   });
}

/// LayerNorm and RMSNorm: the same lowering, RMSNorm without centring.
template <typename NormOp>
struct TrailingNormLowering : public LayerLoweringOpInterface::ExternalModel<
                                  TrailingNormLowering<NormOp>, NormOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<NormOp>(layer);
    return emitTrailingNorm(e, op, x, op.getNormalizedShape(),
                            op.getEps().convertToDouble(),
                            /*rms=*/std::is_same_v<NormOp, RMSNormOp>);
  }
};

/// Per channel of BatchNorm: the mean and the variance (eval: the running
/// statistics) or the sum of squared deviations and the element count
/// (train: the batch's own biased statistics over every dim but 1).
struct ChannelStats {
  Value mean, var, count;
};

FailureOr<ChannelStats> emitChannelStats(LayerEmitter &e, BatchNormOp op,
                                         Value x, ArrayRef<bool> keep) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  if (!op.getTrain()) {
    FailureOr<Value> rm = e.getTensor(op, "running_mean");
    FailureOr<Value> rv = e.getTensor(op, "running_var");
    if (failed(rm) || failed(rv))
      return failure();
    return ChannelStats{*rm, *rv, Value()};
  }
  auto t = cast<RankedTensorType>(x.getType());
  Value n = tensor::DimOp::create(b, loc, x, 0);
  for (int64_t d = 2; d < t.getRank(); ++d)
    n = arith::MulIOp::create(b, loc, n, tensor::DimOp::create(b, loc, x, d));
  Value n64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
  ChannelStats s;
  s.count = arith::SIToFPOp::create(b, loc, t.getElementType(), n64);
  Value sum = e.reduce(x, keep, 0.0, {}, addCombine);
  s.mean = e.map(sum, [&](OpBuilder &nb, Location l, Value v) {
    return arith::DivFOp::create(nb, l, v, s.count);
  });
  s.var = e.reduce(x, keep, 0.0, s.mean, addSquareCombine);
  return s;
}

struct BatchNormLowering
    : public LayerLoweringOpInterface::ExternalModel<BatchNormLowering,
                                                     BatchNormOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const;
};

FailureOr<Value> BatchNormLowering::emitForward(Operation *layer,
                                                LayerEmitter &e,
                                                Value x) const {
  auto op = cast<BatchNormOp>(layer);
  OpBuilder &b = e.getBuilder();
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank();
  double eps = op.getEps().convertToDouble();
  SmallVector<bool> keep(r, false);
  keep[1] = true;
  FailureOr<Value> w = e.getOptionalTensor(op, "weight");
  FailureOr<Value> bias = e.getOptionalTensor(op, "bias");
  FailureOr<ChannelStats> stats = emitChannelStats(e, op, x, keep);
  if (failed(w) || failed(bias) || failed(stats))
    return failure();
  Value count = stats->count;
  // alpha = invstd * weight, beta = bias - mean * alpha (as PyTorch's CPU
  // kernel), then y = x * alpha + beta.
  AffineMap id1 = b.getMultiDimIdentityMap(1);
  SmallVector<OpFoldResult> csize{e.sizesOf(stats->mean)};
  SmallVector<Value> ins{stats->var};
  if (*w)
    ins.push_back(*w);
  Value alpha = e.generic(
      ins, SmallVector<AffineMap>(ins.size(), id1), e.empty(csize, elt), id1,
      {IT::parallel}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v = count ? arith::DivFOp::create(nb, l, a[0], count) : a[0];
        Value inv = rsqrtPlusEps(nb, l, elt, v, eps);
        return a.size() > 2 ? arith::MulFOp::create(nb, l, inv, a[1]) : inv;
      });
  ins = {stats->mean, alpha};
  if (*bias)
    ins.push_back(*bias);
  Value beta = e.generic(ins, SmallVector<AffineMap>(ins.size(), id1),
                         e.empty(csize, elt), id1, {IT::parallel},
                         [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           Value ma = arith::MulFOp::create(nb, l, a[0], a[1]);
                           if (a.size() > 3)
                             return arith::SubFOp::create(nb, l, a[2], ma);
                           return arith::NegFOp::create(nb, l, ma);
                         });
  AffineMap id = b.getMultiDimIdentityMap(r), ch = e.keptDims(r, keep);
  return e.generic({x, alpha, beta}, {id, ch, ch}, e.empty(e.sizesOf(x), elt),
                   id, SmallVector<IT>(r, IT::parallel),
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value v = arith::MulFOp::create(nb, l, a[0], a[1]);
                     return arith::AddFOp::create(nb, l, v, a[2]);
                   });
}

} // namespace

void mlir::nnx::registerNormLowerings(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NNXDialect *) {
    LayerNormOp::attachInterface<TrailingNormLowering<LayerNormOp>>(*ctx);
    RMSNormOp::attachInterface<TrailingNormLowering<RMSNormOp>>(*ctx);
    BatchNormOp::attachInterface<BatchNormLowering>(*ctx);
  });
}
