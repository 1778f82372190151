//===- TemporaryAllocator.cpp - the CPU forward's temporaries -------------===//
#include "TemporaryAllocator.h"
#include "RuntimeFailure.h"

#include "llvm/Support/MathExtras.h"

#include <cstddef>
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
  OutstandingTemporaries::Link link;
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
  headerOf(block) = {raw, capacity, cacheable, {}};
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

/// Lists `block` (null: the system had no memory: a failure inside
/// runGuarded) for the call running on this thread.
static void *track(void *block, uint64_t size) {
  if (!block) {
    if (isRuntimeGuarded())
      failRuntime("out of memory: the forward asked for a temporary of {0} "
                  "bytes, which the system cannot give",
                  static_cast<int64_t>(std::min<uint64_t>(size, INT64_MAX)));
    return nullptr;
  }
  OutstandingTemporaries::add(headerOf(block).link);
  return block;
}

void *mlir::nnx::allocateTemporary(uint64_t size) {
  // Sizes no allocation can have (a negative size converted) fail as such,
  // before an overflowing capacity.
  if (size > (uint64_t(1) << 62))
    return track(nullptr, size);
  size_t capacity = capacityFor(size);
  if (void *block = cache().take(capacity))
    return track(block, size);
  return track(systemBlock(capacity, kHeader, /*cacheable=*/true), size);
}

void *mlir::nnx::allocateAlignedTemporary(uint64_t alignment, uint64_t size) {
  if (!llvm::isPowerOf2_64(alignment))
    return nullptr;
  if (alignment <= kHeader)
    return allocateTemporary(size);
  if (size > (uint64_t(1) << 62))
    return track(nullptr, size);
  // Rare (the CPU pipeline asks for 64).
  return track(systemBlock(capacityFor(size), alignment, /*cacheable=*/false),
               size);
}

void mlir::nnx::freeTemporary(void *block) {
  if (!block)
    return;
  Header &header = headerOf(block);
  OutstandingTemporaries::remove(header.link);
  if (header.cacheable && cache().keep(block))
    return;
  std::free(header.raw);
}

void mlir::nnx::releaseCachedTemporaries() { cache().release(); }

size_t mlir::nnx::cachedTemporaryBytes() { return cache().bytes(); }

//===----------------------------------------------------------------------===//
// OutstandingTemporaries
//===----------------------------------------------------------------------===//

/// The innermost alive on this thread.
static thread_local OutstandingTemporaries *currentOutstanding = nullptr;

OutstandingTemporaries::OutstandingTemporaries() : outer(currentOutstanding) {
  head.prev = head.next = &head;
  currentOutstanding = this;
}

OutstandingTemporaries::~OutstandingTemporaries() {
  currentOutstanding = outer;
  std::lock_guard<std::mutex> lock(mutex);
  while (head.next != &head)
    unlink(*head.next);
}

void OutstandingTemporaries::freeAll() {
  for (;;) {
    void *block;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (head.next == &head)
        return;
      auto *header = reinterpret_cast<Header *>(
          reinterpret_cast<char *>(head.next) - offsetof(Header, link));
      block = reinterpret_cast<char *>(header) + kHeader;
    }
    freeTemporary(block);
  }
}

void OutstandingTemporaries::add(Link &link) {
  OutstandingTemporaries *list = currentOutstanding;
  if (!list)
    return;
  std::lock_guard<std::mutex> lock(list->mutex);
  link.owner = list;
  link.prev = &list->head;
  link.next = list->head.next;
  list->head.next->prev = &link;
  list->head.next = &link;
}

void OutstandingTemporaries::remove(Link &link) {
  // The owner outlives its listed blocks (its destructor unlists them), and
  // a block is freed once: `owner` changes only under the owner's mutex,
  // from this block's own allocation and free.
  OutstandingTemporaries *list = link.owner;
  if (!list)
    return;
  std::lock_guard<std::mutex> lock(list->mutex);
  list->unlink(link);
}

void OutstandingTemporaries::unlink(Link &link) {
  link.prev->next = link.next;
  link.next->prev = link.prev;
  link = Link();
}

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
