//===- TemporaryAllocatorTest.cpp - the CPU forward's temporaries ---------===//
#include "TemporaryAllocator.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using namespace mlir::nnx;

namespace {

bool isAligned(void *p, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

class TemporaryAllocatorTest : public ::testing::Test {
protected:
  void SetUp() override { releaseCachedTemporaries(); }
  void TearDown() override { releaseCachedTemporaries(); }
};

TEST_F(TemporaryAllocatorTest, BlocksAreCacheLineAlignedAndWritable) {
  for (uint64_t size : {0u, 1u, 63u, 64u, 65u, 4096u, 70000u, 3u << 20}) {
    void *p = allocateTemporary(size);
    ASSERT_NE(p, nullptr) << size;
    EXPECT_TRUE(isAligned(p, 64)) << size;
    std::memset(p, 0xab, size);
    freeTemporary(p);
  }
  freeTemporary(nullptr);
}

TEST_F(TemporaryAllocatorTest, AFreedBlockServesTheNextEqualRequest) {
  // What a second call of a forward does: the same sizes again.
  std::vector<uint64_t> sizes = {1u << 20, 4096, 3u << 20, 100};
  std::vector<void *> first;
  for (uint64_t size : sizes)
    first.push_back(allocateTemporary(size));
  for (void *p : first)
    freeTemporary(p);
  size_t cached = cachedTemporaryBytes();
  EXPECT_GE(cached, (4u << 20) + 4096 + 100);
  std::set<void *> reused;
  for (uint64_t size : sizes)
    reused.insert(allocateTemporary(size));
  EXPECT_EQ(reused, std::set<void *>(first.begin(), first.end()));
  EXPECT_EQ(cachedTemporaryBytes(), 0u);
  for (void *p : reused)
    freeTemporary(p);
}

TEST_F(TemporaryAllocatorTest, ABlockMuchLargerThanTheRequestIsNotTaken) {
  void *big = allocateTemporary(8u << 20);
  freeTemporary(big);
  void *small = allocateTemporary(1u << 20);
  EXPECT_NE(small, big);
  EXPECT_EQ(cachedTemporaryBytes(), 8u << 20);
  freeTemporary(small);
}

TEST_F(TemporaryAllocatorTest, ReleaseEmptiesTheCache) {
  freeTemporary(allocateTemporary(1u << 20));
  EXPECT_EQ(cachedTemporaryBytes(), 1u << 20);
  releaseCachedTemporaries();
  EXPECT_EQ(cachedTemporaryBytes(), 0u);
}

TEST_F(TemporaryAllocatorTest, TheCacheIsBounded) {
  // Blocks beyond kMaxCachedBytes go back to the system.
  uint64_t size = kMaxCachedBytes / 2 + 4096;
  void *a = allocateTemporary(size);
  void *b = allocateTemporary(size);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  freeTemporary(a);
  freeTemporary(b);
  EXPECT_LE(cachedTemporaryBytes(), kMaxCachedBytes);
  EXPECT_GT(cachedTemporaryBytes(), 0u);
}

TEST_F(TemporaryAllocatorTest, AlignedAllocation) {
  // `_mlir_memref_to_llvm_aligned_alloc`, as the compiled code calls it.
  void *p = allocateAlignedTemporary(64, 1000);
  EXPECT_TRUE(isAligned(p, 64));
  freeTemporary(p);
  EXPECT_EQ(allocateTemporary(1000), p); // cached
  freeTemporary(p);
  // Wider than a cache line: honoured (and not cached).
  void *wide = allocateAlignedTemporary(4096, 1000);
  ASSERT_NE(wide, nullptr);
  EXPECT_TRUE(isAligned(wide, 4096));
  std::memset(wide, 1, 1000);
  size_t before = cachedTemporaryBytes();
  freeTemporary(wide);
  EXPECT_EQ(cachedTemporaryBytes(), before);
  void *narrow = allocateAlignedTemporary(16, 100);
  EXPECT_TRUE(isAligned(narrow, 64));
  freeTemporary(narrow);
  EXPECT_EQ(allocateAlignedTemporary(48, 16), nullptr); // not a power of two
}

TEST_F(TemporaryAllocatorTest, ConcurrentCallers) {
  // Forwards on several threads (and their OpenMP threads) share the cache.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        uint64_t size = 4096u * (1 + (i + t) % 7);
        auto *p = static_cast<unsigned char *>(allocateTemporary(size));
        ASSERT_NE(p, nullptr);
        p[0] = p[size - 1] = static_cast<unsigned char>(t);
        EXPECT_EQ(p[size - 1], t);
        freeTemporary(p);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_LE(cachedTemporaryBytes(), kMaxCachedBytes);
}

} // namespace
