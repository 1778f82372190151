//===- CUDARuntime.cpp - mgpu* over the CUDA driver API ---------*- C++ -*-===//
//
// The entry points MLIR 22's gpu-to-llvm lowering calls, over the CUDA
// driver loaded with dlopen. cuda.h is used for its types and prototypes
// only; every driver function is looked up with dlsym.
//
//===----------------------------------------------------------------------===//
#include "nnx/Runtime/CUDARuntime.h"

#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

#define NNX_EXPORT extern "C" __attribute__((visibility("default")))

// cuda.h maps the API names to their versioned symbols (cuMemAlloc ->
// cuMemAlloc_v2): stringify after expansion to get the symbol to dlsym.
#define NNX_STR2(x) #x
#define NNX_STR(x) NNX_STR2(x)

namespace {

struct Driver {
  void *handle = nullptr;
#define NNX_DRIVER_FN(name) decltype(&::name) name = nullptr;
#define NNX_DRIVER_FNS(X)                                                      \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)                                                          \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)
  NNX_DRIVER_FNS(NNX_DRIVER_FN)
#undef NNX_DRIVER_FN
};

struct State {
  std::mutex mutex;
  std::string driverPath; // empty: NNX_CUDA_DRIVER or libcuda.so.1
  Driver driver;
  bool initialized = false;
  int deviceOrdinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string error; // sticky
};

State &state() {
  static State s;
  return s;
}

std::string driverPathLocked(State &s) {
  if (!s.driverPath.empty())
    return s.driverPath;
  if (const char *env = std::getenv("NNX_CUDA_DRIVER"); env && *env)
    return env;
  return "libcuda.so.1";
}

void setErrorLocked(State &s, const std::string &message) {
  if (s.error.empty())
    s.error = message;
}

std::string driverError(const Driver &d, const char *call, CUresult code) {
  const char *name = nullptr, *description = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(code, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(code, &description);
  return nnx::cuda::formatDriverError(call, static_cast<int>(code), name,
                                      description);
}

bool loadLocked(State &s, std::string &error) {
  if (s.driver.handle)
    return true;
  std::string path = driverPathLocked(s);
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    error = "no CUDA driver (" + path + " not found)";
    if (why)
      error += std::string(": ") + why;
    return false;
  }
  Driver d;
  d.handle = handle;
  std::string missing;
#define NNX_DRIVER_LOAD(name)                                                  \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(handle, NNX_STR(name)));   \
  if (!d.name)                                                                 \
    missing += missing.empty() ? NNX_STR(name) : ", " NNX_STR(name);
  NNX_DRIVER_FNS(NNX_DRIVER_LOAD)
#undef NNX_DRIVER_LOAD
  if (!missing.empty()) {
    error = "CUDA driver " + path + " lacks " + missing +
            " (driver too old for CUDA 12 APIs?)";
    dlclose(handle);
    return false;
  }
  s.driver = d;
  return true;
}

bool initLocked(State &s, std::string &error) {
  if (s.initialized)
    return true;
  if (!loadLocked(s, error))
    return false;
  const Driver &d = s.driver;
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    std::string why = driverError(d, "cuInit", r);
    error = r == CUDA_ERROR_NO_DEVICE ? "no CUDA device (" + why + ")" : why;
    return false;
  }
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    error = driverError(d, "cuDeviceGetCount", r);
    return false;
  }
  if (count == 0) {
    error = "no CUDA device (the driver reports 0 devices)";
    return false;
  }
  if (s.deviceOrdinal < 0 || s.deviceOrdinal >= count) {
    error = "no CUDA device " + std::to_string(s.deviceOrdinal) +
            " (the driver reports " + std::to_string(count) + ")";
    return false;
  }
  if (CUresult r = d.cuDeviceGet(&s.device, s.deviceOrdinal);
      r != CUDA_SUCCESS) {
    error = driverError(d, "cuDeviceGet", r);
    return false;
  }
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&s.context, s.device);
      r != CUDA_SUCCESS) {
    error = driverError(d, "cuDevicePrimaryCtxRetain", r);
    return false;
  }
  s.initialized = true;
  return true;
}

