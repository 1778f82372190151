//===- LowerFunctionalIndexing.cpp - gather, index_select, topk, cumsum ---===//
//
// The nnx.fn ops that read by data-dependent positions or along a dim:
// gather and index_select (a generic over the result reading the input with
// tensor.extract, after a run-time check of every index), topk (k selection
// passes, each a reduction generic) and cumsum (a triangular reduction
// generic).
//
//===----------------------------------------------------------------------===//
#include "FunctionalLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t normalized(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

/// Size `d` of `v` as an index value.
Value sizeValue(OpBuilder &b, Location loc, Value v, int64_t d) {
  return getValueOrCreateConstantIndexOp(b, loc,
                                         tensor::getMixedSize(b, loc, v, d));
}

//===----------------------------------------------------------------------===//
// gather, index_select
//===----------------------------------------------------------------------===//

/// A generic over `op`'s result reading `index` through `indexMap`: each
/// element is the input's element at the loop's position, with dim `dim`
/// replaced by the index read. The indices are checked at run time first
/// (emitIndexRangeCheck); the read also clamps them into the input, so that
/// no path reads outside it.
FailureOr<Value> emitIndexedRead(PatternRewriter &rewriter, Operation *op,
                                 Value input, Value index, AffineMap indexMap,
                                 int64_t dim) {
  Location loc = op->getLoc();
  Value size = sizeValue(rewriter, loc, input, dim);
  emitIndexRangeCheck(rewriter, loc, op, index, size, dim);
  FailureOr<Value> init = emptyResult(rewriter, op);
  if (failed(init))
    return failure();
  unsigned rank = shapeOf(op->getResult(0)).size();
  MLIRContext *ctx = op->getContext();
  LayerEmitter e(rewriter);
  e.setLoc(loc);
  return e.generic(
      index, {indexMap}, *init, AffineMap::getMultiDimIdentityMap(rank, ctx),
      SmallVector<IT>(rank, IT::parallel),
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        Value last = arith::SubIOp::create(b, l, size, one);
        i = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, i, zero),
                                   last);
        SmallVector<Value> at;
        for (unsigned d = 0; d < rank; ++d)
          at.push_back(d == dim ? i : linalg::IndexOp::create(b, l, d));
        return tensor::ExtractOp::create(b, l, input, at);
      });
}

/// gather: out[.., j, ..] = input[.., index[.., j, ..], ..] along `dim`;
/// the index's other dims must not exceed the input's.
struct GatherLowering : public OpRewritePattern<FnGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnGatherOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput(), index = op.getIndex();
    int64_t rank = shapeOf(input).size();
    int64_t dim = normalized(op.getDim(), rank);
    std::string where = describeCheckedOp(op);
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dim || (!ShapedType::isDynamic(shapeOf(index)[d]) &&
                       !ShapedType::isDynamic(shapeOf(input)[d])))
        continue;
      Value indexSize = sizeValue(rewriter, loc, index, d);
      Value inputSize = sizeValue(rewriter, loc, input, d);
      emitRuntimeCheck(rewriter, loc, arith::CmpIPredicate::sle, indexSize,
                       inputSize,
                       where + ": dimension " + std::to_string(d) +
                           " of the index is {0}, larger than the input's {1}");
    }
    FailureOr<Value> out = emitIndexedRead(
        rewriter, op, input, index, rewriter.getMultiDimIdentityMap(rank), dim);
    if (failed(out))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    rewriter.replaceOp(op, *out);
    return success();
  }
};

