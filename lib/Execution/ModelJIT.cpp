//===- ModelJIT.cpp - machine code of a lowered model, cached -------------===//
#include "ModelJIT.h"

#include "CompileCache.h"
#include "ExecutionError.h"
#include "HashStream.h"

#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/LoopUnrollPass.h"
#include "llvm/Transforms/Scalar/SROA.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::nnx;

/// The functions that run the module's constructors and destructors.
static constexpr llvm::StringLiteral kInitName = "__nnx_jit_init";
static constexpr llvm::StringLiteral kFiniName = "__nnx_jit_fini";
/// The first bytes of a cache entry; the SHA-256 of the object follows.
static constexpr llvm::StringLiteral kCacheMagic = "NNXOBJ1\n";

/// How optimizeModule departs from LLVM's default pipeline; part of the
/// cache key, so that no entry of an older pipeline is served.
static constexpr llvm::StringLiteral kPipelineRevision =
    "default pipeline without full unrolling";

/// For each C-interface function `foo` defined in `module`, defines
/// `_mlir_foo(void **)`, which loads each argument from the pointer at its
/// index and stores the result through the pointer after them: one calling
/// convention for every signature (upstream's ExecutionEngine::invokePacked
/// convention). Only the entry points are wrapped: a wrapper of the forward
/// itself would load and pass each of its thousands of scalar arguments
/// (a memref is 3 + 2 x rank of them) in one block, and instruction
/// selection's store merging is quadratic in such a block (20 s of
/// ResNet-50's 25 s of compile).
static void addPackedWrappers(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::SmallVector<llvm::Function *> functions;
  for (llvm::Function &function : module.functions())
    if (!function.isDeclaration() &&
        function.getName().starts_with(kCInterfacePrefix))
      functions.push_back(&function);
  auto *type = llvm::FunctionType::get(builder.getVoidTy(), builder.getPtrTy(),
                                       /*isVarArg=*/false);
  for (llvm::Function *function : functions) {
    auto *wrapper =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                               "_mlir_" + function->getName(), module);
    builder.SetInsertPoint(llvm::BasicBlock::Create(context, "", wrapper));
    llvm::Value *packed = wrapper->getArg(0);
    llvm::SmallVector<llvm::Value *> args;
    auto slot = [&](size_t index) {
      llvm::Value *at =
          builder.CreateConstGEP1_64(builder.getPtrTy(), packed, index);
      return builder.CreateLoad(builder.getPtrTy(), at);
    };
    for (llvm::Argument &arg : function->args())
      args.push_back(builder.CreateLoad(arg.getType(), slot(arg.getArgNo())));
    llvm::Value *result = builder.CreateCall(function, args);
    if (!result->getType()->isVoidTy())
      builder.CreateStore(result, slot(function->arg_size()));
    builder.CreateRetVoid();
  }
}

/// Replaces the global `arrayName` (llvm.global_ctors or _dtors: {priority,
/// function, data} entries) by an exported function `name` that calls its
/// functions by priority, ascending, or descending for destructors.
static void lowerStructors(llvm::Module &module, llvm::StringRef arrayName,
                           llvm::StringRef name, bool descending) {
  // {priority, position in the array, function}.
  llvm::SmallVector<std::tuple<uint64_t, size_t, llvm::Function *>> entries;
  if (llvm::GlobalVariable *array = module.getNamedGlobal(arrayName)) {
    if (auto *init = dyn_cast_or_null<llvm::ConstantArray>(
            array->hasInitializer() ? array->getInitializer() : nullptr))
      for (llvm::Use &use : init->operands()) {
        auto *entry = dyn_cast<llvm::ConstantStruct>(use.get());
        if (!entry || entry->getNumOperands() < 2)
          continue;
        auto *priority = dyn_cast<llvm::ConstantInt>(entry->getOperand(0));
        auto *function = dyn_cast<llvm::Function>(entry->getOperand(1));
        if (priority && function)
          entries.emplace_back(priority->getZExtValue(), entries.size(),
                               function);
      }
    array->eraseFromParent();
  }
  // Equal priorities keep the array's order (a sort by position too, not
  // std::stable_sort, whose buffer trips a deprecation warning of
  // libstdc++ 12 under clang).
  llvm::sort(entries, [&](const auto &a, const auto &b) {
    auto [pa, ia, fa] = a;
    auto [pb, ib, fb] = b;
    if (pa != pb)
      return descending ? pa > pb : pa < pb;
    return ia < ib;
  });
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), /*isVarArg=*/false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "", function));
  for (auto &entry : entries)
    builder.CreateCall(std::get<2>(entry));
  builder.CreateRetVoid();
}

