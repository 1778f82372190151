/*===- Runtime.c - bind, check and run a compiled forward -----------------===*\
 *
 * nnx-aot/Runtime.h's entry points, over the tables of a descriptor: the
 * one runtime of nnx-run, nnx.compile and the C API (whose JIT fills a
 * descriptor in, lib/Execution/RuntimeDescriptor.cpp) and of the objects
 * nnx-compile writes (whose header holds one). The forward's arguments are
upstream's memref
 * descriptors, passed packed (`void **`: a pointer to each argument, each a
 * pointer to a descriptor), in the order
 *   inputs, parameters, write probes, outputs, index-check pairs,
 *   read probes.
 *
\*===----------------------------------------------------------------------===*/
#include "AOTRuntime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The storage of a call: the memref descriptors (a words arena and where
 * each starts), the packed pointers, the sizes a shape function writes, an
 * aligned copy per argument and per result (with their capacities), and the
 * index checks' pairs. */
typedef struct call_storage {
  int64_t *words;
  size_t num_words, words_capacity;
  size_t *starts;
  void **descriptors, **packed;
  size_t count, starts_capacity, descriptors_capacity, packed_capacity;
  int64_t *sizes;
  size_t sizes_capacity;
  void **copies, **own_copies;
  size_t *copy_capacity;
  int64_t *pairs;
  /* The shapes the write probes must have, NNX_AOT_MAX_RANK per probe. */
  int64_t *write_dims;
} call_storage;

/* Frees what the storage holds (its slots' buffers too). */
static void free_storage(call_storage *c, int32_t num_arguments);

struct nnx_aot_model {
  const nnx_aot_descriptor *d;
  nnx_aot_file file;
  /* Each parameter as the code reads it: its bytes (64-byte aligned, in
   * the mapped file or `param_owned`, the model's copy) and its shape. */
  const void **param_data;
  void **param_owned;
  int64_t (*param_shape)[NNX_AOT_MAX_RANK];
  /* The stored bytes of each parameter a JIT gave (nnx_aot_bind), or NULL
   * (a file's). */
  const void *const *stored;
  /* Each parameter's copy in the device's memory (descriptor->device). */
  void **param_device;
  int initialized;
  /* What a call uses, kept from call to call (grown when a call needs
   * more): a call like an earlier one allocates nothing. */
  call_storage call;
  /* What the load returned and said; a model that did not load only
   * reports it. */
  nnx_aot_status load_status;
  char load_error[2048];
  char error[2048];
  /* The argument the last error blames, or -1. */
  int32_t error_argument;
};

static nnx_aot_status fail(nnx_aot_model *m, nnx_aot_status status,
                           const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static nnx_aot_status fail(nnx_aot_model *m, nnx_aot_status status,
                           const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(m->error, sizeof(m->error), format, args);
  va_end(args);
  return status;
}

static size_t dtype_size(nnx_aot_dtype dtype) {
  switch (dtype) {
  case NNX_AOT_F16:
  case NNX_AOT_BF16:
    return 2;
  case NNX_AOT_F32:
  case NNX_AOT_I32:
    return 4;
  case NNX_AOT_F64:
  case NNX_AOT_I64:
    return 8;
  case NNX_AOT_BOOL:
    return 1;
  }
  return 0;
}

static const char *safetensors_name(nnx_aot_dtype dtype) {
  static const char *const names[] = {"F16", "BF16", "F32", "F64",
                                      "I32", "I64",  "BOOL"};
  return (unsigned)dtype < 7 ? names[dtype] : "?";
}

/* As NumPy names it (and nnx-run's errors). */
static const char *numpy_name(nnx_aot_dtype dtype) {
  static const char *const names[] = {
      "float16", "bfloat16", "float32", "float64", "int32", "int64", "bool"};
  return (unsigned)dtype < 7 ? names[dtype] : "?";
}

/* "(2, 3)" into `out`, as NumPy writes a shape ("(2,)", "()"). */
static const char *format_shape(char *out, size_t size, int32_t rank,
                                const int64_t *shape) {
  size_t n = (size_t)snprintf(out, size, "(");
  for (int32_t i = 0; i < rank && n < size; ++i)
    n += (size_t)snprintf(out + n, size - n, i ? ", %lld" : "%lld",
                          (long long)shape[i]);
  if (n < size)
    snprintf(out + n, size - n, rank == 1 ? ",)" : ")");
  return out;
}

/* The element count of `shape`, or -1 when its bytes overflow int64. */
static int64_t element_count(int32_t rank, const int64_t *shape,
                             size_t element_size) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return -1;
    if (shape[i] && n > INT64_MAX / (int64_t)element_size / shape[i])
      return -1;
    n *= shape[i];
  }
  return n;
}

/* The bytes of a `t` of shape `dims`, whose size check_arguments or
 * compute_result_shapes passed. */
static size_t tensor_bytes(const nnx_aot_tensor *t, const int64_t *dims) {
  size_t es = dtype_size(t->dtype);
  return (size_t)element_count(t->rank, dims, es) * es;
}

/*===----------------------------------------------------------------------===
 * Loading
 *===----------------------------------------------------------------------===*/

/* `rows` x `cols` elements of `T` at `in`, transposed into `out`, in
 * 64 x 64 blocks written row by row (measured: 2.5x the speed of 32 x 32
 * blocks read row by row, on a 3072 x 3072 f32 matrix). */
#define NNX_AOT_TRANSPOSE(T)                                                   \
  static void transpose_##T(const void *in, void *out, int64_t rows,           \
                            int64_t cols) {                                    \
    const T *src = (const T *)in;                                              \
    T *dst = (T *)out;                                                         \
    for (int64_t i0 = 0; i0 < rows; i0 += 64)                                  \
      for (int64_t j0 = 0; j0 < cols; j0 += 64) {                              \
        int64_t ie = i0 + 64 < rows ? i0 + 64 : rows;                          \
        int64_t je = j0 + 64 < cols ? j0 + 64 : cols;                          \
        for (int64_t j = j0; j < je; ++j)                                      \
          for (int64_t i = i0; i < ie; ++i)                                    \
            dst[j * rows + i] = src[i * cols + j];                             \
      }                                                                        \
  }
