/*===- SafeTensors.c - the weights file of an ahead-of-time model ---------===*\
 *
 * A safetensors file, mapped: an 8-byte little-endian header length N, N
 * bytes of JSON (an object whose keys other than __metadata__ map to
 * {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}), then the
 * data. The JSON reader is the small subset the format uses (objects,
 * arrays, strings, integers), strict about everything else: a file it
 * cannot read is refused with where, never half read.
 *
\*===----------------------------------------------------------------------===*/
#include "AOTRuntime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A cursor over the JSON text. */
typedef struct {
  const char *at, *end;
  const char *failure; /* what is wrong, at `at` */
} json_reader;

static void skip_space(json_reader *r) {
  while (r->at < r->end &&
         (*r->at == ' ' || *r->at == '\n' || *r->at == '\r' || *r->at == '\t'))
    ++r->at;
}

static int expect(json_reader *r, char c) {
  skip_space(r);
  if (r->at < r->end && *r->at == c) {
    ++r->at;
    return 1;
  }
  if (!r->failure)
    r->failure = "unexpected character";
  return 0;
}

static int peek(json_reader *r, char c) {
  skip_space(r);
  return r->at < r->end && *r->at == c;
}

/* A string without escapes other than \" and \\ (the keys and dtypes of
 * safetensors files are plain); `*out` points into the text, unterminated,
 * `*length` long, escapes left as they are. */
static int read_string(json_reader *r, const char **out, size_t *length) {
  if (!expect(r, '"'))
    return 0;
  const char *start = r->at;
  while (r->at < r->end && *r->at != '"') {
    if (*r->at == '\\')
      ++r->at;
    ++r->at;
  }
  if (r->at >= r->end) {
    r->failure = "unterminated string";
    return 0;
  }
  *out = start;
  *length = (size_t)(r->at - start);
  ++r->at;
  return 1;
}

static int read_int(json_reader *r, int64_t *value) {
  skip_space(r);
  int negative = r->at < r->end && *r->at == '-';
  if (negative)
    ++r->at;
  if (r->at >= r->end || *r->at < '0' || *r->at > '9') {
    r->failure = "expected an integer";
    return 0;
  }
  uint64_t v = 0;
  while (r->at < r->end && *r->at >= '0' && *r->at <= '9') {
    uint64_t digit = (uint64_t)(*r->at - '0');
    if (v > (UINT64_MAX - digit) / 10 || v * 10 + digit > (uint64_t)INT64_MAX) {
      r->failure = "integer out of range";
      return 0;
    }
    v = v * 10 + digit;
    ++r->at;
  }
  *value = negative ? -(int64_t)v : (int64_t)v;
  return 1;
}

/* Skips one value of any kind, `depth` levels deep at most. */
static int skip_value(json_reader *r, int depth) {
  if (depth > 64) {
    r->failure = "nested too deeply";
    return 0;
  }
  skip_space(r);
  if (r->at >= r->end) {
    r->failure = "unexpected end";
    return 0;
  }
  const char *s;
  size_t n;
  int64_t v;
  char open = *r->at;
  if (open == '"')
    return read_string(r, &s, &n);
  if (open == '{' || open == '[') {
    char close = open == '{' ? '}' : ']';
    ++r->at;
    if (peek(r, close))
      return expect(r, close);
    do {
      if (open == '{' && (!read_string(r, &s, &n) || !expect(r, ':')))
        return 0;
      if (!skip_value(r, depth + 1))
        return 0;
    } while (peek(r, ',') && expect(r, ','));
    return expect(r, close);
  }
  if (open == '-' || (open >= '0' && open <= '9'))
    return read_int(r, &v);
  static const char *const words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; ++i) {
    size_t len = strlen(words[i]);
    if ((size_t)(r->end - r->at) >= len && !memcmp(r->at, words[i], len)) {
      r->at += len;
      return 1;
    }
  }
  r->failure = "unexpected value";
  return 0;
}

/* [i, j, ...] into `out` (at most `capacity`). */
static int read_int_array(json_reader *r, int64_t *out, int32_t capacity,
                          int32_t *count) {
  *count = 0;
  if (!expect(r, '['))
    return 0;
  if (peek(r, ']'))
    return expect(r, ']');
  do {
    if (*count == capacity) {
      r->failure = "too many dimensions";
      return 0;
    }
    if (!read_int(r, &out[(*count)++]))
      return 0;
  } while (peek(r, ',') && expect(r, ','));
  return expect(r, ']');
}

static int key_is(const char *key, size_t length, const char *word) {
  return length == strlen(word) && !memcmp(key, word, length);
}

