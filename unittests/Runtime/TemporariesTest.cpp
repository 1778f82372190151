//===- TemporariesTest.cpp - the runtime's temporaries and guard ----------===//
//
// The allocation functions the compiled code calls for its temporaries, the
// cache of freed blocks, and the guarded call that frees what a failed call
// held (lib/AOTRuntime/Guard.c: the JIT and AOT objects alike).
//
//===----------------------------------------------------------------------===//
#include "AOTRuntime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

bool isAligned(void *p, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

class TemporariesTest : public ::testing::Test {
protected:
  void SetUp() override { nnx_aot_release_temporaries(); }
  void TearDown() override { nnx_aot_release_temporaries(); }
};

TEST_F(TemporariesTest, BlocksAreCacheLineAlignedAndWritable) {
  for (uint64_t size : {0u, 1u, 63u, 64u, 65u, 4096u, 70000u, 3u << 20}) {
    void *p = _mlir_memref_to_llvm_alloc(size);
    ASSERT_NE(p, nullptr) << size;
    EXPECT_TRUE(isAligned(p, 64)) << size;
    std::memset(p, 0xab, size);
    _mlir_memref_to_llvm_free(p);
  }
  _mlir_memref_to_llvm_free(nullptr);
}

TEST_F(TemporariesTest, AFreedBlockServesTheNextEqualRequest) {
  // What a second call of a forward does: the same sizes again.
  std::vector<uint64_t> sizes = {1u << 20, 4096, 3u << 20, 100};
  std::vector<void *> first;
  for (uint64_t size : sizes)
    first.push_back(_mlir_memref_to_llvm_alloc(size));
  for (void *p : first)
    _mlir_memref_to_llvm_free(p);
  size_t cached = nnx_aot_cached_temporary_bytes();
  EXPECT_GE(cached, (4u << 20) + 4096 + 100);
  std::set<void *> reused;
  for (uint64_t size : sizes)
    reused.insert(_mlir_memref_to_llvm_alloc(size));
  EXPECT_EQ(reused, std::set<void *>(first.begin(), first.end()));
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), 0u);
  for (void *p : reused)
    _mlir_memref_to_llvm_free(p);
}

TEST_F(TemporariesTest, ABlockMuchLargerThanTheRequestIsNotTaken) {
  void *big = _mlir_memref_to_llvm_alloc(8u << 20);
  _mlir_memref_to_llvm_free(big);
  void *small = _mlir_memref_to_llvm_alloc(1u << 20);
  EXPECT_NE(small, big);
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), 8u << 20);
  _mlir_memref_to_llvm_free(small);
}

TEST_F(TemporariesTest, ReleaseEmptiesTheCache) {
  _mlir_memref_to_llvm_free(_mlir_memref_to_llvm_alloc(1u << 20));
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), 1u << 20);
  nnx_aot_release_temporaries();
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), 0u);
}

TEST_F(TemporariesTest, TheCacheKeepsNoMoreThanTheFootprint) {
  // Past NNX_AOT_MAX_CACHED_BYTES, a freed block is kept only while the
  // cache holds no more than was ever outstanding at once. Blocks this
  // large are mapped and never touched here: address space only.
  uint64_t large = NNX_AOT_MAX_CACHED_BYTES * 3 / 4; // capacity 3/4 GiB
  _mlir_memref_to_llvm_free(_mlir_memref_to_llvm_alloc(large));
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), large);
  // Too small to take the cached block (it would waste over a quarter):
  // a second block, and the footprint stays one block at a time.
  void *other = _mlir_memref_to_llvm_alloc(large / 2);
  ASSERT_NE(other, nullptr);
  _mlir_memref_to_llvm_free(other);
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), large);
}

TEST_F(TemporariesTest, TheCacheGrowsToTheFootprint) {
  // A call that holds more than NNX_AOT_MAX_CACHED_BYTES at once (a
  // DenseNet at batch 16) gets all of it back from the cache next time.
  uint64_t size = NNX_AOT_MAX_CACHED_BYTES / 2 + 4096;
  void *a = _mlir_memref_to_llvm_alloc(size);
  void *b = _mlir_memref_to_llvm_alloc(size);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  uint64_t cached = nnx_aot_cached_temporary_bytes();
  EXPECT_GT(cached, NNX_AOT_MAX_CACHED_BYTES);
  std::set<void *> again = {_mlir_memref_to_llvm_alloc(size),
                            _mlir_memref_to_llvm_alloc(size)};
  EXPECT_EQ(again, (std::set<void *>{a, b}));
  for (void *p : again)
    _mlir_memref_to_llvm_free(p);
  // Released, the footprint starts over at what is outstanding (nothing).
  nnx_aot_release_temporaries();
  _mlir_memref_to_llvm_free(_mlir_memref_to_llvm_alloc(size));
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), cached / 2);
}

