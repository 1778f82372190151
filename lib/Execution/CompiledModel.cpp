//===- CompiledModel.cpp - JIT-compile and run a model's forward ----------===//
#include "nnx/Execution/CompiledModel.h"
#include "CompileCache.h"
#include "ExecutionError.h"

#include "IndexChecks.h"
#include "ModelJIT.h"
#include "Parameters.h"
#include "RuntimeDescriptor.h"
#include "RuntimeSymbols.h"
#include "TensorParallelSync.h"

#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Pipelines/ResultShapes.h"
#include "nnx/Support/DiagnosticText.h"
#include "nnx/Support/Environment.h"
#include "nnx/Support/OutputFile.h"
#include "nnx/Support/SafeTensors.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorInferTypeOpInterfaceImpl.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"

#include "nnx-aot/Runtime.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::nnx;

/// The largest rank of an array nnx-run passes.
static constexpr int64_t kMaxMemRefRank = 8;

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// TensorSpec
//===----------------------------------------------------------------------===//

bool TensorSpec::accepts(const NpyArray &array) const {
  if (array.dtype != dtype ||
      array.rank() != static_cast<int64_t>(shape.size()))
    return false;
  for (auto [expected, actual] : llvm::zip_equal(shape, array.shape))
    if (!ShapedType::isDynamic(expected) && expected != actual)
      return false;
  return true;
}

llvm::Expected<TensorSpec> mlir::nnx::makeTensorSpec(Type type,
                                                     std::string name) {
  std::string typeString;
  llvm::raw_string_ostream(typeString) << type;
  auto tensorType = dyn_cast<RankedTensorType>(type);
  std::optional<DType> dtype =
      tensorType ? getDTypeForElementType(tensorType.getElementType())
                 : std::nullopt;
  if (!dtype)
    return makeError(
        name + " of @forward has type " + typeString +
        "; nnx-run passes ranked tensors of f16, bf16, f32, f64, i32, "
        "i64 or i1");
  if (tensorType.getRank() > kMaxMemRefRank)
    return makeError(name + " of @forward has type " + typeString +
                     "; nnx-run passes tensors of rank at most " +
                     Twine(kMaxMemRefRank));
  // The static dims alone must make an array that can exist (dynamic ones
  // are checked in each run: checkResultSize).
  SmallVector<int64_t> staticDims(
      llvm::make_filter_range(tensorType.getShape(), [](int64_t d) {
        return !ShapedType::isDynamic(d);
      }));
  if (!getArrayByteSize(*dtype, staticDims))
    return makeError(name + " of @forward has type " + typeString +
                     ", whose size in bytes overflows 64 bits");
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
    return makeError("@forward: '" + attrName +
                     "' must be an array of strings");
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

void mlir::nnx::registerExecutionDialects(DialectRegistry &registry) {
  registry.insert<NNXDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
  // The shapes of tensor.expand_shape / collapse_shape results in terms of
  // their operands': the shape functions resolve through them.
  tensor::registerInferTypeOpInterfaceExternalModels(registry);
}

namespace {
/// The default hooks: every nnx attribute on lowered code is dropped.
struct NNXLLVMTranslationInterface : LLVMTranslationDialectInterface {
  using LLVMTranslationDialectInterface::LLVMTranslationDialectInterface;
};
} // namespace

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
  // The CPU pipeline's parallel loops (omp.parallel, omp.wsloop).
  registerOpenMPDialectTranslation(registry);
  // nnx's attributes (the parameter names on arguments of the lowered
  // forward) mean nothing to LLVM IR: dropped without a warning.
  registry.addExtension(+[](MLIRContext *, NNXDialect *dialect) {
    dialect->addInterfaces<NNXLLVMTranslationInterface>();
  });
}

namespace {
/// Collects the errors (with their notes) a compile step emits, so that
/// the caller's llvm::Error carries them ("model.mlir:3:5: 'nnx.linear' op
/// ...") instead of a handler printing them to stderr. Other diagnostics
/// go on to the context's handler.
class CompileDiagnostics {
public:
  explicit CompileDiagnostics(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) { return collect(diag); }) {}

  /// The collected errors, or `fallback` when there were none.
  llvm::Error takeError(const Twine &fallback) {
    std::string message = text.empty() ? fallback.str() : std::move(text);
    text.clear();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }
  /// `err` with the errors collected since the last take in its place (they
  /// say more: where, which layer); `err` alone when there were none.
  llvm::Error withCollected(llvm::Error err) {
    if (!err || text.empty())
      return err;
    llvm::consumeError(std::move(err));
    return takeError("");
  }

private:
  LogicalResult collect(Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    if (!text.empty())
      text += "\n";
    append(diag, "");
    for (Diagnostic &note : diag.getNotes()) {
      text += "\n";
      append(note, "note: ");
    }
    return success();
  }
  void append(Diagnostic &diag, StringRef prefix) {
    std::string where = formatFileLocation(diag.getLocation());
    if (!where.empty())
      text += where + ": ";
    text += prefix.str() + diag.str();
  }

