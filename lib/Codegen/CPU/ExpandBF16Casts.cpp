//===- ExpandBF16Casts.cpp - nnx-expand-bf16-casts
//-------------------------===//
//
// bf16 conversions as integer ops where the host has no instruction for
// them (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Support/TargetISA.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXEXPANDBF16CASTSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
struct NNXExpandBF16CastsPass
    : public mlir::nnx::impl::NNXExpandBF16CastsPassBase<
          NNXExpandBF16CastsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!always) {
      llvm::Expected<unsigned> cap = nnx::maxISABits(maxISA);
      if (!cap) {
        getOperation().emitError()
            << "nnx-expand-bf16-casts: " << llvm::toString(cap.takeError());
        return signalPassFailure();
      }
      if (nnx::hostHasAVX512BF16(*cap))
        return;
    }
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