NNX_AOT_TRANSPOSE(uint8_t)
NNX_AOT_TRANSPOSE(uint16_t)
NNX_AOT_TRANSPOSE(uint32_t)
NNX_AOT_TRANSPOSE(uint64_t)
#undef NNX_AOT_TRANSPOSE

/* A transpose of `rows` x `cols` elements of `es` bytes (1, 2, 4 or 8);
 * 0 for another size. */
static int transpose(const void *in, void *out, int64_t rows, int64_t cols,
                     size_t es) {
  switch (es) {
  case 1:
    transpose_uint8_t(in, out, rows, cols);
    return 1;
  case 2:
    transpose_uint16_t(in, out, rows, cols);
    return 1;
  case 4:
    transpose_uint32_t(in, out, rows, cols);
    return 1;
  case 8:
    transpose_uint64_t(in, out, rows, cols);
    return 1;
  }
  return 0;
}

/* `in` (row-major, shape `view`) permuted into `out`: out dim i is in dim
 * perm[i], as linalg.transpose reads it. A transpose of two dims (keeping
 * a last dim of up to 8 bytes together: the bf16 kernels' N x K/2 x 2 ->
 * K/2 x N x 2) goes by blocks, any other permutation element by element. */
static void permute(const unsigned char *in, unsigned char *out, int32_t rank,
                    const int64_t *view, const int64_t *perm, size_t es) {
  if (rank == 2 && perm[0] == 1 && transpose(in, out, view[0], view[1], es))
    return;
  if (rank == 3 && perm[0] == 1 && perm[1] == 0 && perm[2] == 2 &&
      transpose(in, out, view[0], view[1], es * (size_t)view[2]))
    return;
  int64_t in_strides[NNX_AOT_MAX_RANK], strides[NNX_AOT_MAX_RANK],
      shape[NNX_AOT_MAX_RANK], index[NNX_AOT_MAX_RANK] = {0};
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    in_strides[i] = stride;
    stride *= view[i];
  }
  int64_t total = stride;
  for (int32_t i = 0; i < rank; ++i) {
    shape[i] = view[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  int64_t from = 0;
  for (int64_t k = 0; k < total; ++k) {
    memcpy(out + (size_t)k * es, in + (size_t)from * es, es);
    int32_t axis = rank - 1;
    while (axis >= 0) {
      from += strides[axis];
      if (++index[axis] < shape[axis])
        break;
      from -= strides[axis] * shape[axis];
      index[axis--] = 0;
    }
  }
}

/* The stored bytes of parameter `i` in the mapped file, checked against
 * the parameter; NULL on an error. */
static const unsigned char *find_stored(nnx_aot_model *m, int32_t i,
                                        const char *path) {
  const nnx_aot_parameter *p = &m->d->parameters[i];
  const nnx_aot_file_tensor *t = nnx_aot_find_tensor(&m->file, p->key);
  char a[256], b[256];
  if (!t) {
    fail(m, NNX_AOT_ERROR_WEIGHTS, "%s: no tensor '%s' (parameter '%s', %s)",
         path, p->key, p->name, p->type);
    return NULL;
  }
  if (strcmp(t->dtype, safetensors_name(p->dtype)) != 0 || t->rank != p->rank ||
      memcmp(t->shape, p->shape, sizeof(int64_t) * (size_t)p->rank) != 0) {
    fail(m, NNX_AOT_ERROR_WEIGHTS,
         "%s: tensor '%s' is %s of shape %s, parameter '%s' is %s of shape %s",
         path, p->key, t->dtype, format_shape(a, sizeof(a), t->rank, t->shape),
         p->name, safetensors_name(p->dtype),
         format_shape(b, sizeof(b), p->rank, p->shape));
    return NULL;
  }
  size_t es = dtype_size(p->dtype);
  uint64_t bytes = (uint64_t)element_count(p->rank, p->shape, es) * es;
  if (t->end > m->file.data_size || t->end - t->begin != bytes) {
    fail(m, NNX_AOT_ERROR_WEIGHTS,
         "%s: tensor '%s': its data_offsets [%llu, %llu) do not hold its "
         "%llu bytes inside the file's %llu-byte data region",
         path, p->key, (unsigned long long)t->begin, (unsigned long long)t->end,
         (unsigned long long)bytes, (unsigned long long)m->file.data_size);
    return NULL;
  }
  return m->file.data + t->begin;
}

/* Parameter `i`, whose bytes as stored are at `stored`, as the code reads
 * it: in its layout (a copy, permuted once; as stored, the bytes
 * themselves), then in the device's memory where the code runs on one. */
static nnx_aot_status place_parameter(nnx_aot_model *m, int32_t i,
                                      const unsigned char *stored) {
  const nnx_aot_parameter *p = &m->d->parameters[i];
  size_t es = dtype_size(p->dtype);
  uint64_t bytes = (uint64_t)element_count(p->rank, p->shape, es) * es;
  int32_t rank = p->view_rank ? p->view_rank : p->rank;
  for (int32_t d = 0; d < rank; ++d)
    m->param_shape[i][d] = p->view_rank ? p->view[p->perm[d]] : p->shape[d];
  m->param_data[i] = stored;
  if (p->view_rank) {
    void *copy = nnx_aot_aligned_alloc(bytes ? bytes : 1);
    if (!copy)
      return fail(m, NNX_AOT_ERROR_MEMORY,
                  "cannot allocate %llu bytes for parameter '%s'",
                  (unsigned long long)bytes, p->name);
    m->param_data[i] = copy;
    m->param_owned[i] = copy;
    if (bytes)
      permute(stored, copy, p->view_rank, p->view, p->perm, es);
  }
  const nnx_aot_device *device = m->d->device;
  if (!device || !device->upload)
    return NNX_AOT_OK;
  char why[1024] = "";
  m->param_device[i] =
      device->upload(m->param_data[i], bytes, why, sizeof(why));
  if (!m->param_device[i])
    return fail(m, NNX_AOT_ERROR_MEMORY, "parameter '%s' (%s): %s", p->name,
                p->type, why);
  /* The code reads the device's copy only. */
  free(m->param_owned[i]);
  m->param_owned[i] = NULL;
  m->param_data[i] = m->param_device[i];
  return NNX_AOT_OK;
}

/* Whether this CPU has the instruction set `name` (one of nnx-compile's
 * checked features; another name is taken as present). NNX_AOT_CPU_FEATURES,
 * when set, is the list to assume instead (to see what a program does on
 * another machine). */
static int cpu_has(const char *name, size_t length) {
  const char *assumed = getenv("NNX_AOT_CPU_FEATURES");
  if (assumed) {
    for (const char *p = assumed; *p;) {
      size_t n = strcspn(p, ",");
      if (n == length && !strncmp(p, name, length))
        return 1;
      p += n + (p[n] == ',');
    }
    return 0;
  }
#define NNX_AOT_CHECK(feature)                                                 \
  if (length == sizeof(feature) - 1 && !strncmp(name, feature, length))        \
    return __builtin_cpu_supports(feature) != 0;
  __builtin_cpu_init();
  NNX_AOT_CHECK("sse4.2")
  NNX_AOT_CHECK("avx")
  NNX_AOT_CHECK("avx2")
  NNX_AOT_CHECK("fma")
  NNX_AOT_CHECK("avx512f")
  NNX_AOT_CHECK("avx512bw")
  NNX_AOT_CHECK("avx512dq")
  NNX_AOT_CHECK("avx512vl")
  NNX_AOT_CHECK("avx512bf16")
#undef NNX_AOT_CHECK
  return 1;
}

/* The first instruction set of the descriptor's this CPU lacks. */
static nnx_aot_status check_cpu(nnx_aot_model *m) {
  const char *features = m->d->cpu_features ? m->d->cpu_features : "";
  for (const char *p = features; *p;) {
    size_t n = strcspn(p, ",");
    if (n && !cpu_has(p, n))
      return fail(m, NNX_AOT_ERROR_CPU,
                  "model '%s' was compiled for a CPU with %.*s, which this "
                  "one lacks: compile it on this machine, or with "
                  "nnx-compile --pipeline-options max-isa=<what this CPU "
                  "has> (avx2, sse4.2)",
                  m->d->model, (int)n, p);
    p += n + (p[n] == ',');
  }
  return NNX_AOT_OK;
}

/* The weights of `weights` (NULL: the object's own) mapped into the model;
 * their name in errors in `*source`. */
static nnx_aot_status open_weights(nnx_aot_model *m, const char *weights,
                                   const char **source) {
  const nnx_aot_descriptor *d = m->d;
  *source = weights;
  if (weights)
    return nnx_aot_open_file(weights, &m->file, m->error, sizeof(m->error));
  if (!d->embedded_weights)
    return fail(m, NNX_AOT_ERROR_ARGUMENT,
                "model '%s' has %d parameters: give a safetensors file "
                "(none is linked into the object: nnx-compile "
                "--embed-weights)",
                d->model, d->num_parameters);
  *source = "the weights linked into the object";
  return nnx_aot_read_image(*source, d->embedded_weights,
                            d->embedded_weights_size, &m->file, m->error,
                            sizeof(m->error));
}

/* Binds every parameter: to the caller's bytes (m->stored), else to the
 * tensors of `weights`. */
static nnx_aot_status load(nnx_aot_model *m, const char *weights) {
  const nnx_aot_descriptor *descriptor = m->d;
  nnx_aot_status status = check_cpu(m);
  if (status != NNX_AOT_OK)
    return status;
  int32_t n = descriptor->num_parameters;
  m->param_data = calloc((size_t)n + 1, sizeof(void *));
  m->param_owned = calloc((size_t)n + 1, sizeof(void *));
  m->param_device = calloc((size_t)n + 1, sizeof(void *));
  m->param_shape = calloc((size_t)n + 1, sizeof(*m->param_shape));
  if (!m->param_data || !m->param_shape || !m->param_owned || !m->param_device)
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate the model");
  const char *source = NULL;
  if (n > 0 && !m->stored &&
      (status = open_weights(m, weights, &source)) != NNX_AOT_OK)
    return status;
  for (int32_t i = 0; i < n; ++i) {
    const unsigned char *stored = m->stored
                                      ? (const unsigned char *)m->stored[i]
                                      : find_stored(m, i, source);
    if (!stored && !m->stored)
      return NNX_AOT_ERROR_WEIGHTS;
    if ((status = place_parameter(m, i, stored)) != NNX_AOT_OK)
      return status;
  }
  if (descriptor->init)
    descriptor->init();
  m->initialized = 1;
  return NNX_AOT_OK;
}

/* A model of `descriptor`, its parameters bound to `stored` (NULL: to the
 * tensors of `weights`). */
static nnx_aot_status create(const nnx_aot_descriptor *descriptor,
                             const void *const *stored, const char *weights,
                             nnx_aot_model **model) {
  if (!model || !descriptor)
    return NNX_AOT_ERROR_ARGUMENT;
  nnx_aot_model *m = calloc(1, sizeof(nnx_aot_model));
  *model = m;
  if (!m)
    return NNX_AOT_ERROR_MEMORY;
  m->d = descriptor;
  m->stored = stored;
  m->error_argument = -1;
  m->load_status = load(m, weights);
  m->stored = NULL; /* read by the load only: the caller's list may go */
  memcpy(m->load_error, m->error, sizeof(m->error));
  return m->load_status;
}

nnx_aot_status nnx_aot_load(const nnx_aot_descriptor *descriptor,
                            const char *weights, nnx_aot_model **model) {
  return create(descriptor, NULL, weights, model);
}

nnx_aot_status nnx_aot_bind(const nnx_aot_descriptor *descriptor,
                            const void *const *stored, nnx_aot_model **model) {
  static const void *const none[1] = {NULL};
  if (descriptor && descriptor->num_parameters > 0 && !stored) {
    if (model)
      *model = NULL;
    return NNX_AOT_ERROR_ARGUMENT;
  }
  return create(descriptor, stored ? stored : none, NULL, model);
}

/* A call on a model whose load failed: its load's status, and an error that
 * repeats why. */
static nnx_aot_status check_loaded(nnx_aot_model *m) {
  if (m->initialized)
    return NNX_AOT_OK;
  return fail(m, m->load_status,
              "model '%s' did not load, so it cannot run (free it and load "
              "it again): %s",
              m->d->model, m->load_error);
}

const char *nnx_aot_error(const nnx_aot_model *model) {
  return model ? model->error : "no model (out of memory)";
}

int32_t nnx_aot_error_argument(const nnx_aot_model *model) {
  return model ? model->error_argument : -1;
}

void nnx_aot_free(nnx_aot_model *m) {
  if (!m)
    return;
  const nnx_aot_descriptor *d = m->d;
  if (m->initialized && d->fini)
    d->fini();
  for (int32_t i = 0; m->param_owned && i < d->num_parameters; ++i)
    free(m->param_owned[i]);
  for (int32_t i = 0; m->param_device && i < d->num_parameters; ++i)
    if (m->param_device[i] && d->device->release)
      d->device->release(m->param_device[i]);
  free(m->param_data);
  free(m->param_shape);
  free(m->param_owned);
  free(m->param_device);
  free_storage(&m->call, d->num_inputs + d->num_write_probes);
  nnx_aot_close_file(&m->file);
  free(m);
}

/* omp_set_num_threads, where the program links libomp. */
extern void omp_set_num_threads(int) __attribute__((weak));

void nnx_aot_set_threads(int threads) {
  if (!omp_set_num_threads)
    return;
  if (threads <= 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    threads = online > 0 ? (int)online : 1;
  }
  omp_set_num_threads(threads);
}

/*===----------------------------------------------------------------------===
 * Calling
 *===----------------------------------------------------------------------===*/

/* Grows `*array` (of `size`-byte elements, `*capacity` of them) to hold
 * `needed`; 0 when out of memory. */
static int grow(void *array, size_t *capacity, size_t needed, size_t size) {
  if (needed <= *capacity)
    return 1;
  size_t wanted = *capacity ? 2 * *capacity : 16;
  while (wanted < needed)
    wanted *= 2;
  void *grown = realloc(*(void **)array, wanted * size);
  if (!grown)
    return 0;
  *(void **)array = grown;
  *capacity = wanted;
  return 1;
}

/* Starts the arguments of a call. */
static void clear_args(call_storage *c) {
  c->count = 0;
  c->num_words = 0;
}

/* Appends the descriptor {data, data, 0, shape, row-major strides}. */
static int push_arg(call_storage *c, const void *data, int32_t rank,
                    const int64_t *shape) {
  size_t n = 3 + 2 * (size_t)rank, start = c->num_words;
  if (!grow(&c->words, &c->words_capacity, start + n, sizeof(int64_t)) ||
      !grow(&c->starts, &c->starts_capacity, c->count + 1, sizeof(size_t)))
    return 0;
  int64_t *words = &c->words[start];
  memcpy(&words[0], &data, sizeof(void *));
  memcpy(&words[1], &data, sizeof(void *));
  words[2] = 0;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    words[3 + i] = shape[i];
    words[3 + rank + i] = stride;
    stride *= shape[i];
  }
  c->starts[c->count++] = start;
  c->num_words += n;
  return 1;
}

