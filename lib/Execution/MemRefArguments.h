//===- MemRefArguments.h - arrays as arguments of compiled code -*- C++ -*-===//
//
// The C interface of a compiled function (`_mlir_ciface_<name>`) takes each
// ranked memref as a pointer to upstream's descriptor,
// `StridedMemRefType<T, Rank>` (mlir/ExecutionEngine/CRunnerUtils.h): two
// pointers, an offset, then `Rank` sizes and `Rank` strides, all 64-bit
// words whatever the element type. An ArgumentPack writes the descriptors
// of one call into storage it keeps from call to call, so that a call
// whose arguments were seen before allocates nothing (a decode step).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_MEMREFARGUMENTS_H
#define NNX_LIB_EXECUTION_MEMREFARGUMENTS_H

#include "nnx/Support/Npy.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace mlir::nnx {

/// The largest rank of an array passed to compiled code.
inline constexpr int64_t kMaxMemRefRank = 8;

/// The arguments of one call of compiled code, in reused storage.
class ArgumentPack {
public:
  /// Starts a new call; the storage stays.
  void clear();
  /// A descriptor over `data`, a contiguous row-major array of `shape`
  /// that the caller keeps alive (a parameter, a result buffer, an array
  /// the compiled code only reads or updates in place).
  void add(const void *data, llvm::ArrayRef<int64_t> shape);
  void add(const NpyArray &array) { add(array.data.data(), array.shape); }
  /// A 64-byte aligned copy of `array`, which the compiled code may write;
  /// the copy lives until the next clear(). Running out of memory is a
  /// fatal error.
  void addCopy(const NpyArray &array);
  /// The packed arguments: a pointer to each argument, which is a pointer
  /// to its descriptor; valid until the next add or clear.
  void **pack();
  size_t size() const { return starts.size(); }

private:
  std::vector<int64_t> words;
  std::vector<size_t> starts;
  std::vector<void *> descriptors, packed;
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  /// Copies: buffers that grow, reused in order.
  std::vector<std::pair<std::unique_ptr<void, Free>, size_t>> copies;
  size_t copiesUsed = 0;
};

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_MEMREFARGUMENTS_H
