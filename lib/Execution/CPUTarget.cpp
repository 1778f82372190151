//===- CPUTarget.cpp - the CPU target of the execution library ------------===//
#include "nnx/Execution/Target.h"

#include "nnx/Pipelines/Pipelines.h"

using namespace mlir;
using namespace mlir::nnx;

llvm::Error mlir::nnx::configureCPUTarget(TargetConfig &config) {
  config.buildPipeline = [](OpPassManager &pm) {
    NNXCPUPipelineOptions options;
    options.outParams = true;
    buildNNXCPUPipeline(pm, options);
  };
  // The dialects the CPU pipeline produces, with the interface models it
  // relies on (bufferization, tiling, value bounds, ...).
  config.registerExtensions = registerCPUPipelineDialects;
  return llvm::Error::success();
}
