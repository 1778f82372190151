//===- BatchedContractions.cpp - batched products as 2-D matmuls -*- C++ -*-=//
//
// A batched contraction (`nnx.fn.matmul` of rank > 2: attention's Q K^T and
// P V) becomes an `scf.forall` over its batch whose body is one 2-D
// `linalg.matmul` of slices, which the matmul schedule tiles like a
// Linear's; and the multiply-add body both recognize (MulAdd.h).
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "nnx/Codegen/CPU/Layouts.h"
#include "nnx/Codegen/CPU/MulAdd.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace {
/// Where a batched contraction's operand is read for batch loop `i`: a
/// loop dim, or the constant 0 of a broadcast size-1 dim.
static bool isBatchExpr(AffineExpr e, unsigned numBatch) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition() < numBatch;
  auto c = dyn_cast<AffineConstantExpr>(e);
  return c && c.getValue() == 0;
}

} // namespace

/// Whether `v` is `arg`, or `arg` extended (a bf16 / f16 operand read into
/// an f32 accumulation).
static bool readsArgument(Value v, Value arg) {
  if (v == arg)
    return true;
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  return ext && ext.getIn() == arg;
}

bool mlir::nnx::isMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  // mul, add, yield, and an extf of each input at most.
  size_t extensions = llvm::count_if(
      body.getOperations(), [](Operation &o) { return isa<arith::ExtFOp>(o); });
  if (extensions > 2 || body.getOperations().size() != 3 + extensions)
    return false;
  auto add = dyn_cast<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  if (!add)
    return false;
  Value out = body.getArgument(2), other;
  if (add.getLhs() == out)
    other = add.getRhs();
  else if (add.getRhs() == out)
    other = add.getLhs();
  auto mul = other ? other.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (readsArgument(mul.getLhs(), a) && readsArgument(mul.getRhs(), b)) ||
         (readsArgument(mul.getLhs(), b) && readsArgument(mul.getRhs(), a));
}

namespace {

/// The 2-D slice of `v` for the batch indices `ivs`, read through `map`
/// (batch exprs, then the two matrix dims).
static Value batchSlice(OpBuilder &b, Location loc, Value v, AffineMap map,
                        ValueRange ivs) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets, sizes, strides(rank, b.getIndexAttr(1));
  for (AffineExpr e : map.getResults().drop_back(2)) {
    auto d = dyn_cast<AffineDimExpr>(e);
    offsets.push_back(d ? OpFoldResult(ivs[d.getPosition()])
                        : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(b.getIndexAttr(1));
  }
  SmallVector<OpFoldResult> all = tensor::getMixedSizes(b, loc, v);
  for (int64_t d = rank - 2; d < rank; ++d) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(all[d]);
  }
  auto sliceType = RankedTensorType::get(type.getShape().take_back(2),
                                         type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, v, offsets, sizes,
                                        strides);
}

/// A batched contraction (`nnx.fn.matmul` of rank > 2, the attention
/// products: a `linalg.generic` with loops (batch..., m, n, k), operands
/// (batch..., m, k) and (batch..., k, n) or (batch..., n, k), broadcast
/// batch dims read at 0) becomes an `scf.forall` over the batch whose body
/// is one 2-D `linalg.matmul` of slices, which the matmul schedule then
/// tiles and vectorizes like a Linear's. The batch is split among threads.
struct BatchedContractionToMatmuls
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || !nnx::isMulAddBody(op))
      return rewriter.notifyMatchFailure(op, "not a contraction on tensors");
    unsigned loops = op.getNumLoops();
    if (loops < 4)
      return rewriter.notifyMatchFailure(op, "no batch loop");
    unsigned batch = loops - 3;
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    if (iters.back() != utils::IteratorType::reduction ||
        llvm::count(iters, utils::IteratorType::parallel) != loops - 1)
      return rewriter.notifyMatchFailure(op, "not (parallel..., reduction)");
    MLIRContext *ctx = op.getContext();
    AffineExpr m = getAffineDimExpr(batch, ctx),
               n = getAffineDimExpr(batch + 1, ctx),
               k = getAffineDimExpr(batch + 2, ctx);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto tailIs = [](AffineMap map, AffineExpr r, AffineExpr c) {
      return map.getNumResults() >= 2 &&
             map.getResult(map.getNumResults() - 2) == r &&
             map.getResult(map.getNumResults() - 1) == c;
    };
    bool transposedB = tailIs(maps[1], n, k);
    AffineMap outMap =
        AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(loops - 1);
    if (maps[2] != outMap || !tailIs(maps[0], m, k) ||
        !(transposedB || tailIs(maps[1], k, n)))
      return rewriter.notifyMatchFailure(op, "not (batch..., m, n, k)");
    for (AffineMap map : {maps[0], maps[1]})
      for (AffineExpr e : map.getResults().drop_back(2))
        if (!isBatchExpr(e, batch))
          return rewriter.notifyMatchFailure(op, "batch dims not plain");

    Location loc = op.getLoc();
    Value init = op.getDpsInits()[0];
    SmallVector<OpFoldResult> initSizes =
        tensor::getMixedSizes(rewriter, loc, init);
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef(initSizes).take_front(batch), ValueRange{init},
        /*mapping=*/std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> ivs(forall.getInductionVars());
    Value out = forall.getRegionIterArgs()[0];
    Value lhs = batchSlice(rewriter, loc, op.getDpsInputs()[0], maps[0], ivs);
    Value rhs = batchSlice(rewriter, loc, op.getDpsInputs()[1], maps[1], ivs);
    Value acc = batchSlice(rewriter, loc, out, outMap, ivs);
    auto mm = linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{acc});
    if (transposedB)
      mm.setIndexingMapsAttr(
          rewriter.getAffineMapArrayAttr(nnx::transposedBMatmulMaps(ctx)));
    // Written back where it was read.
    auto slice = acc.getDefiningOp<tensor::ExtractSliceOp>();
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, mm.getResult(0), out, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }
};

} // namespace

void nnx::populateBatchedContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<BatchedContractionToMatmuls>(patterns.getContext());
}