/// The host's target machine at `optLevel`.
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostMachine(unsigned optLevel,
                  std::optional<llvm::orc::JITTargetMachineBuilder> &builder) {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> host =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host)
    return host.takeError();
  host->setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
  builder = std::move(*host);
  return builder->createTargetMachine();
}

/// What decides the machine code besides the IR: the LLVM version, the
/// target triple, CPU and features, the level, the optimizer's pipeline.
static std::string machineFacts(const llvm::TargetMachine &machine,
                                unsigned optLevel) {
  std::string facts;
  for (llvm::StringRef part :
       {llvm::StringRef(LLVM_VERSION_STRING),
        llvm::StringRef(machine.getTargetTriple().str()),
        machine.getTargetCPU(), machine.getTargetFeatureString()})
    facts += part.str() + '\0';
  return facts + std::to_string(optLevel) + kPipelineRevision.str();
}

/// The cache key: a SHA-256 of the unoptimized IR and of the machine facts,
/// in hex.
static std::string cacheKey(const llvm::Module &module,
                            const llvm::TargetMachine &machine,
                            unsigned optLevel) {
  HashStream<llvm::SHA256> os;
  llvm::WriteBitcodeToFile(module, os);
  os << machineFacts(machine, optLevel);
  std::array<uint8_t, 32> hash = os.result();
  return llvm::toHex(llvm::toStringRef(hash), /*LowerCase=*/true);
}

/// Gives the functions added here (packed wrappers, constructors) the
/// `target-features` and `target-cpu` of the lowered ones
/// (nnx-cap-target-features: the module's #nnx.target, e.g. a max-isa
/// cap), so that no code of the module uses what the cap removed.
static void shareTargetFeatures(llvm::Module &module) {
  for (llvm::StringRef kind : {"target-features", "target-cpu"}) {
    llvm::Attribute value;
    for (llvm::Function &function : module.functions())
      if (!function.isDeclaration() && function.hasFnAttribute(kind))
        value = function.getFnAttribute(kind);
    if (!value.isValid())
      continue;
    for (llvm::Function &function : module.functions())
      if (!function.isDeclaration() && !function.hasFnAttribute(kind))
        function.addFnAttr(value);
  }
}

/// `module` in LLVM IR for `machine`, with the packed wrappers and the
/// constructor and destructor functions: what the optimizer gets, the same
/// for the JIT and an object compiled ahead of time.
static llvm::Expected<std::unique_ptr<llvm::Module>>
translateForMachine(ModuleOp module, llvm::LLVMContext &context,
                    const llvm::TargetMachine &machine) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return makeError("cannot translate the lowered module to LLVM IR");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  addPackedWrappers(*llvmModule);
  lowerStructors(*llvmModule, "llvm.global_ctors", kInitName, false);
  lowerStructors(*llvmModule, "llvm.global_dtors", kFiniName, true);
  shareTargetFeatures(*llvmModule);
  return std::move(llvmModule);
}

/// Whether a function of `module` calls through a pointer.
static bool hasIndirectCalls(const llvm::Module &module) {
  for (const llvm::Function &function : module)
    for (const llvm::Instruction &inst : llvm::instructions(function))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
        if (call->isIndirectCall())
          return true;
  return false;
}