  ScopedDiagnosticHandler handler;
  std::string text;
};
} // namespace

/// Fills `pipeline`, nnx-compile-pipeline's options, from `options`: the
/// model, the probe requests, the rank and the target with its pipeline's
/// options.
static void fillCompilePipelineOptions(const CompileOptions &options,
                                       NNXCompilePipelineOptions &pipeline) {
  pipeline.target = stringifyTarget(options.target).str();
  pipeline.targetOptions = options.pipelineOptions;
  pipeline.model = options.modelName;
  pipeline.family = options.probes.family;
  // The driver's lookup: the option, else $NNX_FAMILIES_DIR.
  pipeline.familiesDir = driverFamiliesDir(options.probes.familiesDir);
  pipeline.reads = ArrayRef<std::string>(options.probes.reads);
  pipeline.writes = ArrayRef<std::string>(options.probes.writes);
  pipeline.tensorParallelRanks = options.tensorParallel.ranks;
  pipeline.tensorParallelRank = options.tensorParallel.rank;
  pipeline.generate = options.generate;
  pipeline.maxLength = options.maxLength;
}

/// Writes `module` to `path` as nnx-opt prints it.
static llvm::Error writeModule(ModuleOp module, StringRef path) {
  llvm::Error err = writeOutputFile(path, [&](llvm::raw_ostream &os) {
    module->print(os);
    os << "\n";
    return llvm::Error::success();
  });
  if (err)
    return makeError("cannot write the compiled module: " +
                     llvm::toString(std::move(err)));
  return llvm::Error::success();
}

/// The specs of `types`, the last `probeNames.size()` of them probes.
static llvm::Expected<
    std::pair<std::vector<TensorSpec>, std::vector<TensorSpec>>>
makeSpecs(TypeRange types, ArrayRef<std::string> probeNames,
          StringRef plainKind, StringRef probeKind) {
  std::vector<TensorSpec> plain, probes;
  size_t numPlain = types.size() - probeNames.size();
  for (auto [i, type] : llvm::enumerate(types)) {
    bool isProbe = i >= numPlain;
    llvm::Expected<TensorSpec> spec = makeTensorSpec(
        type, isProbe
                  ? (probeKind + " '" + probeNames[i - numPlain] + "'").str()
                  : (plainKind + " " + Twine(i)).str());
    if (!spec)
      return spec.takeError();
    if (isProbe)
      spec->name = probeNames[i - numPlain];
    (isProbe ? probes : plain).push_back(std::move(*spec));
  }
  return std::make_pair(std::move(plain), std::move(probes));
}

llvm::Error CompiledModel::readSignature(func::FuncOp forward) {
  llvm::Expected<SmallVector<std::string>> writeNames =
      getProbeNames(forward, kWriteProbesAttrName);
  if (!writeNames)
    return writeNames.takeError();
  llvm::Expected<SmallVector<std::string>> readNames =
      getProbeNames(forward, kReadProbesAttrName);
  if (!readNames)
    return readNames.takeError();
  FunctionType type = forward.getFunctionType();
  size_t numParams = 0;
  if (auto names = forward->getAttrOfType<ArrayAttr>(kParameterNamesAttrName))
    numParams = names.size();
  if (writeNames->size() + numParams > type.getNumInputs() ||
      readNames->size() > type.getNumResults())
    return makeError("@forward lists more parameters and probes than it has "
                     "arguments or results");
  // <inputs>..., <parameters>..., <write probes>...
  size_t numInputs = type.getNumInputs() - numParams - writeNames->size();
  SmallVector<Type> argTypes(type.getInputs().take_front(numInputs));
  llvm::append_range(argTypes, type.getInputs().take_back(writeNames->size()));
  auto args = makeSpecs(argTypes, *writeNames, "input", "write probe");
  if (!args)
    return args.takeError();
  llvm::Expected<std::vector<IndexCheckSpec>> checks =
      readIndexChecks(forward, readNames->size());
  if (!checks)
    return checks.takeError();
  // <outputs>..., <index check pairs>..., <read probes>...
  SmallVector<Type> resultTypes(
      type.getResults().drop_back(readNames->size() + 2 * checks->size()));
  llvm::append_range(resultTypes,
                     type.getResults().take_back(readNames->size()));
  auto results = makeSpecs(resultTypes, *readNames, "output", "read probe");
  if (!results)
    return results.takeError();
  indexChecks = std::move(*checks);
  std::tie(inputs, writeProbes) = std::move(*args);
  for (auto [i, spec] : llvm::enumerate(inputs))
    spec.updatedInPlace =
        static_cast<bool>(forward.getArgAttr(i, kUpdatedInPlaceArgAttrName));
  std::tie(outputs, readProbes) = std::move(*results);
  return llvm::Error::success();
}