/* Packs the arguments: packed[i] points to a pointer to descriptor i;
 * NULL when out of memory. */
static void **pack(call_storage *c) {
  if (!grow(&c->descriptors, &c->descriptors_capacity, c->count + 1,
            sizeof(void *)) ||
      !grow(&c->packed, &c->packed_capacity, c->count + 1, sizeof(void *)))
    return NULL;
  for (size_t i = 0; i < c->count; ++i) {
    c->descriptors[i] = &c->words[c->starts[i]];
    c->packed[i] = &c->descriptors[i];
  }
  return c->packed;
}

/* `count` zeroed sizes; NULL when out of memory. */
static int64_t *scratch_sizes(call_storage *c, int64_t count) {
  if (!grow(&c->sizes, &c->sizes_capacity, (size_t)count + 1, sizeof(int64_t)))
    return NULL;
  memset(c->sizes, 0, ((size_t)count + 1) * sizeof(int64_t));
  return c->sizes;
}

static void free_storage(call_storage *c, int32_t num_arguments) {
  for (int32_t i = 0; c->own_copies && i < num_arguments; ++i)
    free(c->own_copies[i]);
  free(c->words);
  free(c->starts);
  free(c->descriptors);
  free(c->packed);
  free(c->sizes);
  free(c->copies);
  free(c->own_copies);
  free(c->copy_capacity);
  free(c->pairs);
  free(c->write_dims);
  memset(c, 0, sizeof(*c));
}

