//===- ReductionLoopOrder.cpp - reductions along contiguous rows -*- C++ -*-=//
//
// A generic with a reduction (a global average pool, with the BatchNorm,
// residual add and ReLU fused before it) is lowered to loops in the order
// of its iterators. Channels-last, its input's contiguous dim is the
// channel, a parallel loop, while the loops inside it may be the reduced
// spatial ones: ResNet-50's last pool then walked its 7 x 7 x 2048 input
// 2048 floats apart, one scalar at a time (7.7 ms of a 900 ms batch of 16).
// Here the parallel loop that walks the contiguous dim of the input read
// the most becomes the innermost one, which LLVM vectorizes. Only a
// parallel loop moves, so each result still sums its terms in the same
// order: the results are bit for bit the same.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {
/// The input of `op` whose map reads the most loops (the first of those),
/// if it is ranked; else null.
OpOperand *mostReadInput(linalg::GenericOp op) {
  OpOperand *most = nullptr;
  unsigned mostLoops = 0;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<ShapedType>(input->get().getType());
    if (!type || type.getRank() == 0)
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    unsigned loops = 0;
    for (unsigned d = 0, e = map.getNumDims(); d < e; ++d)
      loops += map.isFunctionOfDim(d) ? 1 : 0;
    if (loops > mostLoops) {
      most = input;
      mostLoops = loops;
    }
  }
  return most;
}

struct ContiguousInnermostLoop : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumReductionLoops() == 0)
      return rewriter.notifyMatchFailure(op, "no reduction");
    OpOperand *input = mostReadInput(op);
    if (!input)
      return rewriter.notifyMatchFailure(op, "no ranked input");
    auto inner = dyn_cast<AffineDimExpr>(
        op.getMatchingIndexingMap(input).getResults().back());
    int64_t extent = cast<ShapedType>(input->get().getType()).getShape().back();
    unsigned loops = op.getNumLoops();
    if (!inner || inner.getPosition() == loops - 1 || extent == 1 ||
        !linalg::isParallelIterator(
            op.getIteratorTypesArray()[inner.getPosition()]))
      return rewriter.notifyMatchFailure(
          op, "the input's contiguous dim is innermost, reduced or unit");
    SmallVector<unsigned> order;
    for (unsigned d = 0; d < loops; ++d)
      if (d != inner.getPosition())
        order.push_back(d);
    order.push_back(inner.getPosition());
    if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
      return rewriter.notifyMatchFailure(op, "interchange failed");
    return success();
  }
};
} // namespace

void mlir::nnx::populateReductionLoopOrderPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ContiguousInnermostLoop>(patterns.getContext());
}
