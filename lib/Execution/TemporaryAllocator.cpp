//===- TemporaryAllocator.cpp - the CPU forward's temporaries -------------===//
#include "TemporaryAllocator.h"

#include "llvm/Support/MathExtras.h"

#include <cstdlib>
#include <map>
#include <mutex>

using namespace mlir::nnx;

namespace {
/// Every block starts `kHeader` bytes into its system allocation; the
/// header (just before the block) says where that allocation starts, how
/// many bytes the block holds, and whether it may be cached.
constexpr size_t kHeader = 64;

struct Header {
  void *raw;
  size_t capacity;
  bool cacheable;
};
static_assert(sizeof(Header) <= kHeader);

Header &headerOf(void *block) {
  return *reinterpret_cast<Header *>(static_cast<char *>(block) - kHeader);
}

/// A request of `size` bytes takes a block of this capacity: whole cache
/// lines, whole pages beyond 64 KiB (fewer distinct sizes to cache).
size_t capacityFor(uint64_t size) {
  return llvm::alignTo(std::max<uint64_t>(size, 1),
                       size < (64u << 10) ? 64 : 4096);
}

/// A fresh block from the system, `alignment` (a power of two) aligned.
void *systemBlock(size_t capacity, size_t alignment, bool cacheable) {
  size_t prefix = std::max(kHeader, alignment);
  void *raw =
      std::aligned_alloc(prefix, llvm::alignTo(prefix + capacity, prefix));
  if (!raw)
    return nullptr;
  void *block = static_cast<char *>(raw) + prefix;
  headerOf(block) = {raw, capacity, cacheable};
  return block;
}

/// Freed blocks by capacity.
class Cache {
public:
  void *take(size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex);
    // The smallest cached block that fits, unless it wastes over a quarter.
    auto it = blocks.lower_bound(capacity);
    if (it == blocks.end() || it->first - capacity > capacity / 4)
      return nullptr;
    void *block = it->second;
    cached -= it->first;
    blocks.erase(it);
    return block;
  }

  /// Keeps `block`, or returns false when the cache is full.
  bool keep(void *block) {
    size_t capacity = headerOf(block).capacity;
    std::lock_guard<std::mutex> lock(mutex);
    if (cached + capacity > kMaxCachedBytes)
      return false;
    blocks.emplace(capacity, block);
    cached += capacity;
    return true;
  }

  void release() {
    std::multimap<size_t, void *> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex);
      dropped.swap(blocks);
      cached = 0;
    }
    for (auto &entry : dropped)
      std::free(headerOf(entry.second).raw);
  }

  size_t bytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return cached;
  }

private:
  std::mutex mutex;
  std::multimap<size_t, void *> blocks;
  size_t cached = 0;
};

/// Never destroyed: a forward (or a CompiledModel's destructor) may still
/// run during static destruction; the system takes the memory at exit.
Cache &cache() {
  static Cache *instance = new Cache;
  return *instance;
}
} // namespace

void *mlir::nnx::allocateTemporary(uint64_t size) {
  size_t capacity = capacityFor(size);
  if (void *block = cache().take(capacity))
    return block;
  return systemBlock(capacity, kHeader, /*cacheable=*/true);
}

void *mlir::nnx::allocateAlignedTemporary(uint64_t alignment, uint64_t size) {
  if (!llvm::isPowerOf2_64(alignment))
    return nullptr;
  if (alignment <= kHeader)
    return allocateTemporary(size);
  // Rare (the CPU pipeline asks for 64).
  return systemBlock(capacityFor(size), alignment, /*cacheable=*/false);
}

void mlir::nnx::freeTemporary(void *block) {
  if (!block)
    return;
  Header &header = headerOf(block);
  if (header.cacheable && cache().keep(block))
    return;
  std::free(header.raw);
}

void mlir::nnx::releaseCachedTemporaries() { cache().release(); }

size_t mlir::nnx::cachedTemporaryBytes() { return cache().bytes(); }

llvm::orc::SymbolMap
mlir::nnx::temporaryAllocatorSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](llvm::StringRef name, auto *fn) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                               llvm::JITSymbolFlags::Exported};
  };
  add("_mlir_memref_to_llvm_alloc", &allocateTemporary);
  add("_mlir_memref_to_llvm_aligned_alloc", &allocateAlignedTemporary);
  add("_mlir_memref_to_llvm_free", &freeTemporary);
  return symbols;
}
