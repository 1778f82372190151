/*===- failed-load.c - calls on a model whose load failed -----------------===*\
 *
 * failed-load WEIGHTS|-: loads examples/mlp.mlir's model (compiled with
 * --name model) from WEIGHTS (-: the weights linked into the object, none),
 * expects the load to fail, then asks the model for its result shapes and
 * runs its forward, as a program that ignores the load's status would:
 * each must return the load's status with an error, not crash. Prints
 * every status and error; exits 0 when all three failed alike.
 *
\*===----------------------------------------------------------------------===*/
#include "model.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WEIGHTS|-\n", argv[0]);
    return 2;
  }
  model_model *m = NULL;
  int loaded = model_load(strcmp(argv[1], "-") ? argv[1] : NULL, &m);
  printf("load: status %d: %s\n", loaded, model_error(m));
  if (loaded == NNX_AOT_OK || !m)
    return 1;
  float x[2 * 4] = {0};
  int64_t x_dims[2] = {2, 4};
  int64_t y_dims[2] = {-1, -1};
  int shapes = model_result_shapes(m, x, x_dims, y_dims);
  printf("result_shapes: status %d: %s\n", shapes, model_error(m));
  float y[2 * 3];
  int ran = model_forward(m, x, x_dims, y, 2 * 3, y_dims);
  printf("forward: status %d: %s\n", ran, model_error(m));
  ran = model_forward(m, x, x_dims, y, 2 * 3, y_dims);
  printf("forward again: status %d: %s\n", ran, model_error(m));
  model_free(m);
  return shapes == loaded && ran == loaded ? 0 : 1;
}
