//===- PoolingTaps.cpp - NHWC pools as one elementwise generic --*- C++ -*-===//
//
// A channels-last pool (`linalg.pooling_nhwc_{max,min,sum}` and the
// unsigned forms) lowered as a named op is a loop nest whose innermost
// loops walk the window: nothing vectorizes along the channels, and
// nothing splits it among threads. GoogLeNet's 3 x 3 max pools, one per
// inception branch, took 18% of its time at batch 16 on one thread and did
// not get faster with two.
//
// Each window tap (i, j) is a strided slice of the (padded) input: element
// (n, oh * s_h + i * d_h, ow * s_w + j * d_w, c) for output element (n, oh,
// ow, c). The pool is an elementwise generic of those slices (identity
// maps; bufferized, the slices are views) that folds the taps into the
// destination with the pool's own combining op, in the named op's order
// (tap (0, 0) first). The channels are the innermost loop (LLVM vectorizes
// it), and parallelizeElementwise splits the generic among threads like
// any other. (Reading the input through maps with constant offsets
// instead, upstream's tiling over-sizes the slices of untiled dims.)
//
// A pool of a float type narrower than f32 (bf16, f16) whose body is one
// combining op folds its taps in f32 and rounds once, as PyTorch's CPU
// pools accumulate bf16 in float: a max or min is exact either way, a sum
// rounds once instead of per tap. (Its loop is vectorized by
// NarrowFloatVectors.cpp: LLVM keeps bf16 loops scalar.)
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {
/// A window of more taps stays a named op: its generic would read the input
/// through that many operands.
constexpr int64_t kMaxTaps = 64;

/// `PoolOp`, a channels-last pool (max, min or sum), as the generic of its
/// taps.
template <typename PoolOp>
struct PoolToWindowTaps : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    auto window = cast<ShapedType>(op.getDpsInputs()[1].getType());
    if (!window.hasStaticShape() || window.getNumElements() > kMaxTaps)
      return rewriter.notifyMatchFailure(op, "not a small static window");
    // The body: one combining op of the input element and the accumulator
    // (the window element unused), then the yield.
    Block &body = op->getRegion(0).front();
    if (!body.getArgument(1).use_empty())
      return rewriter.notifyMatchFailure(op, "its body reads the window");
    auto strides =
        llvm::to_vector(op.getStrides().template getValues<int64_t>());
    auto dilations =
        llvm::to_vector(op.getDilations().template getValues<int64_t>());

    Location loc = op.getLoc();
    Value input = op.getDpsInputs()[0], init = op.getDpsInits()[0];
    auto initType = cast<RankedTensorType>(init.getType());
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, init);
    SmallVector<OpFoldResult> steps = {
        rewriter.getIndexAttr(1), rewriter.getIndexAttr(strides[0]),
        rewriter.getIndexAttr(strides[1]), rewriter.getIndexAttr(1)};
    Type sliceType = initType.clone(getElementTypeOrSelf(input.getType()));
    SmallVector<Value> taps;
    for (int64_t i = 0; i < window.getDimSize(0); ++i)
      for (int64_t j = 0; j < window.getDimSize(1); ++j) {
        SmallVector<OpFoldResult> at = {
            rewriter.getIndexAttr(0), rewriter.getIndexAttr(i * dilations[0]),
            rewriter.getIndexAttr(j * dilations[1]), rewriter.getIndexAttr(0)};
        taps.push_back(tensor::ExtractSliceOp::create(
            rewriter, loc, cast<RankedTensorType>(sliceType), input, at, sizes,
            steps));
      }
    SmallVector<AffineMap> maps(
        taps.size() + 1, AffineMap::getMultiDimIdentityMap(4, op.getContext()));
    Operation *widened = widenedCombiner(body);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{initType}, taps, ValueRange{init}, maps,
        SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          if (widened)
            return foldTapsInF32(b, loc, *widened, args);
          Value acc = args.back();
          for (Value tap : args.drop_back()) {
            IRMapping mapping;
            mapping.map(body.getArgument(0), tap);
            mapping.map(body.getArgument(2), acc);
            for (Operation &inner : body.without_terminator())
              b.clone(inner, mapping);
            acc = mapping.lookup(body.getTerminator()->getOperand(0));
          }
          linalg::YieldOp::create(b, loc, acc);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }

  /// The body's one op, combining the input element and the accumulator of
  /// one float type narrower than f32 into that type, if that is the body.
  static Operation *widenedCombiner(Block &body) {
    Operation *op = &body.front();
    auto type = dyn_cast<FloatType>(body.getArgument(2).getType());
    if (!type || type.getWidth() >= 32 ||
        body.getArgument(0).getType() != type ||
        op->getNextNode() != body.getTerminator() ||
        body.getTerminator()->getOperand(0) != op->getResult(0) ||
        op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        op->getResult(0).getType() != type)
      return nullptr;
    for (Value operand : op->getOperands())
      if (operand != body.getArgument(0) && operand != body.getArgument(2))
        return nullptr;
    return op;
  }

  /// The generic's body: the taps and the destination `args` extended to
  /// f32, folded in order by `combiner` on f32, the result rounded once.
  static void foldTapsInF32(OpBuilder &b, Location loc, Operation &combiner,
                            ValueRange args) {
    Block &body = *combiner.getBlock();
    Type f32 = b.getF32Type(), type = args.back().getType();
    auto extend = [&](Value v) {
      return arith::ExtFOp::create(b, loc, f32, v).getResult();
    };
    Value acc = extend(args.back());
    for (Value tap : args.drop_back()) {
      Value element = extend(tap);
      OperationState state(loc, combiner.getName());
      for (Value operand : combiner.getOperands())
        state.addOperands(operand == body.getArgument(0) ? element : acc);
      state.addAttributes(combiner.getAttrs());
      state.addTypes(f32);
      acc = b.create(state)->getResult(0);
    }
    linalg::YieldOp::create(
        b, loc, arith::TruncFOp::create(b, loc, type, acc).getResult());
  }
};
} // namespace

void mlir::nnx::populatePoolingTapsPatterns(RewritePatternSet &patterns) {
  patterns.add<PoolToWindowTaps<linalg::PoolingNhwcMaxOp>,
               PoolToWindowTaps<linalg::PoolingNhwcMinOp>,
               PoolToWindowTaps<linalg::PoolingNhwcSumOp>,
               PoolToWindowTaps<linalg::PoolingNhwcMaxUnsignedOp>,
               PoolToWindowTaps<linalg::PoolingNhwcMinUnsignedOp>>(
      patterns.getContext());
}