/* One tensor entry: {"dtype": ..., "shape": [...], "data_offsets": [b, e]}. */
static int read_entry(json_reader *r, nnx_aot_file_tensor *t) {
  int seen = 0;
  if (!expect(r, '{'))
    return 0;
  do {
    const char *key;
    size_t length;
    if (!read_string(r, &key, &length) || !expect(r, ':'))
      return 0;
    if (key_is(key, length, "dtype")) {
      const char *dtype;
      size_t n;
      if (!read_string(r, &dtype, &n))
        return 0;
      snprintf(t->dtype, sizeof(t->dtype), "%.*s", (int)n, dtype);
      seen |= 1;
    } else if (key_is(key, length, "shape")) {
      if (!read_int_array(r, t->shape, NNX_AOT_MAX_RANK, &t->rank))
        return 0;
      seen |= 2;
    } else if (key_is(key, length, "data_offsets")) {
      int64_t offsets[2];
      int32_t count;
      if (!read_int_array(r, offsets, 2, &count))
        return 0;
      if (count != 2 || offsets[0] < 0 || offsets[1] < offsets[0]) {
        r->failure = "bad data_offsets";
        return 0;
      }
      t->begin = (uint64_t)offsets[0];
      t->end = (uint64_t)offsets[1];
      seen |= 4;
    } else if (!skip_value(r, 1)) {
      return 0;
    }
  } while (peek(r, ',') && expect(r, ','));
  if (seen != 7) {
    r->failure = "a tensor entry lacks dtype, shape or data_offsets";
    return 0;
  }
  return expect(r, '}');
}

/* The entries of the header object. */
static int read_header(json_reader *r, nnx_aot_file *file) {
  size_t capacity = 0;
  if (!expect(r, '{'))
    return 0;
  if (peek(r, '}'))
    return expect(r, '}');
  do {
    const char *key;
    size_t length;
    if (!read_string(r, &key, &length) || !expect(r, ':'))
      return 0;
    if (key_is(key, length, "__metadata__")) {
      if (!skip_value(r, 1))
        return 0;
      continue;
    }
    if (file->num_tensors == capacity) {
      capacity = capacity ? 2 * capacity : 64;
      void *grown = realloc(file->tensors, capacity * sizeof(*file->tensors));
      if (!grown) {
        r->failure = "out of memory";
        return 0;
      }
      file->tensors = grown;
    }
    nnx_aot_file_tensor *t = &file->tensors[file->num_tensors++];
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->key_length = length;
    if (!read_entry(r, t))
      return 0;
  } while (peek(r, ',') && expect(r, ','));
  return expect(r, '}');
}

nnx_aot_status nnx_aot_read_image(const char *path, const void *image,
                                  uint64_t size, nnx_aot_file *file,
                                  char *error, size_t error_size) {
  if (size < 8) {
    snprintf(error, error_size,
             "%s: not a safetensors file: %llu bytes, shorter than its "
             "8-byte header length",
             path, (unsigned long long)size);
    return NNX_AOT_ERROR_WEIGHTS;
  }
  const unsigned char *bytes = image;
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i)
    header = header << 8 | bytes[i];
  if (header > size - 8) {
    snprintf(error, error_size,
             "%s: not a safetensors file: its header length %llu exceeds "
             "the file's %llu bytes",
             path, (unsigned long long)header, (unsigned long long)size);
    return NNX_AOT_ERROR_WEIGHTS;
  }
  json_reader r = {(const char *)bytes + 8, (const char *)bytes + 8 + header,
                   NULL};
  if (!read_header(&r, file) || (skip_space(&r), r.at != r.end)) {
    snprintf(error, error_size,
             "%s: the safetensors header is not valid JSON of the format: "
             "%s at byte %lld of the header",
             path, r.failure ? r.failure : "trailing text",
             (long long)(r.at - ((const char *)bytes + 8)));
    return NNX_AOT_ERROR_WEIGHTS;
  }
  for (size_t i = 0; i < file->num_tensors; ++i)
    for (size_t j = 0; j < i; ++j)
      if (file->tensors[i].key_length == file->tensors[j].key_length &&
          !memcmp(file->tensors[i].key, file->tensors[j].key,
                  file->tensors[i].key_length)) {
        snprintf(error, error_size,
                 "%s: the safetensors header names tensor '%.*s' twice", path,
                 (int)file->tensors[i].key_length, file->tensors[i].key);
        return NNX_AOT_ERROR_WEIGHTS;
      }
  file->data = bytes + 8 + header;
  file->data_size = size - 8 - header;
  return NNX_AOT_OK;
}

nnx_aot_status nnx_aot_open_file(const char *path, nnx_aot_file *file,
                                 char *error, size_t error_size) {
  memset(file, 0, sizeof(*file));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(error, error_size, "%s: cannot open the weights file: %m", path);
    if (fd >= 0)
      close(fd);
    return NNX_AOT_ERROR_WEIGHTS;
  }
  uint64_t size = (uint64_t)st.st_size;
  if (size < 8) {
    close(fd);
    return nnx_aot_read_image(path, NULL, size, file, error, error_size);
  }
  void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    snprintf(error, error_size, "%s: cannot map the weights file: %m", path);
    return NNX_AOT_ERROR_WEIGHTS;
  }
  file->map = map;
  file->size = size;
  return nnx_aot_read_image(path, map, size, file, error, error_size);
}

const nnx_aot_file_tensor *nnx_aot_find_tensor(const nnx_aot_file *file,
                                               const char *key) {
  size_t length = strlen(key);
  for (size_t i = 0; i < file->num_tensors; ++i) {
    const nnx_aot_file_tensor *t = &file->tensors[i];
    if (t->key_length == length && !memcmp(t->key, key, length))
      return t;
  }
  return NULL;
}

void nnx_aot_close_file(nnx_aot_file *file) {
  if (file->map)
    munmap(file->map, file->size);
  free(file->tensors);
  memset(file, 0, sizeof(*file));
}
