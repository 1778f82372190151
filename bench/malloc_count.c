/* Counts the process's heap allocations, for bench/generate_vs_torch.py
   (loaded with LD_PRELOAD; the bench reads nnx_malloc_calls through ctypes).
   Every malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign
   call counts one; the calls go on to glibc's own functions. */
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

uint64_t nnx_malloc_calls;

static void count(void) {
  __atomic_add_fetch(&nnx_malloc_calls, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
  count();
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
  count();
  return __libc_realloc(p, n);
}

void *memalign(size_t alignment, size_t n) {
  count();
  return __libc_memalign(alignment, n);
}

void *aligned_alloc(size_t alignment, size_t n) {
  count();
  return __libc_memalign(alignment, n);
}

int posix_memalign(void **out, size_t alignment, size_t n) {
  count();
  void *p = __libc_memalign(alignment, n);
  if (!p)
    return 12; /* ENOMEM */
  *out = p;
  return 0;
}