/// Runs LLVM's default pipeline at `optLevel` (0-3) on `module` for
/// `machine`, as `opt -O<optLevel>` does, but without full unrolling.
/// The kernels' register tiles are already unrolled and vectorized by the
/// schedule; the loops left around them (a transpose's 2 x 2 x 8 outer
/// loops, a pooling window) are what LLVM fully unrolled, each around a
/// vectorized, interleaved inner loop: functions of thousands of lines that
/// Loop Strength Reduction then spent most of the compile on (a Llama
/// family file: 2.6 s of LLVM, 1.2 s of it LSR), with no faster code
/// (ResNet-18, MobileNetV2 and EfficientNet-B0 ran as fast or faster
/// without it; docs/Lowering.md, "Compile time"). Partial and runtime
/// unrolling stay, where the default pipeline has them: after the
/// vectorizer. Unlike upstream's
/// makeOptimizingTransformer, the pipeline runs with LLVM's standard
/// instrumentations, so a function marked `optnone` (the glue that
/// nnx-outline-kernels leaves) is skipped by every function pass: without
/// them the forward of a deep model, thousands of calls in one block, spent
/// most of its compile time in ConstraintElimination (ResNet-152: 15 s).
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned optLevel) {
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(module.getContext(),
                                                  /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &modules);
  // CalledValuePropagation only annotates indirect calls with their possible
  // callees, but it solves a lattice over every value of the module: 4.6 s
  // of ResNet-152's compile, for the forward's thousands of arguments.
  // Without an indirect call it has nothing to do.
  if (!hasIndirectCalls(module))
    callbacks.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) {
          return pass != "CalledValuePropagationPass";
        });
  // LoopUnrolling off drops both unroll passes of the default pipeline
  // (the full unrolling before the vectorizer, the unrolling after it);
  // the latter comes back without full unrolling.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  builder.registerVectorizerEndEPCallback([](llvm::FunctionPassManager &passes,
                                             llvm::OptimizationLevel level) {
    passes.addPass(
        llvm::LoopUnrollPass(llvm::LoopUnrollOptions(level.getSpeedupLevel())
                                 .setFullUnrollMaxCount(1)));
    passes.addPass(llvm::SROAPass(llvm::SROAOptions::PreserveCFG));
    passes.addPass(llvm::InstCombinePass());
  });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::OptimizationLevel level = levels[std::min(optLevel, 3u)];
  llvm::ModulePassManager passes =
      level == llvm::OptimizationLevel::O0
          ? builder.buildO0DefaultPipeline(level)
          : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, modules);
}

namespace {
/// The code generator's passes, all but Loop Strength Reduction. LSR
/// rewrites a loop's address arithmetic around its induction variables;
/// the schedule's loops already step pointers by constants, and LSR's
/// search over the formulas of their many addresses (a register tile reads
/// 6 rows of A and 4 vectors of B per K step) was ~15% of a convnet's
/// compile (ResNet-50: 0.8 of 5.3 CPU s) for the same inner loops (one
/// instruction more per K step of 24 FMAs) and forwards as fast
/// (docs/Lowering.md, "Compile time"). A gate on the module's context,
/// rather than LLVM's global -disable-lsr, leaves a host compiler's own
/// LLVM compiles as they were.
class CodegenPassGate final : public llvm::OptPassGate {
public:
  bool isEnabled() const override { return true; }
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) const override {
    return pass != "Loop Strength Reduction";
  }
};
} // namespace

/// The object code of `module` (optimized) from `machine`'s code generator.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
emitObject(llvm::Module &module, llvm::TargetMachine &machine) {
  // Stateless: one for every context, on any thread.
  static CodegenPassGate gate;
  module.getContext().setOptPassGate(gate);
  llvm::orc::SimpleCompiler compiler(machine);
  return compiler(module);
}

