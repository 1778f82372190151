//===- Stages.h - the CPU and CUDA pipelines' stages ------------*- C++ -*-===//
#ifndef NNX_LIB_PIPELINES_STAGES_H
#define NNX_LIB_PIPELINES_STAGES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::nnx::pipeline {

/// Upstream tensor ops whose behaviour is undefined are refused
/// (nnx-verify-tensor-ops). Probes become extra results (reads) and
/// arguments (writes) of the forward (a probe that cannot be lowered is
/// refused); then everything becomes linalg, convolutions and pools
/// channels-last when `channelsLast` (nnx-channels-last), with elementwise
/// chains fused when `fuseElementwise`.
void addForwardPrologue(OpPassManager &pm, bool fuseElementwise,
                        bool channelsLast);

/// Upstream's elementwise fusion (on func.func), except that no producer is
/// fused into a contraction, whose schedule would then change with the
/// producer's uses, and no reshape whose sizes are checked at run time is
/// folded into its producer (FuseElementwise.cpp).
std::unique_ptr<Pass> createFuseElementwisePass();
/// Registers it as `nnx-fuse-elementwise`, for its tests.
void registerFuseElementwisePass();

/// One-shot bufferization with identity layouts at function boundaries (the
/// `_mlir_ciface_forward` calling convention of both targets; strided
/// layouts would also block vector loads).
void addIdentityLayoutBufferization(OpPassManager &pm);

/// Memref results of every function become trailing arguments the caller
/// allocates (upstream buffer-results-to-out-params, public functions
/// included); the caller must know each result's shape before the call. A
/// result is copied into its argument, or with `hoistAllocs` a returned
/// allocation is replaced by the argument. (In LLVM 22 hoisting uses a freed
/// op when one allocation is returned twice.)
void addResultsToOutParams(OpPassManager &pm, bool hoistAllocs);

struct HostToLLVMOptions {
  /// Allocations call upstream's `_mlir_memref_to_llvm_alloc` /
  /// `_mlir_memref_to_llvm_free` (which the runner provides), not malloc /
  /// free.
  bool genericAllocFunctions = false;
  /// The code holds OpenMP ops (convert-scf-to-openmp ran).
  bool openMP = false;
};

/// Host code to the LLVM dialect: memref descriptors, OpenMP, functions,
/// arith, control flow, index and ub, then the casts reconciled.
void addHostToLLVM(OpPassManager &pm, const HostToLLVMOptions &options = {});

} // namespace mlir::nnx::pipeline

#endif // NNX_LIB_PIPELINES_STAGES_H
