//===- nnx-capi-test.c - drives nnx through its C API only --------*- C -*-===//
//
// A pure C client of include/nnx-c, as upstream's
// mlir/examples/standalone/test/CAPI is: it registers the nnx dialect and
// passes through the C API, parses a model, runs surgery (one accepted, some
// refused), compiles and runs the model, binds another checkpoint. Used by
// capi.test, which compares the printed outputs with nnx-run's.
//
//   nnx-capi-test MODEL.mlir INPUT.npy [WEIGHTS.safetensors]
//
// INPUT.npy: a float32 C-order array (the model's only input).
//
//===----------------------------------------------------------------------===//

#include "nnx-c/Dialects.h"
#include "nnx-c/Runtime.h"
#include "nnx-c/Surgery.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A growing string: the error text and printed IR land here.
typedef struct {
  char *data;
  size_t size;
} Buffer;

static void appendToBuffer(MlirStringRef text, void *userData) {
  Buffer *buffer = (Buffer *)userData;
  buffer->data = realloc(buffer->data, buffer->size + text.length + 1);
  memcpy(buffer->data + buffer->size, text.data, text.length);
  buffer->size += text.length;
  buffer->data[buffer->size] = '\0';
}

static void clearBuffer(Buffer *buffer) {
  free(buffer->data);
  buffer->data = NULL;
  buffer->size = 0;
}

/// Prints a failure's message, each line prefixed, and clears it.
static void printError(const char *what, Buffer *error) {
  printf("%s: refused\n", what);
  char *line = error->data;
  while (line && *line) {
    char *end = strchr(line, '\n');
    int length = end ? (int)(end - line) : (int)strlen(line);
    printf("  | %.*s\n", length, line);
    line = end ? end + 1 : line + length;
  }
  clearBuffer(error);
}

/// The module as text (for the unchanged-by-a-refusal checks).
static char *printModule(MlirModule module) {
  Buffer buffer = {NULL, 0};
  mlirOperationPrint(mlirModuleGetOperation(module), appendToBuffer, &buffer);
  return buffer.data;
}

/// A float32 .npy file (header versions 1 and 2, C order), or exits.
typedef struct {
  int64_t dims[8];
  intptr_t rank;
  float *data;
} Array;

static Array readNpy(const char *path) {
  Array array = {{0}, 0, NULL};
  FILE *file = fopen(path, "rb");
  unsigned char magic[10];
  if (!file || fread(magic, 1, 10, file) != 10 ||
      memcmp(magic, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not an .npy file\n", path);
    exit(2);
  }
  size_t headerLength = magic[8] | (magic[9] << 8);
  if (magic[6] == 2) {
    unsigned char more[2];
    if (fread(more, 1, 2, file) != 2)
      exit(2);
    headerLength |= ((size_t)more[0] << 16) | ((size_t)more[1] << 24);
  }
  char *header = calloc(headerLength + 1, 1);
  if (fread(header, 1, headerLength, file) != headerLength ||
      !strstr(header, "'descr': '<f4'") ||
      !strstr(header, "'fortran_order': False")) {
    fprintf(stderr, "%s: not a C-order float32 array\n", path);
    exit(2);
  }
  int64_t count = 1;
  for (char *p = strstr(header, "'shape': (") + 10; *p != ')';) {
    char *end;
    long long dim = strtoll(p, &end, 10);
    if (end == p)
      break;
    array.dims[array.rank++] = dim;
    count *= dim;
    p = end + strspn(end, ", ");
  }
  free(header);
  array.data = malloc(sizeof(float) * (size_t)(count ? count : 1));
  if (fread(array.data, sizeof(float), (size_t)count, file) != (size_t)count)
    exit(2);
  fclose(file);
  return array;
}

static void printSpec(const char *kind, NnxTensorSpec spec) {
  MlirStringRef dtype = nnxDTypeGetName(spec.dtype);
  printf("%s %.*s: %.*s [", kind, (int)spec.name.length, spec.name.data,
         (int)dtype.length, dtype.data);
  for (intptr_t i = 0; i < spec.rank; ++i)
    printf("%s%lld", i ? ", " : "", (long long)spec.dims[i]);
  printf("]\n");
}

/// Prints every output of the model's last run, one `%.9g` value each (a
/// float32 printed so reads back exactly): "output 0: float32 (4, 3)", then
/// the values, one row of the last dimension per line.
static void printOutputs(const char *label, NnxCompiledModel model) {
  printf("== %s\n", label);
  for (intptr_t o = 0; o < nnxCompiledModelGetNumOutputs(model); ++o) {
    NnxTensor out = nnxCompiledModelGetOutput(model, o);
    MlirStringRef dtype = nnxDTypeGetName(out.dtype);
    printf("output %ld: %.*s (", (long)o, (int)dtype.length, dtype.data);
    int64_t count = 1;
    for (intptr_t i = 0; i < out.rank; ++i) {
      printf("%s%lld", i ? ", " : "", (long long)out.dims[i]);
      count *= out.dims[i];
    }
    printf(")\n");
    int64_t row = out.rank ? out.dims[out.rank - 1] : 1;
    for (int64_t i = 0; i < count; ++i)
      printf("%.9g%s", ((const float *)out.data)[i],
             (i + 1) % row == 0 ? "\n" : " ");
  }
}

static MlirStringRef str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}