/// index_select: out[.., j, ..] = input[.., index[j], ..] along `dim`.
struct IndexSelectLowering : public OpRewritePattern<FnIndexSelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnIndexSelectOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = shapeOf(op.getInput()).size();
    int64_t dim = normalized(op.getDim(), rank);
    AffineMap indexMap =
        AffineMap::get(rank, 0, getAffineDimExpr(dim, op.getContext()));
    FailureOr<Value> out = emitIndexedRead(rewriter, op, op.getInput(),
                                           op.getIndex(), indexMap, dim);
    if (failed(out))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    rewriter.replaceOp(op, *out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

/// Whether (a, ai) comes before (b, bi) in topk's order: the larger (with
/// `largest`, else the smaller) first, NaN larger than every number, equal
/// values (NaNs equal each other) by ascending position.
Value precedes(OpBuilder &b, Location l, bool largest, Value a, Value ai,
               Value bv, Value bi) {
  Value better, same;
  if (isa<FloatType>(a.getType())) {
    using P = arith::CmpFPredicate;
    Value aNan = arith::CmpFOp::create(b, l, P::UNO, a, a);
    Value bNan = arith::CmpFOp::create(b, l, P::UNO, bv, bv);
    Value t = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
    Value nanFirst =
        largest ? arith::AndIOp::create(b, l, aNan,
                                        arith::XOrIOp::create(b, l, bNan, t))
                : arith::AndIOp::create(b, l, bNan,
                                        arith::XOrIOp::create(b, l, aNan, t));
    Value ordered =
        arith::CmpFOp::create(b, l, largest ? P::OGT : P::OLT, a, bv);
    better = arith::OrIOp::create(b, l, nanFirst, ordered);
    same =
        arith::OrIOp::create(b, l, arith::CmpFOp::create(b, l, P::OEQ, a, bv),
                             arith::AndIOp::create(b, l, aNan, bNan));
  } else {
    using P = arith::CmpIPredicate;
    better = arith::CmpIOp::create(b, l, largest ? P::sgt : P::slt, a, bv);
    same = arith::CmpIOp::create(b, l, P::eq, a, bv);
  }
  Value earlier =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, ai, bi);
  return arith::OrIOp::create(b, l, better,
                              arith::AndIOp::create(b, l, same, earlier));
}

/// One selection pass of topk over `x` along `dim`: per position of the
/// other dims, the element (value and i64 position) that comes first among
/// those after `prev` (the previous pass's pick; every element when null).
std::pair<Value, Value> selectNext(OpBuilder &b, Location loc, Value x,
                                   int64_t dim, bool largest,
                                   std::pair<Value, Value> prev) {
  unsigned rank = shapeOf(x).size();
  Type elt = getElementTypeOrSelf(x), i64 = b.getI64Type();
  SmallVector<bool> keep(rank, true);
  keep[dim] = false;
  LayerEmitter e(b);
  e.setLoc(loc);
  SmallVector<OpFoldResult> sizes = e.keptSizes(x, keep);
  auto filled = [&](Value v, Type t) {
    return linalg::FillOp::create(b, loc, v, e.empty(sizes, t)).getResult(0);
  };
  Value accV = filled(zeroOf(b, loc, elt), elt);
  Value accI = filled(arith::ConstantIntOp::create(b, loc, i64, -1), i64);
  AffineMap kept = e.keptDims(rank, keep);
  SmallVector<Value> ins{x};
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  if (prev.first) {
    ins.append({prev.first, prev.second});
    maps.append({kept, kept});
  }
  maps.append({kept, kept});
  SmallVector<IT> iters(rank, IT::parallel);
  iters[dim] = IT::reduction;
  auto pass = linalg::GenericOp::create(
      b, loc, TypeRange{accV.getType(), accI.getType()}, ins,
      ValueRange{accV, accI}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = a[0], av = a[a.size() - 2], ai = a.back();
        Value i = arith::IndexCastOp::create(
            nb, l, i64, linalg::IndexOp::create(nb, l, dim));
        Value none =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, ai,
                                  arith::ConstantIntOp::create(nb, l, i64, -1));
        Value take = arith::OrIOp::create(
            nb, l, none, precedes(nb, l, largest, v, i, av, ai));
        if (prev.first)
          take = arith::AndIOp::create(
              nb, l, take, precedes(nb, l, largest, a[1], a[2], v, i));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, take, v, av),
                       arith::SelectOp::create(nb, l, take, i, ai)});
      });
  return {pass.getResult(0), pass.getResult(1)};
}

