//===- nnx-run.cpp - JIT-compile and run an nnx model on .npy arrays ------===//
//
//   nnx-run MODEL.mlir --input x.npy [--input ...] --output y.npy [...]
//           [--print] [--target=cpu|cuda] [--model NAME]
//           [--probe NAME=file.npy]... [--patch NAME=file.npy]...
//           [--family F] [--repeat N]
//
// Every problem (a malformed model, a missing file, an array of the wrong
// shape, dtype or rank, a model that does not lower) is an error message and
// a non-zero exit; inputs are checked against the forward's signature before
// anything runs.
//
//===----------------------------------------------------------------------===//
#include "nnx/Execution/CompiledModel.h"
#include "nnx/InitNNX.h"
#include "nnx/Support/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace mlir;
using namespace mlir::nnx;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("nnx-run options");

static cl::opt<std::string> modelFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(runCategory));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("An .npy file for the next input of the forward, in "
                        "order (repeat for several inputs)"),
               cl::value_desc("file.npy"), cl::cat(runCategory));
static cl::list<std::string>
    outputFiles("output",
                cl::desc("Where to write the next output of the forward as "
                         ".npy, in order (one per output, or none)"),
                cl::value_desc("file.npy"), cl::cat(runCategory));
static cl::opt<bool> printOutputs(
    "print",
    cl::desc("Print every output (and read probe): shape, dtype and values"),
    cl::cat(runCategory));
static cl::opt<Target> target(
    "target", cl::desc("Where the forward runs"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "the host CPU (default)"),
               clEnumValN(Target::CUDA, "cuda", "an NVIDIA GPU")),
    cl::cat(runCategory));
static cl::opt<std::string>
    modelName("model",
              cl::desc("The nnx.model to run when the file holds several"),
              cl::value_desc("name"), cl::cat(runCategory));
static cl::list<std::string> probeArgs(
    "probe",
    cl::desc("Read the tracing point NAME (a standardized name of --family) "
             "and write its value to file.npy"),
    cl::value_desc("NAME=file.npy"), cl::cat(runCategory));
static cl::list<std::string> patchArgs(
    "patch",
    cl::desc("Replace the value at tracing point NAME by the array in "
             "file.npy"),
    cl::value_desc("NAME=file.npy"), cl::cat(runCategory));
static cl::opt<std::string>
    family("family",
           cl::desc("Family definition that maps --probe/--patch names to "
                    "the model (a name or a path to a family file)"),
           cl::value_desc("family"), cl::cat(runCategory));
static cl::opt<std::string> familiesDir(
    "families-dir",
    cl::desc("Directory of family files (default: $NNX_FAMILIES_DIR, else "
             "the source tree's families/)"),
    cl::value_desc("dir"), cl::cat(runCategory));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run the compiled forward N times and print the mean and "
                    "minimum time per forward (excluding compilation) to "
                    "stderr"),
           cl::value_desc("N"), cl::init(1), cl::cat(runCategory));
static cl::opt<unsigned> optLevel("opt-level",
                                  cl::desc("LLVM optimization level (0-3)"),
                                  cl::init(3), cl::cat(runCategory));

namespace {
/// `--probe NAME=file.npy`.
struct NamedFile {
  std::string name;
  std::string file;
};
} // namespace

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "nnx-run") << message << "\n";
  return 1;
}

static int fail(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  return fail(message);
}

/// Splits each `NAME=file.npy` of `args` (`flag` names the option).
static llvm::Expected<std::vector<NamedFile>>
parseNamedFiles(ArrayRef<std::string> args, StringRef flag) {
  std::vector<NamedFile> result;
  llvm::StringSet<> seen;
  for (StringRef arg : args) {
    auto [name, file] = arg.split('=');
    if (name.empty() || file.empty() || !arg.contains('='))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--" + flag + " expects NAME=file.npy, got '" + arg + "'");
    if (name.find_first_of(",{} ") != StringRef::npos)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--" + flag + ": invalid name '" + name +
                                         "'");
    if (!seen.insert(name).second)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--" + flag + " " + name +
                                         " is given twice");
    result.push_back({name.str(), file.str()});
  }
  return result;
}

/// `nnx-insert-probes{family=F reads=a,b writes=c}`.
static std::string buildProbePipeline(ArrayRef<NamedFile> reads,
                                      ArrayRef<NamedFile> writes) {
  SmallVector<std::string> options;
  auto list = [&](StringRef key, ArrayRef<NamedFile> files) {
    if (files.empty())
      return;
    std::string option = (key + "=").str();
    llvm::raw_string_ostream os(option);
    llvm::interleave(
        files, os, [&](const NamedFile &f) { os << f.name; }, ",");
    options.push_back(option);
  };
  if (!family.empty())
    options.push_back("family=" + family);
  if (!familiesDir.empty())
    options.push_back("families-dir=" + familiesDir);
  list("reads", reads);
  list("writes", writes);
  return "nnx-insert-probes{" + llvm::join(options, " ") + "}";
}

