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

namespace mlir::nnx {

/// At most this many bytes of freed temporaries are kept for reuse.
inline constexpr size_t kMaxCachedBytes = size_t(1) << 30;

/// A block of at least `size` bytes, aligned to 64 bytes (a cache line, the
/// alignment the CPU pipeline asks of every buffer); null when the system
/// has no memory left (the compiled code then faults, as with malloc).
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

/// Upstream's generic allocation functions for the JIT:
/// `_mlir_memref_to_llvm_alloc` (allocateTemporary),
/// `_mlir_memref_to_llvm_aligned_alloc` (allocateAlignedTemporary) and
/// `_mlir_memref_to_llvm_free` (freeTemporary).
llvm::orc::SymbolMap
temporaryAllocatorSymbols(llvm::orc::MangleAndInterner interner);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_TEMPORARYALLOCATOR_H