llvm::Error CompiledModel::readABI(ModuleOp module) {
  if (llvm::Error err =
          readSignature(module.lookupSymbol<func::FuncOp>("forward")))
    return err;
  SmallVector<std::string> measuredWrites;
  if (auto writeShapes =
          module.lookupSymbol<func::FuncOp>(kWriteShapesFuncName))
    if (auto names =
            writeShapes->getAttrOfType<ArrayAttr>(kWriteProbesAttrName))
      for (StringRef name : names.getAsValueRange<StringAttr>())
        measuredWrites.push_back(name.str());
  if (llvm::Error err = matchMeasuredWriteProbes(measuredWrites))
    return err;
  hasResultShapesFunction =
      static_cast<bool>(module.lookupSymbol(kResultShapesFuncName));
  shapeChecks =
      readShapeChecks(module.lookupSymbol<func::FuncOp>(kShapeChecksFuncName));
  return llvm::Error::success();
}

llvm::Error
CompiledModel::matchMeasuredWriteProbes(ArrayRef<std::string> names) {
  measuredWriteProbes.clear();
  for (const std::string &name : names) {
    auto it = llvm::find_if(
        writeProbes, [&](const TensorSpec &s) { return s.name == name; });
    if (it == writeProbes.end())
      return makeError("@" + kWriteShapesFuncName + " measures write probe '" +
                       name + "', which @forward does not take");
    measuredWriteProbes.push_back(it - writeProbes.begin());
  }
  return llvm::Error::success();
}

/// Writes `object` (ELF) to `path`.
static llvm::Error dumpObject(StringRef object, StringRef path) {
  llvm::Error err = writeOutputFile(path, [&](llvm::raw_ostream &os) {
    os << object;
    return llvm::Error::success();
  });
  if (err)
    return makeError("cannot write the object file: " +
                     llvm::toString(std::move(err)));
  return llvm::Error::success();
}

/// How the JIT compiles for `config` with `options`: the runtime's symbols
/// (temporaries, failed checks, memrefCopy: the runtime library an AOT
/// object links too) and the target's, the level, the compile cache.
static ModelJITOptions
jitOptionsFor(const TargetConfig &config, const CompileOptions &options,
              SmallVectorImpl<std::function<llvm::orc::SymbolMap(
                  llvm::orc::MangleAndInterner)>> &symbolMaps) {
  symbolMaps.push_back(runtimeSymbols);
  if (config.symbolMap)
    symbolMaps.push_back(config.symbolMap);
  ModelJITOptions jitOptions;
  jitOptions.optLevel = options.optLevel;
  jitOptions.sharedLibPaths = config.sharedLibPaths;
  jitOptions.symbolMaps = symbolMaps;
  jitOptions.cacheDir = options.cacheDir;
  if (jitOptions.cacheDir.empty())
    if (const char *dir = std::getenv("NNX_CACHE_DIR"))
      jitOptions.cacheDir = dir;
  // NNX_PERF_JIT=1: the compiled functions go to a jitdump file for
  // `perf inject --jit` (docs/Running.md, "Profiling").
  jitOptions.perfListener = std::getenv("NNX_PERF_JIT") != nullptr;
  return jitOptions;
}

/// Checks the loaded `engine` (the target's device, the entry points
/// `names`) and writes its object code to `options.objectFile` when one is
/// named.
static llvm::Error checkEngine(const ModelJIT &engine,
                               const TargetConfig &config,
                               const CompileOptions &options,
                               ArrayRef<StringRef> names) {
  char why[1024];
  if (config.device && config.device->check &&
      config.device->check(why, sizeof(why)))
    return makeError(why);
  for (StringRef name : names)
    if (llvm::Expected<void (*)(void **)> fn = engine.lookupPacked(name); !fn)
      return makeError("JIT compilation failed: " +
                       llvm::toString(fn.takeError()));
  if (!options.objectFile.empty())
    return dumpObject(engine.getObject(), options.objectFile);
  return llvm::Error::success();
}

