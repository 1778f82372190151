/*===- npy.h - .npy files for the ahead-of-time test programs -*- C -*-===*\
 *
 * Just what aot-run.c and mlp-main.c need: little-endian C-order arrays of
 * nnx's dtypes (bf16 as '<u2', its bits). A problem exits with status 2.
 *
\*===----------------------------------------------------------------------===*/
#ifndef NNX_TEST_AOT_NPY_H
#define NNX_TEST_AOT_NPY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* By nnx_aot_dtype. */
static const char *const kDescrs[] = {"<f2", "<u2", "<f4", "<f8",
                                      "<i4", "<i8", "|b1"};
static const size_t kSizes[] = {2, 2, 4, 8, 4, 8, 1};

typedef struct {
  int dtype;
  int rank;
  int64_t shape[16];
  void *data;
} array;

static void die(const char *what, const char *path) {
  fprintf(stderr, "error: %s: %s\n", path, what);
  exit(2);
}

static int64_t read_array(const char *path, array *a) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("cannot open", path);
  unsigned char head[12];
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6))
    die("not an .npy file", path);
  size_t length = (size_t)head[8] | (size_t)head[9] << 8;
  if (head[6] >= 2) {
    if (fread(head + 10, 1, 2, f) != 2)
      die("truncated header", path);
    length |= (size_t)head[10] << 16 | (size_t)head[11] << 24;
  }
  char *text = calloc(length + 1, 1);
  if (!text || fread(text, 1, length, f) != length)
    die("truncated header", path);
  const char *descr = strstr(text, "'descr': '");
  const char *shape = strstr(text, "'shape': (");
  if (!descr || !shape || strstr(text, "'fortran_order': True"))
    die("unsupported header", path);
  a->dtype = -1;
  for (int i = 0; i < 7; ++i)
    if (!strncmp(descr + 10, kDescrs[i], 3))
      a->dtype = i;
  if (a->dtype < 0)
    die("unsupported dtype", path);
  a->rank = 0;
  int64_t count = 1;
  for (const char *p = shape + 10; *p && *p != ')';) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    a->shape[a->rank++] = d;
    count *= d;
    p = end;
  }
  size_t bytes = (size_t)count * kSizes[a->dtype];
  a->data = malloc(bytes ? bytes : 1);
  if (!a->data || fread(a->data, 1, bytes, f) != bytes)
    die("truncated data", path);
  free(text);
  fclose(f);
  return count;
}

static void write_array(const char *path, int dtype, int rank,
                        const int64_t *shape, const void *data) {
  char dict[512];
  int n = snprintf(dict, sizeof(dict),
                   "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   kDescrs[dtype]);
  size_t count = 1;
  for (int i = 0; i < rank; ++i) {
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)shape[i]);
    count *= (size_t)shape[i];
  }
  n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }",
                rank == 1 ? "," : "");
  while ((10 + n + 1) % 64)
    dict[n++] = ' ';
  dict[n++] = '\n';
  FILE *f = fopen(path, "wb");
  unsigned char head[10] = {0x93,
                            'N',
                            'U',
                            'M',
                            'P',
                            'Y',
                            1,
                            0,
                            (unsigned char)(n & 0xff),
                            (unsigned char)(n >> 8)};
  if (!f || fwrite(head, 1, 10, f) != 10 ||
      fwrite(dict, 1, (size_t)n, f) != (size_t)n ||
      fwrite(data, kSizes[dtype], count, f) != count || fclose(f))
    die("cannot write", path);
}

#endif /* NNX_TEST_AOT_NPY_H */