/// The driver with the context current on this thread, or null (the error
/// recorded) when the runtime cannot run or an earlier call failed.
const Driver *acquire() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.error.empty())
    return nullptr;
  std::string error;
  if (!initLocked(s, error)) {
    setErrorLocked(s, error);
    return nullptr;
  }
  if (CUresult r = s.driver.cuCtxSetCurrent(s.context); r != CUDA_SUCCESS) {
    setErrorLocked(s, driverError(s.driver, "cuCtxSetCurrent", r));
    return nullptr;
  }
  return &s.driver;
}

/// Records a failed driver call; true when `r` is success.
bool check(const Driver *d, const char *call, CUresult r) {
  if (r == CUDA_SUCCESS)
    return true;
  State &s = state();
  std::string message = driverError(*d, call, r);
  std::lock_guard<std::mutex> lock(s.mutex);
  setErrorLocked(s, message);
  return false;
}

#define NNX_CHECK(d, call) check(d, NNX_STR(call), d->call)

} // namespace

//===----------------------------------------------------------------------===//
// The C++ API.
//===----------------------------------------------------------------------===//

void nnx::cuda::setDriverPath(const std::string &path) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.driverPath = path;
}

std::string nnx::cuda::getDriverPath() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return driverPathLocked(s);
}

bool nnx::cuda::initialize(std::string &error) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return initLocked(s, error);
}

std::string nnx::cuda::formatDriverError(const char *call, int code,
                                         const char *name,
                                         const char *description) {
  std::string message = std::string(call) + " failed: ";
  if (name && *name)
    message += name;
  else
    message += "error " + std::to_string(code);
  if (description && *description)
    message += std::string(" (") + description + ")";
  return message;
}

std::string nnx::cuda::lastError() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.error;
}

void nnx::cuda::clearError() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.error.clear();
}

std::string nnx::cuda::describeDevice() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string error;
  if (!initLocked(s, error))
    return "";
  char name[256] = {0};
  if (s.driver.cuDeviceGetName(name, sizeof(name) - 1, s.device) !=
      CUDA_SUCCESS)
    return "";
  int major = 0, minor = 0;
  s.driver.cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s.device);
  s.driver.cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s.device);
  return std::string(name) + ", sm_" + std::to_string(major) +
         std::to_string(minor);
}

void nnx::cuda::reset() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.driver.handle)
    dlclose(s.driver.handle);
  s.driver = Driver();
  s.initialized = false;
  s.deviceOrdinal = 0;
  s.device = 0;
  s.context = nullptr;
  s.error.clear();
}

//===----------------------------------------------------------------------===//
// The mgpu* entry points (signatures as MLIR 22's gpu-to-llvm calls them).
//===----------------------------------------------------------------------===//

NNX_EXPORT void *mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  const Driver *d = acquire();
  CUmodule module = nullptr;
  if (!d || !NNX_CHECK(d, cuModuleLoadData(&module, data)))
    return nullptr;
  return module;
}

NNX_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  const Driver *d = acquire();
  if (!d)
    return nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  CUmodule module = nullptr;
  CUresult r = d->cuModuleLoadDataEx(&module, data, 3, options, values);
  if (r != CUDA_SUCCESS) {
    std::string message = driverError(*d, "cuModuleLoadDataEx", r);
    if (log[0])
      message += ": " + std::string(log);
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    setErrorLocked(s, message);
    return nullptr;
  }
  return module;
}

NNX_EXPORT void mgpuModuleUnload(void *module) {
  // Unloading runs at exit (llvm.global_dtors): keep a clean error state
  // from masking the real one, and do nothing without a module.
  if (!module)
    return;
  if (const Driver *d = acquire())
    NNX_CHECK(d, cuModuleUnload(static_cast<CUmodule>(module)));
}

NNX_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  const Driver *d = acquire();
  CUfunction function = nullptr;
  if (!d || !module)
    return nullptr;
  if (!NNX_CHECK(d, cuModuleGetFunction(&function,
                                        static_cast<CUmodule>(module), name)))
    return nullptr;
  return function;
}

