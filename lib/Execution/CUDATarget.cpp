//===- CUDATarget.cpp - the CUDA target of the execution library ----------===//
//
// `--target=cuda`: nnx-cuda-pipeline for the chip of device 0, the mgpu*
// runtime (libnnx_cuda_runtime, linked into the tool and handed to the JIT
// as a symbol map) and the GPU/NVVM LLVM IR translations. A missing driver
// or device is reported here, before anything is compiled.
//
//===----------------------------------------------------------------------===//
#include "nnx/Execution/Target.h"

#ifdef NNX_HAVE_CUDA_RUNTIME
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Runtime/CUDARuntime.h"

#include "llvm/Support/FileSystem.h"

#include <cstdio>
#include <cstdlib>
#endif

using namespace mlir;
using namespace mlir::nnx;

#ifdef NNX_HAVE_CUDA_RUNTIME
/// The chip of the device: sm_<major><minor> from describeDevice(), or
/// NNX_CUDA_CHIP when set.
static std::string deviceChip() {
  if (const char *env = std::getenv("NNX_CUDA_CHIP"); env && *env)
    return env;
  std::string device = ::nnx::cuda::describeDevice();
  size_t at = device.rfind(", sm_");
  return at == std::string::npos ? "sm_90" : device.substr(at + 2);
}

/// The first error the CUDA runtime recorded since the last take, into
/// `error` (then cleared); whether there was one.
static int takeCUDAError(char *error, size_t size) {
  std::string message = ::nnx::cuda::lastError();
  if (message.empty())
    return 0;
  ::nnx::cuda::clearError();
  std::snprintf(error, size, "CUDA runtime: %s", message.c_str());
  return 1;
}

/// What a zero-byte parameter is bound to: it has no device buffer, and
/// the code never reads it.
static char emptyParameter;

static void *uploadParameter(const void *bytes, uint64_t size, char *error,
                             size_t errorSize) {
  void *device = ::nnx::cuda::uploadToDevice(bytes, size);
  std::string message = ::nnx::cuda::lastError();
  if (!message.empty()) {
    ::nnx::cuda::clearError();
    std::snprintf(error, errorSize, "CUDA runtime: uploading to the device: %s",
                  message.c_str());
    return nullptr;
  }
  return device ? device : &emptyParameter;
}

static void releaseParameter(void *device) {
  if (device != &emptyParameter)
    ::nnx::cuda::freeOnDevice(device);
}

/// The device as the runtime sees it: parameters resident in device memory
/// for the model's lifetime, the driver's errors after every call.
static const nnx_aot_device kCUDADevice = {uploadParameter, releaseParameter,
                                           takeCUDAError};
#endif

llvm::Error mlir::nnx::configureCUDATarget(TargetConfig &config) {
#ifndef NNX_HAVE_CUDA_RUNTIME
  (void)config;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "target 'cuda' is not available in this build (cuda.h was not found "
      "when nnx was configured); use --target=cpu");
#else
  std::string error;
  if (!::nnx::cuda::initialize(error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "target 'cuda': " + error +
                                       "; use --target=cpu");
  NNXCUDAPipelineOptions options;
  options.chip = deviceChip();
  // SASS for the device plus PTX the driver can JIT when the toolkit's ptxas
  // (cuda-path, by default the one CMake found) is there; PTX alone
  // otherwise. NNX_CUDA_FORMAT overrides.
  if (const char *env = std::getenv("NNX_CUDA_FORMAT"); env && *env)
    options.format = env;
  else
    options.format =
        llvm::sys::fs::can_execute(options.cudaPath.getValue() + "/bin/ptxas")
            ? "fatbin"
            : "isa";
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(verifyNNXCUDAPipelineOptions(options, os)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "target 'cuda': " + message);
  std::string chip = options.chip, format = options.format;
  // The device's chip and the object format, where the options do not
  // name their own: nnx-compile-pipeline's target stage with them.
  config.buildPipeline = [chip, format](OpPassManager &pm,
                                        llvm::StringRef text) -> llvm::Error {
    NNXCUDAPipelineOptions given;
    if (llvm::Error err =
            parsePipelineOptions(given, "nnx-cuda-pipeline", text))
      return err;
    std::string options = text.str();
    if (!given.chip.hasValue())
      options += " chip=" + chip;
    if (!given.format.hasValue())
      options += " format=" + format;
    return buildTargetStage(pm, "cuda", options);
  };
  config.registerExtensions = registerNNXCUDAExtensions;
  config.symbolMap = [](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const ::nnx::cuda::RuntimeSymbol &s : ::nnx::cuda::runtimeSymbols())
      map[interner(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                               llvm::JITSymbolFlags::Exported};
    return map;
  };
  config.device = &kCUDADevice;
  return llvm::Error::success();
#endif
}
