//===- MemRefArguments.cpp - arrays as arguments of compiled code ---------===//
#include "MemRefArguments.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cassert>
#include <cstring>

using namespace mlir;
using namespace mlir::nnx;

void ArgumentPack::clear() {
  words.clear();
  starts.clear();
  copiesUsed = 0;
}

void ArgumentPack::add(const void *data, llvm::ArrayRef<int64_t> shape) {
  assert(static_cast<int64_t>(shape.size()) <= kMaxMemRefRank &&
         "rank beyond kMaxMemRefRank");
  // {allocated, aligned, offset, sizes..., strides...}: the compiled code
  // writes only into arrays the caller gave it to write.
  auto pointer = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
  starts.push_back(words.size());
  words.insert(words.end(), {pointer, pointer, 0});
  words.insert(words.end(), shape.begin(), shape.end());
  size_t strides = words.size();
  words.resize(strides + shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    words[strides + d] = stride;
    stride *= shape[d];
  }
}

void ArgumentPack::addCopy(const NpyArray &array) {
  size_t bytes = std::max<size_t>(array.numBytes(), 1);
  if (copiesUsed == copies.size())
    copies.emplace_back(nullptr, 0);
  auto &[buffer, capacity] = copies[copiesUsed++];
  if (capacity < bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    buffer.reset(std::aligned_alloc(64, rounded));
    if (!buffer)
      llvm::report_bad_alloc_error("a copy of an argument of compiled code");
    capacity = rounded;
  }
  if (array.numBytes())
    std::memcpy(buffer.get(), array.data.data(), array.numBytes());
  add(buffer.get(), array.shape);
}

void **ArgumentPack::pack() {
  descriptors.resize(starts.size());
  packed.resize(starts.size());
  for (auto [i, start] : llvm::enumerate(starts)) {
    descriptors[i] = &words[start];
    packed[i] = &descriptors[i];
  }
  return packed.data();
}