/// The key of `module`'s lowering in the compile cache (CompileCache.h), or
/// nothing when it is not cached there: no cache directory, a target other
/// than the CPU, the lowered module asked for (--dump-compiled), builds
/// that cannot be told apart.
static std::optional<std::string>
loweringKeyFor(ModuleOp module, const CompileOptions &options,
               const ModelJITOptions &jitOptions) {
  if (jitOptions.cacheDir.empty() || options.target != Target::CPU ||
      !options.compiledModuleFile.empty())
    return std::nullopt;
  llvm::Expected<std::string> machine =
      describeHostMachine(jitOptions.optLevel);
  if (!machine) {
    llvm::consumeError(machine.takeError());
    return std::nullopt;
  }
  return loweringCacheKey(module,
                          {stringifyTarget(options.target).str(),
                           options.pipelineOptions, std::move(*machine)});
}

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::lower(ModuleOp module, const CompileOptions &options,
                     const TargetConfig &config, bool bindWeights) {
  llvm::Expected<std::unique_ptr<CompiledModel>> compiled =
      prepare(module, options, config, bindWeights);
  if (!compiled)
    return compiled.takeError();
  if (llvm::Error err = (*compiled)->lowerToTarget(module, options, config))
    return std::move(err);
  return compiled;
}

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::prepare(ModuleOp module, const CompileOptions &options,
                       const TargetConfig &config, bool bindWeights) {
  MLIRContext *context = module.getContext();
  DialectRegistry registry;
  registerExecutionDialects(registry);
  registerExecutionTranslations(registry);
  if (config.registerExtensions)
    config.registerExtensions(registry);
  context->appendDialectRegistry(registry);
  // The registry's dialects, loaded before the first pass manager runs
  // (the JIT translates what the target pipeline leaves).
  context->loadAllAvailableDialects();

  // Structure level -> forward level: nnx-prepare-forward, then the ABI
  // its functions' signatures and attributes describe.
  CompileDiagnostics diagnostics(context);
  std::string modelName = options.modelName;
  if (modelName.empty())
    for (auto model : module.getOps<ModelOp>()) {
      modelName = model.getSymName().str();
      break;
    }
  if (config.writeTarget)
    if (llvm::Error err = config.writeTarget(module, options.pipelineOptions))
      return std::move(err);
  {
    PassManager pm(context);
    NNXCompilePipelineOptions pipeline;
    fillCompilePipelineOptions(options, pipeline);
    addNNXPrepareStage(pm, pipeline);
    if (failed(pm.run(module)))
      return diagnostics.takeError("nnx-prepare-forward failed");
  }
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  std::unique_ptr<CompiledModel> compiled(new CompiledModel());
  compiled->target = options.target;
  compiled->parallel = options.tensorParallel;
  compiled->modelName = std::move(modelName);
  if (options.tensorParallel.ranks > 0)
    compiled->fingerprint = fingerprintProgram(module);
  if (llvm::Error err = diagnostics.withCollected(compiled->readABI(module)))
    return std::move(err);
  // The weights, checked before anything is compiled: the model's own, or
  // another checkpoint's (the model's tensors are then not read); without
  // `bindWeights` only their names, keys and types.
  compiled->parameters = std::make_unique<ParameterBindings>();
  ParameterBindings &params = *compiled->parameters;
  auto weightsStart = std::chrono::steady_clock::now();
  bool readData = bindWeights && options.weightsFile.empty();
  if (llvm::Error err = diagnostics.withCollected(
          params.readForward(forward, compiled->inputs.size(), readData)))
    return std::move(err);
  if (bindWeights && !options.weightsFile.empty())
    if (llvm::Error err = diagnostics.withCollected(
            params.readWeightsFile(options.weightsFile)))
      return std::move(err);
  compiled->weightsSeconds += secondsSince(weightsStart);
  return compiled;
}

llvm::Error CompiledModel::lowerToTarget(ModuleOp module,
                                         const CompileOptions &options,
                                         const TargetConfig &config) {
  // Forward level -> LLVM dialect.
  CompileDiagnostics diagnostics(module.getContext());
  PassManager pm(module.getContext());
  if (llvm::Error err = config.buildPipeline(pm, options.pipelineOptions))
    return err;
  if (failed(pm.run(module)))
    return diagnostics.takeError("failed to lower the forward for target '" +
                                 stringifyTarget(options.target) + "'");
  if (!options.compiledModuleFile.empty())
    if (llvm::Error err = writeModule(module, options.compiledModuleFile))
      return err;
  return diagnostics.withCollected(
      parameters->readLayouts(module.lookupSymbol("forward")));
}

std::vector<std::string> CompiledModel::getEntryPoints() const {
  std::vector<std::string> names = {(kCInterfacePrefix + "forward").str()};
  if (hasResultShapesFunction)
    names.push_back((kCInterfacePrefix + kResultShapesFuncName).str());
  if (!measuredWriteProbes.empty())
    names.push_back((kCInterfacePrefix + kWriteShapesFuncName).str());
  if (!shapeChecks.empty())
    names.push_back((kCInterfacePrefix + kShapeChecksFuncName).str());
  return names;
}

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::compile(ModuleOp module, const CompileOptions &options) {
  llvm::Expected<std::unique_ptr<CompiledModel>> compiled =
      compileHere(module, options);
  if (options.tensorParallel.ranks <= 0)
    return compiled;
  // Every rank meets the others here, compiled or not (TensorParallelSync.h).
  std::array<uint8_t, 20> fingerprint = {};
  llvm::Error local = llvm::Error::success();
  if (compiled)
    fingerprint = (*compiled)->fingerprint;
  else
    local = compiled.takeError();
  if (llvm::Error err =
          agreeOnProgram(options.tensorParallel, std::move(local), fingerprint))
    return std::move(err);
  return compiled;
}