NNX_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  const Driver *d = acquire();
  if (!d || !function)
    return;
  auto f = static_cast<CUfunction>(function);
  if (smem > 48 * 1024 &&
      !NNX_CHECK(d,
                 cuFuncSetAttribute(
                     f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)))
    return;
  NNX_CHECK(d,
            cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
                           static_cast<CUstream>(stream), params, extra));
}

NNX_EXPORT void *mgpuStreamCreate() {
  const Driver *d = acquire();
  CUstream stream = nullptr;
  if (!d || !NNX_CHECK(d, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)))
    return nullptr;
  return stream;
}

NNX_EXPORT void mgpuStreamDestroy(void *stream) {
  if (const Driver *d = acquire(); d && stream)
    NNX_CHECK(d, cuStreamDestroy(static_cast<CUstream>(stream)));
}

NNX_EXPORT void mgpuStreamSynchronize(void *stream) {
  if (const Driver *d = acquire(); d && stream)
    NNX_CHECK(d, cuStreamSynchronize(static_cast<CUstream>(stream)));
}

NNX_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  if (const Driver *d = acquire(); d && stream && event)
    NNX_CHECK(d, cuStreamWaitEvent(static_cast<CUstream>(stream),
                                   static_cast<CUevent>(event), 0));
}

NNX_EXPORT void *mgpuEventCreate() {
  const Driver *d = acquire();
  CUevent event = nullptr;
  if (!d || !NNX_CHECK(d, cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)))
    return nullptr;
  return event;
}

NNX_EXPORT void mgpuEventDestroy(void *event) {
  if (const Driver *d = acquire(); d && event)
    NNX_CHECK(d, cuEventDestroy(static_cast<CUevent>(event)));
}

NNX_EXPORT void mgpuEventSynchronize(void *event) {
  if (const Driver *d = acquire(); d && event)
    NNX_CHECK(d, cuEventSynchronize(static_cast<CUevent>(event)));
}

NNX_EXPORT void mgpuEventRecord(void *event, void *stream) {
  if (const Driver *d = acquire(); d && event)
    NNX_CHECK(d, cuEventRecord(static_cast<CUevent>(event),
                               static_cast<CUstream>(stream)));
}

NNX_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool isHostShared) {
  const Driver *d = acquire();
  if (!d || sizeBytes == 0) // an empty batch: no memory, no kernel reads it
    return nullptr;
  CUdeviceptr ptr = 0;
  bool ok = isHostShared ? NNX_CHECK(d, cuMemAllocManaged(&ptr, sizeBytes,
                                                          CU_MEM_ATTACH_GLOBAL))
                         : NNX_CHECK(d, cuMemAlloc(&ptr, sizeBytes));
  return ok ? reinterpret_cast<void *>(ptr) : nullptr;
}

NNX_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  const Driver *d = acquire();
  if (!d || !ptr)
    return;
  // Work queued on the stream may still use the buffer.
  if (stream &&
      !NNX_CHECK(d, cuStreamSynchronize(static_cast<CUstream>(stream))))
    return;
  NNX_CHECK(d, cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)));
}

NNX_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  const Driver *d = acquire();
  if (!d || sizeBytes == 0)
    return;
  NNX_CHECK(d, cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                             reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                             static_cast<CUstream>(stream)));
}

void *nnx::cuda::uploadToDevice(const void *host, size_t bytes) {
  void *device = mgpuMemAlloc(bytes, /*stream=*/nullptr, false);
  const Driver *d = acquire();
  if (!d || !device)
    return nullptr;
  // The legacy default stream, then a wait: the forward's own stream may
  // read the buffer as soon as this returns.
  if (!NNX_CHECK(d, cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(device),
                                  reinterpret_cast<CUdeviceptr>(host), bytes,
                                  nullptr)) ||
      !NNX_CHECK(d, cuStreamSynchronize(nullptr))) {
    mgpuMemFree(device, nullptr);
    return nullptr;
  }
  return device;
}

void nnx::cuda::freeOnDevice(void *device) { mgpuMemFree(device, nullptr); }