/// Optimizes and compiles `module` for `machine`.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
compileObject(llvm::Module &module, llvm::TargetMachine &machine,
              unsigned optLevel) {
  optimizeModule(module, machine, optLevel);
  return emitObject(module, machine);
}

/// The object of `module`: from the cache when `options.cacheDir` holds it
/// (`fromCache` is then set), else compiled (and cached under `key`).
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
loadOrCompile(ModuleOp module, const ModelJITOptions &options,
              llvm::TargetMachine &machine, bool &fromCache, std::string &key) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> translated =
      translateForMachine(module, context, machine);
  if (!translated)
    return translated.takeError();
  std::unique_ptr<llvm::Module> &llvmModule = *translated;

  std::string path;
  if (!options.cacheDir.empty()) {
    key = cacheKey(*llvmModule, machine, options.optLevel);
    path = cacheEntryPath(options.cacheDir, key, "nnxobj");
    if (std::unique_ptr<llvm::MemoryBuffer> cached =
            readCacheEntry(path, kCacheMagic)) {
      fromCache = true;
      return std::move(cached);
    }
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
      compileObject(*llvmModule, machine, options.optLevel);
  if (!object)
    return object.takeError();
  if (!path.empty())
    if (llvm::Error err = writeCacheEntry(options.cacheDir, path, kCacheMagic,
                                          (*object)->getBuffer()))
      return std::move(err);
  return object;
}

ModelJIT::ModelJIT() = default;

/// Defines the symbols of `options.symbolMaps` and the process's (with
/// `options.sharedLibPaths`, loaded for good) in `jit`'s main library.
static llvm::Error defineSymbols(llvm::orc::LLJIT &jit,
                                 const ModelJITOptions &options) {
  for (const std::string &library : options.sharedLibPaths) {
    std::string message;
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(library.c_str(),
                                                          &message))
      return makeError("cannot load the shared library '" + library +
                       "': " + message);
  }
  llvm::orc::JITDylib &main = jit.getMainJITDylib();
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>>
      process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          jit.getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  llvm::orc::MangleAndInterner interner(jit.getExecutionSession(),
                                        jit.getDataLayout());
  for (const auto &map : options.symbolMaps)
    if (llvm::Error err =
            main.define(llvm::orc::absoluteSymbols(map(interner))))
      return err;
  return llvm::Error::success();
}

/// The host's machine at `options`'s optimization level (clamped to 3).
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createJITMachine(ModelJITOptions &options,
                 std::optional<llvm::orc::JITTargetMachineBuilder> &builder) {
  options.optLevel = std::min(options.optLevel, 3u);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createHostMachine(options.optLevel, builder);
  if (!machine)
    return makeError("JIT compilation failed: " +
                     llvm::toString(machine.takeError()));
  return machine;
}

llvm::Expected<std::string> mlir::nnx::describeHostMachine(unsigned optLevel) {
  ModelJITOptions options;
  options.optLevel = optLevel;
  std::optional<llvm::orc::JITTargetMachineBuilder> builder;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createJITMachine(options, builder);
  if (!machine)
    return machine.takeError();
  return machineFacts(**machine, options.optLevel);
}

llvm::Expected<std::unique_ptr<ModelJIT>>
ModelJIT::createWith(const ModelJITOptions &options, ObjectSource getObject) {
  ModelJITOptions clamped = options;
  std::optional<llvm::orc::JITTargetMachineBuilder> builder;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createJITMachine(clamped, builder);
  if (!machine)
    return machine.takeError();
  std::unique_ptr<ModelJIT> result(new ModelJIT());
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
      getObject(**machine, clamped, *result);
  if (!object)
    return object.takeError();
  if (!*object)
    return nullptr;
  result->object = std::move(*object);
  if (llvm::Error err = result->load(std::move(*builder), **machine, clamped))
    return std::move(err);
  return result;
}

