//===- MemRefArguments.h - arrays as arguments of compiled code -*- C++ -*-===//
//
// The C interface of a compiled function (`_mlir_ciface_<name>`) takes each
// ranked memref as a pointer to upstream's descriptor,
// `StridedMemRefType<T, Rank>` (mlir/ExecutionEngine/CRunnerUtils.h). The
// element type and rank of an nnx array are known at run time only, so a
// MemRefArgument holds the descriptor of the matching instantiation behind
// a common interface.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_MEMREFARGUMENTS_H
#define NNX_LIB_EXECUTION_MEMREFARGUMENTS_H

#include "nnx/Support/Npy.h"

#include <memory>

namespace mlir::nnx {

/// The largest rank of an array passed to compiled code.
inline constexpr int64_t kMaxMemRefRank = 8;

/// One ranked memref argument of a compiled function.
class MemRefArgument {
public:
  virtual ~MemRefArgument();
  /// The `StridedMemRefType<T, Rank> *` the C interface takes.
  virtual void *getDescriptor() = 0;
};

/// A 64-byte aligned copy of `array` (an OwningMemRef, freed with the
/// argument) the compiled code may read and write. Running out of memory is
/// a fatal error. Every function here needs a rank of at most
/// kMaxMemRefRank.
std::unique_ptr<MemRefArgument> copyToMemRef(const NpyArray &array);

/// A descriptor over the storage of `array`, which the caller owns: the
/// compiled code writes a result into it.
std::unique_ptr<MemRefArgument> viewAsMemRef(NpyArray &array);

/// A descriptor over the storage of `array` for an argument the compiled
/// code only reads (`bufferization.writable = false`).
std::unique_ptr<MemRefArgument> viewAsReadOnlyMemRef(const NpyArray &array);

/// A read-only descriptor over `data`, a contiguous row-major tensor of
/// `dtype` and `shape` that the caller keeps alive (a parameter's bytes).
std::unique_ptr<MemRefArgument>
viewAsReadOnlyMemRef(DType dtype, llvm::ArrayRef<int64_t> shape,
                     const void *data);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_MEMREFARGUMENTS_H