/* The spec of argument `i`: an input, then a write probe. */
static const nnx_aot_tensor *argument_spec(const nnx_aot_descriptor *d,
                                           int32_t i) {
  return i < d->num_inputs ? &d->inputs[i]
                           : &d->write_probes[i - d->num_inputs];
}

/* How errors name `t`: a plain argument or result by its name ("input 0"),
 * a probe (`probe` its kind: "write", "read") as "write probe 'name'". */
static const char *label_of(const nnx_aot_tensor *t, const char *probe,
                            char *out, size_t size) {
  if (probe)
    snprintf(out, size, "%s probe '%s'", probe, t->name);
  else
    snprintf(out, size, "%s", t->name);
  return out;
}

static const char *argument_label(const nnx_aot_descriptor *d, int32_t i,
                                  char *out, size_t size) {
  return label_of(argument_spec(d, i), i < d->num_inputs ? NULL : "write", out,
                  size);
}

/* The result `r`: an output, then a read probe. */
static const nnx_aot_tensor *result_spec(const nnx_aot_descriptor *d,
                                         int32_t r) {
  return r < d->num_outputs ? &d->outputs[r]
                            : &d->read_probes[r - d->num_outputs];
}

static const char *result_label(const nnx_aot_descriptor *d, int32_t r,
                                char *out, size_t size) {
  return label_of(result_spec(d, r), r < d->num_outputs ? NULL : "read", out,
                  size);
}

