//===- CapTargetFeatures.cpp - nnx-cap-target-features --------------------===//
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Support/TargetISA.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXCAPTARGETFEATURESPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
struct NNXCapTargetFeaturesPass
    : public mlir::nnx::impl::NNXCapTargetFeaturesPassBase<
          NNXCapTargetFeaturesPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::Expected<unsigned> cap = nnx::maxISABits(maxISA);
    if (!cap) {
      getOperation().emitError()
          << "nnx-cap-target-features: " << llvm::toString(cap.takeError());
      return signalPassFailure();
    }
    std::vector<std::string> features = nnx::capFeatures(*cap);
    if (features.empty())
      return;
    SmallVector<StringRef> refs(features.begin(), features.end());
    auto attr = LLVM::TargetFeaturesAttr::get(&getContext(), refs);
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (!func.isExternal())
        func.setTargetFeaturesAttr(attr);
    });
  }
};
} // namespace
