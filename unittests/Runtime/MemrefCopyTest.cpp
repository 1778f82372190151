//===- MemrefCopyTest.cpp - the runtime's strided copy --------------------===//
//
// memrefCopy (lib/AOTRuntime/Guard.c), what a memref.copy that is not
// contiguous calls (a pad's interior, a slice, a transposed view): against
// a copy made element by element from the same strides.
//
//===----------------------------------------------------------------------===//
#include "AOTRuntime.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

/// A strided view of `size`-byte elements of `data` as upstream's memref
/// descriptor words: {allocated, aligned, offset, sizes..., strides...}.
struct View {
  std::vector<int64_t> words;
  View(void *data, int64_t offset, std::vector<int64_t> sizes,
       std::vector<int64_t> strides) {
    words.resize(3 + 2 * sizes.size());
    std::memcpy(&words[0], &data, sizeof(void *));
    std::memcpy(&words[1], &data, sizeof(void *));
    words[2] = offset;
    for (size_t i = 0; i < sizes.size(); ++i) {
      words[3 + i] = sizes[i];
      words[3 + sizes.size() + i] = strides[i];
    }
  }
};

struct Case {
  int64_t elementSize;
  std::vector<int64_t> sizes, srcStrides, dstStrides;
  int64_t srcOffset, dstOffset;
};

/// The element offsets a view of `sizes` and `strides` visits, in
/// row-major order of the index.
std::vector<int64_t> offsets(const std::vector<int64_t> &sizes,
                             const std::vector<int64_t> &strides,
                             int64_t base) {
  std::vector<int64_t> result, index(sizes.size(), 0);
  int64_t count = 1;
  for (int64_t s : sizes)
    count *= s;
  for (int64_t k = 0; k < count; ++k) {
    int64_t at = base;
    for (size_t i = 0; i < sizes.size(); ++i)
      at += index[i] * strides[i];
    result.push_back(at);
    for (size_t i = sizes.size(); i-- > 0;)
      if (++index[i] < sizes[i])
        break;
      else
        index[i] = 0;
  }
  return result;
}

TEST(MemrefCopyTest, MatchesAnElementByElementCopy) {
  const Case cases[] = {
      // A pad's interior: 2 x 3 x 4 x 5 into 2 x 3 x 6 x 7, offset (1, 1).
      {4, {2, 3, 4, 5}, {60, 20, 5, 1}, {126, 42, 7, 1}, 0, 8},
      // Contiguous in both: one run.
      {4, {3, 4, 5}, {20, 5, 1}, {20, 5, 1}, 2, 3},
      // A transposed source: element by element.
      {4, {5, 6}, {1, 5}, {6, 1}, 0, 0},
      // Size-1 dims with any stride, 8- and 2-byte elements.
      {8, {1, 4, 1, 3}, {999, 3, 77, 1}, {5, 3, -4, 1}, 1, 0},
      {2, {2, 1, 9}, {20, 0, 1}, {9, 123, 1}, 0, 2},
      // An inner dim contiguous in one side only.
      {4, {3, 2, 4}, {8, 4, 1}, {16, 8, 2}, 0, 0},
      // Rank 0.
      {4, {}, {}, {}, 3, 1},
  };
  for (const Case &c : cases) {
    std::vector<int64_t> from = offsets(c.sizes, c.srcStrides, c.srcOffset);
    std::vector<int64_t> to = offsets(c.sizes, c.dstStrides, c.dstOffset);
    int64_t srcEnd = *std::max_element(from.begin(), from.end()) + 1;
    int64_t dstEnd = *std::max_element(to.begin(), to.end()) + 1;
    std::vector<uint8_t> src(srcEnd * c.elementSize);
    std::iota(src.begin(), src.end(), 1);
    std::vector<uint8_t> got(dstEnd * c.elementSize, 0xee), want = got;
    for (size_t k = 0; k < from.size(); ++k)
      std::memcpy(&want[to[k] * c.elementSize], &src[from[k] * c.elementSize],
                  c.elementSize);
    View s(src.data(), c.srcOffset, c.sizes, c.srcStrides);
    View d(got.data(), c.dstOffset, c.sizes, c.dstStrides);
    unranked_memref us = {static_cast<int64_t>(c.sizes.size()), s.words.data()};
    unranked_memref ud = {static_cast<int64_t>(c.sizes.size()), d.words.data()};
    memrefCopy(c.elementSize, &us, &ud);
    EXPECT_EQ(got, want) << "rank " << c.sizes.size() << ", element size "
                         << c.elementSize;
  }
}

} // namespace