/* Ends the error with what the caller gave for argument `i` ("; got
 * float32 array of shape (2, 5)") and blames it. */
static nnx_aot_status blame(nnx_aot_model *m, nnx_aot_status status, int32_t i,
                            const int64_t *const *dims) {
  const nnx_aot_tensor *t = argument_spec(m->d, i);
  char shape[256];
  size_t n = strlen(m->error);
  if (n < sizeof(m->error))
    snprintf(m->error + n, sizeof(m->error) - n, "; got %s array of shape %s",
             numpy_name(t->dtype),
             format_shape(shape, sizeof(shape), t->rank, dims[i]));
  m->error_argument = i;
  return status;
}

/* Calls `fn(packed)`, then asks the device (where the code runs on one)
 * whether it failed. */
static nnx_aot_status guarded(nnx_aot_model *m, nnx_aot_packed_fn fn,
                              void **packed) {
  nnx_aot_status status =
      nnx_aot_guarded_call(fn, packed, m->error, sizeof(m->error));
  const nnx_aot_device *device = m->d->device;
  char why[1024] = "";
  if (status == NNX_AOT_OK && device && device->check &&
      device->check(why, sizeof(why)))
    return fail(m, NNX_AOT_ERROR_RUNTIME, "the device: %s", why);
  return status;
}

/* Pushes the inputs, the parameters and (with `writes`) the write probes,
 * with the arrays `data` (NULL: the caller's). */
static int push_leading(nnx_aot_model *m, call_storage *c,
                        const void *const *arguments,
                        const int64_t *const *dims, int writes) {
  const nnx_aot_descriptor *d = m->d;
  for (int32_t i = 0; i < d->num_inputs; ++i)
    if (!push_arg(c, arguments[i], d->inputs[i].rank, dims[i]))
      return 0;
  for (int32_t i = 0; i < d->num_parameters; ++i) {
    const nnx_aot_parameter *p = &d->parameters[i];
    if (!push_arg(c, m->param_data[i], p->view_rank ? p->view_rank : p->rank,
                  m->param_shape[i]))
      return 0;
  }
  for (int32_t i = 0; writes && i < d->num_write_probes; ++i)
    if (!push_arg(c, arguments[d->num_inputs + i], d->write_probes[i].rank,
                  dims[d->num_inputs + i]))
      return 0;
  return 1;
}

/* Calls the shape function `fn` on the arguments (with the write probes
 * when `writes`), into `out` (`count` sizes). */
static nnx_aot_status
call_shape_function(nnx_aot_model *m, nnx_aot_packed_fn fn,
                    const void *const *arguments, const int64_t *const *dims,
                    int writes, int64_t *out, int64_t count) {
  call_storage *c = &m->call;
  clear_args(c);
  void **packed = NULL;
  if (push_leading(m, c, arguments, dims, writes) &&
      push_arg(c, out, 1, &count))
    packed = pack(c);
  if (!packed)
    return fail(m, NNX_AOT_ERROR_MEMORY,
                "cannot allocate the arguments of a call");
  return guarded(m, fn, packed);
}

/* Pointers, static dimensions and sizes of the first `n` arguments. */
static nnx_aot_status check_arguments(nnx_aot_model *m, int32_t n,
                                      const void *const *arguments,
                                      const int64_t *const *dims) {
  const nnx_aot_descriptor *d = m->d;
  char label[256];
  if (n > 0 && (!arguments || !dims))
    return fail(m, NNX_AOT_ERROR_ARGUMENT,
                "the forward takes %d arrays: the argument list is null", n);
  for (int32_t i = 0; i < n; ++i) {
    const nnx_aot_tensor *t = argument_spec(d, i);
    argument_label(d, i, label, sizeof(label));
    if (t->rank > 0 && !dims[i])
      return fail(m, NNX_AOT_ERROR_ARGUMENT, "%s: its dimensions are null",
                  label);
    for (int32_t k = 0; k < t->rank; ++k) {
      if (dims[i][k] < 0)
        return blame(m,
                     fail(m, NNX_AOT_ERROR_ARGUMENT,
                          "%s: dimension %d is %lld, which is negative", label,
                          k, (long long)dims[i][k]),
                     i, dims);
      if (t->shape[k] >= 0 && dims[i][k] != t->shape[k])
        return blame(m,
                     fail(m, NNX_AOT_ERROR_ARGUMENT,
                          "%s: dimension %d is %lld, expected %lld (%s)", label,
                          k, (long long)dims[i][k], (long long)t->shape[k],
                          t->type),
                     i, dims);
    }
    int64_t count =
        element_count(t->rank, t->rank ? dims[i] : NULL, dtype_size(t->dtype));
    if (count < 0)
      return blame(m,
                   fail(m, NNX_AOT_ERROR_ARGUMENT,
                        "%s: its size in bytes overflows 64 bits", label),
                   i, dims);
    if (count > 0 && !arguments[i])
      return fail(m, NNX_AOT_ERROR_ARGUMENT, "%s: its data pointer is null",
                  label);
  }
  return NNX_AOT_OK;
}

