//===- CPUPipeline.cpp - nnx-cpu-pipeline -----------------------*- C++ -*-===//
//
// Forward level (func on tensors) -> LLVM dialect for the CPU.
//
//===----------------------------------------------------------------------===//
#include "Stages.h"
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Conversion/ShardToMPI/Passes.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Pipelines/Passes.h"
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Support/PassOptions.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/AllInterfaces.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/TensorInferTypeOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mlir::nnx {
/// The CPU pipeline's last steps: math to polynomials, libm or LLVM
/// intrinsics, bf16 conversions, vectors and everything else to the LLVM
/// dialect, and the instruction-set cap.
static void addMathAndLLVM(OpPassManager &pm,
                           const NNXCPUPipelineOptions &options) {
  // To the LLVM dialect. rsqrt becomes 1 / sqrt (what PyTorch's CPU kernel
  // computes; libm has no rsqrtf); erf/tanh/exp go to libm (exact to the
  // ulp, as PyTorch's kernels); the rest of math to LLVM intrinsics.
  // f32 exp/tanh/erf as polynomials, so that LLVM vectorizes their loops.
  // Without AVX512_BF16: bf16 arithmetic in f32 and bf16 conversions as
  // integer ops, where LLVM would call compiler-rt (first: the f32 math
  // it makes is approximated next).
  pm.addPass(createNNXExpandBF16CastsPass());
  pm.addPass(createNNXApproximateMathPass());
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  pm.addPass(createConvertMathToLibmPass());
  // x86vector: the bf16 tiles' avx512.dot (only there on hosts that run it).
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  // Tensor parallelism's MPI calls (no-op without mpi ops).
  pm.addPass(createNNXConvertMPIToLLVMPass());
  pipeline::HostToLLVMOptions host;
  host.genericAllocFunctions = options.runtimeAllocator;
  host.openMP = options.parallel;
  pipeline::addHostToLLVM(pm, host);
  pm.addPass(createCanonicalizerPass());
  // The target's features (an instruction-set cap) and CPU reach LLVM.
  pm.addPass(createNNXCapTargetFeaturesPass());
}
} // namespace mlir::nnx

void mlir::nnx::buildNNXCPUPipeline(OpPassManager &pm,
                                    const NNXCPUPipelineOptions &options) {
  // The target the passes read (docs/Lowering.md): the module's, capped.
  if (!options.maxISA.empty()) {
    NNXSetTargetPassOptions cap;
    cap.maxISA = options.maxISA;
    pm.addPass(createNNXSetTargetPass(cap));
  }
  // Tensor parallelism: each shard.all_reduce becomes an MPI_Allreduce
  // into a fresh buffer (no-op without shard ops).
  pm.addPass(createNNXLowerAllReducePass());
  // Probes to extra results/arguments; tensor level: everything becomes
  // linalg, with cheap fusion.
  pipeline::addForwardPrologue(pm, options.fuseElementwise,
                               options.channelsLast);
  // Every dynamic size in terms of the function's arguments: a `tensor.dim`
  // of an intermediate result is otherwise a chain back through every
  // layer before it, which the value-bounds queries of subset hoisting and
  // bufferization walk again for each slice (compile time cubic in depth).
  pm.addPass(memref::createResolveRankedShapeTypeResultDimsPass());
  pm.addPass(createCSEPass());
  // Equal layers share one kernel function from here on: the schedule,
  // bufferization and LLVM see each distinct layer once. Each fill gets
  // its own use first, so that it moves into its consumer's kernel.
  if (options.outlineLayers) {
    pm.addNestedPass<func::FuncOp>(createNNXDuplicateEmptyTensorsPass());
    pm.addPass(createNNXOutlineLayersPass());
  }

  // Fast matmul, stage 1 (tensors): tile for caches and registers, peel,
  // vectorize the static register tiles.
  if (options.fastMatmul) {
    NNXApplyCPUSchedulePassOptions tile;
    tile.stage = CPUScheduleStage::TileMatmul;
    tile.parallel = options.parallel;
    tile.vectorBits = options.vectorBits;
    tile.bf16Dot = options.bf16Dot;
    pm.addPass(createNNXApplyCPUSchedulePass(tile));
    // Folds what tiling left (e.g. the slices of the accumulator) so that
    // bufferization writes in place instead of copying per tile.
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }

  // Buffers: identity layouts at function boundaries (strided layouts block
  // vector loads), results copied into caller-allocated arguments when
  // asked, then deallocation of every temporary.
  // CSE merged equal tensor.empty ops (and fills of them) layers apart:
  // split their uses so that the alias sets of the bufferization analysis
  // stay local (one set across a whole model is cubic in its depth).
  pm.addNestedPass<func::FuncOp>(createNNXDuplicateEmptyTensorsPass());
  pipeline::addIdentityLayoutBufferization(pm);
  // A kernel that writes its destination argument returns nothing (what
  // a grouped convolution reshapes back to its destination folds first).
  if (options.outlineLayers) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  }
  if (options.outParams)
    pm.addPass(createNNXPublicResultsToOutParamsPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Fast matmul, stage 2 (buffers): hoist the accumulator out of the K loop,
  // contractions to FMAs, transfers to rank-1 loads/stores.
  if (options.fastMatmul) {
    NNXApplyCPUSchedulePassOptions lower;
    lower.stage = CPUScheduleStage::LowerVectors;
    lower.parallel = options.parallel;
    pm.addPass(createNNXApplyCPUSchedulePass(lower));
  }
  // Equal layers share one kernel function from here on.
  if (options.outlineKernels)
    pm.addPass(createNNXOutlineKernelsPass());
  // Threads: the matmuls' parallel loops (N tiles, batches of batched
  // matmuls) become OpenMP worksharing loops (nothing else is an
  // scf.forall or scf.parallel here); without threads, sequential loops.
  if (!options.parallel) {
    pm.addPass(createForallToForLoopPass());
  } else {
    pm.addPass(createForallToParallelLoopPass());
    pm.addPass(createConvertSCFToOpenMPPass());
    // Inlines the memref.alloca_scope the conversion wraps each loop body
    // in (nothing is allocated there): its region must stay one block,
    // which lowering the loops inside to branches would break.
    pm.addPass(createCanonicalizerPass());
  }

  // Loops.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  addMathAndLLVM(pm, options);
}

void mlir::nnx::registerNNXPipelines() {
  pipeline::registerFuseElementwisePass();
  registerNNXPipelinesPasses();
  registerNNXCompilePipeline();
  registerNNXPassPipeline<NNXCPUPipelineOptions>(
      "nnx-cpu-pipeline",
      "Lower the forward level (func on tensors) to the LLVM dialect for the "
      "CPU: elementwise-to-linalg, fusion, one-shot bufferization, "
      "matmul tiling + vectorization, loops, libm, LLVM",
      [](OpPassManager &pm, const NNXCPUPipelineOptions &options,
         function_ref<LogicalResult(const Twine &)>) {
        buildNNXCPUPipeline(pm, options);
        return success();
      });
}

void mlir::nnx::registerCPUPipelineDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, index::IndexDialect,
                  LLVM::LLVMDialect, memref::MemRefDialect, omp::OpenMPDialect,
                  scf::SCFDialect, ub::UBDialect, vector::VectorDialect,
                  x86vector::X86VectorDialect>();
  affine::registerValueBoundsOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerAllDialectInterfaceImplementations(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerInferTypeOpInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  registerMPIMemoryEffects(registry);
}
