//===- ExpandBF16Casts.cpp - nnx-expand-bf16-casts
//-------------------------===//
//
// bf16 conversions as integer ops where the target has no instruction for
// them (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Dialect/NNX/IR/Target.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXEXPANDBF16CASTSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// bf16 arithmetic (arith, vector and math ops computing on bf16, which
/// LLVM would promote through compiler-rt calls) as f32 arithmetic between
/// extf / truncf: the same rounding, one truncf per op.
LogicalResult emulateBF16Arithmetic(Operation *root) {
  MLIRContext *ctx = root->getContext();
  Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
  {
    TypeConverter converter;
    arith::populateEmulateUnsupportedFloatsConversions(converter, {bf16}, f32);
    ConversionTarget target(*ctx);
    arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    RewritePatternSet patterns(ctx);
    arith::populateEmulateUnsupportedFloatsPatterns(patterns, converter);
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      return failure();
  }
  TypeConverter converter;
  // The math types left alone (all but bf16): LLVM handles f16 itself.
  SetVector<Type> supported;
  supported.insert(Float16Type::get(ctx));
  supported.insert(f32);
  supported.insert(Float64Type::get(ctx));
  math::populateExtendToSupportedTypesTypeConverter(converter, supported, f32);
  ConversionTarget target(*ctx);
  math::populateExtendToSupportedTypesConversionTarget(target, converter);
  RewritePatternSet patterns(ctx);
  math::populateExtendToSupportedTypesPatterns(patterns, converter);
  return applyPartialConversion(root, target, std::move(patterns));
}

struct NNXExpandBF16CastsPass
    : public mlir::nnx::impl::NNXExpandBF16CastsPassBase<
          NNXExpandBF16CastsPass> {
  using Base::Base;

  void runOnOperation() override {
    // No target computes on bf16: LLVM would promote each op through f32
    // itself, one scalar at a time (its loop vectorizer keeps bf16
    // arithmetic scalar), where f32 ops between conversions vectorize.
    if (failed(emulateBF16Arithmetic(getOperation())))
      return signalPassFailure();
    // The target's AVX512_BF16 converts bf16 itself.
    if (!always && nnx::getModuleTarget(getOperation()).getAvx512Bf16())
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
