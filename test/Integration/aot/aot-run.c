/*===- aot-run.c - run an ahead-of-time model on .npy files ---------------===*\
 *
 * The test driver of nnx-compile's objects, through the generic runtime
 * API (nnx-aot/Runtime.h) and the tables of the header the model was
 * compiled with, `model.h` (nnx-compile --name model --header DIR/model.h;
 * build with -IDIR):
 *
 *   aot-run WEIGHTS.safetensors|- OUT ARG.npy... [+ ARG.npy...]...
 *
 * loads the weights ('-': those linked into the object, if any), then runs
 * the forward on each set of arguments (its inputs, then its write probes;
 * sets separated by '+') in turn, on the one loaded model. Result r of set
 * k goes to OUT<r>.npy for the first set, OUT<k>.<r>.npy for later ones
 * (outputs, then read probes), and each result's shape is printed. A set
 * that fails prints the runtime's message and status and the next set
 * runs; the exit status is 1 when any failed. AOT_RUN_THREADS=N sets the
 * thread count of the forward's parallel loops (nnx_aot_set_threads).
 *
\*===----------------------------------------------------------------------===*/
#include "model.h"
#include "npy.h"

enum { kMaxArrays = 64 };

/* Runs the forward on the `na` files at `files`; 0 on success. */
static int run_set(model_model *m, char **files, int na, const char *out,
                   int set) {
  const nnx_aot_descriptor *d = &model_descriptor;
  int nr = d->num_outputs + d->num_read_probes;
  const void *arguments[kMaxArrays];
  const int64_t *dims[kMaxArrays];
  array args[kMaxArrays];
  for (int i = 0; i < na; ++i) {
    read_array(files[i], &args[i]);
    arguments[i] = args[i].data;
    dims[i] = args[i].shape;
  }
  int64_t shapes[kMaxArrays][16];
  int64_t *result_dims[kMaxArrays];
  void *results[kMaxArrays] = {0};
  int64_t capacities[kMaxArrays];
  for (int r = 0; r < nr; ++r)
    result_dims[r] = shapes[r];
  int status = nnx_aot_result_shapes(m, arguments, dims, result_dims);
  for (int r = 0; status == NNX_AOT_OK && r < nr; ++r) {
    const nnx_aot_tensor *t = r < d->num_outputs
                                  ? &d->outputs[r]
                                  : &d->read_probes[r - d->num_outputs];
    int64_t count = 1;
    for (int k = 0; k < t->rank; ++k)
      count *= shapes[r][k];
    capacities[r] = count;
    results[r] = malloc((size_t)count * kSizes[t->dtype] + 1);
  }
  if (status == NNX_AOT_OK)
    status = nnx_aot_run(m, arguments, dims, results, capacities, result_dims);
  if (status != NNX_AOT_OK)
    fprintf(stderr, "aot-run: error: %s (status %d)\n", model_error(m), status);
  for (int r = 0; r < nr; ++r) {
    const nnx_aot_tensor *t = r < d->num_outputs
                                  ? &d->outputs[r]
                                  : &d->read_probes[r - d->num_outputs];
    if (status == NNX_AOT_OK) {
      char path[4096];
      if (set == 0)
        snprintf(path, sizeof(path), "%s%d.npy", out, r);
      else
        snprintf(path, sizeof(path), "%s%d.%d.npy", out, set, r);
      write_array(path, t->dtype, t->rank, shapes[r], results[r]);
      printf("%s: [", t->name);
      for (int k = 0; k < t->rank; ++k)
        printf("%s%lld", k ? ", " : "", (long long)shapes[r][k]);
      printf("]\n");
    }
    free(results[r]);
  }
  for (int i = 0; i < na; ++i)
    free(args[i].data);
  return status != NNX_AOT_OK;
}

int main(int argc, char **argv) {
  const nnx_aot_descriptor *d = &model_descriptor;
  int na = d->num_inputs + d->num_write_probes;
  if (argc < 3 + na || na > kMaxArrays ||
      d->num_outputs + d->num_read_probes > kMaxArrays) {
    fprintf(stderr,
            "usage: %s WEIGHTS|- OUT ARG.npy... [+ ARG.npy...]... (%d "
            "arrays a set)\n",
            argv[0], na);
    return 2;
  }
  if (getenv("AOT_RUN_THREADS"))
    nnx_aot_set_threads(atoi(getenv("AOT_RUN_THREADS")));
  model_model *m = NULL;
  int status = model_load(strcmp(argv[1], "-") ? argv[1] : NULL, &m);
  if (status != NNX_AOT_OK) {
    fprintf(stderr, "aot-run: error: %s (status %d)\n", model_error(m), status);
    model_free(m);
    return 1;
  }
  int failed = 0, set = 0;
  for (int at = 3; at <= argc; ++set) {
    int end = at;
    while (end < argc && strcmp(argv[end], "+"))
      ++end;
    if (end - at != na) {
      fprintf(stderr,
              "aot-run: error: set %d has %d arrays, the forward "
              "takes %d\n",
              set, end - at, na);
      failed = 1;
    } else {
      failed |= run_set(m, argv + at, na, argv[2], set);
    }
    at = end + 1;
  }
  model_free(m);
  return failed;
}
