//===- ApproximateMath.cpp - f32 exp/tanh/erf as polynomials --*- C++ -*-===//
//
// `nnx-approximate-math`: upstream's polynomial approximations for the f32
// transcendental functions the layers use, so that their loops vectorize.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXAPPROXIMATEMATHPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// The approximations' `math.fma` as LLVM's intrinsic now: the pipeline's
/// math-to-libm would otherwise make each one a call of libm's fmaf.
struct FmaToLLVMIntrinsic : public OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::FMAOp>(op, op.getA(), op.getB(),
                                             op.getC());
    return success();
  }
};

/// `math.sqrt`, `math.floor` and `math.absf` (the norms' sqrt, the
/// approximations' floor and abs) as LLVM's intrinsics for the same reason:
/// as libm calls (sqrtf may set errno) they keep a loop scalar. Both are
/// exact: the same values libm returns.
template <typename MathOp, typename LLVMOp>
struct UnaryToLLVMIntrinsic : public OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    rewriter.replaceOpWithNewOp<LLVMOp>(op, op.getOperand());
    return success();
  }
};

struct NNXApproximateMathPass
    : public mlir::nnx::impl::NNXApproximateMathPassBase<
          NNXApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The approximations apply to f32 (and vectors of it) only; f64 and
    // other functions keep their libm calls.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::TanhOp::getOperationName() ||
             name == math::ErfOp::getOperationName();
    });
    patterns.add<FmaToLLVMIntrinsic,
                 UnaryToLLVMIntrinsic<math::SqrtOp, LLVM::SqrtOp>,
                 UnaryToLLVMIntrinsic<math::FloorOp, LLVM::FFloorOp>,
                 UnaryToLLVMIntrinsic<math::AbsFOp, LLVM::FAbsOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