llvm::Expected<std::unique_ptr<ModelJIT>>
ModelJIT::create(ModuleOp module, const ModelJITOptions &options) {
  return createWith(options,
                    [&](llvm::TargetMachine &machine,
                        const ModelJITOptions &clamped, ModelJIT &jit) {
                      return loadOrCompile(module, clamped, machine,
                                           jit.fromCache, jit.objectKey);
                    });
}

llvm::Expected<std::unique_ptr<ModelJIT>>
ModelJIT::createFromCache(llvm::StringRef objectKey,
                          const ModelJITOptions &options) {
  return createWith(
      options,
      [&](llvm::TargetMachine &, const ModelJITOptions &, ModelJIT &jit)
          -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
        std::unique_ptr<llvm::MemoryBuffer> cached = readCacheEntry(
            cacheEntryPath(options.cacheDir, objectKey, "nnxobj"), kCacheMagic);
        jit.objectKey = objectKey.str();
        jit.fromCache = true;
        return std::move(cached);
      });
}

llvm::Error ModelJIT::load(llvm::orc::JITTargetMachineBuilder builder,
                           llvm::TargetMachine &machine,
                           const ModelJITOptions &options) {
  if (options.perfListener)
    perfListener = llvm::JITEventListener::createPerfJITEventListener();
  llvm::JITEventListener *listener = perfListener;
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> created =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(builder))
          .setDataLayout(machine.createDataLayout())
          .setObjectLinkingLayerCreator(
              [listener](llvm::orc::ExecutionSession &es)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                auto layer =
                    std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                        es, [](const llvm::MemoryBuffer &) {
                          return std::make_unique<llvm::SectionMemoryManager>();
                        });
                if (listener)
                  layer->registerJITEventListener(*listener);
                return layer;
              })
          .create();
  if (!created)
    return makeError("JIT compilation failed: " +
                     llvm::toString(created.takeError()));
  jit = std::move(*created);
  if (llvm::Error err = defineSymbols(*jit, options))
    return makeError("JIT compilation failed: " +
                     llvm::toString(std::move(err)));
  if (llvm::Error err = jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
          object->getBuffer(), "nnx-model")))
    return makeError("JIT compilation failed: " +
                     llvm::toString(std::move(err)));
  llvm::Expected<llvm::orc::ExecutorAddr> init = jit->lookup(kInitName);
  if (!init)
    return makeError("JIT compilation failed: " +
                     llvm::toString(init.takeError()));
  init->toPtr<void (*)()>()();
  initialized = true;
  return llvm::Error::success();
}

ModelJIT::~ModelJIT() {
  if (!initialized)
    return;
  if (llvm::Expected<llvm::orc::ExecutorAddr> fini = jit->lookup(kFiniName))
    fini->toPtr<void (*)()>()();
  else
    llvm::consumeError(fini.takeError());
}

llvm::Expected<void (*)(void **)>
ModelJIT::lookupPacked(llvm::StringRef name) const {
  llvm::Expected<llvm::orc::ExecutorAddr> address =
      jit->lookup(("_mlir_" + name).str());
  if (!address)
    return address.takeError();
  return address->toPtr<void (*)(void **)>();
}

llvm::StringRef ModelJIT::getObject() const { return object->getBuffer(); }

//===----------------------------------------------------------------------===//
// Ahead of time
//===----------------------------------------------------------------------===//

/// Makes every definition of `module` internal except `exported`, which are
/// renamed `<prefix><name>`.
static void internalizeAndPrefix(llvm::Module &module,
                                 llvm::ArrayRef<std::string> exported,
                                 llvm::StringRef prefix) {
  llvm::StringSet<> keep;
  for (const std::string &name : exported)
    keep.insert(name);
  auto visit = [&](llvm::GlobalValue &value) {
    if (value.isDeclaration() || value.hasLocalLinkage())
      return;
    if (keep.contains(value.getName())) {
      value.setName(prefix + value.getName());
      return;
    }
    value.setLinkage(llvm::GlobalValue::InternalLinkage);
    value.setVisibility(llvm::GlobalValue::DefaultVisibility);
  };
  for (llvm::Function &function : module.functions())
    visit(function);
  for (llvm::GlobalVariable &global : module.globals())
    visit(global);
}

