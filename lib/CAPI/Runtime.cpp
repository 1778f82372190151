//===- Runtime.cpp - C API: compile a model once, run it many times -------===//
#include "nnx-c/Runtime.h"

#include "Diagnostics.h"

#include "nnx/Execution/CompiledModel.h"
#include "nnx/Support/Npy.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::nnx;
using mlir::nnx::capi::CapturedDiagnostics;

namespace {
/// A TensorSpec in the C API's terms, with storage for its strings and
/// dims.
struct Spec {
  std::string name;
  NnxDType dtype;
  llvm::SmallVector<int64_t, 4> dims;
};

/// What an NnxCompiledModel points to.
struct Model {
  /// The lowered clone the JIT compiled.
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<CompiledModel> compiled;
  std::vector<Spec> inputs, outputs, parameters;
  /// The outputs of the last successful run.
  std::vector<NpyArray> results;
};
} // namespace

static Model *unwrap(NnxCompiledModel model) {
  return static_cast<Model *>(model.ptr);
}

static NnxDType toC(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return NNX_DTYPE_F16;
  case DType::BF16:
    return NNX_DTYPE_BF16;
  case DType::F32:
    return NNX_DTYPE_F32;
  case DType::F64:
    return NNX_DTYPE_F64;
  case DType::I32:
    return NNX_DTYPE_I32;
  case DType::I64:
    return NNX_DTYPE_I64;
  case DType::Bool:
    return NNX_DTYPE_BOOL;
  }
  llvm_unreachable("unknown dtype");
}

/// The C++ dtype of `dtype`, or nullopt for a value outside the enum.
static std::optional<DType> fromC(NnxDType dtype) {
  switch (dtype) {
  case NNX_DTYPE_F16:
    return DType::F16;
  case NNX_DTYPE_BF16:
    return DType::BF16;
  case NNX_DTYPE_F32:
    return DType::F32;
  case NNX_DTYPE_F64:
    return DType::F64;
  case NNX_DTYPE_I32:
    return DType::I32;
  case NNX_DTYPE_I64:
    return DType::I64;
  case NNX_DTYPE_BOOL:
    return DType::Bool;
  }
  return std::nullopt;
}

static std::vector<Spec> toC(llvm::ArrayRef<TensorSpec> specs) {
  std::vector<Spec> result;
  for (const TensorSpec &spec : specs) {
    Spec &s = result.emplace_back();
    s.name = spec.name;
    s.dtype = toC(spec.dtype);
    for (int64_t dim : spec.shape)
      s.dims.push_back(ShapedType::isDynamic(dim) ? NNX_DYNAMIC_DIM : dim);
  }
  return result;
}

static NnxTensorSpec toC(const Spec &spec) {
  return {mlirStringRefCreate(spec.name.data(), spec.name.size()), spec.dtype,
          static_cast<intptr_t>(spec.dims.size()), spec.dims.data()};
}

NnxCompileOptions nnxCompileOptionsDefault(void) {
  NnxCompileOptions options;
  std::memset(&options, 0, sizeof(options));
  options.target = NNX_TARGET_CPU;
  options.optLevel = 3;
  return options;
}

/// The C++ options of `options`, or an error naming the bad field.
static llvm::Expected<CompileOptions> toCompileOptions(NnxCompileOptions c) {
  CompileOptions options;
  if (c.target == NNX_TARGET_CPU)
    options.target = Target::CPU;
  else if (c.target == NNX_TARGET_CUDA)
    options.target = Target::CUDA;
  else
    return llvm::createStringError(
        "unknown target %d (expected NNX_TARGET_CPU or NNX_TARGET_CUDA)",
        static_cast<int>(c.target));
  if (c.optLevel > 3)
    return llvm::createStringError("optLevel must be 0-3, got %u", c.optLevel);
  options.optLevel = c.optLevel;
  options.threads = c.threads;
  options.modelName = unwrap(c.modelName).str();
  options.weightsFile = unwrap(c.weightsFile).str();
  options.pipelineOptions = unwrap(c.pipelineOptions).str();
  options.cacheDir = unwrap(c.cacheDir).str();
  options.generate = unwrap(c.generate).str();
  if (!options.generate.empty() && c.maxLength <= 0)
    return llvm::createStringError(
        "generate needs maxLength, the positions of the KV cache (> 0), got "
        "%lld",
        static_cast<long long>(c.maxLength));
  options.maxLength = c.maxLength;
  return options;
}

MlirLogicalResult nnxCompiledModelCreate(MlirModule module,
                                         const NnxCompileOptions *options,
                                         NnxCompiledModel *result,
                                         MlirStringCallback onError,
                                         void *userData) {
  result->ptr = nullptr;
  llvm::Expected<CompileOptions> cppOptions =
      toCompileOptions(options ? *options : nnxCompileOptionsDefault());
  if (!cppOptions)
    return capi::fail(onError, userData,
                      "nnxCompiledModelCreate: " +
                          llvm::toString(cppOptions.takeError()),
                      "");
  ModuleOp m = unwrap(module);
  auto model = std::make_unique<Model>();
  // compile() lowers in place: the caller's module stays as it was.
  model->module = m.clone();
  CapturedDiagnostics diags(m.getContext());
  llvm::Expected<std::unique_ptr<CompiledModel>> compiled =
      CompiledModel::compile(*model->module, *cppOptions);
  if (!compiled)
    return capi::fail(onError, userData,
                      "nnxCompiledModelCreate: " +
                          llvm::toString(compiled.takeError()),
                      diags.take());
  model->compiled = std::move(*compiled);
  model->inputs = toC(model->compiled->getInputs());
  model->outputs = toC(model->compiled->getOutputs());
  model->parameters = toC(model->compiled->getParameters());
  result->ptr = model.release();
  return mlirLogicalResultSuccess();
}