TEST_F(TemporariesTest, LargeBlocksStartOnAHugePage) {
  // Mapped for themselves (transparent huge pages where the kernel has
  // them): 2 MiB aligned, writable end to end, reused from the cache.
  uint64_t size = (5u << 20) + 100;
  auto *p = static_cast<unsigned char *>(_mlir_memref_to_llvm_alloc(size));
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(isAligned(p, 2u << 20));
  std::memset(p, 0x5a, size);
  EXPECT_EQ(p[size - 1], 0x5a);
  _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(size), p);
  _mlir_memref_to_llvm_free(p);
  // Wider alignments than a huge page are still honoured.
  void *wide = _mlir_memref_to_llvm_aligned_alloc(4u << 20, 3u << 20);
  ASSERT_NE(wide, nullptr);
  EXPECT_TRUE(isAligned(wide, 4u << 20));
  std::memset(wide, 1, 3u << 20);
  _mlir_memref_to_llvm_free(wide);
}

TEST_F(TemporariesTest, AlignedAllocation) {
  // `_mlir_memref_to_llvm_aligned_alloc`, as the compiled code calls it.
  void *p = _mlir_memref_to_llvm_aligned_alloc(64, 1000);
  EXPECT_TRUE(isAligned(p, 64));
  _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(1000), p); // cached
  _mlir_memref_to_llvm_free(p);
  // Wider than a cache line: honoured (and not cached).
  void *wide = _mlir_memref_to_llvm_aligned_alloc(4096, 1000);
  ASSERT_NE(wide, nullptr);
  EXPECT_TRUE(isAligned(wide, 4096));
  std::memset(wide, 1, 1000);
  size_t before = nnx_aot_cached_temporary_bytes();
  _mlir_memref_to_llvm_free(wide);
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), before);
  void *narrow = _mlir_memref_to_llvm_aligned_alloc(16, 100);
  EXPECT_TRUE(isAligned(narrow, 64));
  _mlir_memref_to_llvm_free(narrow);
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(48, 16),
            nullptr); // not a power of two
}

TEST_F(TemporariesTest, ConcurrentCallers) {
  // Forwards on several threads (and their OpenMP threads) share the cache.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        uint64_t size = 4096u * (1 + (i + t) % 7);
        auto *p =
            static_cast<unsigned char *>(_mlir_memref_to_llvm_alloc(size));
        ASSERT_NE(p, nullptr);
        p[0] = p[size - 1] = static_cast<unsigned char>(t);
        EXPECT_EQ(p[size - 1], t);
        _mlir_memref_to_llvm_free(p);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_LE(nnx_aot_cached_temporary_bytes(), NNX_AOT_MAX_CACHED_BYTES);
}

// A compiled function that takes temporaries, then fails a check with
// them held (args[0]: how many).
void allocateThenFail(void **args) {
  int count = *static_cast<int *>(args[0]);
  for (int i = 0; i < count; ++i)
    _mlir_memref_to_llvm_alloc(1u << 20);
  nnxRuntimeFail("index {0} is out of range [0, {1})", 7, 5);
}

void allocateAndFree(void **args) {
  _mlir_memref_to_llvm_free(_mlir_memref_to_llvm_alloc(4096));
  *static_cast<int *>(args[0]) = 1;
}

TEST_F(TemporariesTest, AFailedCallFreesWhatItHeldAndSaysWhy) {
  int count = 3;
  void *args[] = {&count};
  char error[256] = "stale";
  EXPECT_EQ(nnx_aot_guarded_call(allocateThenFail, args, error, sizeof(error)),
            NNX_AOT_ERROR_RUNTIME);
  EXPECT_STREQ(error, "index 7 is out of range [0, 5)");
  // The three blocks went back to the system, not to the cache: nothing
  // is left held, and a plain call still works (and clears the message).
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), 0u);
  int done = 0;
  void *ok[] = {&done};
  EXPECT_EQ(nnx_aot_guarded_call(allocateAndFree, ok, error, sizeof(error)),
            NNX_AOT_OK);
  EXPECT_EQ(done, 1);
  EXPECT_STREQ(error, "");
  EXPECT_EQ(nnx_aot_cached_temporary_bytes(), 4096u);
}

TEST_F(TemporariesTest, AnImpossibleSizeFailsInsideACall) {
  auto huge = [](void **) { _mlir_memref_to_llvm_alloc(~uint64_t(0) - 8); };
  char error[256];
  EXPECT_EQ(nnx_aot_guarded_call(huge, nullptr, error, sizeof(error)),
            NNX_AOT_ERROR_RUNTIME);
  EXPECT_NE(std::strstr(error, "out of memory: the forward asked for a "
                               "temporary of "),
            nullptr)
      << error;
  // Outside a call: null.
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(~uint64_t(0) - 8), nullptr);
}

} // namespace