/* The shape each write probe must have in a call on these inputs, at
 * `c->write_dims` (NNX_AOT_MAX_RANK per probe): its type's, with the
 * dimensions @forward_write_shapes measures in this run (a probe lowered by
 * hand keeps its dynamic ones: negative). */
static nnx_aot_status compute_write_shapes(nnx_aot_model *m,
                                           const void *const *arguments,
                                           const int64_t *const *dims) {
  const nnx_aot_descriptor *d = m->d;
  call_storage *c = &m->call;
  size_t n = (size_t)d->num_write_probes + 1;
  if (!c->write_dims &&
      !(c->write_dims = calloc(n * NNX_AOT_MAX_RANK, sizeof(int64_t))))
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate the write shapes");
  for (int32_t w = 0; w < d->num_write_probes; ++w)
    memcpy(&c->write_dims[w * NNX_AOT_MAX_RANK], d->write_probes[w].shape,
           sizeof(int64_t) * (size_t)d->write_probes[w].rank);
  if (!d->write_shapes || d->num_measured_write_probes == 0)
    return NNX_AOT_OK;
  int64_t count = 0;
  for (int32_t j = 0; j < d->num_measured_write_probes; ++j) {
    const nnx_aot_tensor *t = &d->write_probes[d->measured_write_probes[j]];
    for (int32_t k = 0; k < t->rank; ++k)
      count += t->shape[k] < 0;
  }
  int64_t *sizes = scratch_sizes(c, count);
  if (!sizes)
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate the write shapes");
  nnx_aot_status status =
      call_shape_function(m, d->write_shapes, arguments, dims, 0, sizes, count);
  const int64_t *next = sizes;
  for (int32_t j = 0; status == NNX_AOT_OK && j < d->num_measured_write_probes;
       ++j) {
    int32_t w = d->measured_write_probes[j];
    int64_t *shape = &c->write_dims[w * NNX_AOT_MAX_RANK];
    for (int32_t k = 0; k < d->write_probes[w].rank; ++k)
      if (shape[k] < 0 && (shape[k] = *next++) < 0)
        status = fail(m, NNX_AOT_ERROR_RUNTIME,
                      "@forward_write_shapes computed a negative dimension");
  }
  return status;
}

/* Each write probe against the shape this run computes for it. */
static nnx_aot_status check_write_shapes(nnx_aot_model *m,
                                         const void *const *arguments,
                                         const int64_t *const *dims) {
  const nnx_aot_descriptor *d = m->d;
  nnx_aot_status status = compute_write_shapes(m, arguments, dims);
  char shape[256];
  for (int32_t w = 0; status == NNX_AOT_OK && w < d->num_write_probes; ++w) {
    const nnx_aot_tensor *t = &d->write_probes[w];
    const int64_t *expected = &m->call.write_dims[w * NNX_AOT_MAX_RANK];
    const int64_t *given = dims[d->num_inputs + w];
    for (int32_t k = 0; status == NNX_AOT_OK && k < t->rank; ++k)
      if (expected[k] >= 0 && given[k] != expected[k])
        status = blame(
            m,
            fail(m, NNX_AOT_ERROR_ARGUMENT,
                 "write probe '%s': dimension %d is %lld, expected %lld (this "
                 "run computes %s as %s)",
                 t->name, k, (long long)given[k], (long long)expected[k],
                 t->type,
                 format_shape(shape, sizeof(shape), t->rank, expected)),
            d->num_inputs + w, dims);
  }
  return status;
}

/* Where the graph makes two arguments' sizes meet, they agree. */
static nnx_aot_status check_shapes_agree(nnx_aot_model *m,
                                         const void *const *arguments,
                                         const int64_t *const *dims) {
  const nnx_aot_descriptor *d = m->d;
  if (!d->shape_checks_fn || d->num_shape_checks == 0)
    return NNX_AOT_OK;
  int64_t count = 2 * (int64_t)d->num_shape_checks;
  int64_t *sizes = scratch_sizes(&m->call, count);
  if (!sizes)
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate the shape checks");
  nnx_aot_status status = call_shape_function(m, d->shape_checks_fn, arguments,
                                              dims, 1, sizes, count);
  for (int32_t i = 0; status == NNX_AOT_OK && i < d->num_shape_checks; ++i) {
    const nnx_aot_shape_check *check = &d->shape_checks[i];
    int64_t expected = sizes[2 * i], given = sizes[2 * i + 1];
    if (expected == given)
      continue;
    if (check->swapped) {
      int64_t t = expected;
      expected = given;
      given = t;
    }
    status = fail(m, NNX_AOT_ERROR_ARGUMENT, check->format, (long long)given,
                  (long long)expected);
    if (check->blamed >= 0 &&
        check->blamed < d->num_inputs + d->num_write_probes)
      status = blame(m, status, check->blamed, dims);
  }
  return status;
}

