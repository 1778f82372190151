//===- CPUTarget.cpp - the CPU target of the execution library ------------===//
#include "nnx/Execution/Target.h"

#include "TemporaryAllocator.h"

#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Config.h"
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Support/TargetISA.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/Host.h"

#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Threading.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::nnx;

/// Appends nnx-set-target with the host's target: its widest vectors and
/// AVX512_BF16 under the instruction-set cap `maxISA` (empty: the
/// NNX_JIT_MAX_ISA environment variable, else none), the cap's features
/// and the host's CPU. The only place the CPU pipeline's target comes from
/// the machine (docs/Lowering.md, "Target").
static llvm::Error addHostTarget(OpPassManager &pm, llvm::StringRef maxISA) {
  llvm::Expected<unsigned> capBits = maxISABits(maxISA);
  if (!capBits)
    return capBits.takeError();
  NNXSetTargetPassOptions host;
  host.vectorBits = hostVectorBits(*capBits);
  host.avx512BF16 = hostHasAVX512BF16(*capBits);
  host.features = llvm::join(capFeatures(*capBits), ",");
  host.cpu = llvm::sys::getHostCPUName().str();
  pm.addPass(createNNXSetTargetPass(host));
  return llvm::Error::success();
}

llvm::Error mlir::nnx::configureCPUTarget(TargetConfig &config) {
  config.buildPipeline = [](OpPassManager &pm,
                            llvm::StringRef text) -> llvm::Error {
    // The runtime allocates the results and serves the temporaries.
    NNXCPUPipelineOptions options;
    options.outParams = true;
    options.runtimeAllocator = true;
    if (llvm::Error err =
            parsePipelineOptions(options, "nnx-cpu-pipeline", text))
      return err;
    if (!options.outParams || !options.runtimeAllocator)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "nnx-cpu-pipeline options '%s': the runtime needs out-params and "
          "runtime-allocator",
          text.str().c_str());
    // The pipeline's own cap (max-isa) then leaves the host's target as
    // it is: the host's was already capped by it.
    if (llvm::Error err = addHostTarget(pm, options.maxISA))
      return err;
    buildNNXCPUPipeline(pm, options);
    return llvm::Error::success();
  };
  // Temporaries come from a cache of the blocks earlier calls freed.
  config.symbolMap = temporaryAllocatorSymbols;
  // The dialects the CPU pipeline produces, with the interface models it
  // relies on (bufferization, tiling, value bounds, ...).
  config.registerExtensions = registerCPUPipelineDialects;
  // The matmuls' parallel loops are OpenMP regions: LLVM's runtime, whose
  // thread count (an ICV of the calling thread) is set before each call.
  config.sharedLibPaths.push_back(NNX_LIBOMP_PATH);
  config.setThreads = [](unsigned threads) {
    using SetNumThreads = void (*)(int);
    static auto setNumThreads = reinterpret_cast<SetNumThreads>(
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
            "omp_set_num_threads"));
    if (!setNumThreads)
      return;
    if (threads == 0)
      threads =
          std::max(1u, llvm::hardware_concurrency().compute_thread_count());
    setNumThreads(static_cast<int>(threads));
  };
  return llvm::Error::success();
}
