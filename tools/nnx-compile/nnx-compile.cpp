//===- nnx-compile.cpp - compile a model's forward ahead of time ----------===//
//
//   nnx-compile MODEL.mlir -o model.o --header model.h [--name mlp]
//               [--model NAME] [--pipeline-options '...'] [--opt-level N]
//               [--probe NAME]... [--patch NAME]... [--family F]
//               [--embed-weights [--weights FILE]]
//
// Writes the forward nnx-run would JIT as a relocatable object and a C
// header that declares it in plain C (nnx/Execution/AheadOfTime.h). The
// program links the object with libnnx_aot_runtime.a (and libomp, libm): no
// MLIR or LLVM at run time. The weights are bound when the program loads
// the model, from a safetensors file (nnx-opt --nnx-externalize-weights
// writes the model's own) or, with --embed-weights, from the object.
//
//===----------------------------------------------------------------------===//
#include "nnx/Execution/AheadOfTime.h"
#include "nnx/Support/InputGuard.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::nnx;
namespace cl = llvm::cl;

static cl::OptionCategory compileCategory("nnx-compile options");

static cl::opt<std::string> modelFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(compileCategory));
static cl::opt<std::string> objectFile("o", cl::Required,
                                       cl::desc("The object file to write"),
                                       cl::value_desc("model.o"),
                                       cl::cat(compileCategory));
static cl::opt<std::string>
    headerFile("header", cl::Required,
               cl::desc("The C header to write (its functions are "
                        "<name>_load, <name>_forward, ...)"),
               cl::value_desc("model.h"), cl::cat(compileCategory));
static cl::opt<std::string> symbolName(
    "name",
    cl::desc("Prefix of the header's functions and the object's symbols (a "
             "C identifier; default: the model's name, else 'model')"),
    cl::value_desc("name"), cl::cat(compileCategory));
static cl::opt<std::string>
    modelName("model",
              cl::desc("The nnx.model to compile when the file holds several"),
              cl::value_desc("name"), cl::cat(compileCategory));
static cl::list<std::string> probeNames(
    "probe",
    cl::desc("Read the tracing point NAME: one more result of the forward"),
    cl::value_desc("NAME"), cl::cat(compileCategory));
static cl::list<std::string> patchNames(
    "patch",
    cl::desc("Replace the value at tracing point NAME: one more argument "
             "of the forward"),
    cl::value_desc("NAME"), cl::cat(compileCategory));
static cl::opt<std::string>
    family("family",
           cl::desc("Family definition that maps --probe/--patch names to "
                    "the model (a name or a path to a family file)"),
           cl::value_desc("family"), cl::cat(compileCategory));
static cl::opt<std::string> familiesDir(
    "families-dir",
    cl::desc("Directory of family files (default: $NNX_FAMILIES_DIR, else "
             "the source tree's families/)"),
    cl::value_desc("dir"), cl::cat(compileCategory));
static cl::opt<bool> embedWeights(
    "embed-weights",
    cl::desc("Link the weights into the object too (the model's own, or "
             "--weights'), so that <name>_load(NULL, ...) needs no file"),
    cl::cat(compileCategory));
static cl::opt<std::string> weightsFile(
    "weights",
    cl::desc("With --embed-weights: link the tensors of this safetensors "
             "file instead of the model's own (keys, dtypes and shapes "
             "checked)"),
    cl::value_desc("file.safetensors"), cl::cat(compileCategory));
static cl::opt<unsigned> optLevel("opt-level",
                                  cl::desc("LLVM optimization level (0-3)"),
                                  cl::init(3), cl::cat(compileCategory));
static cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    cl::desc("Options of nnx-cpu-pipeline, as nnx-run takes them (e.g. "
             "'max-isa=avx2' for an older CPU, 'parallel=false' for an "
             "object that needs no libomp)"),
    cl::value_desc("options"), cl::cat(compileCategory));

static cl::opt<std::string> generateFunction(
    "generate",
    cl::desc("Compile a function of the cached generation that "
             "nnx-derive-kv-cache derives instead of the forward: prefill "
             "(the prompts' ids -> logits and the KV cache) or decode (new "
             "ids, the position and the cache -> logits and the updated "
             "cache); docs/Generation.md"),
    cl::value_desc("prefill|decode"), cl::cat(compileCategory));
