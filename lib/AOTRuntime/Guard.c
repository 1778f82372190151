/*===- Guard.c - temporaries and failures inside the compiled code --------===*\
 *
 * The symbols an object from nnx-compile calls besides libm and libomp, as
 * nnx's JIT provides them (lib/Execution/TemporaryAllocator.h,
 * RuntimeFailure.h):
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

/* Each block starts with this header; the caller's bytes follow at 64. */
typedef struct block_header {
  struct block_header *prev, *next;
  struct guard *owner; /* the guard that lists it, or NULL */
  void *base;          /* what malloc returned */
} block_header;

enum { kHeaderSize = 64 };

typedef struct guard {
  jmp_buf jump;
  nnx_aot_status status;
  char *error;
  size_t error_size;
  block_header head; /* the outstanding temporaries, a circular list */
} guard;

static _Thread_local guard *current_guard;
static pthread_mutex_t list_mutex = PTHREAD_MUTEX_INITIALIZER;

/* A block of `size` bytes at an `alignment` (a power of two >= 64)
 * boundary, its header before it. */
static void *allocate_block(uint64_t alignment, uint64_t size) {
  if (size > UINT64_MAX - alignment - kHeaderSize)
    return NULL;
  unsigned char *base = malloc(size + alignment + kHeaderSize);
  if (!base)
    return NULL;
  uintptr_t at = ((uintptr_t)base + kHeaderSize + alignment - 1) &
                 ~(uintptr_t)(alignment - 1);
  block_header *header = (block_header *)(at - sizeof(block_header));
  header->base = base;
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
  return (void *)at;
}

static void unlink_block(block_header *header) {
  if (!header->owner)
    return;
  header->prev->next = header->next;
  header->next->prev = header->prev;
  header->owner = NULL;
}

static void fail_allocation(uint64_t size) {
  if (current_guard)
    nnxRuntimeFail("out of memory: the forward asked for a temporary of {0} "
                   "bytes, which the system cannot give",
                   (int64_t)(size > INT64_MAX ? INT64_MAX : size), 0);
}

void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  void *block = allocate_block(64, size);
  if (!block)
    fail_allocation(size);
  return block;
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    return NULL;
  void *block = allocate_block(alignment < 64 ? 64 : alignment, size);
  if (!block)
    fail_allocation(size);
  return block;
}

void _mlir_memref_to_llvm_free(void *block) {
  if (!block)
    return;
  block_header *header =
      (block_header *)((uintptr_t)block - sizeof(block_header));
  pthread_mutex_lock(&list_mutex);
  unlink_block(header);
  pthread_mutex_unlock(&list_mutex);
  free(header->base);
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
  /* volatile: read after longjmp. */
  guard *volatile g = calloc(1, sizeof(guard));
  if (!g) {
    snprintf(error, error_size, "cannot allocate the call's bookkeeping");
    return NNX_AOT_ERROR_MEMORY;
  }
  g->error = error;
  g->error_size = error_size;
  g->head.next = g->head.prev = &g->head;
  guard *outer = current_guard;
  current_guard = g;
  nnx_aot_status status = NNX_AOT_OK;
  if (setjmp(g->jump) == 0) {
    fn(args);
  } else {
    status = g->status;
    /* What the call still held. */
    pthread_mutex_lock(&list_mutex);
    while (g->head.next != &g->head) {
      block_header *header = g->head.next;
      unlink_block(header);
      free(header->base);
    }
    pthread_mutex_unlock(&list_mutex);
  }
  current_guard = outer;
  /* Unlist what is left listed (freed later by the compiled code). */
  pthread_mutex_lock(&list_mutex);
  while (g->head.next != &g->head)
    unlink_block(g->head.next);
  pthread_mutex_unlock(&list_mutex);
  free(g);
  return status;
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

void memrefCopy(int64_t element_size, unranked_memref *src,
                unranked_memref *dst) {
  int64_t rank = src->rank;
  const int64_t *s = words_of(src->descriptor);
  const int64_t *d = words_of(dst->descriptor);
  const int64_t *sizes = s + 1, *src_strides = s + 1 + rank,
                *dst_strides = d + 1 + rank;
  char *from = aligned_of(src->descriptor) + s[0] * element_size;
  char *to = aligned_of(dst->descriptor) + d[0] * element_size;
  if (rank == 0) {
    memcpy(to, from, (size_t)element_size);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  int64_t index[NNX_AOT_MAX_RANK] = {0};
  if (rank > NNX_AOT_MAX_RANK)
    nnxRuntimeFail("memrefCopy: rank {0} exceeds {1}", rank, NNX_AOT_MAX_RANK);
  for (;;) {
    int64_t so = 0, dof = 0;
    for (int64_t i = 0; i < rank; ++i) {
      so += index[i] * src_strides[i];
      dof += index[i] * dst_strides[i];
    }
    memcpy(to + dof * element_size, from + so * element_size,
           (size_t)element_size);
    int64_t axis = rank - 1;
    while (axis >= 0 && ++index[axis] == sizes[axis])
      index[axis--] = 0;
    if (axis < 0)
      return;
  }
}
