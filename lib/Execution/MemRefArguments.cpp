//===- MemRefArguments.cpp - arrays as arguments of compiled code ---------===//
#include "MemRefArguments.h"

#include "mlir/ExecutionEngine/MemRefUtils.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemAlloc.h"

#include <utility>

using namespace mlir;
using namespace mlir::nnx;

MemRefArgument::~MemRefArgument() = default;

namespace {

/// A 64-byte aligned copy of an array, owned by an OwningMemRef.
template <typename T, unsigned Rank>
class OwnedCopy final : public MemRefArgument {
public:
  explicit OwnedCopy(const NpyArray &array)
      : memref(array.shape, /*shapeAlloc=*/{}, /*init=*/{}, /*alignment=*/64,
               // Out of memory is a fatal error, not a null dereference.
               [](size_t bytes) { return llvm::safe_malloc(bytes); }) {
    if (array.numBytes())
      std::memcpy(memref->data, array.data.data(), array.numBytes());
  }
  void *getDescriptor() override { return &*memref; }

private:
  OwningMemRef<T, Rank> memref;
};

/// A descriptor over an array's storage (contiguous, offset 0).
template <typename T, unsigned Rank> class View final : public MemRefArgument {
public:
  View(const void *bytes, ArrayRef<int64_t> shape) {
    // The compiled code writes only into views of caller-owned results.
    T *data = reinterpret_cast<T *>(const_cast<void *>(bytes));
    descriptor = mlir::detail::makeStridedMemRefDescriptor<Rank>(data, data,
                                                                 shape, shape);
  }
  explicit View(const NpyArray &array) : View(array.data.data(), array.shape) {}
  void *getDescriptor() override { return &descriptor; }

private:
  StridedMemRefType<T, Rank> descriptor;
};

/// `Argument<T, rank>(args...)`, for `rank` in `Ranks`; null otherwise.
template <template <typename, unsigned> class Argument, typename T,
          unsigned... Ranks, typename... Args>
std::unique_ptr<MemRefArgument>
makeForRank(int64_t rank, std::integer_sequence<unsigned, Ranks...>,
            Args &&...args) {
  std::unique_ptr<MemRefArgument> result;
  (void)((rank == Ranks &&
          (result = std::make_unique<Argument<T, Ranks>>(args...), true)) ||
         ...);
  return result;
}

/// `Argument<T, Rank>(args...)`, T the C++ type of `dtype`'s elements.
template <template <typename, unsigned> class Argument, typename... Args>
std::unique_ptr<MemRefArgument> makeArgument(DType dtype, int64_t rank,
                                             Args &&...args) {
  assert(rank <= kMaxMemRefRank && "rank beyond kMaxMemRefRank");
  auto ranks = std::make_integer_sequence<unsigned, kMaxMemRefRank + 1>();
  switch (dtype) {
  case DType::F16: // Only the size matters: 16 bits, passed through.
  case DType::BF16:
    return makeForRank<Argument, uint16_t>(rank, ranks, args...);
  case DType::F32:
    return makeForRank<Argument, float>(rank, ranks, args...);
  case DType::F64:
    return makeForRank<Argument, double>(rank, ranks, args...);
  case DType::I32:
    return makeForRank<Argument, int32_t>(rank, ranks, args...);
  case DType::I64:
    return makeForRank<Argument, int64_t>(rank, ranks, args...);
  case DType::Bool: // memref<...xi1> stores a byte per element.
    return makeForRank<Argument, uint8_t>(rank, ranks, args...);
  }
  llvm_unreachable("unknown dtype");
}

template <template <typename, unsigned> class Argument>
std::unique_ptr<MemRefArgument> makeArgument(const NpyArray &array) {
  return makeArgument<Argument>(array.dtype, array.rank(), array);
}

} // namespace

std::unique_ptr<MemRefArgument> mlir::nnx::copyToMemRef(const NpyArray &array) {
  return makeArgument<OwnedCopy>(array);
}

std::unique_ptr<MemRefArgument> mlir::nnx::viewAsMemRef(NpyArray &array) {
  return makeArgument<View>(array);
}

std::unique_ptr<MemRefArgument>
mlir::nnx::viewAsReadOnlyMemRef(const NpyArray &array) {
  return makeArgument<View>(array);
}

std::unique_ptr<MemRefArgument>
mlir::nnx::viewAsReadOnlyMemRef(DType dtype, ArrayRef<int64_t> shape,
                                const void *data) {
  return makeArgument<View>(dtype, static_cast<int64_t>(shape.size()), data,
                            shape);
}
