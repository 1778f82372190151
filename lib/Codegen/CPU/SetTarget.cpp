//===- SetTarget.cpp - nnx-set-target -------------------------------------===//
//
// Writes the module's #nnx.target from the pass's options: the only way the
// CPU passes learn about the machine (see the pass description).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Dialect/NNX/IR/Target.h"
#include "nnx/Support/TargetISA.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXSETTARGETPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
struct NNXSetTargetPass
    : public mlir::nnx::impl::NNXSetTargetPassBase<NNXSetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto emitModuleError = [&]() -> InFlightDiagnostic {
      return module.emitError() << "nnx-set-target: ";
    };
    std::optional<unsigned> capBits = nnx::isaVectorBits(maxISA);
    if (!capBits) {
      emitModuleError() << nnx::unknownISAMessage("max-isa", maxISA);
      return signalPassFailure();
    }
    nnx::TargetAttr target = nnx::getModuleTarget(module);
    if (vectorBits != 0) {
      target = nnx::TargetAttr::getChecked(
          emitModuleError, &getContext(), static_cast<unsigned>(vectorBits),
          static_cast<bool>(avx512BF16), StringRef(features), StringRef(cpu));
      if (!target)
        return signalPassFailure();
    } else if (avx512BF16 || !features.empty() || !cpu.empty()) {
      emitModuleError() << "avx512-bf16, features and cpu spell a whole "
                           "target: give vector-bits with them";
      return signalPassFailure();
    }
    module->setAttr(nnx::kTargetAttrName, nnx::capTarget(target, *capBits));
  }
};
} // namespace
