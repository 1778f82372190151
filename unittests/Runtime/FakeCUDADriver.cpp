//===- FakeCUDADriver.cpp - a stand-in libcuda for runtime tests ----------===//
//
// Exports the driver entry points libnnx_cuda_runtime looks up. Behaviour is
// chosen by NNX_FAKE_CUDA_MODE: "no-device" (cuInit fails with
// CUDA_ERROR_NO_DEVICE), "zero-devices" (cuDeviceGetCount reports 0),
// "oom" (cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY), anything else: a
// device whose calls succeed. With NNX_FAKE_CUDA_LOG=<file>, every copy is
// appended to the file as a line "cuMemcpyAsync <bytes>" (tests count them).
//
//===----------------------------------------------------------------------===//
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
bool mode(const char *m) {
  const char *v = std::getenv("NNX_FAKE_CUDA_MODE");
  return v && std::strcmp(v, m) == 0;
}
int fakeContext, fakeModule, fakeFunction, fakeStream, fakeEvent;
} // namespace

extern "C" {
CUresult cuInit(unsigned int) {
  return mode("no-device") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult error, const char **pStr) {
  switch (error) {
  case CUDA_ERROR_NO_DEVICE:
    *pStr = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *pStr = "CUDA_ERROR_OUT_OF_MEMORY";
    return CUDA_SUCCESS;
  default:
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuGetErrorString(CUresult error, const char **pStr) {
  switch (error) {
  case CUDA_ERROR_NO_DEVICE:
    *pStr = "no CUDA-capable device is detected";
    return CUDA_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *pStr = "out of memory";
    return CUDA_SUCCESS;
  default:
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuDeviceGetCount(int *count) {
  *count = mode("zero-devices") ? 0 : 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  std::strncpy(name, "Fake GPU", len);
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice) {
  *pi = attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice) {
  *pctx = reinterpret_cast<CUcontext>(&fakeContext);
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuModuleLoadData(CUmodule *module, const void *) {
  *module = reinterpret_cast<CUmodule>(&fakeModule);
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule *module, const void *, unsigned int,
                            CUjit_option *, void **) {
  *module = reinterpret_cast<CUmodule>(&fakeModule);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule, const char *) {
  *f = reinterpret_cast<CUfunction>(&fakeFunction);
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int,
                        unsigned int, unsigned int, unsigned int, unsigned int,
                        CUstream, void **, void **) {
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned int) {
  *s = reinterpret_cast<CUstream>(&fakeStream);
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *e, unsigned int) {
  *e = reinterpret_cast<CUevent>(&fakeEvent);
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
  if (mode("oom"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  // Zeroed: the kernels never run here, and a zeroed index-check result
  // reports no bad index (lib/Execution/IndexChecks.h).
  *dptr = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytesize));
  return CUDA_SUCCESS;
}
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int) {
  return cuMemAlloc(dptr, bytesize);
}
CUresult cuMemFree(CUdeviceptr dptr) {
  std::free(reinterpret_cast<void *>(dptr));
  return CUDA_SUCCESS;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  if (const char *log = std::getenv("NNX_FAKE_CUDA_LOG"))
    if (std::FILE *f = std::fopen(log, "a")) {
      std::fprintf(f, "cuMemcpyAsync %zu\n", n);
      std::fclose(f);
    }
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr, unsigned int, size_t, CUstream) {
  return CUDA_SUCCESS;
}
CUresult cuMemsetD16Async(CUdeviceptr, unsigned short, size_t, CUstream) {
  return CUDA_SUCCESS;
}
CUresult cuMemHostRegister(void *, size_t, unsigned int) {
  return CUDA_SUCCESS;
}
CUresult cuMemHostUnregister(void *) { return CUDA_SUCCESS; }
}
