//===- LowerFunctionalPooling.cpp - F.max/avg/adaptive_avg_pool2d ---------===//
//
// The functional pools through the lowerings of the pooling layers
// (LowerConv.cpp): one linalg form for `nn.MaxPool2d` and `F.max_pool2d`
// alike, with the same run-time checks of dynamic image sizes.
//
//===----------------------------------------------------------------------===//
#include "FunctionalLowering.h"
#include "nnx/Conversion/NNXToLinalg/ConvLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

using namespace mlir;
using namespace mlir::nnx;

namespace {

/// Replaces `op` by `lowered`, cast to the op's result type (the lowering
/// may know fewer static sizes than the verifier did).
LogicalResult replaceWith(PatternRewriter &rewriter, Operation *op,
                          FailureOr<Value> lowered) {
  if (failed(lowered))
    return rewriter.notifyMatchFailure(op, "pooling not lowered");
  Value result = *lowered;
  if (result.getType() != op->getResult(0).getType())
    result = tensor::CastOp::create(rewriter, op->getLoc(),
                                    op->getResult(0).getType(), result);
  rewriter.replaceOp(op, result);
  return success();
}

template <typename PoolOp>
struct Pool2dLowering : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rewriter) const override {
    Pool2dSpec spec{{op.getWindow(0), op.getWindow(1)},
                    Pool2dSpec::Max,
                    false,
                    describeCheckedOp(op)};
    if constexpr (std::is_same_v<PoolOp, FnAvgPool2dOp>) {
      spec.kind = Pool2dSpec::Avg;
      spec.countIncludePad = op.getCountIncludePad();
    }
    LayerEmitter e(rewriter);
    e.setLoc(op.getLoc());
    return replaceWith(rewriter, op, emitPool2d(e, spec, op.getInput()));
  }
};

struct AdaptiveAvgPool2dLowering
    : public OpRewritePattern<FnAdaptiveAvgPool2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnAdaptiveAvgPool2dOp op,
                                PatternRewriter &rewriter) const override {
    LayerEmitter e(rewriter);
    e.setLoc(op.getLoc());
    return replaceWith(rewriter, op,
                       emitAdaptiveAvgPool2d(e, op.getOutputSize(),
                                             op.getInput(),
                                             describeCheckedOp(op)));
  }
};

} // namespace

void mlir::nnx::populateFunctionalPoolingPatterns(RewritePatternSet &patterns) {
  patterns.add<Pool2dLowering<FnMaxPool2dOp>, Pool2dLowering<FnAvgPool2dOp>,
               AdaptiveAvgPool2dLowering>(patterns.getContext());
}