/// Compiles `module` with `options`, runs it on `input` and prints the
/// outputs under `label`; exits on failure.
static NnxCompiledModel compileAndRun(MlirModule module,
                                      const NnxCompileOptions *options,
                                      NnxTensor input, const char *label) {
  Buffer error = {NULL, 0};
  NnxCompiledModel model;
  if (mlirLogicalResultIsFailure(nnxCompiledModelCreate(
          module, options, &model, appendToBuffer, &error)) ||
      mlirLogicalResultIsFailure(
          nnxCompiledModelRun(model, &input, 1, appendToBuffer, &error))) {
    fprintf(stderr, "%s: %s\n", label, error.data);
    exit(1);
  }
  printOutputs(label, model);
  return model;
}

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

/// One MLIR: the dialect registered through the C API (libMLIRCAPIIR.a) is
/// the one nnx's C++ sees (libNNXCAPI.a, libMLIR.so).
static void checkRegistration(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle nnx = mlirGetDialectHandle__nnx__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(nnx);
  printf("dialect handle: %.*s\n", (int)ns.length, ns.data);
  mlirDialectHandleRegisterDialect(nnx, ctx);
  mlirDialectHandleLoadDialect(nnx, ctx);
  printf("nnx.linear registered: %d\n",
         mlirContextIsRegisteredOperation(ctx, str("nnx.linear")));
  mlirContextDestroy(ctx);
  // A second call must be harmless (pipelines refuse a second registration).
  nnxRegisterAllPasses();
  nnxRegisterAllPasses();
}

/// Surgery through the upstream pass manager (a registered pass by name),
/// then through nnx's entry points: accepted, refused, bad options.
static void checkSurgery(MlirContext ctx, MlirModule module) {
  Buffer error = {NULL, 0};
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed =
      mlirParsePassPipeline(opm,
                            str("builtin.module(nnx.model(nnx-deepen{"
                                "after=act1}))"),
                            appendToBuffer, &error);
  printf("parse nnx-deepen pipeline: %s\n",
         mlirLogicalResultIsSuccess(parsed) ? "ok" : error.data);
  clearBuffer(&error);
  mlirPassManagerDestroy(pm);

  if (mlirLogicalResultIsFailure(nnxWiden(module, str("fc1"), 16, 7, false,
                                          str(""), appendToBuffer, &error))) {
    fprintf(stderr, "nnxWiden: %s\n", error.data);
    exit(1);
  }
  printf("nnxWiden fc1 -> 16: ok\n");

  char *before = printModule(module);
  if (mlirLogicalResultIsSuccess(nnxWiden(module, str("head"), 4, 0, false,
                                          str(""), appendToBuffer, &error)))
    exit(1);
  printError("nnxWiden head", &error);
  if (mlirLogicalResultIsSuccess(
          nnxDeepen(module, str("act2"), 0, appendToBuffer, &error)))
    exit(1);
  printError("nnxDeepen act2", &error);
  if (mlirLogicalResultIsSuccess(nnxWiden(module, str("fc2"), 12, 0, false,
                                          str("bogus"), appendToBuffer,
                                          &error)))
    exit(1);
  printError("nnxWiden init=bogus", &error);
  if (mlirLogicalResultIsSuccess(nnxRunPassPipeline(
          module, str("builtin.module(nnx.model(nnx-widen{colour=red}))"),
          appendToBuffer, &error)))
    exit(1);
  printError("nnxRunPassPipeline", &error);
  char *after = printModule(module);
  printf("module unchanged by the refusals: %s\n",
         strcmp(before, after) == 0 ? "yes" : "NO");
  free(before);
  free(after);
}

