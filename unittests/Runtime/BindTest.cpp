//===- BindTest.cpp - the runtime over a descriptor a JIT fills in --------===//
//
// nnx_aot_bind, as CompiledModel uses it: parameters bound from the
// caller's bytes and permuted into the layout the code reads, placed on a
// device through its hooks, every call checked and its errors worded and
// blamed (lib/AOTRuntime/Runtime.c). The "compiled code" here is written
// by hand against the packed calling convention: argument i is a pointer
// to a pointer to upstream's memref descriptor {allocated, aligned,
// offset, sizes..., strides...}.
//
//===----------------------------------------------------------------------===//
#include "nnx-aot/Runtime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

/// The aligned pointer and sizes of packed argument `i`.
template <typename T> T *dataOf(void **args, int i) {
  int64_t *d = *static_cast<int64_t **>(args[i]);
  T *data;
  std::memcpy(&data, &d[1], sizeof(data));
  return data;
}
int64_t sizeOf(void **args, int i, int dim) {
  return (*static_cast<int64_t **>(args[i]))[3 + dim];
}

//===----------------------------------------------------------------------===//
// y = x @ w, with w stored as [3, 2] and read transposed ([2, 3])
//===----------------------------------------------------------------------===//

// Arguments: x [?, 3], w^T [2, 3], y [?, 2].
void matmulForward(void **args) {
  const float *x = dataOf<float>(args, 0), *wt = dataOf<float>(args, 1);
  float *y = dataOf<float>(args, 2);
  for (int64_t b = 0; b < sizeOf(args, 0, 0); ++b)
    for (int j = 0; j < 2; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k)
        sum += x[b * 3 + k] * wt[j * 3 + k];
      y[b * 2 + j] = sum;
    }
}

// Arguments: x, w^T, then the one dynamic size of y.
void matmulResultShapes(void **args) {
  dataOf<int64_t>(args, 2)[0] = sizeOf(args, 0, 0);
}

/// A device whose memory is the host's, counting what the runtime asks.
struct FakeDevice {
  static inline int uploads = 0, releases = 0;
  static inline uint64_t uploadedBytes = 0;
  static inline const char *failure = nullptr;
  static void *upload(const void *bytes, uint64_t size, char *error,
                      size_t errorSize) {
    ++uploads;
    uploadedBytes += size;
    void *copy = std::malloc(size ? size : 1);
    std::memcpy(copy, bytes, size);
    return copy;
  }
  static void release(void *bytes) {
    ++releases;
    std::free(bytes);
  }
  static int check(char *error, size_t size) {
    if (!failure)
      return 0;
    std::snprintf(error, size, "%s", failure);
    failure = nullptr;
    return 1;
  }
};
const nnx_aot_device kFakeDevice = {FakeDevice::upload, FakeDevice::release,
                                    FakeDevice::check};

const int64_t kXShape[] = {-1, 3}, kYShape[] = {-1, 2};
const int64_t kWShape[] = {3, 2}, kWView[] = {3, 2}, kWPerm[] = {1, 0};
const nnx_aot_tensor kX = {"input 0", NNX_AOT_F32,       2,
                           kXShape,   "tensor<?x3xf32>", 0};
const nnx_aot_tensor kY = {"output 0", NNX_AOT_F32,       2,
                           kYShape,    "tensor<?x2xf32>", 0};
const nnx_aot_parameter kW = {"fc.weight", "fc.weight", NNX_AOT_F32,
                              2,           kWShape,     "tensor<3x2xf32>",
                              2,           kWView,      kWPerm};

nnx_aot_descriptor matmulDescriptor(const nnx_aot_device *device) {
  nnx_aot_descriptor d = {};
  d.model = "mm";
  d.num_inputs = 1;
  d.inputs = &kX;
  d.num_parameters = 1;
  d.parameters = &kW;
  d.num_outputs = 1;
  d.outputs = &kY;
  d.forward = matmulForward;
  d.result_shapes = matmulResultShapes;
  d.device = device;
  return d;
}

class BindTest : public ::testing::Test {
protected:
  void SetUp() override {
    FakeDevice::uploads = FakeDevice::releases = 0;
    FakeDevice::uploadedBytes = 0;
    FakeDevice::failure = nullptr;
  }
  /// Runs `m` on x of `shape`; the status.
  nnx_aot_status run(nnx_aot_model *m, std::vector<int64_t> shape,
                     std::vector<float> &y) {
    std::vector<float> x(shape[0] * shape[1]);
    std::iota(x.begin(), x.end(), 1.0f);
    y.assign(shape[0] * 2, -1.0f);
    const void *args[] = {x.data()};
    const int64_t *dims[] = {shape.data()};
    void *results[] = {y.data()};
    int64_t capacities[] = {static_cast<int64_t>(y.size())};
    int64_t yDims[2];
    int64_t *resultDims[] = {yDims};
    return nnx_aot_run(m, args, dims, results, capacities, resultDims);
  }
  // w = [[1, 2], [3, 4], [5, 6]] as stored.
  const float w[6] = {1, 2, 3, 4, 5, 6};
};

