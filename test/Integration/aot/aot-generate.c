/*===- aot-generate.c - cached generation from two ahead-of-time objects --===*\
 *
 * Greedy generation in plain C with the prefill and decode functions that
 * nnx-derive-kv-cache derives, compiled ahead of time by
 *
 *   nnx-compile MODEL --generate prefill --max-length L --name prefill
 *     --header DIR/prefill.h -o prefill.o
 *   nnx-compile MODEL --generate decode --max-length L --name decode
 *     --header DIR/decode.h -o decode.o
 *
 * (build with -IDIR, link both objects). Usage:
 *
 *   aot-generate WEIGHTS.safetensors IDS.npy N OUT.npy
 *
 * runs prefill on the prompts IDS (B x T int64), then N - 1 decodes of one
 * token each, every token the argmax of the last position's logits, and
 * writes the prompts followed by the N new tokens to OUT (B x (T + N)), as
 * `nnx-run --generate N` does. The KV caches are prefill's results after
 * the logits, then decode's arguments after the ids and the position, in
 * the same order (docs/Generation.md): decode updates them in place (the
 * header marks them "updated in place"; the runtime binds these buffers,
 * not copies), so one set of caches serves every step.
 *
 * With bench/malloc_count.c preloaded (LD_PRELOAD), it also prints how many
 * heap allocations the decode steps after the first made.
 *
\*===----------------------------------------------------------------------===*/
/* posix_memalign; dlsym's RTLD_DEFAULT. */
#define _GNU_SOURCE

#include <dlfcn.h>

#include "decode.h"
#include "prefill.h"

#include "npy.h"

enum { kMaxCaches = 64 };

/* Elements of a tensor of `rank` dimensions `dims`. */
static int64_t count_of(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int k = 0; k < rank; ++k)
    n *= dims[k];
  return n;
}

/* AOT_GENERATE_UNALIGNED=1: buffers 16 bytes past a 64-byte boundary, so
 * that the runtime copies the caches in and back instead of updating them
 * where they are. */
static size_t misalign(void) {
  return getenv("AOT_GENERATE_UNALIGNED") ? 16 : 0;
}

/* A buffer of `bytes` at a 64-byte boundary (or misalign() past one); free
 * it with release(). */
static void *allocate(size_t bytes) {
  void *block = NULL;
  if (posix_memalign(&block, 64, bytes + 64))
    die("out of memory", "allocate");
  return (char *)block + misalign();
}

static void release(void *buffer) {
  if (buffer)
    free((char *)buffer - misalign());
}

/* Allocates `d`'s results for `arguments` (their shapes from the model),
 * then runs it; exits with status 1 and the runtime's message on an
 * error. */
static void run(nnx_aot_model *m, const nnx_aot_descriptor *d,
                const void *const *arguments, const int64_t *const *dims,
                void **results, int64_t (*shapes)[16]) {
  int64_t *result_dims[kMaxCaches + 1];
  int64_t capacities[kMaxCaches + 1];
  for (int r = 0; r < d->num_outputs; ++r)
    result_dims[r] = shapes[r];
  int status = nnx_aot_result_shapes(m, arguments, dims, result_dims);
  for (int r = 0; status == NNX_AOT_OK && r < d->num_outputs; ++r) {
    capacities[r] = count_of(d->outputs[r].rank, shapes[r]);
    if (!results[r])
      results[r] =
          allocate((size_t)capacities[r] * kSizes[d->outputs[r].dtype]);
  }
  if (status == NNX_AOT_OK)
    status = nnx_aot_run(m, arguments, dims, results, capacities, result_dims);
  if (status != NNX_AOT_OK) {
    fprintf(stderr, "aot-generate: error: %s: %s (status %d)\n", d->model,
            nnx_aot_error(m), status);
    exit(1);
  }
}

/* The argmax over the last dim of row `b`'s last position of `logits`
 * (B x T x V float32). */
static int64_t argmax_last(const float *logits, const int64_t *dims,
                           int64_t b) {
  const float *row = logits + (b * dims[1] + dims[1] - 1) * dims[2];
  int64_t best = 0;
  for (int64_t v = 1; v < dims[2]; ++v)
    if (row[v] > row[best])
      best = v;
  return best;
}

