/*===- aot-run.c - run an ahead-of-time model on .npy files ---------------===*\
 *
 * The test driver of nnx-compile's objects, through the generic runtime
 * API (nnx-aot/Runtime.h) and the tables of the header the model was
 * compiled with, `model.h` (nnx-compile --name model --header DIR/model.h;
 * build with -IDIR):
 *
 *   aot-run WEIGHTS.safetensors|- OUT ARG.npy...
 *
 * loads the weights ('-': the model has none), runs the forward on the
 * arguments (its inputs, then its write probes) and writes result r to
 * OUT<r>.npy (outputs, then read probes), printing each result's shape. An
 * error is printed with the runtime's message and the status, exit 1.
 *
\*===----------------------------------------------------------------------===*/
#include "model.h"
#include "npy.h"

int main(int argc, char **argv) {
  const nnx_aot_descriptor *d = &model_descriptor;
  int na = d->num_inputs + d->num_write_probes;
  int nr = d->num_outputs + d->num_read_probes;
  if (argc != 3 + na) {
    fprintf(stderr, "usage: %s WEIGHTS|- OUT ARG.npy... (%d arrays)\n",
            argv[0], na);
    return 2;
  }
  model_model *m = NULL;
  int status = model_load(strcmp(argv[1], "-") ? argv[1] : NULL, &m);
  if (status != NNX_AOT_OK) {
    fprintf(stderr, "aot-run: error: %s (status %d)\n", model_error(m),
            status);
    model_free(m);
    return 1;
  }
  const void *arguments[64];
  const int64_t *dims[64];
  array args[64];
  for (int i = 0; i < na; ++i) {
    read_array(argv[3 + i], &args[i]);
    arguments[i] = args[i].data;
    dims[i] = args[i].shape;
  }
  int64_t shapes[64][16];
  int64_t *result_dims[64];
  for (int r = 0; r < nr; ++r)
    result_dims[r] = shapes[r];
  status = nnx_aot_result_shapes(m, arguments, dims, result_dims);
  void *results[64];
  int64_t capacities[64];
  for (int r = 0; status == NNX_AOT_OK && r < nr; ++r) {
    const nnx_aot_tensor *t =
        r < d->num_outputs ? &d->outputs[r] : &d->read_probes[r - d->num_outputs];
    int64_t count = 1;
    for (int k = 0; k < t->rank; ++k)
      count *= shapes[r][k];
    capacities[r] = count;
    results[r] = malloc((size_t)count * kSizes[t->dtype] + 1);
  }
  if (status == NNX_AOT_OK)
    status = nnx_aot_run(m, arguments, dims, results, capacities, result_dims);
  if (status != NNX_AOT_OK) {
    fprintf(stderr, "aot-run: error: %s (status %d)\n", model_error(m),
            status);
    model_free(m);
    return 1;
  }
  for (int r = 0; r < nr; ++r) {
    const nnx_aot_tensor *t =
        r < d->num_outputs ? &d->outputs[r] : &d->read_probes[r - d->num_outputs];
    char path[4096];
    snprintf(path, sizeof(path), "%s%d.npy", argv[2], r);
    write_array(path, t->dtype, t->rank, shapes[r], results[r]);
    printf("%s: [", t->name);
    for (int k = 0; k < t->rank; ++k)
      printf("%s%lld", k ? ", " : "", (long long)shapes[r][k]);
    printf("]\n");
    free(results[r]);
  }
  for (int i = 0; i < na; ++i)
    free(args[i].data);
  model_free(m);
  return 0;
}
