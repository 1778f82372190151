//===- LowerFunctionalStructured.cpp - matmul, reshapes, reductions -------===//
//
// The nnx.fn ops with structure beyond one elementwise generic: matmul (a
// contraction generic), reshape (expand/collapse_shape or tensor.reshape),
// expand (a broadcasting generic), permute (linalg.transpose), softmax (the
// leaf's linalg.softmax) and mean/sum (reduction generics).
//
//===----------------------------------------------------------------------===//
#include "FunctionalLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Support/SizeProofs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Loops (batch..., m, n, k): lhs (batch, m, k), rhs (batch, k, n) or with
/// transpose_b (batch, n, k), both batch parts broadcast; the result
/// (batch, m, n) accumulates from zero.
struct MatmulLowering : public OpRewritePattern<FnMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnMatmulOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    ArrayRef<int64_t> result = shapeOf(op.getResult());
    unsigned batch = result.size() - 2, loops = batch + 3;
    AffineExpr m = getAffineDimExpr(batch, ctx),
               n = getAffineDimExpr(batch + 1, ctx),
               k = getAffineDimExpr(batch + 2, ctx);
    ArrayRef<int64_t> resultBatch = result.drop_back(2);
    auto operandMap = [&](Value v, ArrayRef<AffineExpr> tail) {
      return broadcastMap(shapeOf(v).drop_back(2), resultBatch, loops, tail,
                          ctx);
    };
    AffineMap lhsMap = operandMap(op.getLhs(), {m, k});
    AffineMap rhsMap = op.getTransposeB() ? operandMap(op.getRhs(), {n, k})
                                          : operandMap(op.getRhs(), {k, n});
    SmallVector<AffineExpr> outExprs;
    for (unsigned d = 0; d < batch + 2; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    FailureOr<SmallVector<OpFoldResult>> sizes = getResultSizes(rewriter, op);
    if (failed(sizes))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    // bf16 / f16 (accumulate=f32): the products accumulate in f32, the
    // result is rounded once.
    Type elt = tensorType(op.getResult()).getElementType();
    FloatType compute = getComputeType(op);
    Type acc = compute && isNarrowFloat(elt) ? Type(compute) : elt;
    Value init = tensor::EmptyOp::create(rewriter, loc, *sizes, acc);
    Value zero = linalg::FillOp::create(rewriter, loc,
                                        ValueRange{zeroOf(rewriter, loc, acc)},
                                        ValueRange{init})
                     .getResult(0);
    SmallVector<IT> iters(batch + 2, IT::parallel);
    iters.push_back(IT::reduction);
    LayerEmitter e(rewriter);
    e.setLoc(loc);
    Value out = e.generic({op.getLhs(), op.getRhs()}, {lhsMap, rhsMap}, zero,
                          AffineMap::get(loops, 0, outExprs, ctx), iters,
                          [](OpBuilder &b, Location l, ValueRange a) -> Value {
                            Value p = arith::MulFOp::create(b, l, a[0], a[1]);
                            return arith::AddFOp::create(b, l, a[2], p);
                          });
    if (auto generic = out.getDefiningOp<linalg::LinalgOp>())
      emitLoopChecks(rewriter, generic, op, {"lhs", "rhs", "result"});
    rewriter.replaceOp(op, convertElements(rewriter, loc, out, elt));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

/// Takes static dims of `longer` from `i` in direction `step` until their
/// product is `size`, marking them as `owner`'s; fails on a dynamic dim, the
/// end of the shape or an overshoot.
bool takeStatic(ArrayRef<int64_t> longer, int64_t &i, int64_t step,
                int64_t size, int64_t owner, MutableArrayRef<int64_t> owners) {
  int64_t product = 1;
  do {
    if (i < 0 || i >= (int64_t)longer.size() ||
        ShapedType::isDynamic(longer[i]))
      return false;
    product *= longer[i];
    owners[i] = owner;
    i += step;
  } while (product < size && product != 0);
  return product == size;
}

/// Matches the static run `shorter[sb, se)` inside the static run
/// `longer[lb, le)` between dynamic dims: from the left, or from the right
/// in the last run. Unmatched dims of `longer` join `spill` (the dynamic
/// group beside them; -1: none, they must be unit dims).
bool matchRun(ArrayRef<int64_t> longer, ArrayRef<int64_t> shorter, int64_t lb,
              int64_t le, int64_t sb, int64_t se, bool fromRight, int64_t spill,
              MutableArrayRef<int64_t> owners) {
  int64_t lo = lb, hi = le - 1;
  for (int64_t j = sb; j < se; ++j) {
    int64_t target = fromRight ? se - 1 - (j - sb) : j;
    if (!takeStatic(longer, fromRight ? hi : lo, fromRight ? -1 : 1,
                    shorter[target], target, owners))
      return false;
  }
  for (int64_t d = lo; d <= hi; ++d) {
    if (spill < 0 && longer[d] != 1)
      return false;
    owners[d] = spill < 0 ? std::max<int64_t>(se - 1, 0) : spill;
  }
  return true;
}

/// How the dims of `longer` group into those of `shorter` for a pure
/// expansion or collapse with at most one dynamic dim per group, if any.
/// The dynamic dims pair up in order (each dynamic size of `shorter` is
/// taken to stand for the dynamic dim of `longer` in its group); the static
/// dims between them must match exactly, except that static dims before the
/// first or after the last dynamic dim join it. Anything ambiguous (static
/// dims between two dynamic ones that could join either) gives none.
std::optional<SmallVector<ReassociationIndices>>
groupDims(ArrayRef<int64_t> longer, ArrayRef<int64_t> shorter) {
  SmallVector<int64_t> dl, ds;
  for (auto [i, s] : llvm::enumerate(longer))
    if (ShapedType::isDynamic(s))
      dl.push_back(i);
  for (auto [i, s] : llvm::enumerate(shorter))
    if (ShapedType::isDynamic(s))
      ds.push_back(i);
  if (shorter.empty()) // to or from rank 0: unit dims only
    return llvm::all_of(longer, [](int64_t s) { return s == 1; })
               ? std::optional(SmallVector<ReassociationIndices>())
               : std::nullopt;
  if (dl.size() != ds.size())
    return std::nullopt;
  int64_t k = dl.size(), n = longer.size(), m = shorter.size();
  SmallVector<int64_t> owners(n, -1);
  for (int64_t i = 0; i <= k; ++i) {
    int64_t lb = i == 0 ? 0 : dl[i - 1] + 1, le = i == k ? n : dl[i];
    int64_t sb = i == 0 ? 0 : ds[i - 1] + 1, se = i == k ? m : ds[i];
    bool fromRight = i == k && k > 0;
    int64_t spill = k == 0 ? -1 : fromRight ? ds[k - 1] : i == 0 ? ds[0] : -1;
    if (i < k)
      owners[dl[i]] = ds[i];
    if (!matchRun(longer, shorter, lb, le, sb, se, fromRight, spill, owners))
      return std::nullopt;
  }
  SmallVector<ReassociationIndices> groups(m);
  for (auto [d, owner] : llvm::enumerate(owners))
    groups[owner].push_back(d);
  for (const ReassociationIndices &g : groups)
    if (g.empty() || g.back() - g.front() + 1 != (int64_t)g.size())
      return std::nullopt;
  return groups;
}

/// Whether `size` is dim `d` of `v` by its form alone: the static size, or
/// a `tensor.dim` of `v` itself at `d` (how the exporter writes a size
/// that Python read from the tensor it reshapes).
bool isLocallySize(OpFoldResult size, Value v, int64_t d) {
  int64_t known = shapeOf(v)[d];
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return !ShapedType::isDynamic(known) && *c == known;
  auto dim = dyn_cast_or_null<tensor::DimOp>(cast<Value>(size).getDefiningOp());
  if (!dim || dim.getSource() != v)
    return false;
  std::optional<int64_t> index = dim.getConstantIndex();
  return index && *index == d;
}

/// Whether `sizes` are provably the sizes of `v` (same rank): each by its
/// form, else by a bounded proof (SizeProofs.h).
bool hasSizes(Value v, ArrayRef<OpFoldResult> sizes) {
  using Variable = ValueBoundsConstraintSet::Variable;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (!isLocallySize(size, v, d) &&
        !isProvablyEqual(Variable(size), Variable(v, d)))
      return false;
  return true;
}

/// The sizes of `v`.
SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value v) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0, e = shapeOf(v).size(); d < e; ++d)
    sizes.push_back(tensor::getMixedSize(b, loc, v, d));
  return sizes;
}

