/*===- nnx-aot/Runtime.h - the run time of ahead-of-time models -*- C -*-===*\
 *
 * What an object written by nnx-compile links against instead of MLIR and
 * LLVM (libnnx_aot_runtime.a, plain C and libm; libomp when the object was
 * compiled with parallel loops, nnx's default). A header nnx-compile writes
 * includes this one and declares the model's own functions (`mlp_load`,
 * `mlp_forward`, ...) on top of the generic ones below; use those.
 *
 * Every function returns an nnx_aot_status; on an error other than
 * NNX_AOT_ERROR_MEMORY at load, nnx_aot_error() says what failed and where
 * (the argument, the dimension, the tensor and the file), as nnx-run would.
 * Calls on one model run one at a time (its error message is the model's);
 * separate models may run at once.
 *
\*===----------------------------------------------------------------------===*/
#ifndef NNX_AOT_RUNTIME_H
#define NNX_AOT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nnx_aot_status {
  NNX_AOT_OK = 0,
  /* An argument the forward cannot take: a null pointer, a dimension that
   * is not the model's, two arrays whose sizes disagree, an output buffer
   * too small. Nothing ran. */
  NNX_AOT_ERROR_ARGUMENT = 1,
  /* The weights file: unreadable, not safetensors, or a parameter missing
   * or of another dtype or shape. */
  NNX_AOT_ERROR_WEIGHTS = 2,
  /* The system could not give the memory a call or the load needs. */
  NNX_AOT_ERROR_MEMORY = 3,
  /* A check inside the forward failed (an id outside its table). */
  NNX_AOT_ERROR_RUNTIME = 4,
  /* This CPU lacks an instruction set the code was compiled for (the
   * compiling machine's, less what --pipeline-options max-isa= capped). */
  NNX_AOT_ERROR_CPU = 5
} nnx_aot_status;

/* Element types, as nnx's runtime names them (safetensors: F32, ...). */
typedef enum nnx_aot_dtype {
  NNX_AOT_F16 = 0,
  NNX_AOT_BF16 = 1,
  NNX_AOT_F32 = 2,
  NNX_AOT_F64 = 3,
  NNX_AOT_I32 = 4,
  NNX_AOT_I64 = 5,
  NNX_AOT_BOOL = 6
} nnx_aot_dtype;

/*===----------------------------------------------------------------------===
 * The tables a generated header holds (nnx-compile writes them; a program
 * does not).
 *===----------------------------------------------------------------------===*/

/* An argument or result of the forward. */
typedef struct nnx_aot_tensor {
  const char *name; /* "input 0", "output 0", or a probe's name */
  nnx_aot_dtype dtype;
  int32_t rank;
  const int64_t *shape; /* -1: dynamic */
  const char *type;     /* as MLIR prints it: "tensor<?x4xf32>" */
  /* An argument the forward updates in place (decode's KV caches): a call
   * writes the caller's array, not a copy. */
  int32_t updated_in_place;
} nnx_aot_tensor;

/* A parameter: bound from the weights file by `key` (dtype and shape as
 * stored), then viewed as `view` and permuted by `perm` (view_rank 0: read
 * as stored). */
typedef struct nnx_aot_parameter {
  const char *name;
  const char *key;
  nnx_aot_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  const char *type;
  int32_t view_rank;
  const int64_t *view;
  const int64_t *perm;
} nnx_aot_parameter;

/* An embedding's ids checked against its table at run time. */
typedef struct nnx_aot_index_check {
  const char *layer;
  const char *op;
  int64_t bound;
  int64_t input; /* the input the ids are, or -1 */
} nnx_aot_index_check;

/* Two sizes the forward assumes equal; `format` takes the given size, then
 * the expected one. */
typedef struct nnx_aot_shape_check {
  const char *format;
  int32_t swapped;
  /* The argument (an input, then a write probe) whose size is the given
   * one, or -1 (an operand or a parameter). */
  int32_t blamed;
} nnx_aot_shape_check;

typedef void (*nnx_aot_packed_fn)(void **);

/* Where the code keeps its parameters and reports its errors when it runs
 * on a device with its own memory (CUDA): the runtime places each
 * parameter there once, after its layout, and asks `check` after every
 * call of the code. A JIT fills it in; objects from nnx-compile run on the
 * host and have none. */
typedef struct nnx_aot_device {
  /* A copy of `size` bytes in the device's memory, or NULL with `error`
   * set. */
  void *(*upload)(const void *bytes, uint64_t size, char *error,
                  size_t error_size);
  void (*release)(void *device_bytes);
  /* Non-zero, with `error` set, when the device reported an error since
   * the last check (and clears it). */
  int (*check)(char *error, size_t error_size);
} nnx_aot_device;

