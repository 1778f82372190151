//===- CUDAPipeline.cpp - nnx-cuda-pipeline ---------------------*- C++ -*-===//
//
// Forward level (func on tensors) -> gpu kernels -> nvvm -> PTX / cubin,
// host side to the LLVM dialect calling the mgpu* runtime.
//
//===----------------------------------------------------------------------===//
#include "Stages.h"
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Conversion/LinalgToGPU/Passes.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Conversion/ShardToMPI/Passes.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Support/PassOptions.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"

using namespace mlir;

std::string mlir::nnx::defaultCUDAFeatures(llvm::StringRef chip) {
  // PTX ISA versions CUDA 13's ptxas and LLVM 22's NVPTX back end agree on:
  // 8.0 covers sm_75 .. sm_90a; Blackwell needs 8.6 (sm_100) / 8.7 (sm_120).
  unsigned sm = 0;
  llvm::StringRef digits = chip.drop_front(3).take_while(llvm::isDigit);
  if (chip.starts_with("sm_") && !digits.getAsInteger(10, sm)) {
    if (sm >= 120)
      return "+ptx87";
    if (sm >= 100)
      return "+ptx86";
  }
  return "+ptx80";
}

bool mlir::nnx::isValidCUDAChip(llvm::StringRef chip) {
  return llvm::Regex("^sm_[0-9]+[af]?$").match(chip);
}

void mlir::nnx::buildNNXCUDAPipeline(OpPassManager &pm,
                                     const NNXCUDAPipelineOptions &options) {
  // No MPI on this target: tensor parallelism (shard ops) is refused.
  NNXLowerAllReducePassOptions noMPI;
  noMPI.mpi = false;
  pm.addPass(createNNXLowerAllReducePass(noMPI));
  // Probes, as on the CPU; tensor level: everything becomes linalg, and
  // elementwise chains fuse into one kernel each.
  pipeline::addForwardPrologue(pm, /*fuseElementwise=*/true,
                               /*channelsLast=*/false);

  // Buffers with identity layouts at the function boundary: the host calling
  // convention of the CPU target (`_mlir_ciface_forward` on host memrefs).
  pipeline::addIdentityLayoutBufferization(pm);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Kernels: shared-memory tiled contractions, one thread per point for
  // the rest; outlined into a gpu.module.
  NNXLinalgToGPUPassOptions kernels;
  kernels.tileM = options.tileM;
  kernels.tileN = options.tileN;
  kernels.tileK = options.tileK;
  kernels.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createNNXLinalgToGPUPass(kernels));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createNNXGPUMergeModulesPass());

  // Host side: device buffers, then one stream per call with async tokens
  // ordering the copies, launches and frees.
  // With out-params, the host buffer a result is copied into becomes the
  // caller's argument (nothing here allocates or frees it). Every returned
  // device buffer gets a host buffer of its own, so no allocation is
  // returned twice.
  pm.addNestedPass<func::FuncOp>(createNNXGPUDeviceMemoryPass());
  // Results whose host buffer it cannot hoist are written into their
  // out-param directly (nothing here would free that buffer).
  if (options.outParams) {
    pipeline::addResultsToOutParams(pm, /*hoistAllocs=*/true);
    pm.addNestedPass<func::FuncOp>(createNNXGPUResultsInPlacePass());
  }
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Kernels to NVVM and a binary for the chip; host to LLVM. The stages of
  // upstream's gpu-lower-to-nvvm-pipeline, with the CUDA toolkit given
  // explicitly: ptxas / fatbinary from <cuda-path>/bin, and libdevice linked
  // for the math functions (__nv_tanhf, __nv_expf, ...) the kernels call.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features.empty() ? defaultCUDAFeatures(options.chip)
                                             : options.features.getValue();
  target.optLevel = options.optLevel;
  std::string libdevice = options.cudaPath + "/nvvm/libdevice/libdevice.10.bc";
  if (llvm::sys::fs::exists(libdevice))
    target.linkLibs.push_back(libdevice);
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  ConvertGpuOpsToNVVMOpsOptions kernelLowering;
  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  pm.addNestedPass<gpu::GPUModuleOp>(
      createConvertGpuOpsToNVVMOps(kernelLowering));
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaPath;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // What the upstream host lowering leaves: control flow and memref ops of
  // the host function.
  pm.addPass(createSCFToControlFlowPass());
  pipeline::addHostToLLVM(pm);
  pm.addPass(createCanonicalizerPass());
}

void mlir::nnx::registerNNXCUDAExtensions(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, index::IndexDialect,
                  LLVM::LLVMDialect, memref::MemRefDialect, NVVM::NVVMDialect,
                  nvgpu::NVGPUDialect, scf::SCFDialect, ub::UBDialect,
                  vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  // gpu-to-llvm and convert-gpu-to-nvvm collect their patterns from these.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  // Serialization (#nvvm.target) and the offloading translation of
  // gpu.binary / gpu.launch_func.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

llvm::LogicalResult
mlir::nnx::verifyNNXCUDAPipelineOptions(const NNXCUDAPipelineOptions &options,
                                        llvm::raw_ostream &os) {
  if (!isValidCUDAChip(options.chip)) {
    os << "nnx-cuda-pipeline: option 'chip' must name an NVIDIA compute "
          "capability like sm_80 or sm_90a, got '"
       << options.chip << "'";
    return failure();
  }
  if (!llvm::is_contained({"isa", "bin", "fatbin"},
                          llvm::StringRef(options.format))) {
    os << "nnx-cuda-pipeline: option 'format' must be isa, bin or fatbin, "
          "got '"
       << options.format << "'";
    return failure();
  }
  return success();
}

void mlir::nnx::registerNNXCUDAPipeline() {
  registerNNXPassPipeline<NNXCUDAPipelineOptions>(
      "nnx-cuda-pipeline",
      "Lower the forward level (func on tensors) for CUDA: elementwise-to-"
      "linalg, fusion, one-shot bufferization, shared-memory tiled kernels "
      "(nnx-linalg-to-gpu), kernel outlining, device memory and async "
      "tokens (nnx-gpu-device-memory, gpu-async-region), nvvm, and "
      "gpu-module-to-binary for `chip` in `format` (isa = PTX, bin = cubin, "
      "fatbin = both)",
      [](OpPassManager &pm, const NNXCUDAPipelineOptions &options,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        std::string message;
        llvm::raw_string_ostream os(message);
        if (failed(verifyNNXCUDAPipelineOptions(options, os)))
          return errorHandler(message);
        buildNNXCUDAPipeline(pm, options);
        return success();
      });
}