static void printArray(StringRef label, const NpyArray &array) {
  llvm::outs() << label << ": " << array.describe() << "\n";
  printNpyArray(llvm::outs(), array);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // The passes --probe/--patch run by name (nnx-insert-probes, and
  // nnx-lower-probes inside the CPU pipeline).
  ::nnx::registerNNXPasses();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "nnx-run: JIT-compile an nnx model's forward and run it on .npy "
      "arrays\n\n"
      "  nnx-run model.mlir --input x.npy --output y.npy [--print]\n\n"
      "The model file holds an nnx.model (or a forward-level func.func "
      "@forward).\nInputs are checked against the forward's signature "
      "(count, dtype, rank,\nstatic dimensions) before anything runs.\n");

  // Tracing requests.
  llvm::Expected<std::vector<NamedFile>> reads =
      parseNamedFiles(probeArgs, "probe");
  if (!reads)
    return fail(reads.takeError());
  llvm::Expected<std::vector<NamedFile>> writes =
      parseNamedFiles(patchArgs, "patch");
  if (!writes)
    return fail(writes.takeError());
  bool tracing = !reads->empty() || !writes->empty();
  if (!family.empty() && !tracing)
    return fail("--family needs at least one --probe or --patch");
  if (tracing && !PassInfo::lookup("nnx-insert-probes"))
    return fail("--probe/--patch need the 'nnx-insert-probes' pass, which "
                "this build of nnx-run does not have");

  // Read every array first: a missing or malformed file fails fast.
  std::vector<NpyArray> inputs, patches;
  for (const std::string &file : inputFiles) {
    llvm::Expected<NpyArray> array = readNpy(file);
    if (!array)
      return fail(array.takeError());
    inputs.push_back(std::move(*array));
  }
  for (const NamedFile &patch : *writes) {
    llvm::Expected<NpyArray> array = readNpy(patch.file);
    if (!array)
      return fail(array.takeError());
    patches.push_back(std::move(*array));
  }

  // Parse the model; the parser's diagnostics carry file:line:col.
  DialectRegistry registry;
  ::nnx::registerNNXDialects(registry);
  MLIRContext context(registry);
  // The source location says where; the generic op dump adds only noise.
  context.printOpOnDiagnostic(false);
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(modelFile, &errorMessage);
  if (!buffer)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse model file '" + modelFile + "'");

  // Compile.
  CompileOptions compileOptions;
  compileOptions.target = target;
  compileOptions.modelName = modelName;
  compileOptions.optLevel = optLevel;
  if (tracing)
    compileOptions.preForwardPipeline = buildProbePipeline(*reads, *writes);
  auto compileStart = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<CompiledModel>> compiled =
      CompiledModel::compile(*module, compileOptions);
  if (!compiled)
    return fail(compiled.takeError());
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();
  CompiledModel &model = **compiled;

  // Match probes to the forward's trailing results / arguments by name.
  std::vector<const NamedFile *> readFor(model.getReadProbes().size());
  for (const NamedFile &read : *reads) {
    auto it = llvm::find_if(model.getReadProbes(), [&](const TensorSpec &s) {
      return s.name == read.name;
    });
    if (it == model.getReadProbes().end())
      return fail("the compiled forward has no read probe '" + read.name + "'");
    readFor[it - model.getReadProbes().begin()] = &read;
  }
  std::vector<NpyArray> orderedPatches(model.getWriteProbes().size());
  std::vector<std::string> patchSources(model.getWriteProbes().size());
  std::vector<bool> patched(model.getWriteProbes().size(), false);
  for (auto [i, write] : llvm::enumerate(*writes)) {
    auto it = llvm::find_if(model.getWriteProbes(), [&](const TensorSpec &s) {
      return s.name == write.name;
    });
    if (it == model.getWriteProbes().end())
      return fail("the compiled forward has no write probe '" + write.name +
                  "'");
    size_t index = it - model.getWriteProbes().begin();
    orderedPatches[index] = std::move(patches[i]);
    patchSources[index] = write.file;
    patched[index] = true;
  }
  for (auto [i, spec] : llvm::enumerate(model.getWriteProbes()))
    if (!patched[i])
      return fail("the forward has a write probe '" + spec.name +
                  "' but no --patch " + spec.name + "=file.npy");
  for (auto [i, spec] : llvm::enumerate(model.getReadProbes()))
    if (!readFor[i])
      return fail("the forward has a read probe '" + spec.name +
                  "' but no --probe " + spec.name + "=file.npy");
  if (!outputFiles.empty() && outputFiles.size() != model.getOutputs().size())
    return fail("the forward has " + Twine(model.getOutputs().size()) +
                " output" + (model.getOutputs().size() == 1 ? "" : "s") +
                ", got " + Twine(outputFiles.size()) + " --output");

  // Validate, then run.
  RunOptions runOptions;
  std::vector<std::string> inputSources(inputFiles.begin(), inputFiles.end());
  runOptions.inputSources = inputSources;
  runOptions.writeProbeSources = patchSources;
  runOptions.repeat = repeat;
  llvm::Expected<RunResult> result =
      model.run(inputs, orderedPatches, runOptions);
  if (!result)
    return fail(result.takeError());

  // Write and print.
  for (auto [i, array] : llvm::enumerate(result->outputs)) {
    if (i < outputFiles.size())
      if (llvm::Error err = writeNpy(outputFiles[i], array))
        return fail(std::move(err));
    if (printOutputs)
      printArray("output " + std::to_string(i), array);
  }
  for (auto [i, array] : llvm::enumerate(result->readProbes)) {
    if (llvm::Error err = writeNpy(readFor[i]->file, array))
      return fail(std::move(err));
    if (printOutputs)
      printArray("probe '" + model.getReadProbes()[i].name + "'", array);
  }

  if (repeat > 1) {
    const std::vector<double> &seconds = result->seconds;
    double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) /
                  seconds.size();
    double min = *std::min_element(seconds.begin(), seconds.end());
    llvm::errs() << llvm::format("nnx-run: compile %.3f ms; forward x%u "
                                 "(excluding compilation): mean %.6f ms, min "
                                 "%.6f ms\n",
                                 compileSeconds * 1e3, repeat.getValue(),
                                 mean * 1e3, min * 1e3);
  }
  return 0;
}
