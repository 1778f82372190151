/*===- Guard.c - temporaries and failures inside the compiled code --------===*\
 *
 * The symbols the compiled code calls besides libm and libomp, for an
 * object from nnx-compile and for nnx's JIT alike (ModelJIT resolves them
 * here: lib/Execution/RuntimeSymbols.cpp):
 *   - upstream's generic allocation functions for the forward's
 *     temporaries (the CPU pipeline's runtime-allocator option);
 *   - nnxRuntimeFail, a failed run-time check;
 *   - memrefCopy, upstream's C runner utility for a strided copy.
 * A failure inside a call unwinds (longjmp) to nnx_aot_guarded_call on the
 * calling thread, which frees the temporaries the call still held (they
 * are listed while a guard is active) and returns the message. The frames
 * unwound are the compiled code's, which hold nothing else.
 *
\*===----------------------------------------------------------------------===*/
#include "AOTRuntime.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Each block starts with this header; the caller's bytes follow at 64
 * (or at its alignment, above 64). */
typedef struct block_header {
  struct block_header *prev, *next;
  struct guard *owner; /* the guard that lists it, or NULL */
  void *base;          /* what malloc (or mmap) returned */
  uint64_t mapped;     /* the bytes mmap mapped at base; 0: malloc's */
  uint64_t capacity;   /* the bytes the block holds */
  int cacheable;       /* 64-byte aligned: it may go to the cache */
} block_header;

enum { kHeaderSize = 64 };
_Static_assert(sizeof(block_header) <= kHeaderSize,
               "a block's header fits before its first cache line");

/* Blocks of at least this many bytes are mapped for themselves, on huge
 * page boundaries (below). */
enum { kHugePage = 2 << 20 };

typedef struct guard {
  jmp_buf jump;
  nnx_aot_status status;
  char *error;
  size_t error_size;
  block_header head; /* the outstanding temporaries, a circular list */
} guard;

static _Thread_local guard *current_guard;
static pthread_mutex_t list_mutex = PTHREAD_MUTEX_INITIALIZER;

static block_header *header_of(void *block) {
  return (block_header *)((uintptr_t)block - sizeof(block_header));
}

/* Gives `header`'s block back to the system. */
static void release_block(block_header *header) {
  if (header->mapped)
    munmap(header->base, header->mapped);
  else
    free(header->base);
}

/* A request of `size` bytes takes a block of this capacity: one page at
 * least, then four classes per power of two (2^k, 1.25, 1.5 and 1.75 x
 * 2^k). At most a quarter of a block above a page is unused, and a size
 * that grows call by call (a decode step's attention over one more
 * position) stays in its class for many calls, so the cache serves it. */
static uint64_t capacity_for(uint64_t size) {
  if (size <= 4096)
    return 4096;
  uint64_t power = (uint64_t)1 << (63 - __builtin_clzll(size));
  uint64_t unit = power / 4;
  return (size + unit - 1) / unit * unit;
}

/*===----------------------------------------------------------------------===
 * The cache of freed temporaries
 *
 * Every call of a forward allocates the same sizes in the same order and
 * frees them all before it returns. glibc serves blocks above its mmap
 * threshold with fresh pages from the kernel each time: ~2000 page faults
 * (each a zeroed page) per call of one GPT-2 block, 10-15% of its time. A
 * freed block is kept here instead and handed out again for the next
 * request that fits, so a warm forward allocates nothing from the system.
 * The cache is bounded by the forwards' own footprint: it keeps at most as
 * many bytes as were ever outstanding at once (the most a call held), and
 * at least NNX_AOT_MAX_CACHED_BYTES; beyond, blocks go back to the system.
 * A fixed bound below a call's footprint made every call fault its pages
 * in again (DenseNet-121 at batch 16 holds ~1.5 GiB: 200,000 page faults
 * and 3.8x the time per call under a 1 GiB bound). Entries are sorted by
 * capacity.
 *===----------------------------------------------------------------------===*/

typedef struct cache_entry {
  uint64_t capacity;
  block_header *header;
} cache_entry;

static pthread_mutex_t cache_mutex = PTHREAD_MUTEX_INITIALIZER;
static cache_entry *cache_entries;
static size_t cache_count, cache_slots;
static uint64_t cache_bytes;
/* Bytes of cacheable blocks handed out and not freed yet, and the most
 * there ever were at once (since the last release); cache_mutex guards. */
static uint64_t outstanding_bytes, peak_outstanding_bytes;