/// The printed `nnx.parameter_layouts` of the lowered forward in `module`
/// (empty: none).
static std::string printedLayouts(ModuleOp module) {
  std::string text;
  if (Operation *forward = module.lookupSymbol("forward"))
    if (Attribute layouts = forward->getAttr(kParameterLayoutsAttrName)) {
      llvm::raw_string_ostream os(text);
      layouts.print(os);
    }
  return text;
}

llvm::Expected<std::unique_ptr<ModelJIT>>
CompiledModel::loadCachedLowering(MLIRContext *context, StringRef key,
                                  const ModelJITOptions &jitOptions) {
  std::optional<LoweringEntry> entry =
      readLoweringEntry(jitOptions.cacheDir, key);
  if (!entry)
    return nullptr;
  DictionaryAttr layouts;
  if (!entry->layouts.empty()) {
    layouts = dyn_cast_or_null<DictionaryAttr>(
        parseAttribute(entry->layouts, context));
    if (!layouts)
      return nullptr;
  }
  llvm::Expected<std::unique_ptr<ModelJIT>> engine =
      ModelJIT::createFromCache(entry->objectKey, jitOptions);
  if (!engine || !*engine)
    return engine;
  if (llvm::Error err = parameters->readLayouts(layouts))
    return std::move(err);
  return engine;
}

llvm::Expected<std::unique_ptr<ModelJIT>>
CompiledModel::lowerAndLoad(ModuleOp module, const CompileOptions &options,
                            const TargetConfig &config,
                            const ModelJITOptions &jitOptions) {
  std::optional<std::string> key = loweringKeyFor(module, options, jitOptions);
  if (key) {
    llvm::Expected<std::unique_ptr<ModelJIT>> cached =
        loadCachedLowering(module.getContext(), *key, jitOptions);
    if (!cached || *cached)
      return cached;
  }
  if (llvm::Error err = lowerToTarget(module, options, config))
    return std::move(err);
  llvm::Expected<std::unique_ptr<ModelJIT>> engine =
      ModelJIT::create(module, jitOptions);
  if (!engine)
    return engine.takeError();
  if (key && !(*engine)->getObjectKey().empty())
    if (llvm::Error err = writeLoweringEntry(
            jitOptions.cacheDir, *key,
            {(*engine)->getObjectKey().str(), printedLayouts(module)}))
      return std::move(err);
  return engine;
}

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::compileHere(ModuleOp module, const CompileOptions &options) {
  TargetConfig config;
  if (llvm::Error err = getTargetConfig(options.target, config))
    return std::move(err);
  llvm::Expected<std::unique_ptr<CompiledModel>> prepared =
      prepare(module, options, config, /*bindWeights=*/true);
  if (!prepared)
    return prepared.takeError();
  std::unique_ptr<CompiledModel> compiled = std::move(*prepared);
  CompileDiagnostics diagnostics(module.getContext());
  SmallVector<std::function<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>>
      symbolMaps;
  ModelJITOptions jitOptions = jitOptionsFor(config, options, symbolMaps);
  llvm::Expected<std::unique_ptr<ModelJIT>> engine =
      compiled->lowerAndLoad(module, options, config, jitOptions);
  if (!engine)
    return diagnostics.withCollected(engine.takeError());
  std::vector<std::string> names = compiled->getEntryPoints();
  SmallVector<StringRef> nameRefs(names.begin(), names.end());
  if (llvm::Error err = checkEngine(**engine, config, options, nameRefs))
    return std::move(err);
  compiled->engine = std::move(*engine);
  compiled->setThreads = config.setThreads;
  compiled->threads = options.threads;
  // The runtime permutes the weights into the layouts the compiled code
  // asks for and places them where it reads them (device memory on CUDA),
  // once.
  auto weightsStart = std::chrono::steady_clock::now();
  if (llvm::Error err = compiled->bindRuntime(config.device))
    return std::move(err);
  compiled->weightsSeconds += secondsSince(weightsStart);
  return compiled;
}

// The temporaries its calls cached go back to the system with it (the
// cache is shared: another model's next call refills it).
CompiledModel::~CompiledModel() { nnx_aot_release_temporaries(); }

bool CompiledModel::isFromCache() const { return engine->isFromCache(); }

ArrayRef<TensorSpec> CompiledModel::getParameters() const {
  return parameters ? parameters->getSpecs() : ArrayRef<TensorSpec>();
}

ArrayRef<std::string> CompiledModel::getParameterKeys() const {
  return parameters ? parameters->getKeys() : ArrayRef<std::string>();
}

