//===- CapTargetFeatures.cpp - nnx-cap-target-features --------------------===//
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Dialect/NNX/IR/Target.h"

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
    nnx::TargetAttr target = nnx::getModuleTarget(getOperation());
    // From here on the functions carry the target: the output is plain
    // LLVM dialect, which mlir-translate and mlir-runner read.
    getOperation()->removeAttr(nnx::kTargetAttrName);
    LLVM::TargetFeaturesAttr features;
    if (!target.getFeatures().empty())
      features =
          LLVM::TargetFeaturesAttr::get(&getContext(), target.getFeatures());
    StringAttr cpu;
    if (!target.getCpu().empty())
      cpu = StringAttr::get(&getContext(), target.getCpu());
    if (!features && !cpu)
      return;
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (func.isExternal())
        return;
      if (features)
        func.setTargetFeaturesAttr(features);
      if (cpu)
        func.setTargetCpuAttr(cpu);
    });
  }
};
} // namespace