int main(int argc, char **argv) {
  const nnx_aot_descriptor *pd = &prefill_descriptor, *dd = &decode_descriptor;
  int caches = dd->num_inputs - 2;
  if (argc != 5 || caches < 1 || caches > kMaxCaches ||
      pd->num_outputs != 1 + caches || dd->num_outputs != 1) {
    fprintf(stderr,
            "usage: %s WEIGHTS IDS.npy N OUT.npy (prefill and decode "
            "of one model)\n",
            argv[0]);
    return 2;
  }
  for (int c = 0; c < caches; ++c)
    if (!dd->inputs[2 + c].updated_in_place) {
      fprintf(stderr, "aot-generate: error: decode's %s is not a cache\n",
              dd->inputs[2 + c].name);
      return 2;
    }
  nnx_aot_model *prefill = NULL, *decode = NULL;
  if (prefill_load(argv[1], &prefill) != NNX_AOT_OK ||
      decode_load(argv[1], &decode) != NNX_AOT_OK) {
    fprintf(stderr, "aot-generate: error: %s%s\n", prefill_error(prefill),
            decode ? decode_error(decode) : "");
    return 1;
  }
  array ids;
  read_array(argv[2], &ids);
  int64_t n = atoll(argv[3]), batch = ids.shape[0], prompt = ids.shape[1];
  int64_t *tokens = malloc((size_t)(batch * (prompt + n)) * sizeof(int64_t));
  for (int64_t b = 0; b < batch; ++b)
    memcpy(tokens + b * (prompt + n), (int64_t *)ids.data + b * prompt,
           (size_t)prompt * sizeof(int64_t));

  /* Prefill: the logits, then the caches. */
  void *results[kMaxCaches + 1] = {0};
  int64_t shapes[kMaxCaches + 1][16];
  const void *prefill_args[] = {ids.data};
  const int64_t *prefill_dims[] = {ids.shape};
  run(prefill, pd, prefill_args, prefill_dims, results, shapes);

  /* Each decode reads the caches and writes its new rows into them. */
  void *logits[1] = {0};
  int64_t logits_shape[1][16];
  int64_t *step_ids = malloc((size_t)batch * sizeof(int64_t));
  int64_t step_dims[2] = {batch, 1};
  const void *last = results[0];
  const int64_t *last_dims = shapes[0];
  /* The preloaded counter of heap allocations, if any. */
  const volatile uint64_t *mallocs = dlsym(RTLD_DEFAULT, "nnx_malloc_calls");
  uint64_t warm = 0;
  for (int64_t step = 0; step < n; ++step) {
    if (step == 1 && mallocs)
      warm = *mallocs;
    for (int64_t b = 0; b < batch; ++b) {
      step_ids[b] = argmax_last(last, last_dims, b);
      tokens[b * (prompt + n) + prompt + step] = step_ids[b];
    }
    if (step + 1 == n)
      break;
    int64_t position = prompt + step;
    const void *args[kMaxCaches + 2] = {step_ids, &position};
    const int64_t *dims[kMaxCaches + 2] = {step_dims, NULL};
    for (int c = 0; c < caches; ++c) {
      args[2 + c] = results[1 + c];
      dims[2 + c] = shapes[1 + c];
    }
    run(decode, dd, args, dims, logits, logits_shape);
    last = logits[0];
    last_dims = logits_shape[0];
  }
  if (mallocs && n > 2)
    printf("decode steps 2 to %lld: %llu heap allocations\n", (long long)n - 1,
           (unsigned long long)(*mallocs - warm));
  int64_t out_dims[2] = {batch, prompt + n};
  write_array(argv[4], NNX_AOT_I64, 2, out_dims, tokens);
  printf("generated %lld tokens for %lld prompts of %lld\n", (long long)n,
         (long long)batch, (long long)prompt);
  for (int r = 0; r <= caches; ++r)
    release(results[r]);
  release(logits[0]);
  free(step_ids);
  free(tokens);
  free(ids.data);
  prefill_free(prefill);
  decode_free(decode);
  return 0;
}