TEST_F(BindTest, PermutesUploadsRunsAndReleases) {
  nnx_aot_descriptor d = matmulDescriptor(&kFakeDevice);
  const void *stored[] = {w};
  nnx_aot_model *m = nullptr;
  ASSERT_EQ(nnx_aot_bind(&d, stored, &m), NNX_AOT_OK) << nnx_aot_error(m);
  EXPECT_EQ(FakeDevice::uploads, 1);
  EXPECT_EQ(FakeDevice::uploadedBytes, 6 * sizeof(float));
  std::vector<float> y;
  ASSERT_EQ(run(m, {2, 3}, y), NNX_AOT_OK) << nnx_aot_error(m);
  // x = [[1, 2, 3], [4, 5, 6]]: x @ w.
  EXPECT_EQ(y, (std::vector<float>{22, 28, 49, 64}));
  nnx_aot_free(m);
  EXPECT_EQ(FakeDevice::releases, 1);
}

TEST_F(BindTest, BlamesTheArgumentAndRecovers) {
  nnx_aot_descriptor d = matmulDescriptor(nullptr);
  const void *stored[] = {w};
  nnx_aot_model *m = nullptr;
  ASSERT_EQ(nnx_aot_bind(&d, stored, &m), NNX_AOT_OK);
  std::vector<float> y;
  ASSERT_EQ(run(m, {2, 4}, y), NNX_AOT_ERROR_ARGUMENT);
  EXPECT_STREQ(nnx_aot_error(m),
               "input 0: dimension 1 is 4, expected 3 (tensor<?x3xf32>); got "
               "float32 array of shape (2, 4)");
  EXPECT_EQ(nnx_aot_error_argument(m), 0);
  ASSERT_EQ(run(m, {1, 3}, y), NNX_AOT_OK) << nnx_aot_error(m);
  EXPECT_EQ(nnx_aot_error_argument(m), -1);
  EXPECT_STREQ(nnx_aot_error(m), "");
  EXPECT_EQ(y, (std::vector<float>{22, 28}));
  nnx_aot_free(m);
}

TEST_F(BindTest, DeviceErrorAfterACallIsTheCallsError) {
  nnx_aot_descriptor d = matmulDescriptor(&kFakeDevice);
  const void *stored[] = {w};
  nnx_aot_model *m = nullptr;
  ASSERT_EQ(nnx_aot_bind(&d, stored, &m), NNX_AOT_OK);
  std::vector<float> y;
  // The result-shape function runs first: the failure is reported there.
  FakeDevice::failure = "CUDA runtime: cuLaunchKernel failed";
  ASSERT_EQ(run(m, {2, 3}, y), NNX_AOT_ERROR_RUNTIME);
  EXPECT_STREQ(nnx_aot_error(m),
               "the device: CUDA runtime: cuLaunchKernel failed");
  ASSERT_EQ(run(m, {2, 3}, y), NNX_AOT_OK) << nnx_aot_error(m);
  nnx_aot_free(m);
}

TEST_F(BindTest, NullListsAreErrorsNotCrashes) {
  nnx_aot_descriptor d = matmulDescriptor(nullptr);
  const void *stored[] = {w};
  nnx_aot_model *m = nullptr;
  ASSERT_EQ(nnx_aot_bind(&d, stored, &m), NNX_AOT_OK);
  float x[3] = {1, 2, 3}, y[2];
  int64_t shape[] = {1, 3}, yDims[2];
  const void *args[] = {x};
  const int64_t *dims[] = {shape};
  void *results[] = {y};
  int64_t capacities[] = {2};
  int64_t *resultDims[] = {yDims};
  EXPECT_EQ(nnx_aot_run(m, nullptr, dims, results, capacities, resultDims),
            NNX_AOT_ERROR_ARGUMENT);
  EXPECT_STREQ(nnx_aot_error(m),
               "the forward takes 1 arrays: the argument list is null");
  EXPECT_EQ(nnx_aot_result_shapes(m, args, dims, nullptr),
            NNX_AOT_ERROR_ARGUMENT);
  EXPECT_STREQ(nnx_aot_error(m), "the forward has 1 results: the list of "
                                 "their dimensions is null");
  EXPECT_EQ(nnx_aot_run(m, args, dims, nullptr, capacities, resultDims),
            NNX_AOT_ERROR_ARGUMENT);
  EXPECT_EQ(nnx_aot_run(m, args, dims, results, nullptr, resultDims),
            NNX_AOT_ERROR_ARGUMENT);
  EXPECT_STREQ(nnx_aot_error(m),
               "the forward has 1 results: the list of "
               "their buffers or of their capacities is null");
  EXPECT_EQ(nnx_aot_run(nullptr, args, dims, results, capacities, resultDims),
            NNX_AOT_ERROR_ARGUMENT);
  ASSERT_EQ(nnx_aot_run(m, args, dims, results, capacities, resultDims),
            NNX_AOT_OK)
      << nnx_aot_error(m);
  EXPECT_EQ(y[0], 22);
  nnx_aot_free(m);
}