/* Checks the arguments, then writes every result's shape. */
static nnx_aot_status compute_result_shapes(nnx_aot_model *m,
                                            const void *const *arguments,
                                            const int64_t *const *dims,
                                            int64_t *const *result_dims) {
  const nnx_aot_descriptor *d = m->d;
  nnx_aot_status status =
      check_arguments(m, d->num_inputs + d->num_write_probes, arguments, dims);
  if (status == NNX_AOT_OK)
    status = check_write_shapes(m, arguments, dims);
  if (status == NNX_AOT_OK)
    status = check_shapes_agree(m, arguments, dims);
  if (status != NNX_AOT_OK)
    return status;
  int32_t n = d->num_outputs + d->num_read_probes;
  int64_t count = 0;
  char label[256], shape[256];
  if (n > 0 && !result_dims)
    return fail(m, NNX_AOT_ERROR_ARGUMENT,
                "the forward has %d results: the list of their dimensions is "
                "null",
                n);
  for (int32_t r = 0; r < n; ++r) {
    const nnx_aot_tensor *t = result_spec(d, r);
    if (t->rank > 0 && !result_dims[r])
      return fail(m, NNX_AOT_ERROR_ARGUMENT,
                  "%s: the array for its dimensions is null",
                  result_label(d, r, label, sizeof(label)));
    for (int32_t k = 0; k < t->rank; ++k)
      count += t->shape[k] < 0;
  }
  int64_t *sizes = scratch_sizes(&m->call, count);
  if (!sizes)
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate the result shapes");
  if (count > 0)
    status = call_shape_function(m, d->result_shapes, arguments, dims, 1, sizes,
                                 count);
  const int64_t *next = sizes;
  for (int32_t r = 0; status == NNX_AOT_OK && r < n; ++r) {
    const nnx_aot_tensor *t = result_spec(d, r);
    int negative = 0;
    for (int32_t k = 0; k < t->rank; ++k) {
      result_dims[r][k] = t->shape[k] >= 0 ? t->shape[k] : *next++;
      negative |= result_dims[r][k] < 0;
    }
    if (element_count(t->rank, result_dims[r], dtype_size(t->dtype)) < 0)
      status = fail(m, NNX_AOT_ERROR_RUNTIME,
                    "%s: this run computes the shape %s for %s, %s",
                    result_label(d, r, label, sizeof(label)),
                    format_shape(shape, sizeof(shape), t->rank, result_dims[r]),
                    t->type,
                    negative ? "which has a negative dimension"
                             : "whose size in bytes overflows 64 bits");
  }
  return status;
}

/* The checks every entry point makes first. */
static nnx_aot_status begin_call(nnx_aot_model *m) {
  if (!m)
    return NNX_AOT_ERROR_ARGUMENT;
  nnx_aot_status loaded = check_loaded(m);
  if (loaded != NNX_AOT_OK)
    return loaded;
  m->error[0] = '\0';
  m->error_argument = -1;
  return NNX_AOT_OK;
}

nnx_aot_status nnx_aot_write_shapes(nnx_aot_model *model,
                                    const void *const *inputs,
                                    const int64_t *const *dims,
                                    int64_t *const *write_dims) {
  nnx_aot_status status = begin_call(model);
  if (status != NNX_AOT_OK)
    return status;
  const nnx_aot_descriptor *d = model->d;
  status = check_arguments(model, d->num_inputs, inputs, dims);
  for (int32_t w = 0; status == NNX_AOT_OK && w < d->num_write_probes; ++w)
    if (!write_dims || (d->write_probes[w].rank > 0 && !write_dims[w]))
      status = fail(model, NNX_AOT_ERROR_ARGUMENT,
                    "write probe '%s': the array for its dimensions is null",
                    d->write_probes[w].name);
  if (status == NNX_AOT_OK)
    status = compute_write_shapes(model, inputs, dims);
  for (int32_t w = 0; status == NNX_AOT_OK && w < d->num_write_probes; ++w)
    memcpy(write_dims[w], &model->call.write_dims[w * NNX_AOT_MAX_RANK],
           sizeof(int64_t) * (size_t)d->write_probes[w].rank);
  return status;
}

nnx_aot_status nnx_aot_result_shapes(nnx_aot_model *model,
                                     const void *const *arguments,
                                     const int64_t *const *dims,
                                     int64_t *const *result_dims) {
  nnx_aot_status status = begin_call(model);
  if (status != NNX_AOT_OK)
    return status;
  return compute_result_shapes(model, arguments, dims, result_dims);
}

/* An error for the first index check whose pair reports a bad id. */
static nnx_aot_status report_bad_indices(nnx_aot_model *m, const int64_t *pairs,
                                         const int64_t *const *dims) {
  const nnx_aot_descriptor *d = m->d;
  for (int32_t i = 0; i < d->num_index_checks; ++i) {
    if (pairs[2 * i] == 0)
      continue;
    const nnx_aot_index_check *check = &d->index_checks[i];
    int64_t position = INT64_MAX - pairs[2 * i], id = pairs[2 * i + 1];
    char where[512];
    if (check->input >= 0 && check->input < d->num_inputs) {
      /* The position as an index into the input. */
      const nnx_aot_tensor *t = &d->inputs[check->input];
      int64_t index[NNX_AOT_MAX_RANK];
      for (int32_t k = t->rank - 1; k >= 0; --k) {
        int64_t size = dims[check->input][k];
        index[k] = size ? position % size : 0;
        position = size ? position / size : 0;
      }
      char at[256];
      format_shape(at, sizeof(at), t->rank, index);
      if (t->rank == 1) /* "(3)", an index, not a shape's "(3,)" */
        memcpy(&at[strlen(at) - 2], ")", 2);
      snprintf(where, sizeof(where), "at %s of input %lld", at,
               (long long)check->input);
    } else {
      snprintf(where, sizeof(where), "at row-major position %lld of its ids",
               (long long)position);
    }
    return fail(m, NNX_AOT_ERROR_RUNTIME,
                "'%s' at '%s': id %lld %s is out of range [0, %lld) (the "
                "table has %lld rows)",
                check->op, check->layer, (long long)id, where,
                (long long)check->bound, (long long)check->bound);
  }
  return NNX_AOT_OK;
}

/* The call storage's arrays with a slot per argument, and the index checks'
 * pairs, made on the first call; 0 when out of memory. */