/* The cache's bound: see above. cache_mutex is held. */
static uint64_t cache_bound(void) {
  return peak_outstanding_bytes > NNX_AOT_MAX_CACHED_BYTES
             ? peak_outstanding_bytes
             : NNX_AOT_MAX_CACHED_BYTES;
}

/* The first entry of capacity >= `capacity`; cache_mutex is held. */
static size_t cache_lower_bound(uint64_t capacity) {
  size_t lo = 0, hi = cache_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cache_entries[mid].capacity < capacity)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Adds `bytes` (a block handed out, or its negation: returned) to the
 * outstanding bytes, and keeps their peak. */
static void count_outstanding(int64_t bytes) {
  pthread_mutex_lock(&cache_mutex);
  outstanding_bytes += (uint64_t)bytes;
  if (outstanding_bytes > peak_outstanding_bytes)
    peak_outstanding_bytes = outstanding_bytes;
  pthread_mutex_unlock(&cache_mutex);
}

/* The smallest cached block that fits `capacity`, unless it wastes over a
 * quarter; NULL: none. */
static block_header *cache_take(uint64_t capacity) {
  block_header *header = NULL;
  pthread_mutex_lock(&cache_mutex);
  size_t i = cache_lower_bound(capacity);
  if (i < cache_count && cache_entries[i].capacity - capacity <= capacity / 4) {
    header = cache_entries[i].header;
    cache_bytes -= cache_entries[i].capacity;
    memmove(&cache_entries[i], &cache_entries[i + 1],
            (cache_count - i - 1) * sizeof(cache_entry));
    --cache_count;
  }
  pthread_mutex_unlock(&cache_mutex);
  return header;
}

/* Keeps `header`'s block (cacheable, returned); 0 when the cache is full
 * (or cannot grow). */
static int cache_keep(block_header *header) {
  int kept = 0;
  pthread_mutex_lock(&cache_mutex);
  if (cache_bytes + header->capacity <= cache_bound()) {
    if (cache_count == cache_slots) {
      size_t slots = cache_slots ? 2 * cache_slots : 64;
      cache_entry *grown = realloc(cache_entries, slots * sizeof(cache_entry));
      if (grown) {
        cache_entries = grown;
        cache_slots = slots;
      }
    }
    if (cache_count < cache_slots) {
      size_t i = cache_lower_bound(header->capacity);
      memmove(&cache_entries[i + 1], &cache_entries[i],
              (cache_count - i) * sizeof(cache_entry));
      cache_entries[i].capacity = header->capacity;
      cache_entries[i].header = header;
      ++cache_count;
      cache_bytes += header->capacity;
      kept = 1;
    }
  }
  pthread_mutex_unlock(&cache_mutex);
  return kept;
}

void nnx_aot_release_temporaries(void) {
  pthread_mutex_lock(&cache_mutex);
  cache_entry *entries = cache_entries;
  size_t count = cache_count;
  cache_entries = NULL;
  cache_count = cache_slots = 0;
  cache_bytes = 0;
  peak_outstanding_bytes = outstanding_bytes;
  pthread_mutex_unlock(&cache_mutex);
  for (size_t i = 0; i < count; ++i)
    release_block(entries[i].header);
  free(entries);
}

uint64_t nnx_aot_cached_temporary_bytes(void) {
  pthread_mutex_lock(&cache_mutex);
  uint64_t bytes = cache_bytes;
  pthread_mutex_unlock(&cache_mutex);
  return bytes;
}

/*===----------------------------------------------------------------------===
 * Allocation
 *===----------------------------------------------------------------------===*/

/* A fresh block of `capacity` bytes at an `alignment` (a power of two >=
 * 64) boundary, its header before it. A block of at least kHugePage is
 * mapped for itself from a huge page boundary, with the kernel asked for
 * transparent huge pages: where THP is "madvise" (Debian's default),
 * malloc's large blocks are 4 KiB pages, faulted in one by one on first
 * touch (a batch-16 ResNet-50's first call faults ~290,000 of them) and
 * each a TLB entry while a layer streams through the batch. Its header
 * sits in the 4 KiB page before. */