/// Runtime errors: bad options, a wrong input shape, a wrong count, a
/// missing weights file; each a message and a failure, nothing crashes.
static void checkRuntimeErrors(MlirModule module, NnxCompiledModel model,
                               NnxTensor input) {
  Buffer error = {NULL, 0};
  NnxCompileOptions options = nnxCompileOptionsDefault();
  NnxCompiledModel bad;
  options.optLevel = 9;
  if (mlirLogicalResultIsSuccess(nnxCompiledModelCreate(
          module, &options, &bad, appendToBuffer, &error)))
    exit(1);
  printError("create optLevel=9", &error);
  options = nnxCompileOptionsDefault();
  options.pipelineOptions = str("max-isa=pentium");
  if (mlirLogicalResultIsSuccess(nnxCompiledModelCreate(
          module, &options, &bad, appendToBuffer, &error)))
    exit(1);
  printError("create max-isa=pentium", &error);
  options = nnxCompileOptionsDefault();
  options.generate = str("decode");
  if (mlirLogicalResultIsSuccess(nnxCompiledModelCreate(
          module, &options, &bad, appendToBuffer, &error)))
    exit(1);
  printError("create generate=decode without maxLength", &error);
  options.generate = str("sample");
  options.maxLength = 16;
  if (mlirLogicalResultIsSuccess(nnxCompiledModelCreate(
          module, &options, &bad, appendToBuffer, &error)))
    exit(1);
  printError("create generate=sample", &error);
  printf("null after a failed create: %d\n", nnxCompiledModelIsNull(bad));

  int64_t wrongDims[2] = {input.dims[0], input.dims[1] + 1};
  NnxTensor wrong = input;
  wrong.dims = wrongDims;
  float *zeros = calloc((size_t)(wrongDims[0] * wrongDims[1]), sizeof(float));
  wrong.data = zeros;
  if (mlirLogicalResultIsSuccess(
          nnxCompiledModelRun(model, &wrong, 1, appendToBuffer, &error)))
    exit(1);
  printError("run on a wrong shape", &error);
  free(zeros);
  if (mlirLogicalResultIsSuccess(
          nnxCompiledModelRun(model, NULL, 0, appendToBuffer, &error)))
    exit(1);
  printError("run on no input", &error);
  if (mlirLogicalResultIsSuccess(nnxCompiledModelBindWeights(
          model, str("/nonexistent/w.safetensors"), appendToBuffer, &error)))
    exit(1);
  printError("bind a missing file", &error);
}

/// LoRA in one step on a fresh copy of the model, then merge twice (the
/// second refused).
static void checkLora(MlirContext ctx, const char *path, NnxTensor input) {
  Buffer error = {NULL, 0};
  MlirModule module = mlirModuleCreateParseFromFile(ctx, str(path));
  MlirStringRef targets[2] = {str("fc1"), str("fc2")};
  if (mlirLogicalResultIsSuccess(
          nnxLoraApply(module, targets, 2, 0, 8.0, 0, appendToBuffer, &error)))
    exit(1);
  printError("nnxLoraApply r=0", &error);
  if (mlirLogicalResultIsFailure(nnxLoraApply(module, targets, 2, 2, 8.0, 0,
                                              appendToBuffer, &error))) {
    fprintf(stderr, "nnxLoraApply: %s\n", error.data);
    exit(1);
  }
  char *text = printModule(module);
  int loras = 0;
  for (char *p = text; (p = strstr(p, "nnx.lora @")); ++p)
    ++loras;
  printf("nnxLoraApply fc1, fc2: %d nnx.lora\n", loras);
  free(text);
  NnxCompiledModel model = compileAndRun(module, NULL, input, "lora");
  nnxCompiledModelDestroy(model);
  if (mlirLogicalResultIsFailure(
          nnxLoraMerge(module, str(""), appendToBuffer, &error)))
    exit(1);
  printf("nnxLoraMerge: ok\n");
  if (mlirLogicalResultIsSuccess(
          nnxLoraMerge(module, str("fc1"), appendToBuffer, &error)))
    exit(1);
  printError("nnxLoraMerge again", &error);
  mlirModuleDestroy(module);
}

