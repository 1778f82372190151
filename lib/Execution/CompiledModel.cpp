//===- CompiledModel.cpp - JIT-compile and run a model's forward ----------===//
#include "nnx/Execution/CompiledModel.h"

#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace mlir;
using namespace mlir::nnx;

static llvm::Error makeError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

//===----------------------------------------------------------------------===//
// TensorSpec
//===----------------------------------------------------------------------===//

bool TensorSpec::accepts(const NpyArray &array) const {
  if (array.dtype != dtype || array.rank() != static_cast<int64_t>(shape.size()))
    return false;
  for (auto [expected, actual] : llvm::zip_equal(shape, array.shape))
    if (!ShapedType::isDynamic(expected) && expected != actual)
      return false;
  return true;
}

/// The spec of a forward argument or result of type `type`.
static llvm::Expected<TensorSpec> makeSpec(Type type, std::string name) {
  std::string typeString;
  llvm::raw_string_ostream(typeString) << type;
  auto tensorType = dyn_cast<RankedTensorType>(type);
  std::optional<DType> dtype =
      tensorType ? getDTypeForElementType(tensorType.getElementType())
                 : std::nullopt;
  if (!dtype)
    return makeError(name + " of @forward has type " + typeString +
                     "; nnx-run passes ranked tensors of f16, f32, f64, i32, "
                     "i64 or i1");
  TensorSpec spec;
  spec.name = std::move(name);
  spec.dtype = *dtype;
  spec.shape.assign(tensorType.getShape().begin(), tensorType.getShape().end());
  spec.typeString = std::move(typeString);
  return spec;
}

/// The probe names listed in `attrName` on `func`.
static llvm::Expected<SmallVector<std::string>>
getProbeNames(func::FuncOp func, StringRef attrName) {
  SmallVector<std::string> names;
  Attribute attr = func->getAttr(attrName);
  if (!attr)
    return names;
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array)
    return makeError("@forward: '" + attrName + "' must be an array of strings");
  for (Attribute element : array) {
    auto name = dyn_cast<StringAttr>(element);
    if (!name)
      return makeError("@forward: '" + attrName +
                       "' must be an array of strings");
    names.push_back(name.str());
  }
  return names;
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

void mlir::nnx::registerExecutionTranslations(DialectRegistry &registry) {
  static bool nativeTargetInitialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)nativeTargetInitialized;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

/// Selects the model to compile and drops the others.
static llvm::Expected<ModelOp> selectModel(ModuleOp module,
                                           StringRef modelName) {
  SmallVector<ModelOp> models(module.getOps<ModelOp>());
  std::string names;
  llvm::raw_string_ostream os(names);
  llvm::interleaveComma(models, os,
                        [&](ModelOp m) { os << "@" << m.getSymName(); });
  ModelOp selected;
  if (!modelName.empty()) {
    for (ModelOp model : models)
      if (model.getSymName() == modelName)
        selected = model;
    if (!selected)
      return makeError("no nnx.model named @" + modelName +
                       " in the module (it holds " + names + ")");
  } else if (models.size() > 1) {
    return makeError("the module holds " + Twine(models.size()) +
                     " nnx.model ops (" + names + "); choose one by name (nnx-run --model NAME)");
  } else {
    selected = models.front();
  }
  for (ModelOp model : models)
    if (model != selected)
      model.erase();
  return selected;
}