/// topk: k selection passes (pass j picks the j-th element in topk's order,
/// O(k n) in all), each inserted at position j of both results. A dynamic
/// dim is checked at run time to hold at least k elements.
struct TopkLowering : public OpRewritePattern<FnTopkOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnTopkOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    int64_t rank = shapeOf(x).size(), dim = normalized(op.getDim(), rank);
    int64_t k = op.getK();
    if (ShapedType::isDynamic(shapeOf(x)[dim]))
      emitRuntimeCheck(rewriter, loc, arith::CmpIPredicate::sle,
                       arith::ConstantIndexOp::create(rewriter, loc, k),
                       sizeValue(rewriter, loc, x, dim),
                       describeCheckedOp(op) +
                           ": k is {0}, larger than "
                           "dimension " +
                           std::to_string(dim) + " of the input ({1})");
    ReifiedRankedShapedTypeDims shapes;
    if (failed(reifyResultShapes(rewriter, op, shapes)))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    Value values = tensor::EmptyOp::create(rewriter, loc, shapes[0],
                                           getElementTypeOrSelf(x));
    Value indices = tensor::EmptyOp::create(rewriter, loc, shapes[1],
                                            rewriter.getI64Type());
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = shapes[0];
    sizes[dim] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    std::pair<Value, Value> pick;
    for (int64_t j = 0; j < k; ++j) {
      pick = selectNext(rewriter, loc, x, dim, op.getLargest(), pick);
      offsets[dim] = rewriter.getIndexAttr(j);
      values = tensor::InsertSliceOp::create(rewriter, loc, pick.first, values,
                                             offsets, sizes, strides);
      indices = tensor::InsertSliceOp::create(rewriter, loc, pick.second,
                                              indices, offsets, sizes, strides);
    }
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// cumsum
//===----------------------------------------------------------------------===//

/// cumsum: loops (result dims..., j') with j' a reduction along `dim`;
/// out[.., j, ..] accumulates input[.., j', ..] for j' <= j in ascending
/// order (the later j' leave the sum as it is).
struct CumsumLowering : public OpRewritePattern<FnCumsumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnCumsumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = op.getInput();
    unsigned rank = shapeOf(x).size();
    int64_t dim = normalized(op.getDim(), rank);
    FailureOr<Value> init = emptyResult(rewriter, op);
    if (failed(init))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    Type elt = getElementTypeOrSelf(x);
    Value zero =
        linalg::FillOp::create(rewriter, loc, zeroOf(rewriter, loc, elt), *init)
            .getResult(0);
    SmallVector<AffineExpr> in, out;
    for (unsigned d = 0; d < rank; ++d) {
      in.push_back(getAffineDimExpr(d == dim ? rank : d, ctx));
      out.push_back(getAffineDimExpr(d, ctx));
    }
    SmallVector<IT> iters(rank, IT::parallel);
    iters.push_back(IT::reduction);
    LayerEmitter e(rewriter);
    e.setLoc(loc);
    Value sum = e.generic(
        x, {AffineMap::get(rank + 1, 0, in, ctx)}, zero,
        AffineMap::get(rank + 1, 0, out, ctx), iters,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value jp = linalg::IndexOp::create(b, l, rank);
          Value j = linalg::IndexOp::create(b, l, dim);
          Value keep =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule, jp, j);
          Value s = isa<FloatType>(elt)
                        ? arith::AddFOp::create(b, l, a[1], a[0]).getResult()
                        : arith::AddIOp::create(b, l, a[1], a[0]).getResult();
          return arith::SelectOp::create(b, l, keep, s, a[1]);
        });
    rewriter.replaceOp(op, sum);
    return success();
  }
};

} // namespace

void mlir::nnx::populateFunctionalIndexingPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<GatherLowering, IndexSelectLowering, TopkLowering, CumsumLowering>(
          patterns.getContext());
}
