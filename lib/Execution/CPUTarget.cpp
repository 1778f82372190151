//===- CPUTarget.cpp - the CPU target of the execution library ------------===//
#include "nnx/Execution/Target.h"

#include "nnx/InitNNX.h"
#include "nnx/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::nnx;

llvm::Error mlir::nnx::configureCPUTarget(TargetConfig &config) {
  config.buildPipeline = [](OpPassManager &pm) {
    NNXCPUPipelineOptions options;
    options.outParams = true;
    buildNNXCPUPipeline(pm, options);
  };
  config.registerExtensions = [](DialectRegistry &registry) {
    // The dialects of all three levels with their interface models, and the
    // bufferization models one-shot bufferization needs in any case.
    ::nnx::registerNNXDialects(registry);
    arith::registerBufferizableOpInterfaceExternalModels(registry);
    linalg::registerBufferizableOpInterfaceExternalModels(registry);
    tensor::registerBufferizableOpInterfaceExternalModels(registry);
    bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
        registry);
  };
  return llvm::Error::success();
}