TEST_F(BindTest, ParametersWithoutBytesAreRefused) {
  nnx_aot_descriptor d = matmulDescriptor(nullptr);
  nnx_aot_model *m = reinterpret_cast<nnx_aot_model *>(&d);
  EXPECT_EQ(nnx_aot_bind(&d, nullptr, &m), NNX_AOT_ERROR_ARGUMENT);
  EXPECT_EQ(m, nullptr);
}

//===----------------------------------------------------------------------===//
// Layouts: the parameter copied out as the code reads it
//===----------------------------------------------------------------------===//

/// The bytes of a `view`-shaped row-major tensor of `es`-byte elements
/// permuted by `perm`, one element at a time (the reference).
std::vector<uint8_t> permuteReference(const std::vector<uint8_t> &in,
                                      const std::vector<int64_t> &view,
                                      const std::vector<int64_t> &perm,
                                      size_t es) {
  size_t rank = view.size();
  std::vector<int64_t> strides(rank, 1), shape(rank), index(rank, 0);
  for (size_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * view[d];
  for (size_t i = 0; i < rank; ++i)
    shape[i] = view[perm[i]];
  std::vector<uint8_t> out(in.size());
  for (size_t k = 0; k < in.size() / es; ++k) {
    int64_t from = 0;
    for (size_t i = 0; i < rank; ++i)
      from += index[i] * strides[perm[i]];
    std::memcpy(&out[k * es], &in[from * es], es);
    for (size_t i = rank; i-- > 0;)
      if (++index[i] < shape[i])
        break;
      else
        index[i] = 0;
  }
  return out;
}

size_t layoutBytes = 0;
// Arguments: the parameter, then the output (its bytes, as raw int8).
void copyParameter(void **args) {
  std::memcpy(dataOf<uint8_t>(args, 1), dataOf<uint8_t>(args, 0), layoutBytes);
}

TEST_F(BindTest, LayoutsMatchAnElementwisePermutation) {
  struct Case {
    std::vector<int64_t> view, perm;
    nnx_aot_dtype dtype;
    size_t es;
  };
  // Blocked transposes (2-D; pairs and quads of the last dim kept
  // together) and the elementwise walk, over sizes not multiples of the
  // 64 x 64 blocks.
  for (const Case &c : {Case{{70, 130}, {1, 0}, NNX_AOT_F32, 4},
                        Case{{67, 5}, {1, 0}, NNX_AOT_F64, 8},
                        Case{{33, 65, 2}, {1, 0, 2}, NNX_AOT_BF16, 2},
                        Case{{9, 70, 4}, {1, 0, 2}, NNX_AOT_BF16, 2},
                        Case{{3, 4, 5, 6}, {2, 0, 3, 1}, NNX_AOT_I32, 4}}) {
    size_t count = 1;
    for (int64_t v : c.view)
      count *= v;
    std::vector<uint8_t> in(count * c.es);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<uint8_t>(i * 7 + i / 251);
    std::vector<int64_t> stored = {static_cast<int64_t>(count)};
    std::vector<int64_t> outShape(c.view.size());
    for (size_t i = 0; i < c.view.size(); ++i)
      outShape[i] = c.view[c.perm[i]];
    nnx_aot_parameter p = {"p",
                           "p",
                           c.dtype,
                           1,
                           stored.data(),
                           "tensor",
                           static_cast<int32_t>(c.view.size()),
                           c.view.data(),
                           c.perm.data()};
    int64_t outDims[] = {static_cast<int64_t>(in.size())};
    nnx_aot_tensor out = {"output 0", NNX_AOT_BOOL, 1, outDims, "tensor", 0};
    nnx_aot_descriptor d = {};
    d.model = "layout";
    d.num_parameters = 1;
    d.parameters = &p;
    d.num_outputs = 1;
    d.outputs = &out;
    d.forward = copyParameter;
    layoutBytes = in.size();
    const void *bytes[] = {in.data()};
    nnx_aot_model *m = nullptr;
    ASSERT_EQ(nnx_aot_bind(&d, bytes, &m), NNX_AOT_OK) << nnx_aot_error(m);
    std::vector<uint8_t> got(in.size());
    void *results[] = {got.data()};
    int64_t capacity[] = {static_cast<int64_t>(got.size())}, gotDims[1];
    int64_t *resultDims[] = {gotDims};
    ASSERT_EQ(nnx_aot_run(m, nullptr, nullptr, results, capacity, resultDims),
              NNX_AOT_OK)
        << nnx_aot_error(m);
    EXPECT_EQ(got, permuteReference(in, c.view, c.perm, c.es))
        << c.view.size() << "-d view, first dim " << c.view[0];
    nnx_aot_free(m);
  }
}

} // namespace
