//===- Widen.cpp - Net2WiderNet on a Linear and its consumer ----*- C++ -*-===//
#include "UnitEdit.h"

#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXWIDENPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-widen";

std::optional<WidenInit> mlir::nnx::parseWidenInit(StringRef name) {
  if (name == "copy")
    return WidenInit::Copy;
  if (name == "zero")
    return WidenInit::Zero;
  return std::nullopt;
}

/// The target's own check: narrower than `width`.
static LogicalResult checkTarget(Operation *target, int64_t width) {
  StringRef unit =
      isa<ConvLayerOpInterface>(target) ? "out_channels" : "out_features";
  int64_t oldWidth = getUnitCount(target);
  if (width <= oldWidth)
    return refuse(target, kPass, "target")
           << "has " << unit << " = " << oldWidth << "; option width=" << width
           << " must be larger";
  return success();
}

LogicalResult mlir::nnx::widen(ModelOp model, StringRef layer, int64_t width,
                               uint64_t seed, bool throughBatchNorm,
                               WidenInit init) {
  // Check everything first.
  FailureOr<Operation *> slot = lookupUnitTarget(model, layer, kPass);
  if (failed(slot) || failed(checkTarget(*slot, width)))
    return failure();
  Operation *target = *slot;
  FailureOr<ConsumerChain> chain =
      findUnitConsumer(target, throughBatchNorm, kPass);
  if (failed(chain))
    return failure();
  FailureOr<UnitPlan> plan =
      planUnitEdit(target, width, std::move(*chain), kPass,
                   "option width=" + std::to_string(width));
  if (failed(plan))
    return failure();
  // Mutate: every module stays (flags and modes live on them).
  applyUnitEdit(*plan, chooseUnits(getUnitCount(target), width, seed),
                init == WidenInit::Copy ? ConsumerColumns::Rescale
                                        : ConsumerColumns::ZeroNew);
  return success();
}

namespace {
struct NNXWidenPass : public mlir::nnx::impl::NNXWidenPassBase<NNXWidenPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<WidenInit> mode = parseWidenInit(init);
    if (!mode) {
      getOperation().emitError() << "nnx-widen: option init='" << init
                                 << "' is not one of 'copy', 'zero'";
      return signalPassFailure();
    }
    if (failed(
            widen(getOperation(), layer, width, seed, throughBatchNorm, *mode)))
      signalPassFailure();
  }
};
} // namespace