/// reshape: the input itself (the sizes provably its own), an expand_shape
/// or collapse_shape (groups with at most one dynamic dim), else
/// tensor.reshape with the sizes as a shape tensor. The sizes are checked
/// at run time against what each form assumes.
struct ReshapeLowering : public OpRewritePattern<FnReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> in = shapeOf(input), out = type.getShape();
    SmallVector<OpFoldResult> sizes = op.getMixedShape();
    if (in == out && hasSizes(input, sizes)) {
      rewriter.replaceOp(op, input);
      return success();
    }
    std::optional<SmallVector<ReassociationIndices>> groups;
    if (out.size() > in.size())
      groups = groupDims(out, in);
    else if (out.size() < in.size())
      groups = groupDims(in, out);
    if (groups && out.size() > in.size()) {
      emitReshapeGroupChecks(rewriter, loc, op, sizes,
                             sizesOf(rewriter, loc, input), *groups,
                             /*resultIsLonger=*/true);
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, input,
                                                         *groups, sizes);
      return success();
    }
    if (groups) {
      emitReshapeGroupChecks(rewriter, loc, op, sizesOf(rewriter, loc, input),
                             sizes, *groups, /*resultIsLonger=*/false);
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, type, input,
                                                           *groups);
      return success();
    }
    emitElementCountCheck(rewriter, loc, op, input, sizes);
    SmallVector<Value> sizeValues =
        getValueOrCreateConstantIndexOp(rewriter, loc, sizes);
    Value shape = tensor::FromElementsOp::create(
        rewriter, loc,
        RankedTensorType::get({(int64_t)sizeValues.size()},
                              rewriter.getIndexType()),
        sizeValues);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, type, input, shape);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// expand, permute, softmax
