//===- CUDARuntimeTest.cpp - libnnx_cuda_runtime without a GPU ------------===//
//
// The error paths of the mgpu* runtime: a missing driver, a driver without
// devices, a failing driver call, and the messages they become. A fake
// driver library (FakeCUDADriver.cpp) stands in for libcuda.so.1.
//
//===----------------------------------------------------------------------===//
#include "nnx/Runtime/CUDARuntime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void *mgpuStreamCreate();
void *mgpuModuleLoad(void *data, size_t size);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
}

namespace {

class CUDARuntimeTest : public ::testing::Test {
protected:
  void SetUp() override { nnx::cuda::reset(); }
  void TearDown() override {
    nnx::cuda::reset();
    nnx::cuda::setDriverPath("");
    unsetenv("NNX_FAKE_CUDA_MODE");
  }
  void useFake(const char *mode) {
    nnx::cuda::setDriverPath(NNX_FAKE_CUDA_DRIVER);
    setenv("NNX_FAKE_CUDA_MODE", mode, 1);
  }
};

TEST_F(CUDARuntimeTest, FormatsDriverErrors) {
  EXPECT_EQ(nnx::cuda::formatDriverError("cuMemAlloc_v2", 2,
                                         "CUDA_ERROR_OUT_OF_MEMORY",
                                         "out of memory"),
            "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(nnx::cuda::formatDriverError("cuInit", 999, nullptr, nullptr),
            "cuInit failed: error 999");
  EXPECT_EQ(nnx::cuda::formatDriverError("cuInit", 100, "", "x"),
            "cuInit failed: error 100 (x)");
}

TEST_F(CUDARuntimeTest, DriverPathDefaultsToLibcudaAndHonoursEnvironment) {
  EXPECT_EQ(nnx::cuda::getDriverPath(), "libcuda.so.1");
  setenv("NNX_CUDA_DRIVER", "/opt/other/libcuda.so.1", 1);
  EXPECT_EQ(nnx::cuda::getDriverPath(), "/opt/other/libcuda.so.1");
  nnx::cuda::setDriverPath("/explicit/libcuda.so");
  EXPECT_EQ(nnx::cuda::getDriverPath(), "/explicit/libcuda.so");
  unsetenv("NNX_CUDA_DRIVER");
}

TEST_F(CUDARuntimeTest, MissingDriverIsReported) {
  nnx::cuda::setDriverPath("/nonexistent/libcuda.so.1");
  std::string error;
  EXPECT_FALSE(nnx::cuda::initialize(error));
  EXPECT_EQ(
      error.rfind("no CUDA driver (/nonexistent/libcuda.so.1 not found)", 0),
      0u)
      << error;
  EXPECT_EQ(nnx::cuda::describeDevice(), "");
}

TEST_F(CUDARuntimeTest, MgpuCallsWithoutDriverRecordAStickyError) {
  nnx::cuda::setDriverPath("/nonexistent/libcuda.so.1");
  EXPECT_EQ(nnx::cuda::lastError(), "");
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  std::string first = nnx::cuda::lastError();
  EXPECT_NE(first.find("no CUDA driver"), std::string::npos) << first;
  // Later calls do nothing and keep the first message.
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(nnx::cuda::lastError(), first);
  nnx::cuda::clearError();
  EXPECT_EQ(nnx::cuda::lastError(), "");
}

TEST_F(CUDARuntimeTest, LibraryWithoutDriverSymbolsIsRejected) {
  nnx::cuda::setDriverPath("libm.so.6");
  std::string error;
  EXPECT_FALSE(nnx::cuda::initialize(error));
  EXPECT_NE(error.find("CUDA driver libm.so.6 lacks cuInit"), std::string::npos)
      << error;
}

TEST_F(CUDARuntimeTest, NoDeviceFromCuInit) {
  useFake("no-device");
  std::string error;
  EXPECT_FALSE(nnx::cuda::initialize(error));
  EXPECT_EQ(error, "no CUDA device (cuInit failed: CUDA_ERROR_NO_DEVICE (no "
                   "CUDA-capable device is detected))");
}

TEST_F(CUDARuntimeTest, NoDeviceFromDeviceCount) {
  useFake("zero-devices");
  std::string error;
  EXPECT_FALSE(nnx::cuda::initialize(error));
  EXPECT_EQ(error, "no CUDA device (the driver reports 0 devices)");
  EXPECT_EQ(mgpuMemAlloc(16, nullptr, false), nullptr);
  EXPECT_EQ(nnx::cuda::lastError(),
            "no CUDA device (the driver reports 0 devices)");
}

TEST_F(CUDARuntimeTest, FailingDriverCallIsNamed) {
  useFake("oom");
  std::string error;
  ASSERT_TRUE(nnx::cuda::initialize(error)) << error;
  EXPECT_EQ(mgpuMemAlloc(1 << 20, nullptr, false), nullptr);
  std::string message = nnx::cuda::lastError();
  EXPECT_EQ(message.rfind("cuMemAlloc_v2(", 0), 0u) << message;
  EXPECT_NE(message.find(" failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"),
            std::string::npos)
      << message;
}

TEST_F(CUDARuntimeTest, WorkingDriverRoundTripsMemory) {
  useFake("ok");
  std::string error;
  ASSERT_TRUE(nnx::cuda::initialize(error)) << error;
  EXPECT_EQ(nnx::cuda::describeDevice(), "Fake GPU, sm_90");
  void *stream = mgpuStreamCreate();
  EXPECT_NE(stream, nullptr);
  float host[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  void *dev = mgpuMemAlloc(sizeof(host), stream, false);
  ASSERT_NE(dev, nullptr);
  mgpuMemcpy(dev, host, sizeof(host), stream);
  mgpuMemcpy(back, dev, sizeof(host), stream);
  mgpuMemFree(dev, stream);
  EXPECT_EQ(std::memcmp(host, back, sizeof(host)), 0);
  // An empty buffer (batch 0) is no allocation and no error.
  EXPECT_EQ(mgpuMemAlloc(0, stream, false), nullptr);
  EXPECT_EQ(nnx::cuda::lastError(), "");
}

TEST_F(CUDARuntimeTest, ExportsEveryEntryPointTheLoweringCalls) {
  const char *expected[] = {"mgpuModuleLoad",
                            "mgpuModuleLoadJIT",
                            "mgpuModuleUnload",
                            "mgpuModuleGetFunction",
                            "mgpuLaunchKernel",
                            "mgpuStreamCreate",
                            "mgpuStreamDestroy",
                            "mgpuStreamSynchronize",
                            "mgpuStreamWaitEvent",
                            "mgpuEventCreate",
                            "mgpuEventDestroy",
                            "mgpuEventSynchronize",
                            "mgpuEventRecord",
                            "mgpuMemAlloc",
                            "mgpuMemFree",
                            "mgpuMemcpy",
                            "mgpuMemset32",
                            "mgpuMemset16",
                            "mgpuMemHostRegisterMemRef",
                            "mgpuMemHostUnregisterMemRef",
                            "mgpuSetDefaultDevice"};
  const auto &symbols = nnx::cuda::runtimeSymbols();
  for (const char *name : expected) {
    bool found = false;
    for (const auto &s : symbols)
      found |= std::strcmp(s.name, name) == 0 && s.address != nullptr;
    EXPECT_TRUE(found) << name;
  }
}

} // namespace
