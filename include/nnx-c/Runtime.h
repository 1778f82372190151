//===- Runtime.h - C API: compile a model once, run it many times -*- C -*-===//
//
// Plain C over the C++ runtime mlir::nnx::CompiledModel
// (nnx/Execution/CompiledModel.h): compile an nnx model (or a forward-level
// module) for a target, query its signature, run it on dense C-order
// tensors, bind another checkpoint's weights.
//
// Ownership:
// - Create clones the module it is given (the clone is lowered; the
//   caller's module is unchanged). The MlirContext must outlive the handle.
// - Run copies the input tensors; the output tensors belong to the model
//   and stay valid until the next Run, BindWeights or Destroy.
// - Names and dims returned by the getters live as long as the handle.
//
// Errors: every function that can fail returns an MlirLogicalResult and, on
// failure, passes one message to `onError(text, userData)` (may be NULL):
// what failed, then the MLIR diagnostics with their locations. A handle is
// not safe to use from two threads at once.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_C_RUNTIME_H
#define NNX_C_RUNTIME_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Element types, as nnx's .npy support knows them (little-endian; BF16 as
/// its 16 bits, Bool as one byte).
typedef enum NnxDType {
  NNX_DTYPE_F16 = 0,
  NNX_DTYPE_BF16 = 1,
  NNX_DTYPE_F32 = 2,
  NNX_DTYPE_F64 = 3,
  NNX_DTYPE_I32 = 4,
  NNX_DTYPE_I64 = 5,
  NNX_DTYPE_BOOL = 6,
} NnxDType;

/// A dimension a spec leaves open (the batch, a sequence length).
#define NNX_DYNAMIC_DIM ((int64_t)-1)

/// A dense, C-order tensor: `rank` dims, the elements at `data`.
typedef struct NnxTensor {
  NnxDType dtype;
  intptr_t rank;
  const int64_t *dims;
  void *data;
} NnxTensor;

/// One input, output or parameter of the compiled forward: "input 0",
/// "output 1", or a parameter's dotted name ("fc1.weight"); dims may be
/// NNX_DYNAMIC_DIM.
typedef struct NnxTensorSpec {
  MlirStringRef name;
  NnxDType dtype;
  intptr_t rank;
  const int64_t *dims;
} NnxTensorSpec;

/// Targets of nnxCompileOptions.target.
typedef enum NnxTarget {
  NNX_TARGET_CPU = 0,
  NNX_TARGET_CUDA = 1,
} NnxTarget;

/// What Create takes besides the module. Strings of length 0 (or data NULL)
/// select the default. nnxCompileOptionsDefault() fills it.
typedef struct NnxCompileOptions {
  NnxTarget target;
  /// The nnx.model to compile; empty: the module's only model.
  MlirStringRef modelName;
  /// Threads of the compiled code's parallel loops; 0: one per hardware
  /// thread.
  unsigned threads;
  /// LLVM optimization level of the JIT, 0-3 (default 3).
  unsigned optLevel;
  /// A safetensors file to run with instead of the model's own weights.
  MlirStringRef weightsFile;
  /// Options of the target pipeline in its own syntax
  /// ("max-isa=avx2 bf16-dot=off" for nnx-cpu-pipeline).
  MlirStringRef pipelineOptions;
  /// A compile-cache directory; empty: $NNX_CACHE_DIR, else none.
  MlirStringRef cacheDir;
  /// Cached generation (docs/Generation.md): "prefill" or "decode" compiles
  /// that function of nnx-derive-kv-cache, with a KV cache of `maxLength`
  /// positions (> 0), instead of the forward; empty: the forward.
  MlirStringRef generate;
  int64_t maxLength;
} NnxCompileOptions;

/// An opaque compiled model.
typedef struct NnxCompiledModel {
  void *ptr;
} NnxCompiledModel;

/// The defaults: CPU, the only model, all threads, -O3, the model's weights.
MLIR_CAPI_EXPORTED NnxCompileOptions nnxCompileOptionsDefault(void);

/// Compiles the nnx.model (or func.func @forward) of a clone of `module`.
/// On success `*result` is the model (free it with Destroy); on failure it
/// is null (nnxCompiledModelIsNull).
MLIR_CAPI_EXPORTED MlirLogicalResult nnxCompiledModelCreate(
    MlirModule module, const NnxCompileOptions *options,
    NnxCompiledModel *result, MlirStringCallback onError, void *userData);

/// Frees the model and the outputs of its last run. A null model is fine.
MLIR_CAPI_EXPORTED void nnxCompiledModelDestroy(NnxCompiledModel model);

static inline bool nnxCompiledModelIsNull(NnxCompiledModel model) {
  return !model.ptr;
}

MLIR_CAPI_EXPORTED intptr_t nnxCompiledModelGetNumInputs(NnxCompiledModel m);
MLIR_CAPI_EXPORTED NnxTensorSpec nnxCompiledModelGetInput(NnxCompiledModel m,
                                                          intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t nnxCompiledModelGetNumOutputs(NnxCompiledModel m);
MLIR_CAPI_EXPORTED NnxTensorSpec
nnxCompiledModelGetOutputSpec(NnxCompiledModel m, intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t
nnxCompiledModelGetNumParameters(NnxCompiledModel m);
/// A parameter as stored; its name is the dotted path.
MLIR_CAPI_EXPORTED NnxTensorSpec
nnxCompiledModelGetParameter(NnxCompiledModel m, intptr_t pos);
/// The key BindWeights looks the parameter up by in a safetensors file
/// (its #nnx.external key, else its dotted name).
MLIR_CAPI_EXPORTED MlirStringRef
nnxCompiledModelGetParameterKey(NnxCompiledModel m, intptr_t pos);

/// Runs the forward on `numInputs` tensors, checked first against the
/// signature (count, dtype, rank, static dims; dims that must agree): an
/// error names the input, the dimension, the expected and given size, and
/// nothing runs. The outputs are then nnxCompiledModelGetOutput(m, i).
MLIR_CAPI_EXPORTED MlirLogicalResult nnxCompiledModelRun(
    NnxCompiledModel m, const NnxTensor *inputs, intptr_t numInputs,
    MlirStringCallback onError, void *userData);

/// Output `pos` of the last successful Run (an empty tensor before one).
MLIR_CAPI_EXPORTED NnxTensor nnxCompiledModelGetOutput(NnxCompiledModel m,
                                                       intptr_t pos);

/// Runs with the tensors of the safetensors file at `path` from now on:
/// every parameter's key must be there with its dtype and shape (checked
/// before anything changes). The previous run's outputs are dropped.
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxCompiledModelBindWeights(NnxCompiledModel m, MlirStringRef path,
                            MlirStringCallback onError, void *userData);

/// NumPy's name of `dtype`: "float32", "int64", ...
MLIR_CAPI_EXPORTED MlirStringRef nnxDTypeGetName(NnxDType dtype);

#ifdef __cplusplus
}
#endif

#endif // NNX_C_RUNTIME_H
