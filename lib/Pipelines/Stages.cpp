//===- Stages.cpp - pass sequences the CPU and CUDA pipelines share -------===//
#include "Stages.h"

#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::nnx::pipeline::addForwardPrologue(OpPassManager &pm,
                                             bool fuseElementwise,
                                             bool channelsLast) {
  pm.addPass(createNNXVerifyTensorOpsPass());
  pm.addPass(createNNXLowerProbesPass());
  pm.addPass(createNNXCheckNoProbesPass());
  // nnx.fn ops to linalg/tensor (softmax as linalg.softmax, decomposed next).
  pm.addPass(createNNXLowerFunctionalPass());
  pm.addPass(createNNXDecomposeAggregatesPass());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // Before fusion, which folds the permutations left into their neighbours.
  if (channelsLast)
    pm.addNestedPass<func::FuncOp>(createNNXChannelsLastPass());
  if (fuseElementwise)
    pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::nnx::pipeline::addIdentityLayoutBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

void mlir::nnx::pipeline::addResultsToOutParams(OpPassManager &pm,
                                                bool hoistAllocs) {
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = hoistAllocs;
  outParams.hoistDynamicAllocs = hoistAllocs;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}

void mlir::nnx::pipeline::addHostToLLVM(OpPassManager &pm,
                                        const HostToLLVMOptions &options) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.genericAllocFunctions;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // After the memrefs: convert-openmp-to-llvm converts the memref ops it
  // meets too, always to malloc / free.
  if (options.openMP)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
