//===- ApproximateMath.cpp - f32 exp/tanh/erf as polynomials --*- C++ -*-===//
//
// `nnx-approximate-math`: upstream's polynomial approximations for the f32
// transcendental functions the layers use, so that their loops vectorize.
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXAPPROXIMATEMATHPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
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

/// `math.absi` as LLVM's `abs` (the minimum integer stays itself, as in
/// torch): convert-math-to-libm has no pattern for it and refuses it.
struct AbsIToLLVMIntrinsic : public OpRewritePattern<math::AbsIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsIOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::AbsOp>(op, op.getType(), op.getOperand(),
                                             /*is_int_min_poison=*/false);
    return success();
  }
};

/// f32 `math.erf` within about 1 ulp (max abs error 6e-8 against float64
/// over the whole line; upstream's approximation reaches 2.4e-7, 4 ulp, near
/// |x| = 1.9): branch-free, so that its loops vectorize. |x| < 1: the odd
/// form x + x R(x^2) (R of degree 6, exact relative error near 0); 1 <= |x|
/// < 4: a degree-9 polynomial in |x| - c around the centre c of [1, 2),
/// [2, 3) or [3, 4) (the coefficients selected per element), clamped to 1,
/// with x's sign; beyond: +-1 (erf(4) rounds to 1 in f32). NaN stays NaN.
/// The least-squares fits of erf in float64, rounded to f32.
struct ErfApproximation : public OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    static constexpr float small[] = {
        0.128379166f,   -0.376126289f,    0.112836346f,   -0.0268560704f,
        0.00519295782f, -0.000805375108f, 8.00687412e-05f};
    static constexpr float large[3][10] = {
        {0.966105163f, 0.118930288f, -0.17839542f, 0.138752162f, -0.0445993692f,
         -0.0148701649f, 0.0193328615f, -0.00470517762f, -0.0024006695f,
         0.00154823251f},
        {0.999593019f, 0.00217828434f, -0.00544573087f, 0.00835008454f,
         -0.0086216582f, 0.00611747522f, -0.00280720461f, 0.000541223912f,
         0.000304075569f, -0.000245680974f},
        {0.999999285f, 5.39942857e-06f, -1.88967224e-05f, 4.22953526e-05f,
         -6.77620992e-05f, 8.21202993e-05f, -7.72088461e-05f, 5.81503737e-05f,
         -3.68972869e-05f, 1.55377911e-05f}};
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    auto cst = [&](float v) -> Value {
      Attribute value = rewriter.getF32FloatAttr(v);
      if (auto shaped = dyn_cast<ShapedType>(type))
        value = DenseElementsAttr::get(shaped, value);
      return arith::ConstantOp::create(rewriter, loc, type,
                                       cast<TypedAttr>(value));
    };
    auto less = [&](Value a, float bound) -> Value {
      return arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, a,
                                   cst(bound));
    };
    auto horner = [&](ArrayRef<Value> coeffs, Value t) {
      Value r = coeffs.back();
      for (Value c : llvm::reverse(coeffs.drop_back()))
        r = math::FmaOp::create(rewriter, loc, r, t, c);
      return r;
    };
    Value x = op.getOperand();
    Value a = math::AbsFOp::create(rewriter, loc, x);
    SmallVector<Value> r = llvm::map_to_vector(small, cst);
    Value nearZero = math::FmaOp::create(
        rewriter, loc, x, horner(r, arith::MulFOp::create(rewriter, loc, x, x)),
        x);
    Value in2 = less(a, 2.0f), in3 = less(a, 3.0f);
    auto pick = [&](float v1, float v2, float v3) -> Value {
      Value tail =
          arith::SelectOp::create(rewriter, loc, in3, cst(v2), cst(v3));
      return arith::SelectOp::create(rewriter, loc, in2, cst(v1), tail);
    };
    SmallVector<Value> q;
    for (int k = 0; k < 10; ++k)
      q.push_back(pick(large[0][k], large[1][k], large[2][k]));
    Value t = arith::SubFOp::create(rewriter, loc, a, pick(1.5f, 2.5f, 3.5f));
    Value one = cst(1.0f);
    Value far = arith::MinimumFOp::create(rewriter, loc, horner(q, t), one);
    // Ordered: a NaN keeps the polynomial's NaN.
    Value beyond = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGE, a, cst(4.0f));
    far = arith::SelectOp::create(rewriter, loc, beyond, one, far);
    far = LLVM::CopySignOp::create(rewriter, loc, far, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, less(a, 1.0f), nearZero,
                                                 far);
    return success();
  }
};

struct NNXApproximateMathPass
    : public mlir::nnx::impl::NNXApproximateMathPassBase<
          NNXApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The approximations apply to f32 (and vectors of it) only; f64 and
    // other functions keep their libm calls. erf is ours (more accurate).
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::TanhOp::getOperationName();
    });
    patterns.add<ErfApproximation, AbsIToLLVMIntrinsic, FmaToLLVMIntrinsic,
                 UnaryToLLVMIntrinsic<math::SqrtOp, LLVM::SqrtOp>,
                 UnaryToLLVMIntrinsic<math::FloorOp, LLVM::FFloorOp>,
                 UnaryToLLVMIntrinsic<math::AbsFOp, LLVM::FAbsOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