/// Cached generation: the decoder at `path` compiled as prefill and as
/// decode (a cache of 16 positions); their arguments and results, and a
/// prefill run on two prompts of 3 ids.
static void checkGeneration(MlirContext ctx, const char *path) {
  static const char *const kFunctions[] = {"prefill", "decode"};
  int64_t ids[6] = {1, 2, 3, 4, 5, 6}, dims[2] = {2, 3};
  for (int f = 0; f < 2; ++f) {
    Buffer error = {NULL, 0};
    MlirModule module = mlirModuleCreateParseFromFile(ctx, str(path));
    NnxCompileOptions options = nnxCompileOptionsDefault();
    options.generate = str(kFunctions[f]);
    options.maxLength = 16;
    NnxCompiledModel model;
    if (mlirLogicalResultIsFailure(nnxCompiledModelCreate(
            module, &options, &model, appendToBuffer, &error))) {
      fprintf(stderr, "%s: %s\n", kFunctions[f], error.data);
      exit(1);
    }
    printf("== %s\n", kFunctions[f]);
    for (intptr_t i = 0; i < nnxCompiledModelGetNumInputs(model); ++i)
      printSpec("input", nnxCompiledModelGetInput(model, i));
    for (intptr_t i = 0; i < nnxCompiledModelGetNumOutputs(model); ++i)
      printSpec("output", nnxCompiledModelGetOutputSpec(model, i));
    NnxTensor prompts = {NNX_DTYPE_I64, 2, dims, ids};
    if (f == 0) {
      if (mlirLogicalResultIsFailure(
              nnxCompiledModelRun(model, &prompts, 1, appendToBuffer, &error)))
        exit(1);
      for (intptr_t i = 0; i < nnxCompiledModelGetNumOutputs(model); ++i) {
        NnxTensor out = nnxCompiledModelGetOutput(model, i);
        printf("prefill result %ld: (%lld, %lld, %lld)\n", (long)i,
               (long long)out.dims[0], (long long)out.dims[1],
               (long long)out.dims[2]);
      }
    }
    nnxCompiledModelDestroy(model);
    mlirModuleDestroy(module);
    clearBuffer(&error);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL.mlir INPUT.npy [WEIGHTS [DECODER]]\n",
            argv[0]);
    return 2;
  }
  checkRegistration();

  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  nnxRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  MlirModule module = mlirModuleCreateParseFromFile(ctx, str(argv[1]));
  if (mlirModuleIsNull(module))
    return 1;

  Array x = readNpy(argv[2]);
  NnxTensor input = {NNX_DTYPE_F32, x.rank, x.dims, x.data};
  NnxCompiledModel model = compileAndRun(module, NULL, input, "original");
  printSpec("spec", nnxCompiledModelGetInput(model, 0));
  printSpec("spec", nnxCompiledModelGetOutputSpec(model, 0));
  for (intptr_t i = 0; i < nnxCompiledModelGetNumParameters(model); ++i) {
    MlirStringRef key = nnxCompiledModelGetParameterKey(model, i);
    printSpec("parameter", nnxCompiledModelGetParameter(model, i));
    printf("  key %.*s\n", (int)key.length, key.data);
  }
  checkRuntimeErrors(module, model, input);
  if (argc > 3) {
    Buffer error = {NULL, 0};
    if (mlirLogicalResultIsFailure(nnxCompiledModelBindWeights(
            model, str(argv[3]), appendToBuffer, &error)) ||
        mlirLogicalResultIsFailure(
            nnxCompiledModelRun(model, &input, 1, appendToBuffer, &error))) {
      fprintf(stderr, "bind weights: %s\n", error.data);
      return 1;
    }
    printOutputs("rebound", model);
  }
  nnxCompiledModelDestroy(model);

  checkSurgery(ctx, module);
  NnxCompileOptions options = nnxCompileOptionsDefault();
  options.threads = 2;
  model = compileAndRun(module, &options, input, "widened");
  nnxCompiledModelDestroy(model);

  checkLora(ctx, argv[1], input);
  if (argc > 4)
    checkGeneration(ctx, argv[4]);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  free(x.data);
  printf("done\n");
  return 0;
}