void nnxCompiledModelDestroy(NnxCompiledModel model) { delete unwrap(model); }

intptr_t nnxCompiledModelGetNumInputs(NnxCompiledModel m) {
  return unwrap(m)->inputs.size();
}
NnxTensorSpec nnxCompiledModelGetInput(NnxCompiledModel m, intptr_t pos) {
  return toC(unwrap(m)->inputs.at(pos));
}
intptr_t nnxCompiledModelGetNumOutputs(NnxCompiledModel m) {
  return unwrap(m)->outputs.size();
}
NnxTensorSpec nnxCompiledModelGetOutputSpec(NnxCompiledModel m, intptr_t pos) {
  return toC(unwrap(m)->outputs.at(pos));
}
intptr_t nnxCompiledModelGetNumParameters(NnxCompiledModel m) {
  return unwrap(m)->parameters.size();
}
NnxTensorSpec nnxCompiledModelGetParameter(NnxCompiledModel m, intptr_t pos) {
  return toC(unwrap(m)->parameters.at(pos));
}
MlirStringRef nnxCompiledModelGetParameterKey(NnxCompiledModel m,
                                              intptr_t pos) {
  return wrap(llvm::StringRef(unwrap(m)->compiled->getParameterKeys()[pos]));
}

/// A copy of `tensor` (argument `index` of a run) as an NpyArray, or an
/// error naming what is malformed.
static llvm::Expected<NpyArray> toArray(const NnxTensor &tensor,
                                        intptr_t index) {
  std::string what = "input " + std::to_string(index);
  std::optional<DType> dtype = fromC(tensor.dtype);
  if (!dtype)
    return llvm::createStringError("%s: unknown dtype %d", what.c_str(),
                                   static_cast<int>(tensor.dtype));
  if (tensor.rank < 0 || (tensor.rank > 0 && !tensor.dims))
    return llvm::createStringError("%s: rank %ld without dims", what.c_str(),
                                   static_cast<long>(tensor.rank));
  llvm::ArrayRef<int64_t> dims(tensor.dims, tensor.rank);
  std::optional<uint64_t> bytes = getArrayByteSize(*dtype, dims);
  if (!bytes)
    return llvm::createStringError("%s: invalid shape %s", what.c_str(),
                                   formatShape(dims).c_str());
  if (*bytes && !tensor.data)
    return llvm::createStringError("%s: no data", what.c_str());
  NpyArray array(*dtype, dims);
  if (*bytes)
    std::memcpy(array.data.data(), tensor.data, *bytes);
  return array;
}

MlirLogicalResult nnxCompiledModelRun(NnxCompiledModel m,
                                      const NnxTensor *inputs,
                                      intptr_t numInputs,
                                      MlirStringCallback onError,
                                      void *userData) {
  Model *model = unwrap(m);
  model->results.clear();
  std::vector<NpyArray> arrays;
  std::vector<std::string> sources;
  for (intptr_t i = 0; i < numInputs; ++i) {
    llvm::Expected<NpyArray> array = toArray(inputs[i], i);
    if (!array)
      return capi::fail(
          onError, userData,
          "nnxCompiledModelRun: " + llvm::toString(array.takeError()), "");
    arrays.push_back(std::move(*array));
    sources.push_back("input " + std::to_string(i));
  }
  RunOptions options;
  options.inputSources = sources;
  llvm::Expected<RunResult> result =
      model->compiled->run(arrays, /*writeProbes=*/{}, options);
  if (!result)
    return capi::fail(
        onError, userData,
        "nnxCompiledModelRun: " + llvm::toString(result.takeError()), "");
  model->results = std::move(result->outputs);
  return mlirLogicalResultSuccess();
}

NnxTensor nnxCompiledModelGetOutput(NnxCompiledModel m, intptr_t pos) {
  Model *model = unwrap(m);
  if (pos < 0 || static_cast<size_t>(pos) >= model->results.size())
    return {NNX_DTYPE_F32, 0, nullptr, nullptr};
  NpyArray &array = model->results[pos];
  return {toC(array.dtype), static_cast<intptr_t>(array.shape.size()),
          array.shape.data(), array.data.data()};
}

MlirLogicalResult nnxCompiledModelBindWeights(NnxCompiledModel m,
                                              MlirStringRef path,
                                              MlirStringCallback onError,
                                              void *userData) {
  Model *model = unwrap(m);
  model->results.clear();
  if (llvm::Error err = model->compiled->bindWeights(unwrap(path)))
    return capi::fail(
        onError, userData,
        "nnxCompiledModelBindWeights: " + llvm::toString(std::move(err)), "");
  return mlirLogicalResultSuccess();
}

MlirStringRef nnxDTypeGetName(NnxDType dtype) {
  std::optional<DType> cpp = fromC(dtype);
  return wrap(cpp ? getDTypeName(*cpp) : llvm::StringRef("unknown"));
}
