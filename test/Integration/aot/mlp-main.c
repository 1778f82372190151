/*===- mlp-main.c - examples/mlp.mlir compiled ahead of time, from C ------===*\
 *
 * What a program that embeds a model looks like (docs/Integration.md,
 * "Ahead of time"): the functions of the header nnx-compile wrote for the
 * example MLP, with plain C types, and nothing of MLIR or LLVM.
 *
 *   nnx-compile mlp.mlir -o mlp.o --header mlp.h
 *   cc mlp-main.c mlp.o -lnnx_aot_runtime -lomp -lm -o mlp-main
 *   ./mlp-main mlp.safetensors x.npy y.npy
 *
\*===----------------------------------------------------------------------===*/
#include "mlp.h"
#include "npy.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s WEIGHTS.safetensors X.npy Y.npy\n", argv[0]);
    return 2;
  }
  mlp_model *model;
  if (mlp_load(argv[1], &model) != NNX_AOT_OK) {
    fprintf(stderr, "error: %s\n", mlp_error(model));
    mlp_free(model);
    return 1;
  }
  array x;
  read_array(argv[2], &x);
  if (x.dtype != NNX_AOT_F32 || x.rank != 2) {
    fprintf(stderr, "error: %s: expected a float32 matrix\n", argv[2]);
    return 1;
  }
  /* The logits' shape, [batch, 3], then the forward into a buffer of it. */
  int64_t y_dims[2];
  int status = mlp_result_shapes(model, x.data, x.shape, y_dims);
  float *y = NULL;
  if (status == NNX_AOT_OK) {
    y = malloc(sizeof(float) * (size_t)(y_dims[0] * y_dims[1]));
    status =
        mlp_forward(model, x.data, x.shape, y, y_dims[0] * y_dims[1], y_dims);
  }
  if (status != NNX_AOT_OK) {
    fprintf(stderr, "error: %s\n", mlp_error(model));
    mlp_free(model);
    return 1;
  }
  for (int64_t i = 0; i < y_dims[0]; ++i) {
    printf("row %lld:", (long long)i);
    for (int64_t j = 0; j < y_dims[1]; ++j)
      printf(" %.6f", y[i * y_dims[1] + j]);
    printf("\n");
  }
  write_array(argv[3], NNX_AOT_F32, 2, y_dims, y);
  free(y);
  free(x.data);
  mlp_free(model);
  return 0;
}
