//===- CPUTarget.cpp - the CPU target of the execution library ------------===//
#include "nnx/Execution/Target.h"

#include "HostTarget.h"

#include "nnx/Config.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/Target.h"
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Support/TargetISA.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/Host.h"

#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Threading.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::nnx;

/// Whether the host runs code for `target`: its vectors, AVX512_BF16 and
/// every feature it adds (`+name`).
static llvm::Error checkHostRuns(TargetAttr target) {
  auto refuse = [&](const llvm::Twine &what) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "the module's target " << target << " needs " << what
       << ", which this host (" << llvm::sys::getHostCPUName()
       << ") lacks; remove the module's nnx.target to compile for the host";
    return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
  };
  if (target.getVectorBits() > hostVectorBits(0))
    return refuse(llvm::Twine(target.getVectorBits()) + "-bit vectors");
  if (target.getAvx512Bf16() && !hostHasAVX512BF16(0))
    return refuse("AVX512_BF16");
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  SmallVector<StringRef> features;
  target.getFeatures().split(features, ',', -1, /*KeepEmpty=*/false);
  for (StringRef feature : features)
    if (feature.consume_front("+") && !host.lookup(feature))
      return refuse("'" + feature + "'");
  return llvm::Error::success();
}

/// Writes the host's target on `module`: its widest vectors and
/// AVX512_BF16 under the instruction-set cap (the pipeline options'
/// max-isa, else the NNX_JIT_MAX_ISA environment variable, else none), the
/// cap's features and the host's CPU. A module that states its own target
/// keeps it (neither cap applies), if the host runs it. The only place the
/// CPU pipeline's target comes from the machine (docs/Lowering.md,
/// "Target").
static llvm::Error writeHostTarget(ModuleOp module, llvm::StringRef text) {
  if (auto stated = module->getAttrOfType<TargetAttr>(kTargetAttrName))
    return checkHostRuns(stated);
  NNXCPUPipelineOptions options;
  if (llvm::Error err = parsePipelineOptions(options, "nnx-cpu-pipeline", text))
    return err;
  llvm::Expected<unsigned> capBits = maxISABits(options.maxISA);
  if (!capBits)
    return capBits.takeError();
  TargetAttr host = TargetAttr::get(
      module.getContext(), hostVectorBits(*capBits),
      hostHasAVX512BF16(*capBits), llvm::join(capFeatures(*capBits), ","),
      llvm::sys::getHostCPUName());
  module->setAttr(kTargetAttrName, host);
  return llvm::Error::success();
}

llvm::Error mlir::nnx::configureCPUTarget(TargetConfig &config) {
  config.writeTarget = writeHostTarget;
  config.buildPipeline = [](OpPassManager &pm,
                            llvm::StringRef text) -> llvm::Error {
    return buildTargetStage(pm, "cpu", text);
  };
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