static block_header *system_block(uint64_t alignment, uint64_t capacity) {
  if (capacity > UINT64_MAX - alignment - kHugePage - kHeaderSize)
    return NULL;
  uint64_t mapped = 0, boundary = alignment;
  void *base = NULL;
  if (capacity >= kHugePage && alignment <= kHugePage) {
    base = mmap(NULL, capacity + kHugePage, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      base = NULL;
    } else {
      mapped = capacity + kHugePage;
      boundary = kHugePage;
    }
  }
  if (!base)
    base = malloc(capacity + alignment + kHeaderSize);
  if (!base)
    return NULL;
  uintptr_t at = ((uintptr_t)base + kHeaderSize + boundary - 1) &
                 ~(uintptr_t)(boundary - 1);
#ifdef MADV_HUGEPAGE
  /* Advice only: where the kernel has no THP the pages stay small. */
  if (mapped)
    (void)madvise((void *)at, capacity, MADV_HUGEPAGE);
#endif
  block_header *header = header_of((void *)at);
  header->base = base;
  header->mapped = mapped;
  header->capacity = capacity;
  header->cacheable = alignment == 64;
  return header;
}

/* Lists `header`'s block in the call running on this thread (if one is). */
static void *track(block_header *header) {
  header->owner = NULL;
  header->prev = header->next = NULL;
  guard *g = current_guard;
  if (g) {
    pthread_mutex_lock(&list_mutex);
    header->owner = g;
    header->next = g->head.next;
    header->prev = &g->head;
    g->head.next->prev = header;
    g->head.next = header;
    pthread_mutex_unlock(&list_mutex);
  }
  return (unsigned char *)header + sizeof(block_header);
}

static void unlink_block(block_header *header) {
  if (!header->owner)
    return;
  header->prev->next = header->next;
  header->next->prev = header->prev;
  header->owner = NULL;
}

/* NULL, or inside a call a failure naming the bytes. */
static void *fail_allocation(uint64_t size) {
  if (current_guard)
    nnxRuntimeFail("out of memory: the forward asked for a temporary of {0} "
                   "bytes, which the system cannot give",
                   (int64_t)(size > INT64_MAX ? INT64_MAX : size), 0);
  return NULL;
}

/* A block of `size` bytes aligned to `alignment` (a power of two, at least
 * 64). Sizes no allocation can have (a negative size converted) fail as
 * such, before an overflowing capacity. */
static void *allocate(uint64_t alignment, uint64_t size) {
  if (size > ((uint64_t)1 << 62))
    return fail_allocation(size);
  uint64_t capacity = capacity_for(size);
  block_header *header = alignment == 64 ? cache_take(capacity) : NULL;
  if (!header)
    header = system_block(alignment, capacity);
  if (!header)
    return fail_allocation(size);
  if (header->cacheable)
    count_outstanding((int64_t)header->capacity);
  return track(header);
}

void *_mlir_memref_to_llvm_alloc(uint64_t size) { return allocate(64, size); }

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    return NULL;
  return allocate(alignment < 64 ? 64 : alignment, size);
}

void _mlir_memref_to_llvm_free(void *block) {
  if (!block)
    return;
  block_header *header = header_of(block);
  pthread_mutex_lock(&list_mutex);
  unlink_block(header);
  pthread_mutex_unlock(&list_mutex);
  if (header->cacheable) {
    count_outstanding(-(int64_t)header->capacity);
    if (cache_keep(header))
      return;
  }
  release_block(header);
}

void *nnx_aot_aligned_alloc(uint64_t size) {
  void *block = NULL;
  if (posix_memalign(&block, 64, size ? size : 1) != 0)
    return NULL;
  return block;
}

/* `message` with "{0}" replaced by `a` and "{1}" by `b`. */
static void format_failure(char *out, size_t out_size, const char *message,
                           int64_t a, int64_t b) {
  size_t n = 0;
  for (const char *p = message; *p && n + 1 < out_size;) {
    if ((p[0] == '{') && (p[1] == '0' || p[1] == '1') && p[2] == '}') {
      n += (size_t)snprintf(out + n, out_size - n, "%lld",
                            (long long)(p[1] == '0' ? a : b));
      if (n >= out_size)
        n = out_size - 1;
      p += 3;
      continue;
    }
    out[n++] = *p++;
  }
  out[n < out_size ? n : out_size - 1] = '\0';
}

void nnxRuntimeFail(const char *message, int64_t a, int64_t b) {
  guard *g = current_guard;
  if (!g) {
    char text[512];
    format_failure(text, sizeof(text), message, a, b);
    fprintf(stderr, "nnx: error: %s\n", text);
    abort();
  }
  format_failure(g->error, g->error_size, message, a, b);
  g->status = NNX_AOT_ERROR_RUNTIME;
  longjmp(g->jump, 1);
}

