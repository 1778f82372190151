//===- CheckNoProbes.cpp - refuse unlowered nnx.probe ops -------*- C++ -*-===//
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXCHECKNOPROBESPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
struct NNXCheckNoProbesPass
    : public mlir::nnx::impl::NNXCheckNoProbesPassBase<NNXCheckNoProbesPass> {
  void runOnOperation() override {
    bool found = false;
    getOperation().walk([&](ProbeOp probe) {
      probe.emitOpError("'")
          << probe.getName()
          << "' has no lowering of its own: run nnx-lower-probes first";
      found = true;
    });
    if (found)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