//===----------------------------------------------------------------------===//

/// expand: a generic reading the input through the broadcasting rule.
struct ExpandLowering : public OpRewritePattern<FnExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnExpandOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    ArrayRef<int64_t> result = op.getType().getShape();
    unsigned rank = result.size();
    FailureOr<Value> init = emptyResult(rewriter, op);
    if (failed(init))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    LayerEmitter e(rewriter);
    e.setLoc(op.getLoc());
    Value out =
        e.generic(op.getInput(),
                  {broadcastMap(shapeOf(op.getInput()), result, rank, {}, ctx)},
                  *init, AffineMap::getMultiDimIdentityMap(rank, ctx),
                  SmallVector<IT>(rank, IT::parallel),
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    if (auto generic = out.getDefiningOp<linalg::LinalgOp>())
      emitLoopChecks(rewriter, generic, op, {"input", "result"});
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct PermuteLowering : public OpRewritePattern<FnPermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnPermuteOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Value> init = emptyResult(rewriter, op);
    if (failed(init))
      return rewriter.notifyMatchFailure(op, "result sizes not reified");
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), op.getInput(), *init, op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

/// softmax: the lowering of the leaf `nnx.softmax` with this `dim`.
struct SoftmaxLowering : public OpRewritePattern<FnSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    LayerEmitter e(rewriter);
    e.setLoc(op.getLoc());
    FailureOr<Value> out =
        emitActivationKind(e, ActivationKind::softmax, op.getInput(),
                           {rewriter.getNamedAttr("dim", op.getDimAttr())});
    if (failed(out))
      return failure();
    rewriter.replaceOp(op, *out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// mean, sum
//===----------------------------------------------------------------------===//

/// The product of the sizes of the reduced dims, as a scalar of float type
/// `elt`.
Value reducedCount(OpBuilder &b, Location loc, Value x, ArrayRef<bool> keep,
                   Type elt) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [d, k] : llvm::enumerate(keep))
    if (!k)
      count = arith::MulIOp::create(b, loc, count,
                                    tensor::DimOp::create(b, loc, x, d));
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return arith::SIToFPOp::create(b, loc, elt, i64);
}

/// The reduced result (kept dims only) expanded with unit dims where
/// `keep` is false, to `type`.
Value expandKeptDims(OpBuilder &b, Location loc, Value reduced,
                     ArrayRef<bool> keep, RankedTensorType type,
                     ArrayRef<OpFoldResult> sizes) {
  SmallVector<ReassociationIndices> groups;
  for (auto [d, k] : llvm::enumerate(keep)) {
    if (k || groups.empty())
      groups.emplace_back();
    groups.back().push_back(d);
  }
  // Leading reduced dims join the first kept dim's group; with nothing
  // kept, the source has rank 0 and the reassociation is empty.
  if (llvm::none_of(keep, [](bool k) { return k; }))
    groups.clear();
  else if (!keep.front() && groups.size() > 1) {
    ReassociationIndices lead = groups.front();
    groups.erase(groups.begin());
    groups.front().insert(groups.front().begin(), lead.begin(), lead.end());
  }
  return tensor::ExpandShapeOp::create(b, loc, type, reduced, groups, sizes);
}