nnx_aot_status nnx_aot_guarded_call(nnx_aot_packed_fn fn, void **args,
                                    char *error, size_t error_size) {
  /* On this frame (a call allocates nothing for its bookkeeping); reached
   * through current_guard during the call, so it is in memory, and read
   * through a volatile pointer after the longjmp. */
  guard storage;
  guard *volatile g = &storage;
  memset(&storage, 0, sizeof(storage));
  if (error_size)
    error[0] = '\0';
  g->error = error;
  g->error_size = error_size;
  g->head.next = g->head.prev = &g->head;
  guard *outer = current_guard;
  current_guard = g;
  /* g->status stays NNX_AOT_OK unless nnxRuntimeFail unwinds. */
  if (setjmp(g->jump) == 0) {
    fn(args);
  } else {
    /* What the call still held. */
    pthread_mutex_lock(&list_mutex);
    while (g->head.next != &g->head) {
      block_header *header = g->head.next;
      unlink_block(header);
      if (header->cacheable)
        count_outstanding(-(int64_t)header->capacity);
      release_block(header);
    }
    pthread_mutex_unlock(&list_mutex);
  }
  current_guard = outer;
  /* Unlist what is left listed (freed later by the compiled code). */
  pthread_mutex_lock(&list_mutex);
  while (g->head.next != &g->head)
    unlink_block(g->head.next);
  pthread_mutex_unlock(&list_mutex);
  return g->status;
}

/*===----------------------------------------------------------------------===
 * memrefCopy (upstream's CRunnerUtils)
 *===----------------------------------------------------------------------===*/

/* {allocated, aligned, offset, sizes[rank], strides[rank]} */
static char *aligned_of(const void *descriptor) {
  char *aligned;
  memcpy(&aligned, (const char *)descriptor + sizeof(void *), sizeof(void *));
  return aligned;
}

static const int64_t *words_of(const void *descriptor) {
  return (const int64_t *)((const char *)descriptor + 2 * sizeof(void *));
}

/* The trailing dims of a copy that are contiguous in both the source and
 * the destination (a dim of size 1 is, whatever its stride): the first of
 * them, and the elements they hold together, in `*run`. */
static int64_t contiguous_tail(int64_t rank, const int64_t *sizes,
                               const int64_t *src_strides,
                               const int64_t *dst_strides, int64_t *run) {
  int64_t first = rank;
  *run = 1;
  while (first > 0) {
    int64_t i = first - 1;
    if (sizes[i] != 1 && (src_strides[i] != *run || dst_strides[i] != *run))
      break;
    *run *= sizes[i];
    --first;
  }
  return first;
}

/* `bytes` from `from` to `to`: a constant size for the common elements, so
 * the compiler writes a move instead of calling memcpy. */
static void copy_run(char *to, const char *from, int64_t bytes) {
  switch (bytes) {
  case 4:
    memcpy(to, from, 4);
    return;
  case 8:
    memcpy(to, from, 8);
    return;
  case 2:
    memcpy(to, from, 2);
    return;
  default:
    memcpy(to, from, (size_t)bytes);
  }
}

/* Copies a strided memref into another of the same sizes (memref.copy that
 * is not contiguous: a pad's interior, a slice). The trailing dims
 * contiguous in both are one memcpy per run; the others are walked with
 * offsets updated as the index advances. */
void memrefCopy(int64_t element_size, unranked_memref *src,
                unranked_memref *dst) {
  int64_t rank = src->rank;
  const int64_t *s = words_of(src->descriptor);
  const int64_t *d = words_of(dst->descriptor);
  const int64_t *sizes = s + 1, *src_strides = s + 1 + rank,
                *dst_strides = d + 1 + rank;
  char *from = aligned_of(src->descriptor) + s[0] * element_size;
  char *to = aligned_of(dst->descriptor) + d[0] * element_size;
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  if (rank > NNX_AOT_MAX_RANK)
    nnxRuntimeFail("memrefCopy: rank {0} exceeds {1}", rank, NNX_AOT_MAX_RANK);
  int64_t run;
  int64_t outer = contiguous_tail(rank, sizes, src_strides, dst_strides, &run);
  int64_t bytes = run * element_size;
  int64_t index[NNX_AOT_MAX_RANK] = {0}, so = 0, dof = 0;
  for (;;) {
    copy_run(to + dof * element_size, from + so * element_size, bytes);
    int64_t axis = outer - 1;
    for (; axis >= 0; --axis) {
      so += src_strides[axis];
      dof += dst_strides[axis];
      if (++index[axis] < sizes[axis])
        break;
      so -= src_strides[axis] * sizes[axis];
      dof -= dst_strides[axis] * sizes[axis];
      index[axis] = 0;
    }
    if (axis < 0)
      return;
  }
}
