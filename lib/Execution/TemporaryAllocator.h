//===- TemporaryAllocator.h - the CPU forward's temporaries -----*- C++ -*-===//
//
// The compiled CPU forward allocates its temporaries (the activations
// between layers) through upstream's generic allocation functions
// (`finalize-memref-to-llvm{use-generic-functions}`: the CPU pipeline's
// `runtime-allocator` option), which this file provides to the JIT.
//
// Every call of a forward allocates the same sizes in the same order and
// frees them all before it returns. glibc serves blocks above its mmap
// threshold with fresh pages from the kernel each time: ~2000 page faults
// (each a zeroed page) per call of one GPT-2 block, 10-15% of its time. A
// freed block is kept here instead and handed out again for the next
// request that fits, so a warm forward allocates nothing from the system.
// Cached bytes are bounded (`kMaxCachedBytes`); beyond that, blocks go
// back to the system. Thread-safe: forwards may run concurrently, and
// their OpenMP threads too.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_TEMPORARYALLOCATOR_H
#define NNX_LIB_EXECUTION_TEMPORARYALLOCATOR_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace mlir::nnx {

/// At most this many bytes of freed temporaries are kept for reuse.
inline constexpr size_t kMaxCachedBytes = size_t(1) << 30;

/// A block of at least `size` bytes, aligned to 64 bytes (a cache line, the
/// alignment the CPU pipeline asks of every buffer). When the system has no
/// memory left: inside runGuarded a failure naming the bytes
/// (RuntimeFailure.h: the call returns an error), elsewhere null.
void *allocateTemporary(uint64_t size);
/// A block of at least `size` bytes aligned to `alignment`, a power of two
/// (null otherwise); above 64 bytes it is not cached, so that every cached
/// block has the one alignment.
void *allocateAlignedTemporary(uint64_t alignment, uint64_t size);
/// Returns a block of either function above (null: nothing) to the cache.
void freeTemporary(void *block);
/// Returns every cached block to the system.
void releaseCachedTemporaries();
/// Bytes currently cached (freed, kept for reuse).
size_t cachedTemporaryBytes();

/// While one is alive on a thread, the temporaries allocated on that
/// thread are listed in it until they are freed (from any thread), so that
/// freeAll can free what a call that failed half-way still held.
/// runGuarded makes one per call; they nest.
class OutstandingTemporaries {
public:
  OutstandingTemporaries();
  /// Unlists what is still listed (it is not freed).
  ~OutstandingTemporaries();
  OutstandingTemporaries(const OutstandingTemporaries &) = delete;
  OutstandingTemporaries &operator=(const OutstandingTemporaries &) = delete;

  /// Frees every block still listed.
  void freeAll();

  /// The list's links (in each block's header).
  struct Link {
    Link *prev = nullptr, *next = nullptr;
    OutstandingTemporaries *owner = nullptr;
  };
  /// Lists `link` (a block allocated on this thread), if one is alive here.
  static void add(Link &link);
  /// Unlists `link`, if it is listed.
  static void remove(Link &link);

private:
  /// Unlists `link`; `mutex` is held.
  void unlink(Link &link);

  std::mutex mutex;
  Link head;
  OutstandingTemporaries *outer;
};

/// Upstream's generic allocation functions for the JIT:
/// `_mlir_memref_to_llvm_alloc` (allocateTemporary),
/// `_mlir_memref_to_llvm_aligned_alloc` (allocateAlignedTemporary) and
/// `_mlir_memref_to_llvm_free` (freeTemporary).
llvm::orc::SymbolMap
temporaryAllocatorSymbols(llvm::orc::MangleAndInterner interner);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_TEMPORARYALLOCATOR_H
