//===- VerifyTensorOps.cpp - refuse undefined upstream tensor ops ---------===//
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/IR/UpstreamOpChecks.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXVERIFYTENSOROPSPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
struct NNXVerifyTensorOpsPass
    : public mlir::nnx::impl::NNXVerifyTensorOpsPassBase<
          NNXVerifyTensorOpsPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](Operation *op) {
      ok &= succeeded(mlir::nnx::verifyUpstreamOp(op));
    });
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