/// The identity of the reduction of `OpT` over elements of type `elt`: 0,
/// or for amax / amin -inf / +inf (floats) or the signed minimum / maximum.
template <typename OpT>
Value reductionIdentity(OpBuilder &b, Location loc, Type elt) {
  constexpr bool isMax = std::is_same_v<OpT, FnAmaxOp>;
  if constexpr (!isMax && !std::is_same_v<OpT, FnAminOp>) {
    return zeroOf(b, loc, elt);
  } else {
    TypedAttr value;
    if (auto ft = dyn_cast<FloatType>(elt))
      value = b.getFloatAttr(
          elt, APFloat::getInf(ft.getFloatSemantics(), /*Negative=*/isMax));
    else
      value = b.getIntegerAttr(
          elt, isMax ? APInt::getSignedMinValue(elt.getIntOrFloatBitWidth())
                     : APInt::getSignedMaxValue(elt.getIntOrFloatBitWidth()));
    return arith::ConstantOp::create(b, loc, value);
  }
}

/// One step of the reduction of `OpT`: `acc` combined with `x`. amax / amin
/// propagate NaN (arith.maximumf / minimumf, as torch.amax / amin).
template <typename OpT>
Value reductionStep(OpBuilder &b, Location l, Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  if constexpr (std::is_same_v<OpT, FnAmaxOp>)
    return isFloat ? arith::MaximumFOp::create(b, l, acc, x).getResult()
                   : arith::MaxSIOp::create(b, l, acc, x).getResult();
  else if constexpr (std::is_same_v<OpT, FnAminOp>)
    return isFloat ? arith::MinimumFOp::create(b, l, acc, x).getResult()
                   : arith::MinSIOp::create(b, l, acc, x).getResult();
  else
    return isFloat ? arith::AddFOp::create(b, l, acc, x).getResult()
                   : arith::AddIOp::create(b, l, acc, x).getResult();
}

/// mean / sum / amax / amin: a reduction generic over the dropped dims
/// (divided by their size for mean), expanded back to unit dims for keepdim.
template <typename OpT> struct ReduceLowering : public OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    int64_t rank = shapeOf(x).size();
    SmallVector<bool> keep = op.getKeptDims();
    Type elt = tensorType(x).getElementType();
    LayerEmitter e(rewriter);
    e.setLoc(loc);
    Value acc = linalg::FillOp::create(
                    rewriter, loc,
                    ValueRange{reductionIdentity<OpT>(rewriter, loc, elt)},
                    ValueRange{e.empty(e.keptSizes(x, keep), elt)})
                    .getResult(0);
    SmallVector<IT> iters;
    for (bool k : keep)
      iters.push_back(k ? IT::parallel : IT::reduction);
    AffineMap kept = e.keptDims(rank, keep);
    Value sum =
        e.generic(x, {rewriter.getMultiDimIdentityMap(rank)}, acc, kept, iters,
                  [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return reductionStep<OpT>(b, l, a[1], a[0]);
                  });
    if (std::is_same_v<OpT, FnMeanOp>) {
      Value count = reducedCount(rewriter, loc, x, keep, elt);
      sum = e.map(sum, [&](OpBuilder &b, Location l, Value v) -> Value {
        return arith::DivFOp::create(b, l, v, count);
      });
    }
    if (op.getKeepdim() && llvm::is_contained(keep, false)) {
      FailureOr<SmallVector<OpFoldResult>> sizes = getResultSizes(rewriter, op);
      if (failed(sizes))
        return rewriter.notifyMatchFailure(op, "result sizes not reified");
      sum = expandKeptDims(rewriter, loc, sum, keep, op.getType(), *sizes);
    }
    rewriter.replaceOp(op, sum);
    return success();
  }
};

} // namespace

void mlir::nnx::populateFunctionalStructuredPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<MatmulLowering, ReshapeLowering, ExpandLowering, PermuteLowering,
           SoftmaxLowering, ReduceLowering<FnMeanOp>, ReduceLowering<FnSumOp>,
           ReduceLowering<FnAmaxOp>, ReduceLowering<FnAminOp>>(
          patterns.getContext());
}
