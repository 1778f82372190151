//===- PublicResultsToOutParams.cpp - ABI results as arguments --*- C++ -*-===//
//
// `nnx-public-results-to-out-params`: upstream's results-to-out-params
// rewrite for public functions only (see the pass description in
// Passes.td).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXPUBLICRESULTSTOOUTPARAMSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
struct NNXPublicResultsToOutParamsPass
    : public mlir::nnx::impl::NNXPublicResultsToOutParamsPassBase<
          NNXPublicResultsToOutParamsPass> {
  void runOnOperation() override {
    bufferization::BufferResultsToOutParamsOpts options;
    options.modifyPublicFunctions = true;
    options.filterFn = [](func::FuncOp *fn) { return fn->isPublic(); };
    if (failed(bufferization::promoteBufferResultsToOutParams(getOperation(),
                                                              options)))
      signalPassFailure();
  }
};
} // namespace