llvm::Error CompiledModel::bindWeights(StringRef path) {
  auto start = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(callMutex);
  if (llvm::Error err = parameters->readWeightsFile(path))
    return err;
  llvm::Error err = bindRuntime(device);
  weightsSeconds = secondsSince(start);
  return err;
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

void CompiledModel::FreeRuntimeModel::operator()(nnx_aot_model *model) const {
  nnx_aot_free(model);
}

llvm::Error CompiledModel::bindRuntime(const nnx_aot_device *targetDevice) {
  device = targetDevice;
  if (!descriptor) {
    RuntimeDescriptor::Functions functions;
    auto lookup = [&](StringRef name, nnx_aot_packed_fn &fn) -> llvm::Error {
      llvm::Expected<void (*)(void **)> found =
          engine->lookupPacked((kCInterfacePrefix + name).str());
      if (!found)
        return found.takeError();
      fn = *found;
      return llvm::Error::success();
    };
    if (llvm::Error err = lookup("forward", functions.forward))
      return err;
    if (hasResultShapesFunction)
      if (llvm::Error err =
              lookup(kResultShapesFuncName, functions.resultShapes))
        return err;
    if (!measuredWriteProbes.empty())
      if (llvm::Error err = lookup(kWriteShapesFuncName, functions.writeShapes))
        return err;
    if (!shapeChecks.empty())
      if (llvm::Error err = lookup(kShapeChecksFuncName, functions.shapeChecks))
        return err;
    descriptor = std::make_unique<RuntimeDescriptor>(describeForRuntime(),
                                                     functions, device);
  }
  // The old binding goes first: its device copies are freed before the new
  // ones are made.
  runtime.reset();
  std::vector<const void *> stored;
  for (const TensorData &data : parameters->getStored())
    stored.push_back(data.bytes.data());
  nnx_aot_model *model = nullptr;
  nnx_aot_status status =
      nnx_aot_bind(descriptor->get(), stored.data(), &model);
  runtime.reset(model);
  if (status != NNX_AOT_OK)
    return makeError(model ? nnx_aot_error(model)
                           : "cannot allocate the model: out of memory");
  parameters->dropPermutedPages();
  return llvm::Error::success();
}

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

/// Checks that `arrays`, given for `specs` (the inputs, else the write
/// probes), are as many and of their dtypes and ranks; their dimensions
/// are the runtime's to check.
static llvm::Error checkKinds(ArrayRef<TensorSpec> specs,
                              ArrayRef<NpyArray> arrays, bool areInputs,
                              ArrayRef<std::string> sources) {
  if (arrays.size() != specs.size())
    return makeError("the forward takes " +
                     plural(specs.size(), areInputs ? "input" : "write probe") +
                     (areInputs ? " (" + listTypes(specs) + ")" : "") +
                     ", got " + Twine(arrays.size()));
  for (auto [i, spec, array] : llvm::enumerate(specs, arrays))
    if (array.dtype != spec.dtype ||
        array.rank() != static_cast<int64_t>(spec.shape.size()))
      return makeError(
          (areInputs ? spec.name : "write probe '" + spec.name + "'") +
          ": expected " + spec.typeString + ", got " + array.describe() +
          sourceSuffix(sources, i));
  return llvm::Error::success();
}

llvm::Error CompiledModel::checkArrays(ArrayRef<NpyArray> inputArrays,
                                       ArrayRef<NpyArray> writeArrays,
                                       const RunOptions &options) const {
  if (llvm::Error err = checkKinds(inputs, inputArrays, /*areInputs=*/true,
                                   options.inputSources))
    return err;
  return checkKinds(writeProbes, writeArrays, /*areInputs=*/false,
                    options.writeProbeSources);
}

llvm::Error CompiledModel::runtimeError(const RunOptions &options) const {
  std::string message = nnx_aot_error(runtime.get());
  int32_t blamed = nnx_aot_error_argument(runtime.get());
  if (blamed >= 0 && static_cast<size_t>(blamed) < inputs.size())
    message += sourceSuffix(options.inputSources, blamed);
  else if (blamed >= 0)
    message += sourceSuffix(options.writeProbeSources, blamed - inputs.size());
  return makeError(message);
}

void CompiledModel::setArguments(ArrayRef<NpyArray> inputArrays,
                                 ArrayRef<NpyArray> writeArrays) const {
  call.data.clear();
  call.dims.clear();
  for (ArrayRef<NpyArray> arrays : {inputArrays, writeArrays})
    for (const NpyArray &array : arrays) {
      call.data.push_back(array.data.data());
      call.dims.push_back(array.shape.data());
    }
}

/// Room for the dimensions of `specs`, and pointers to each one's.
static void makeDims(ArrayRef<TensorSpec> specs,
                     std::vector<SmallVector<int64_t, 4>> &dims,
                     SmallVectorImpl<int64_t *> &pointers) {
  for (const TensorSpec &spec : specs)
    dims.emplace_back(spec.shape.size(), 0);
  for (SmallVector<int64_t, 4> &shape : dims)
    pointers.push_back(shape.data());
}

llvm::Error CompiledModel::validate(ArrayRef<NpyArray> inputArrays,
                                    ArrayRef<NpyArray> writeArrays,
                                    const RunOptions &options) const {
  llvm::Expected<ResultShapes> shapes =
      getResultShapes(inputArrays, writeArrays, options);
  return shapes ? llvm::Error::success() : shapes.takeError();
}

llvm::Expected<std::vector<SmallVector<int64_t, 4>>>
CompiledModel::getWriteProbeShapes(ArrayRef<NpyArray> inputArrays,
                                   const RunOptions &options) const {
  if (llvm::Error err = checkKinds(inputs, inputArrays, /*areInputs=*/true,
                                   options.inputSources))
    return std::move(err);
  std::vector<SmallVector<int64_t, 4>> shapes;
  SmallVector<int64_t *> pointers;
  makeDims(writeProbes, shapes, pointers);
  std::lock_guard<std::mutex> lock(callMutex);
  setArguments(inputArrays, {});
  if (nnx_aot_write_shapes(runtime.get(), call.data.data(), call.dims.data(),
                           pointers.data()) != NNX_AOT_OK)
    return runtimeError(options);
  // What no function measures (a probe lowered by hand) stays dynamic.
  for (SmallVector<int64_t, 4> &shape : shapes)
    for (int64_t &dim : shape)
      if (dim < 0)
        dim = ShapedType::kDynamic;
  return shapes;
}

llvm::Expected<ResultShapes>
CompiledModel::getResultShapes(ArrayRef<NpyArray> inputArrays,
                               ArrayRef<NpyArray> writeArrays,
                               const RunOptions &options) const {
  if (llvm::Error err = checkArrays(inputArrays, writeArrays, options))
    return std::move(err);
  return computeResultShapes(inputArrays, writeArrays, options);
}

llvm::Expected<ResultShapes>
CompiledModel::computeResultShapes(ArrayRef<NpyArray> inputArrays,
                                   ArrayRef<NpyArray> writeArrays,
                                   const RunOptions &options) const {
  ResultShapes shapes;
  SmallVector<int64_t *> pointers;
  makeDims(outputs, shapes.outputs, pointers);
  makeDims(readProbes, shapes.readProbes, pointers);
  std::lock_guard<std::mutex> lock(callMutex);
  setArguments(inputArrays, writeArrays);
  if (nnx_aot_result_shapes(runtime.get(), call.data.data(), call.dims.data(),
                            pointers.data()) != NNX_AOT_OK)
    return runtimeError(options);
  return shapes;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// A zero-filled array of `spec`'s dtype and `shape` (the runtime checked
/// its size) for the result `label`, or an error when the system cannot
/// give its bytes. std::vector's allocation cannot fail softly (LLVM's
/// out-of-memory handler ends the process), so malloc is asked first.
static llvm::Expected<NpyArray> allocateResult(const Twine &label,
                                               const TensorSpec &spec,
                                               ArrayRef<int64_t> shape) {
  uint64_t bytes = *getArrayByteSize(spec.dtype, shape);
  // Volatile: clang removes a malloc whose result is only freed, and the
  // probe then always succeeded.
  void *volatile probe = std::malloc(std::max<uint64_t>(bytes, 1));
  bool available = probe != nullptr;
  std::free(probe);
  if (!available)
    return makeError(label + ": cannot allocate " + Twine(bytes) +
                     " bytes for the " + getDTypeName(spec.dtype) +
                     " array of shape " + formatShape(shape) + " (" +
                     spec.typeString +
                     ") that this run computes: out of "
                     "memory");
  return NpyArray(spec.dtype, shape);
}

/// Checks that `buffer`, for the result `label`, has the dtype of `spec`
/// and the shape `shape`.
static llvm::Error checkResultBuffer(const Twine &label, const TensorSpec &spec,
                                     ArrayRef<int64_t> shape,
                                     const NpyArray &buffer) {
  if (buffer.dtype == spec.dtype && ArrayRef(buffer.shape) == shape &&
      buffer.numBytes() ==
          static_cast<size_t>(buffer.numElements()) * getDTypeSize(spec.dtype))
    return llvm::Error::success();
  return makeError(label + ": the result is a " + getDTypeName(spec.dtype) +
                   " array of shape " + formatShape(shape) +
                   ", the buffer given for it is a " + buffer.describe());
}

llvm::Expected<std::vector<double>>
CompiledModel::invoke(ArrayRef<NpyArray> inputArrays,
                      ArrayRef<NpyArray> writeArrays,
                      ArrayRef<NpyArray *> results, const RunOptions &options) {
  std::vector<double> seconds;
  unsigned repeat = std::max(options.repeat, 1u);
  seconds.reserve(repeat);
  // Kept from call to call: a call like an earlier one allocates nothing.
  std::lock_guard<std::mutex> lock(callMutex);
  setArguments(inputArrays, writeArrays);
  call.results.clear();
  call.capacities.clear();
  call.resultDims.clear();
  call.resultWords.clear();
  for (NpyArray *result : results) {
    call.results.push_back(result->data.data());
    call.capacities.push_back(result->numElements());
    call.resultWords.resize(call.resultWords.size() + result->shape.size());
  }
  int64_t *words = call.resultWords.data();
  for (NpyArray *result : results) {
    call.resultDims.push_back(words);
    words += result->shape.size();
  }
  for (unsigned iteration = 0; iteration < repeat; ++iteration) {
    // The runtime copies the arguments afresh each time (the compiled code
    // may update them in place) and writes into the caller's arrays.
    if (setThreads)
      setThreads(threads);
    auto start = std::chrono::steady_clock::now();
    if (nnx_aot_run(runtime.get(), call.data.data(), call.dims.data(),
                    call.results.data(), call.capacities.data(),
                    call.resultDims.data()) != NNX_AOT_OK)
      return runtimeError(options);
    seconds.push_back(secondsSince(start));
  }
  return seconds;
}

llvm::Expected<std::vector<double>> CompiledModel::runInto(
    ArrayRef<NpyArray> inputArrays, ArrayRef<NpyArray> writeArrays,
    MutableArrayRef<NpyArray> outputArrays,
    MutableArrayRef<NpyArray> readArrays, const RunOptions &options) {
  llvm::Expected<ResultShapes> shapes =
      getResultShapes(inputArrays, writeArrays, options);
  if (!shapes)
    return shapes.takeError();
  if (outputArrays.size() != outputs.size() ||
      readArrays.size() != readProbes.size())
    return makeError("the forward has " + plural(outputs.size(), "output") +
                     " and " + plural(readProbes.size(), "read probe") +
                     ", got buffers for " + Twine(outputArrays.size()) +
                     " and " + Twine(readArrays.size()));
  SmallVector<NpyArray *> results;
  for (auto [spec, shape, array] :
       llvm::zip_equal(outputs, shapes->outputs, outputArrays)) {
    if (llvm::Error err = checkResultBuffer(spec.name, spec, shape, array))
      return std::move(err);
    results.push_back(&array);
  }
  for (auto [spec, shape, array] :
       llvm::zip_equal(readProbes, shapes->readProbes, readArrays)) {
    if (llvm::Error err = checkResultBuffer("read probe '" + spec.name + "'",
                                            spec, shape, array))
      return std::move(err);
    results.push_back(&array);
  }
  return invoke(inputArrays, writeArrays, results, options);
}

llvm::Expected<RunResult> CompiledModel::run(ArrayRef<NpyArray> inputArrays,
                                             ArrayRef<NpyArray> writeArrays,
                                             const RunOptions &options) {
  if (parallel.ranks <= 0)
    return runHere(inputArrays, writeArrays, options);
  std::vector<NpyArray> inputs, writes;
  if (llvm::Error err = shareArrays(parallel, llvm::Error::success(),
                                    inputArrays, writeArrays, inputs, writes))
    return std::move(err);
  if (parallel.rank == 0)
    return runHere(inputArrays, writeArrays, options);
  // Rank 0's arrays: this rank's sources do not name them.
  RunOptions shared = options;
  shared.inputSources = {};
  shared.writeProbeSources = {};
  return runHere(inputs, writes, shared);
}

llvm::Error CompiledModel::failCall(llvm::Error err) {
  if (parallel.ranks <= 0)
    return err;
  std::vector<NpyArray> inputs, writes;
  return shareArrays(parallel, std::move(err), {}, {}, inputs, writes);
}

llvm::Expected<RunResult> CompiledModel::runHere(ArrayRef<NpyArray> inputArrays,
                                                 ArrayRef<NpyArray> writeArrays,
                                                 const RunOptions &options) {
  llvm::Expected<ResultShapes> shapes =
      getResultShapes(inputArrays, writeArrays, options);
  if (!shapes)
    return shapes.takeError();
  RunResult result;
  for (auto [spec, shape] : llvm::zip_equal(outputs, shapes->outputs)) {
    llvm::Expected<NpyArray> array = allocateResult(spec.name, spec, shape);
    if (!array)
      return array.takeError();
    result.outputs.push_back(std::move(*array));
  }
  for (auto [spec, shape] : llvm::zip_equal(readProbes, shapes->readProbes)) {
    llvm::Expected<NpyArray> array =
        allocateResult("read probe '" + spec.name + "'", spec, shape);
    if (!array)
      return array.takeError();
    result.readProbes.push_back(std::move(*array));
  }
  SmallVector<NpyArray *> results;
  for (NpyArray &array : result.outputs)
    results.push_back(&array);
  for (NpyArray &array : result.readProbes)
    results.push_back(&array);
  llvm::Expected<std::vector<double>> seconds =
      invoke(inputArrays, writeArrays, results, options);
  if (!seconds)
    return seconds.takeError();
  result.seconds = std::move(*seconds);
  return result;
}