static cl::opt<int64_t>
    maxLength("max-length",
              cl::desc("With --generate: the positions the KV cache holds"),
              cl::value_desc("L"), cl::init(0), cl::cat(compileCategory));

static int fail(llvm::Error error) {
  llvm::WithColor::error(llvm::errs(), "nnx-compile")
      << llvm::toString(std::move(error)) << "\n";
  return 1;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The prefix: --name, else the model's name, as a C identifier.
static llvm::Expected<std::string> choosePrefix(ModuleOp module) {
  std::string name = symbolName;
  if (name.empty())
    name = modelName;
  if (name.empty())
    for (auto model : module.getOps<ModelOp>()) {
      name = model.getSymName().str();
      break;
    }
  if (symbolName.getNumOccurrences() == 0 && !name.empty())
    for (char &c : name)
      if (!llvm::isAlnum(c))
        c = '_';
  if (name.empty())
    name = "model";
  bool valid = !llvm::isDigit(name[0]) && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
  if (!valid)
    return makeError("--name: '" + name +
                     "' is not a C identifier (letters, digits and '_', not "
                     "starting with a digit)");
  return name;
}

/// Writes `text` to `path` (whole, or not at all).
static llvm::Error writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &message);
  if (!file)
    return makeError(message);
  file->os() << text;
  file->os().flush();
  if (file->os().has_error())
    return makeError("cannot write '" + path +
                     "': " + file->os().error().message());
  file->keep();
  return llvm::Error::success();
}

static llvm::Error compileFile() {
  if (optLevel > 3)
    return makeError("--opt-level: " + llvm::Twine(optLevel) +
                     " is not an LLVM optimization level (0-3)");
  if (weightsFile.getNumOccurrences() && !embedWeights)
    return makeError("--weights: the weights are bound when the program "
                     "loads the model; --weights names what to link into "
                     "the object, with --embed-weights");
  if (generateFunction.getNumOccurrences() && !maxLength.getNumOccurrences())
    return makeError("--generate: --max-length, the positions of the KV "
                     "cache, is required (prefill and decode must be "
                     "compiled with the same)");
  if (maxLength.getNumOccurrences() && !generateFunction.getNumOccurrences())
    return makeError("--max-length: only with --generate");
  if (maxLength.getNumOccurrences() && maxLength <= 0)
    return makeError("--max-length: " + llvm::Twine(maxLength) +
                     " is not a positive length");
  DialectRegistry registry;
  registerExecutionDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(modelFile, &message);
  if (!buffer)
    return makeError(message);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, llvm::errs());
  OwningOpRef<ModuleOp> module =
      parseGuarded(sourceMgr, &context, llvm::errs());
  if (!module)
    return makeError("cannot parse model file '" + modelFile + "'");
  llvm::Expected<std::string> prefix = choosePrefix(*module);
  if (!prefix)
    return prefix.takeError();

  CompileOptions options;
  options.modelName = modelName;
  options.optLevel = optLevel;
  options.pipelineOptions = pipelineOptions;
  options.weightsFile = weightsFile;
  options.probes.family = family;
  options.probes.familiesDir = familiesDir;
  options.probes.reads.assign(probeNames.begin(), probeNames.end());
  options.probes.writes.assign(patchNames.begin(), patchNames.end());
  options.generate = generateFunction;
  options.maxLength = maxLength;
  llvm::Expected<CompiledObject> object =
      compileAheadOfTime(*module, options, *prefix, embedWeights);
  if (!object)
    return object.takeError();
  if (llvm::Error err = writeFile(objectFile, object->object))
    return err;
  return writeFile(headerFile,
                   emitObjectHeader(*object, llvm::sys::path::filename(
                                                 modelFile.getValue())));
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "nnx-compile: compile an nnx model's forward ahead of time, to an "
      "object\nfile and a C header\n\n"
      "  nnx-compile model.mlir -o model.o --header model.h\n\n"
      "The program links model.o with -lnnx_aot_runtime -lomp -lm and "
      "binds the\nweights from a safetensors file when it loads the model "
      "(docs/Integration.md).\n");
  if (llvm::Error err = compileFile())
    return fail(std::move(err));
  return 0;
}