static int ensure_slots(nnx_aot_model *m) {
  call_storage *c = &m->call;
  const nnx_aot_descriptor *d = m->d;
  size_t na = (size_t)d->num_inputs + d->num_write_probes + 1;
  if (!c->copies)
    c->copies = calloc(na, sizeof(void *));
  if (!c->own_copies)
    c->own_copies = calloc(na, sizeof(void *));
  if (!c->copy_capacity)
    c->copy_capacity = calloc(na, sizeof(size_t));
  if (!c->pairs)
    c->pairs = calloc(2 * (size_t)d->num_index_checks + 1, sizeof(int64_t));
  return c->copies && c->own_copies && c->copy_capacity && c->pairs;
}

/* The 64-byte aligned buffer of a slot, of at least `bytes` (replaced when
 * smaller); NULL when out of memory. */
static void *slot(void **own, size_t *capacity, size_t bytes) {
  if (*own && bytes <= *capacity)
    return *own;
  void *fresh = nnx_aot_aligned_alloc(bytes ? bytes : 1);
  if (!fresh)
    return NULL;
  free(*own);
  *own = fresh;
  *capacity = bytes;
  return fresh;
}

/* The arguments of a call: a copy of each (the code may write its
 * arguments), except those updated in place, which are the caller's; and
 * the index checks' pairs, zeroed. */
static nnx_aot_status copy_arguments(nnx_aot_model *m,
                                     const void *const *arguments,
                                     const int64_t *const *dims) {
  const nnx_aot_descriptor *d = m->d;
  call_storage *c = &m->call;
  int32_t na = d->num_inputs + d->num_write_probes;
  if (!ensure_slots(m))
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate a call");
  memset(c->pairs, 0, 2 * (size_t)d->num_index_checks * sizeof(int64_t));
  char label[256];
  for (int32_t i = 0; i < na; ++i) {
    const nnx_aot_tensor *t = argument_spec(d, i);
    size_t bytes = tensor_bytes(t, dims[i]);
    if (t->updated_in_place) {
      c->copies[i] = (void *)(uintptr_t)arguments[i]; /* written */
      continue;
    }
    if (!(c->copies[i] = slot(&c->own_copies[i], &c->copy_capacity[i], bytes)))
      return fail(m, NNX_AOT_ERROR_MEMORY,
                  "cannot allocate %zu bytes for a copy of %s", bytes,
                  argument_label(d, i, label, sizeof(label)));
    if (bytes)
      memcpy(c->copies[i], arguments[i], bytes);
  }
  return NNX_AOT_OK;
}

/* Runs the forward on the copies copy_arguments made, into `results`. */
static nnx_aot_status call_forward(nnx_aot_model *m, const int64_t *const *dims,
                                   void *const *results,
                                   int64_t *const *result_dims) {
  const nnx_aot_descriptor *d = m->d;
  call_storage *c = &m->call;
  int64_t *pairs = c->pairs;
  clear_args(c);
  int ok = push_leading(m, c, (const void *const *)c->copies, dims, 1);
  for (int32_t r = 0; ok && r < d->num_outputs; ++r)
    ok = push_arg(c, results[r], d->outputs[r].rank, result_dims[r]);
  for (int32_t i = 0; ok && i < 2 * d->num_index_checks; ++i)
    ok = push_arg(c, &pairs[i], 0, NULL);
  for (int32_t r = 0; ok && r < d->num_read_probes; ++r)
    ok = push_arg(c, results[d->num_outputs + r], d->read_probes[r].rank,
                  result_dims[d->num_outputs + r]);
  void **packed = ok ? pack(c) : NULL;
  if (!packed)
    return fail(m, NNX_AOT_ERROR_MEMORY, "cannot allocate a call");
  nnx_aot_status status = guarded(m, d->forward, packed);
  if (status == NNX_AOT_OK)
    status = report_bad_indices(m, pairs, dims);
  return status;
}

/* Each result's buffer against the shape this run computes for it. */
static nnx_aot_status check_results(nnx_aot_model *m, void *const *results,
                                    const int64_t *capacities,
                                    int64_t *const *result_dims) {
  const nnx_aot_descriptor *d = m->d;
  char label[256], shape[256];
  int32_t n = d->num_outputs + d->num_read_probes;
  if (n > 0 && (!results || !capacities))
    return fail(m, NNX_AOT_ERROR_ARGUMENT,
                "the forward has %d results: the list of their buffers or of "
                "their capacities is null",
                n);
  for (int32_t r = 0; r < n; ++r) {
    const nnx_aot_tensor *t = result_spec(d, r);
    int64_t count =
        element_count(t->rank, result_dims[r], dtype_size(t->dtype));
    result_label(d, r, label, sizeof(label));
    if (count > capacities[r])
      return fail(m, NNX_AOT_ERROR_ARGUMENT,
                  "%s: this run's result has shape %s (%lld elements), its "
                  "buffer holds %lld",
                  label,
                  format_shape(shape, sizeof(shape), t->rank, result_dims[r]),
                  (long long)count, (long long)capacities[r]);
    if (count > 0 && !results[r])
      return fail(m, NNX_AOT_ERROR_ARGUMENT, "%s: its buffer is null", label);
  }
  return NNX_AOT_OK;
}

nnx_aot_status nnx_aot_run(nnx_aot_model *m, const void *const *arguments,
                           const int64_t *const *dims, void *const *results,
                           const int64_t *capacities,
                           int64_t *const *result_dims) {
  nnx_aot_status status = begin_call(m);
  if (status == NNX_AOT_OK)
    status = compute_result_shapes(m, arguments, dims, result_dims);
  if (status == NNX_AOT_OK)
    status = check_results(m, results, capacities, result_dims);
  if (status == NNX_AOT_OK)
    status = copy_arguments(m, arguments, dims);
  if (status == NNX_AOT_OK)
    status = call_forward(m, dims, results, result_dims);
  return status;
}