/* Everything about one compiled forward. */
typedef struct nnx_aot_descriptor {
  const char *model;
  int32_t num_inputs;
  const nnx_aot_tensor *inputs;
  int32_t num_parameters;
  const nnx_aot_parameter *parameters;
  int32_t num_write_probes;
  const nnx_aot_tensor *write_probes;
  int32_t num_outputs;
  const nnx_aot_tensor *outputs;
  int32_t num_read_probes;
  const nnx_aot_tensor *read_probes;
  int32_t num_index_checks;
  const nnx_aot_index_check *index_checks;
  int32_t num_shape_checks;
  const nnx_aot_shape_check *shape_checks;
  int32_t num_measured_write_probes;
  const int32_t *measured_write_probes;
  nnx_aot_packed_fn forward;
  nnx_aot_packed_fn result_shapes;   /* NULL: every result is static */
  nnx_aot_packed_fn write_shapes;    /* NULL: none measured */
  nnx_aot_packed_fn shape_checks_fn; /* NULL: no check */
  void (*init)(void);                /* NULL: nothing to run (a JIT ran it) */
  void (*fini)(void);
  /* A safetensors image of the weights linked into the object
   * (nnx-compile --embed-weights); NULL: none. */
  const unsigned char *embedded_weights;
  uint64_t embedded_weights_size;
  /* The instruction sets the code may use, comma-separated ("avx2,fma");
   * checked at load. */
  const char *cpu_features;
  /* NULL: the code runs on the host. */
  const nnx_aot_device *device;
} nnx_aot_descriptor;

/*===----------------------------------------------------------------------===
 * The generic entry points (the generated header's functions call these).
 *===----------------------------------------------------------------------===*/

typedef struct nnx_aot_model nnx_aot_model;

/* Binds the weights of the safetensors file `weights` (mapped, never read
 * whole; a tensor the code reads in another layout is permuted once, here)
 * to the forward `descriptor` describes; `weights` NULL: the weights linked
 * into the object (nnx-compile --embed-weights). `*model` is set even on
 * an error (to a model that only reports it: nnx_aot_result_shapes and
 * nnx_aot_run on it return the load's status, and say why it did not
 * load), except for NNX_AOT_ERROR_MEMORY. */
nnx_aot_status nnx_aot_load(const nnx_aot_descriptor *descriptor,
                            const char *weights, nnx_aot_model **model);

/* Binds the parameters to `stored[i]`, parameter i's bytes as stored (its
 * dtype, row-major in its shape), which the caller keeps alive and
 * unchanged while the model lives: what a JIT does with the weights it
 * read; otherwise as nnx_aot_load (layouts, the device's memory). */
nnx_aot_status nnx_aot_bind(const nnx_aot_descriptor *descriptor,
                            const void *const *stored, nnx_aot_model **model);

/* The shape each write probe must have in a call on these inputs
 * (`dims[i]` the dimensions of input i), in `write_dims[w]`; nothing runs. */
nnx_aot_status nnx_aot_write_shapes(nnx_aot_model *model,
                                    const void *const *inputs,
                                    const int64_t *const *dims,
                                    int64_t *const *write_dims);

/* The shapes of every result of a call on these arguments (inputs, then
 * write probes; `dims[i]` the dimensions of argument i), in `result_dims[r]`
 * for output r, then read probe r; nothing runs. */
nnx_aot_status nnx_aot_result_shapes(nnx_aot_model *model,
                                     const void *const *arguments,
                                     const int64_t *const *dims,
                                     int64_t *const *result_dims);

/* Checks the arguments, then runs the forward into the caller's result
 * buffers (`results[r]`, holding `capacities[r]` elements), writing each
 * result's shape into `result_dims[r]`. The arguments are read, not
 * written, except those the descriptor marks `updated_in_place`, which the
 * forward updates where they are. */
nnx_aot_status nnx_aot_run(nnx_aot_model *model, const void *const *arguments,
                           const int64_t *const *dims, void *const *results,
                           const int64_t *capacities,
                           int64_t *const *result_dims);

/* What the last failed call on `model` said; "" when none failed. An error
 * that blames an argument's shape ends with what was given ("; got f32
 * array of shape (2, 5)"), so a caller may add where it came from. */
const char *nnx_aot_error(const nnx_aot_model *model);

/* The argument (an input, then a write probe) the last error blames, or -1
 * when it blames none. */
int32_t nnx_aot_error_argument(const nnx_aot_model *model);

/* Unmaps the weights and frees the model (NULL: nothing). */
void nnx_aot_free(nnx_aot_model *model);

/* The number of threads the forward's parallel loops use (0: one per
 * hardware thread; the results do not depend on it). Without libomp in the
 * program (an object compiled with parallel=false) it does nothing. */
void nnx_aot_set_threads(int threads);

/* The forward's temporaries (the activations between layers) that a call
 * frees are kept for the next call, shared by every model of the process,
 * at most 1 GiB: a warm call allocates nothing from the system. This gives
 * them back; nnx_aot_cached_temporary_bytes says how many bytes are kept. */
void nnx_aot_release_temporaries(void);
uint64_t nnx_aot_cached_temporary_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* NNX_AOT_RUNTIME_H */