/// Removes what nothing exported reaches (the packed wrappers of internal
/// functions, say); the code of the rest is unchanged.
static void removeUnreachable(llvm::Module &module,
                              llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager passes;
  passes.addPass(llvm::GlobalDCEPass());
  passes.run(module, modules);
}

/// Adds `bytes` as the exported constant `<prefix>weights`.
static void addEmbeddedBytes(llvm::Module &module, llvm::StringRef prefix,
                             llvm::StringRef bytes) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Constant *data = llvm::ConstantDataArray::getRaw(
      bytes, bytes.size(), llvm::Type::getInt8Ty(context));
  auto *array = new llvm::GlobalVariable(
      module, data->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, data, prefix + "weights");
  array->setAlignment(llvm::Align(64));
}

/// Those of `candidates` (LLVM's feature names) that the code of `module`
/// may use: enabled for `machine` as a defined function's
/// `target-features` leave them (LLVM's subtarget resolves what a feature
/// implies: "-avx" also turns off avx2 and AVX-512).
static std::vector<std::string>
getEnabledFeatures(const llvm::Module &module,
                   const llvm::TargetMachine &machine,
                   llvm::ArrayRef<llvm::StringRef> candidates) {
  llvm::StringSet<> seen, enabled;
  for (const llvm::Function &function : module.functions()) {
    if (function.isDeclaration())
      continue;
    std::string own =
        function.getFnAttribute("target-features").getValueAsString().str();
    if (!seen.insert(own).second)
      continue;
    std::string all = machine.getTargetFeatureString().str();
    if (!own.empty())
      all += "," + own;
    std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
        machine.getTarget().createMCSubtargetInfo(machine.getTargetTriple(),
                                                  machine.getTargetCPU(), all));
    for (llvm::StringRef feature : candidates)
      if (subtarget && subtarget->checkFeatures(("+" + feature).str()))
        enabled.insert(feature);
  }
  std::vector<std::string> features;
  for (llvm::StringRef feature : candidates)
    if (enabled.contains(feature))
      features.push_back(feature.str());
  return features;
}

llvm::Expected<std::string> mlir::nnx::compileObjectAheadOfTime(
    ModuleOp module, unsigned optLevel, llvm::ArrayRef<std::string> exported,
    llvm::StringRef prefix, llvm::StringRef embedded,
    llvm::ArrayRef<llvm::StringRef> checkedFeatures,
    std::vector<std::string> &features) {
  optLevel = std::min(optLevel, 3u);
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> host =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host)
    return host.takeError();
  // The JIT's machine (the host's CPU and features), for an object that
  // links into a position-independent executable or a shared library.
  host->setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
  host->setRelocationModel(llvm::Reloc::PIC_);
  host->setCodeModel(llvm::CodeModel::Small);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      host->createTargetMachine();
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateForMachine(module, context, **machine);
  if (!llvmModule)
    return llvmModule.takeError();
  optimizeModule(**llvmModule, **machine, optLevel);
  // After optimization, so that the optimized code is the JIT's.
  SmallVector<std::string> keep(exported.begin(), exported.end());
  keep.push_back(kInitName.str());
  keep.push_back(kFiniName.str());
  for (const std::string &name : keep)
    if (!(*llvmModule)->getFunction(name))
      return makeError("the lowered module defines no function '" + name + "'");
  internalizeAndPrefix(**llvmModule, keep, prefix);
  removeUnreachable(**llvmModule, **machine);
  if (!embedded.empty())
    addEmbeddedBytes(**llvmModule, prefix, embedded);
  features = getEnabledFeatures(**llvmModule, **machine, checkedFeatures);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
      emitObject(**llvmModule, **machine);
  if (!object)
    return object.takeError();
  return (*object)->getBuffer().str();
}