/// Runs the textual pipeline `pipeline` on `module`.
static llvm::Error runTextualPipeline(ModuleOp module, StringRef pipeline,
                                      StringRef what) {
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  OpPassManager opm(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(pipeline, opm, errorStream)))
    return makeError("invalid " + what + " pipeline '" + pipeline +
                     "': " + StringRef(errors).trim());
  PassManager pm(module.getContext());
  static_cast<OpPassManager &>(pm) = std::move(opm);
  if (failed(pm.run(module)))
    return makeError(what + " pipeline '" + pipeline + "' failed");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::compile(ModuleOp module, const CompileOptions &options) {
  MLIRContext *context = module.getContext();
  TargetConfig config;
  if (llvm::Error err = getTargetConfig(options.target, config))
    return std::move(err);
  DialectRegistry registry;
  registerExecutionTranslations(registry);
  if (config.registerExtensions)
    config.registerExtensions(registry);
  context->appendDialectRegistry(registry);
  // buildForward creates func/arith/tensor/linalg ops outside a pass manager.
  context->loadAllAvailableDialects();

  // Structure level -> forward level.
  if (!module.getOps<ModelOp>().empty()) {
    if (module.lookupSymbol("forward"))
      return makeError("the module holds both an nnx.model and a symbol "
                       "@forward; remove one");
    llvm::Expected<ModelOp> model = selectModel(module, options.modelName);
    if (!model)
      return model.takeError();
    std::string name = model->getSymName().str();
    if (!options.preForwardPipeline.empty()) {
      if (llvm::Error err = runTextualPipeline(
              module, options.preForwardPipeline, "pre-forward"))
        return std::move(err);
      *model = module.lookupSymbol<ModelOp>(name);
      if (!*model)
        return makeError("the pre-forward pipeline removed nnx.model @" +
                         name);
    }
    if (failed(buildForward(*model, "forward")))
      return makeError("failed to build the forward of nnx.model @" + name);
    model->erase();
  } else if (!options.preForwardPipeline.empty()) {
    return makeError("probes need an nnx.model; the module holds a "
                     "forward-level function");
  }
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return makeError("the module holds neither an nnx.model nor a "
                     "func.func @forward with a body");
  forward->setAttr("llvm.emit_c_interface", UnitAttr::get(context));

  // Probes become trailing arguments and results.
  bool hasProbes =
      forward.walk([](ProbeOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (hasProbes) {
    PassManager pm(context);
    pm.addPass(createNNXLowerProbesPass());
    if (failed(pm.run(module)))
      return makeError("failed to lower the probes of @forward");
    forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward)
      return makeError("nnx-lower-probes removed @forward");
  }

  // The signature.
  std::unique_ptr<CompiledModel> compiled(new CompiledModel());
  compiled->target = options.target;
  llvm::Expected<SmallVector<std::string>> writeNames =
      getProbeNames(forward, kWriteProbesAttrName);
  if (!writeNames)
    return writeNames.takeError();
  llvm::Expected<SmallVector<std::string>> readNames =
      getProbeNames(forward, kReadProbesAttrName);
  if (!readNames)
    return readNames.takeError();
  FunctionType type = forward.getFunctionType();
  if (writeNames->size() > type.getNumInputs() ||
      readNames->size() > type.getNumResults())
    return makeError("@forward lists more probes than it has arguments or "
                     "results");
  size_t numInputs = type.getNumInputs() - writeNames->size();
  size_t numOutputs = type.getNumResults() - readNames->size();
  for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
    bool isProbe = i >= numInputs;
    llvm::Expected<TensorSpec> spec = makeSpec(
        argType, isProbe ? "write probe '" + (*writeNames)[i - numInputs] + "'"
                         : "input " + std::to_string(i));
    if (!spec)
      return spec.takeError();
    if (isProbe)
      spec->name = (*writeNames)[i - numInputs];
    (isProbe ? compiled->writeProbes : compiled->inputs)
        .push_back(std::move(*spec));
  }
  for (auto [i, resultType] : llvm::enumerate(type.getResults())) {
    bool isProbe = i >= numOutputs;
    llvm::Expected<TensorSpec> spec = makeSpec(
        resultType, isProbe
                        ? "read probe '" + (*readNames)[i - numOutputs] + "'"
                        : "output " + std::to_string(i));
    if (!spec)
      return spec.takeError();
    if (isProbe)
      spec->name = (*readNames)[i - numOutputs];
    (isProbe ? compiled->readProbes : compiled->outputs)
        .push_back(std::move(*spec));
  }

  // Forward level -> LLVM dialect.
  PassManager pm(context);
  config.buildPipeline(pm);
  if (failed(pm.run(module)))
    return makeError("failed to lower the forward for target '" +
                     stringifyTarget(options.target) + "'");

  // LLVM dialect -> machine code.
  unsigned optLevel = std::min(options.optLevel, 3u);
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(optLevel);
  SmallVector<StringRef> libs(config.sharedLibPaths.begin(),
                              config.sharedLibPaths.end());
  engineOptions.sharedLibPaths = libs;
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return makeError("JIT compilation failed: " +
                     llvm::toString(engine.takeError()));
  // Lowered code calls into MLIR's C runner utilities (memref.copy of
  // non-contiguous memrefs becomes `memrefCopy`); resolve them from the
  // library this one links.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  if (config.symbolMap)
    (*engine)->registerSymbols(config.symbolMap);
  (*engine)->initialize();
  if (config.checkRuntime)
    if (llvm::Error err = config.checkRuntime())
      return std::move(err);
  compiled->checkRuntime = config.checkRuntime;
  if (llvm::Expected<void (*)(void **)> fn =
          (*engine)->lookupPacked("_mlir_ciface_forward");
      !fn)
    return makeError("JIT compilation failed: " +
                     llvm::toString(fn.takeError()));
  compiled->engine = std::move(*engine);
  return compiled;
}

