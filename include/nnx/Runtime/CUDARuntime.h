//===- CUDARuntime.h - nnx's mgpu* runtime over the CUDA driver -*- C++ -*-===//
//
// libnnx_cuda_runtime implements the `mgpu*` functions MLIR's gpu-to-llvm
// lowering calls (module load, launch, streams, events, memory) over the
// CUDA driver API. The driver is opened at run time with
// dlopen("libcuda.so.1"): nothing links libcuda or cudart, so the library
// builds and loads on machines without a GPU and reports why it cannot run.
//
// The mgpu* functions cannot return errors to the compiled code. The first
// failure is recorded (a sticky error: later calls do nothing and return
// null) and read back by the host with nnxCudaLastError() after a call.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_RUNTIME_CUDARUNTIME_H
#define NNX_RUNTIME_CUDARUNTIME_H

#include <cstddef>
#include <string>
#include <vector>

namespace nnx::cuda {

/// The library dlopen() loads: "libcuda.so.1", or the value of the
/// environment variable NNX_CUDA_DRIVER, or the path set here (tests).
/// An empty path restores the default. Takes effect at the next load (after
/// reset()).
void setDriverPath(const std::string &path);
std::string getDriverPath();

/// Loads the driver, initializes it and makes the primary context of the
/// default device (0, or mgpuSetDefaultDevice) current. Idempotent. On
/// failure returns false and `error` says why:
///   "no CUDA driver (libcuda.so.1 not found): <dlerror>"
///   "no CUDA device (cuInit failed: CUDA_ERROR_NO_DEVICE (...))"
///   "no CUDA device (the driver reports 0 devices)"
///   "<call> failed: <error name> (<error string>)"
bool initialize(std::string &error);

/// A driver error as a message naming the call:
/// "<call> failed: <name> (<description>)", "<call> failed: error <code>"
/// when the driver gives no name.
std::string formatDriverError(const char *call, int code, const char *name,
                              const char *description);

/// The first error since the last clearError() (empty: none).
std::string lastError();
void clearError();

/// The device's name and compute capability ("NVIDIA H200, sm_90"), for
/// logs and benchmark records; empty when no device is usable.
std::string describeDevice();

/// Copies `bytes` of host memory at `host` into a new device buffer and
/// waits for the copy: memory the compiled code reads across calls (the
/// parameters). Null on failure (the error is lastError()) or when `bytes`
/// is 0.
void *uploadToDevice(const void *host, size_t bytes);
/// Frees a buffer of uploadToDevice().
void freeOnDevice(void *device);
/// Unloads the driver and forgets every state (tests).
void reset();

/// The mgpu* entry points by name, for a JIT that resolves symbols from a
/// map rather than from the process.
struct RuntimeSymbol {
  const char *name;
  void *address;
};
const std::vector<RuntimeSymbol> &runtimeSymbols();

} // namespace nnx::cuda

#endif // NNX_RUNTIME_CUDARUNTIME_H
