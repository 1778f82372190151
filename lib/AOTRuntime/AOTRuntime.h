/*===- AOTRuntime.h - the run time's own declarations ---------------------===*\
 *
 * Shared by the files of libnnx_aot_runtime.a; not installed.
 *
\*===----------------------------------------------------------------------===*/
#ifndef NNX_LIB_AOTRUNTIME_AOTRUNTIME_H
#define NNX_LIB_AOTRUNTIME_AOTRUNTIME_H

#include "nnx-aot/Runtime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define NNX_AOT_NORETURN [[noreturn]]
#else
#define NNX_AOT_NORETURN _Noreturn
#endif

/* Bytes of freed temporaries kept for reuse at least (Guard.c: up to the
 * most bytes of temporaries ever outstanding at once, when that is more). */
#define NNX_AOT_MAX_CACHED_BYTES ((uint64_t)1 << 30)

/* Ranks the runtime handles (a memref descriptor is built on the stack). */
#define NNX_AOT_MAX_RANK 16

/* One tensor of a safetensors file. */
typedef struct nnx_aot_file_tensor {
  const char *key; /* in the mapped header, not terminated */
  size_t key_length;
  char dtype[16];
  int32_t rank;
  int64_t shape[NNX_AOT_MAX_RANK];
  uint64_t begin, end; /* in the data region */
} nnx_aot_file_tensor;

/* A mapped safetensors file. */
typedef struct nnx_aot_file {
  void *map; /* NULL: the image is not the file's (embedded weights) */
  uint64_t size;
  const unsigned char *data;
  uint64_t data_size;
  nnx_aot_file_tensor *tensors;
  size_t num_tensors;
} nnx_aot_file;

/* Maps and reads `path`; on an error, `error` says what and where. */
nnx_aot_status nnx_aot_open_file(const char *path, nnx_aot_file *file,
                                 char *error, size_t error_size);
/* Reads the safetensors image of `size` bytes at `image` (the weights an
 * object holds, or a mapped file) into `file`, which does not own it;
 * `path` names it in errors. */
nnx_aot_status nnx_aot_read_image(const char *path, const void *image,
                                  uint64_t size, nnx_aot_file *file,
                                  char *error, size_t error_size);
/* The tensor named `key`, or NULL. */
const nnx_aot_file_tensor *nnx_aot_find_tensor(const nnx_aot_file *file,
                                               const char *key);
void nnx_aot_close_file(nnx_aot_file *file);

/* A block of `size` bytes aligned to 64, or NULL (plain, not a temporary). */
void *nnx_aot_aligned_alloc(uint64_t size);

/* Calls `fn(args)`; a failure inside it (nnxRuntimeFail, a temporary the
 * system cannot give) frees what the call still held and returns its
 * status, with the message in `error`. */
nnx_aot_status nnx_aot_guarded_call(nnx_aot_packed_fn fn, void **args,
                                    char *error, size_t error_size);

/* The symbols the compiled code calls (Guard.c). */
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *block);
NNX_AOT_NORETURN void nnxRuntimeFail(const char *message, int64_t a, int64_t b);
typedef struct unranked_memref {
  int64_t rank;
  void *descriptor;
} unranked_memref;
void memrefCopy(int64_t element_size, unranked_memref *src,
                unranked_memref *dst);

#ifdef __cplusplus
}
#endif

#endif /* NNX_LIB_AOTRUNTIME_AOTRUNTIME_H */