CompiledModel::~CompiledModel() = default;

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static std::string sourceSuffix(ArrayRef<std::string> sources, size_t i) {
  if (i < sources.size() && !sources[i].empty())
    return " from " + sources[i];
  return "";
}

static std::string listTypes(ArrayRef<TensorSpec> specs) {
  std::string result;
  llvm::raw_string_ostream os(result);
  llvm::interleaveComma(specs, os,
                        [&](const TensorSpec &s) { os << s.typeString; });
  return result;
}

static std::string plural(size_t n, StringRef word) {
  return (Twine(n) + " " + word + (n == 1 ? "" : "s")).str();
}

llvm::Error CompiledModel::validate(ArrayRef<NpyArray> inputArrays,
                                    ArrayRef<NpyArray> writeArrays,
                                    const RunOptions &options) const {
  if (inputArrays.size() != inputs.size())
    return makeError("the forward takes " + plural(inputs.size(), "input") +
                     " (" + listTypes(inputs) + "), got " +
                     Twine(inputArrays.size()));
  if (writeArrays.size() != writeProbes.size())
    return makeError("the forward takes " +
                     plural(writeProbes.size(), "write probe") + ", got " +
                     Twine(writeArrays.size()));
  for (auto [i, spec, array] : llvm::enumerate(inputs, inputArrays))
    if (!spec.accepts(array))
      return makeError(spec.name + ": expected " + spec.typeString + ", got " +
                       array.describe() +
                       sourceSuffix(options.inputSources, i));
  for (auto [i, spec, array] : llvm::enumerate(writeProbes, writeArrays)) {
    if (!spec.accepts(array))
      return makeError("write probe '" + spec.name + "': expected " +
                       spec.typeString + ", got " + array.describe() +
                       sourceSuffix(options.writeProbeSources, i));
    // The batch dimension is dynamic everywhere; a substituted value must
    // agree with the inputs on it.
    if (!inputs.empty() && !spec.shape.empty() &&
        ShapedType::isDynamic(spec.shape[0]) && !inputs[0].shape.empty() &&
        ShapedType::isDynamic(inputs[0].shape[0]) &&
        array.shape[0] != inputArrays[0].shape[0])
      return makeError("write probe '" + spec.name + "': batch dimension is " +
                       Twine(array.shape[0]) + sourceSuffix(
                           options.writeProbeSources, i) +
                       ", but input 0 has batch " +
                       Twine(inputArrays[0].shape[0]));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {
/// A 64-byte aligned copy of an array the compiled code may write into.
struct WorkingCopy {
  explicit WorkingCopy(const NpyArray &array) {
    size_t bytes = (array.numBytes() + 63) / 64 * 64;
    data = std::aligned_alloc(64, bytes ? bytes : 64);
    if (data && array.numBytes())
      std::memcpy(data, array.data.data(), array.numBytes());
  }
  ~WorkingCopy() { std::free(data); }
  WorkingCopy(const WorkingCopy &) = delete;
  WorkingCopy &operator=(const WorkingCopy &) = delete;
  void *data = nullptr;
};

/// A ranked memref descriptor laid out as the C interface expects:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, every field 8
/// bytes, so a struct of descriptors is their concatenation.
void appendDescriptor(SmallVectorImpl<int64_t> &words, void *data,
                      ArrayRef<int64_t> shape) {
  words.push_back(reinterpret_cast<intptr_t>(data));
  words.push_back(reinterpret_cast<intptr_t>(data));
  words.push_back(0);
  words.append(shape.begin(), shape.end());
  SmallVector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  words.append(strides.begin(), strides.end());
}

size_t descriptorWords(size_t rank) { return 3 + 2 * rank; }

/// Copies the (possibly strided) memref described at `desc` into an array.
NpyArray copyOut(const int64_t *desc, const TensorSpec &spec) {
  size_t rank = spec.shape.size();
  const char *aligned = reinterpret_cast<const char *>(desc[1]);
  int64_t offset = desc[2];
  ArrayRef<int64_t> sizes(desc + 3, rank);
  ArrayRef<int64_t> strides(desc + 3 + rank, rank);
  NpyArray array(spec.dtype, sizes);
  size_t elementSize = getDTypeSize(spec.dtype);
  int64_t n = array.numElements();
  if (n == 0)
    return array;
  bool contiguous = true;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      contiguous = false;
    expected *= sizes[d];
  }
  const char *base = aligned + offset * elementSize;
  if (contiguous) {
    std::memcpy(array.data.data(), base, n * elementSize);
    return array;
  }
  SmallVector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += index[d] * strides[d];
    std::memcpy(array.data.data() + flat * elementSize,
                base + at * elementSize, elementSize);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return array;
}
} // namespace

llvm::Expected<RunResult> CompiledModel::run(ArrayRef<NpyArray> inputArrays,
                                             ArrayRef<NpyArray> writeArrays,
                                             const RunOptions &options) {
  if (llvm::Error err = validate(inputArrays, writeArrays, options))
    return std::move(err);

  SmallVector<TensorSpec> resultSpecs(outputs.begin(), outputs.end());
  resultSpecs.append(readProbes.begin(), readProbes.end());
  size_t resultSize = 0;
  for (const TensorSpec &spec : resultSpecs)
    resultSize += descriptorWords(spec.shape.size());

  RunResult result;
  unsigned repeat = std::max(options.repeat, 1u);
  for (unsigned iteration = 0; iteration < repeat; ++iteration) {
    // Fresh copies each time: the compiled code may update its arguments in
    // place.
    std::vector<std::unique_ptr<WorkingCopy>> copies;
    SmallVector<int64_t> argWords;
    SmallVector<size_t> argOffsets;
    auto addArgument = [&](const NpyArray &array) {
      copies.push_back(std::make_unique<WorkingCopy>(array));
      argOffsets.push_back(argWords.size());
      appendDescriptor(argWords, copies.back()->data, array.shape);
      return copies.back()->data != nullptr;
    };
    for (const NpyArray &array : inputArrays)
      if (!addArgument(array))
        return makeError("out of memory copying the inputs");
    for (const NpyArray &array : writeArrays)
      if (!addArgument(array))
        return makeError("out of memory copying the write probes");

    SmallVector<int64_t> resultWords(resultSize, 0);
    SmallVector<void *> args;
    if (!resultSpecs.empty())
      args.push_back(resultWords.data());
    for (size_t offset : argOffsets)
      args.push_back(argWords.data() + offset);
    SmallVector<void *> packed;
    for (void *&arg : args)
      packed.push_back(&arg);

    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = engine->invokePacked("_mlir_ciface_forward", packed))
      return std::move(err);
    if (checkRuntime)
      if (llvm::Error err = checkRuntime())
        return std::move(err);
    auto stop = std::chrono::steady_clock::now();
    result.seconds.push_back(
        std::chrono::duration<double>(stop - start).count());

    // Copy the results out (last run only), then free what the compiled code
    // allocated: not our own buffers, not constants (memref.get_global marks
    // them with 0xdeadbeef), each allocation once.
    llvm::DenseSet<void *> owned;
    for (auto &copy : copies)
      owned.insert(copy->data);
    llvm::DenseSet<void *> freed;
    const int64_t *desc = resultWords.data();
    for (auto [i, spec] : llvm::enumerate(resultSpecs)) {
      if (iteration + 1 == repeat) {
        NpyArray array = copyOut(desc, spec);
        (i < outputs.size() ? result.outputs : result.readProbes)
            .push_back(std::move(array));
      }
      void *allocated = reinterpret_cast<void *>(desc[0]);
      if (allocated && allocated != reinterpret_cast<void *>(0xdeadbeef) &&
          !owned.contains(allocated) && freed.insert(allocated).second)
        std::free(allocated);
      desc += descriptorWords(spec.shape.size());
    }
  }
  return result;
}