NNX_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  const Driver *d = acquire();
  if (!d || count == 0)
    return;
  NNX_CHECK(d, cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)));
}

NNX_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  const Driver *d = acquire();
  if (!d || count == 0)
    return;
  NNX_CHECK(d, cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)));
}

NNX_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  const Driver *d = acquire();
  if (!d || !ptr || sizeBytes == 0)
    return;
  NNX_CHECK(d, cuMemHostRegister(ptr, sizeBytes, /*Flags=*/0));
}

NNX_EXPORT void mgpuMemHostUnregister(void *ptr) {
  const Driver *d = acquire();
  if (!d || !ptr)
    return;
  NNX_CHECK(d, cuMemHostUnregister(ptr));
}

namespace {
/// The memref descriptor {allocated, aligned, offset, sizes[rank],
/// strides[rank]} of `rank`: the first byte and the byte size it spans.
std::pair<char *, uint64_t> memrefSpan(int64_t rank, void *descriptor,
                                       int64_t elementSizeBytes) {
  struct Prefix {
    char *allocated;
    char *aligned;
    int64_t offset;
    int64_t sizesAndStrides[1];
  };
  auto *desc = static_cast<Prefix *>(descriptor);
  const int64_t *sizes = desc->sizesAndStrides;
  const int64_t *strides = desc->sizesAndStrides + rank;
  uint64_t span = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0)
      return {nullptr, 0};
    span += static_cast<uint64_t>(sizes[i] - 1) * strides[i];
  }
  return {desc->aligned + desc->offset * elementSizeBytes,
          span * elementSizeBytes};
}
} // namespace

NNX_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  auto [ptr, size] = memrefSpan(rank, descriptor, elementSizeBytes);
  mgpuMemHostRegister(ptr, size);
}

NNX_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementSizeBytes) {
  auto [ptr, size] = memrefSpan(rank, descriptor, elementSizeBytes);
  (void)size;
  mgpuMemHostUnregister(ptr);
}

NNX_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.initialized && s.deviceOrdinal != device) {
    setErrorLocked(s, "mgpuSetDefaultDevice(" + std::to_string(device) +
                          ") after the runtime started on device " +
                          std::to_string(s.deviceOrdinal));
    return;
  }
  s.deviceOrdinal = device;
}

const std::vector<nnx::cuda::RuntimeSymbol> &nnx::cuda::runtimeSymbols() {
#define NNX_SYMBOL(name)                                                       \
  {                                                                            \
    #name, reinterpret_cast<void *>(&name)                                     \
  }
  static const std::vector<RuntimeSymbol> symbols = {
      NNX_SYMBOL(mgpuModuleLoad),
      NNX_SYMBOL(mgpuModuleLoadJIT),
      NNX_SYMBOL(mgpuModuleUnload),
      NNX_SYMBOL(mgpuModuleGetFunction),
      NNX_SYMBOL(mgpuLaunchKernel),
      NNX_SYMBOL(mgpuStreamCreate),
      NNX_SYMBOL(mgpuStreamDestroy),
      NNX_SYMBOL(mgpuStreamSynchronize),
      NNX_SYMBOL(mgpuStreamWaitEvent),
      NNX_SYMBOL(mgpuEventCreate),
      NNX_SYMBOL(mgpuEventDestroy),
      NNX_SYMBOL(mgpuEventSynchronize),
      NNX_SYMBOL(mgpuEventRecord),
      NNX_SYMBOL(mgpuMemAlloc),
      NNX_SYMBOL(mgpuMemFree),
      NNX_SYMBOL(mgpuMemcpy),
      NNX_SYMBOL(mgpuMemset32),
      NNX_SYMBOL(mgpuMemset16),
      NNX_SYMBOL(mgpuMemHostRegister),
      NNX_SYMBOL(mgpuMemHostUnregister),
      NNX_SYMBOL(mgpuMemHostRegisterMemRef),
      NNX_SYMBOL(mgpuMemHostUnregisterMemRef),
      NNX_SYMBOL(mgpuSetDefaultDevice),
  };
#undef NNX_SYMBOL
  return symbols;
}
