//===- Runner.cpp - run a model file on .npy files ------------------------===//
#include "nnx/Execution/Runner.h"
#include "ExecutionError.h"

#include "nnx/Execution/CompiledModel.h"
#include "nnx/Support/InputGuard.h"
#include "nnx/Support/Npy.h"
#include "nnx/Support/SafeTensors.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace mlir;
using namespace mlir::nnx;

llvm::Expected<std::vector<NamedFile>>
mlir::nnx::parseNamedFiles(ArrayRef<std::string> args, StringRef flag) {
  std::vector<NamedFile> result;
  llvm::StringSet<> seen;
  for (StringRef arg : args) {
    auto [name, file] = arg.split('=');
    if (name.empty() || file.empty() || !arg.contains('='))
      return makeError("--" + flag + " expects NAME=file.npy, got '" + arg +
                       "'");
    if (!seen.insert(name).second)
      return makeError("--" + flag + " " + name + " is given twice");
    result.push_back({name.str(), file.str()});
  }
  return result;
}

/// Reads each of `files`.
static llvm::Expected<std::vector<NpyArray>>
readArrays(ArrayRef<std::string> files) {
  std::vector<NpyArray> arrays;
  for (const std::string &file : files) {
    llvm::Expected<NpyArray> array = readNpy(file);
    if (!array)
      return array.takeError();
    arrays.push_back(std::move(*array));
  }
  return arrays;
}

/// The `file` of each of `named`.
static std::vector<std::string> filesOf(ArrayRef<NamedFile> named) {
  std::vector<std::string> files;
  for (const NamedFile &n : named)
    files.push_back(n.file);
  return files;
}

/// The index of the probe `name` in `specs` (what `kind` names).
static llvm::Expected<size_t> findProbe(ArrayRef<TensorSpec> specs,
                                        StringRef name, StringRef kind) {
  auto it =
      llvm::find_if(specs, [&](const TensorSpec &s) { return s.name == name; });
  if (it == specs.end())
    return makeError("the compiled forward has no " + kind + " '" + name + "'");
  return static_cast<size_t>(it - specs.begin());
}

namespace {
/// The probes of a compiled forward matched to the requests, in the order
/// of its trailing arguments and results.
struct MatchedProbes {
  std::vector<NpyArray> writeArrays;
  std::vector<std::string> writeSources;
  std::vector<std::string> readFiles;
};
} // namespace

/// Matches the requests to the forward's probes by name; every probe of the
/// forward must be requested.
static llvm::Expected<MatchedProbes>
matchProbes(const CompiledModel &model, const RunnerOptions &options,
            std::vector<NpyArray> patches) {
  ArrayRef<TensorSpec> writeSpecs = model.getWriteProbes();
  ArrayRef<TensorSpec> readSpecs = model.getReadProbes();
  MatchedProbes matched;
  matched.readFiles.resize(readSpecs.size());
  for (const NamedFile &read : options.reads) {
    llvm::Expected<size_t> i = findProbe(readSpecs, read.name, "read probe");
    if (!i)
      return i.takeError();
    matched.readFiles[*i] = read.file;
  }
  matched.writeArrays.resize(writeSpecs.size());
  matched.writeSources.resize(writeSpecs.size());
  for (auto [write, patch] : llvm::zip_equal(options.writes, patches)) {
    llvm::Expected<size_t> i = findProbe(writeSpecs, write.name, "write probe");
    if (!i)
      return i.takeError();
    matched.writeArrays[*i] = std::move(patch);
    matched.writeSources[*i] = write.file;
  }
  for (auto [spec, source] : llvm::zip_equal(writeSpecs, matched.writeSources))
    if (source.empty())
      return makeError("the forward has a write probe '" + spec.name +
                       "' but no --patch " + spec.name + "=file.npy");
  for (auto [spec, file] : llvm::zip_equal(readSpecs, matched.readFiles))
    if (file.empty())
      return makeError("the forward has a read probe '" + spec.name +
                       "' but no --probe " + spec.name + "=file.npy");
  return matched;
}

/// Parses the model file and compiles it; diagnostics go to `errs`.
static llvm::Expected<std::unique_ptr<CompiledModel>>
compileModelFile(const RunnerOptions &options, llvm::raw_ostream &errs,
                 StringRef generate = "", int64_t maxLength = 0) {
  DialectRegistry registry;
  registerExecutionDialects(registry);
  MLIRContext context(registry);
  // The source location says where; the generic op dump adds only noise.
  context.printOpOnDiagnostic(false);
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(options.modelFile, &errorMessage);
  if (!buffer)
    return makeError(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, errs);
  // A crash of MLIR's parser or bytecode reader becomes an error (leaking
  // what the parse had built: the runner exits on the error).
  OwningOpRef<ModuleOp> module = parseGuarded(sourceMgr, &context, errs);
  if (!module)
    return makeError("cannot parse model file '" + options.modelFile + "'");

  CompileOptions compileOptions;
  compileOptions.target = options.target;
  compileOptions.modelName = options.modelName;
  compileOptions.optLevel = options.optLevel;
  compileOptions.objectFile = options.objectFile;
  compileOptions.compiledModuleFile = options.compiledModuleFile;
  compileOptions.cacheDir = options.cacheDir;
  compileOptions.pipelineOptions = options.pipelineOptions;
  compileOptions.threads = options.threads;
  compileOptions.weightsFile = options.weightsFile;
  compileOptions.tensorParallel = options.tensorParallel;
  compileOptions.probes.family = options.family;
  compileOptions.probes.familiesDir = options.familiesDir;
  for (const NamedFile &read : options.reads)
    compileOptions.probes.reads.push_back(read.name);
  for (const NamedFile &write : options.writes)
    compileOptions.probes.writes.push_back(write.name);
  compileOptions.generate = generate.str();
  compileOptions.maxLength = maxLength;
  return CompiledModel::compile(*module, compileOptions);
}

/// The greedy token of each row of `logits` (B x T x V): the argmax of its
/// last position.
static llvm::Expected<std::vector<int64_t>>
greedyTokens(const NpyArray &logits) {
  if (logits.shape.size() != 3 || !isFloatDType(logits.dtype))
    return makeError("--generate: the model's first output must be logits "
                     "(B x T x vocab floats), got " +
                     logits.describe());
  NpyArray f32 =
      logits.dtype == DType::F32 ? logits : convertFloats(logits, DType::F32);
  ArrayRef<float> values = f32.getValues<float>();
  int64_t seq = f32.shape[1], vocab = f32.shape[2];
  std::vector<int64_t> tokens;
  for (int64_t b = 0; b < f32.shape[0]; ++b) {
    ArrayRef<float> row = values.slice(((b + 1) * seq - 1) * vocab, vocab);
    tokens.push_back(std::max_element(row.begin(), row.end()) - row.begin());
  }
  return tokens;
}

/// --generate N: prefill on the ids, then N - 1 decodes, each token the
/// argmax of the last logits. Returns the ids followed by the new tokens.
static llvm::Expected<NpyArray> generateTokens(const RunnerOptions &options,
                                               const NpyArray &ids,
                                               llvm::raw_ostream &errs) {
  if (ids.dtype != DType::I64 || ids.shape.size() != 2)
    return makeError("--generate: the input must be token ids (B x T "
                     "int64), got " +
                     ids.describe());
  int64_t batch = ids.shape[0], prompt = ids.shape[1], n = options.generate;
  int64_t length = options.maxLength ? options.maxLength : prompt + n;
  if (length < prompt + n)
    return makeError("--generate: --max-length " + Twine(length) +
                     " is less than the prompt (" + Twine(prompt) +
                     ") plus the new tokens (" + Twine(n) + ")");
  auto prefill = compileModelFile(options, errs, "prefill", length);
  if (!prefill)
    return prefill.takeError();
  auto decode = compileModelFile(options, errs, "decode", length);
  if (!decode)
    return decode.takeError();
  size_t numCaches = (*decode)->getInputs().size() - 2;
  std::vector<std::vector<int64_t>> rows(batch);
  llvm::Expected<RunResult> step = (*prefill)->run({ids});
  // Prefill's caches, which each decode updates in place (bound without a
  // copy: they move into the call's inputs and back).
  std::vector<NpyArray> caches;
  if (step)
    std::move(step->outputs.end() - numCaches, step->outputs.end(),
              std::back_inserter(caches));
  for (int64_t i = 0;; ++i) {
    if (!step)
      return step.takeError();
    llvm::Expected<std::vector<int64_t>> tokens =
        greedyTokens(step->outputs.front());
    if (!tokens)
      return tokens.takeError();
    for (int64_t b = 0; b < batch; ++b)
      rows[b].push_back((*tokens)[b]);
    if (i + 1 == n)
      break;
    std::vector<NpyArray> inputs;
    inputs.reserve(2 + numCaches); // the caches move in, never copied
    inputs.push_back(
        NpyArray::fromValues<int64_t>(DType::I64, {batch, 1}, *tokens));
    inputs.push_back(
        NpyArray::fromValues<int64_t>(DType::I64, {}, {prompt + i}));
    std::move(caches.begin(), caches.end(), std::back_inserter(inputs));
    step = (*decode)->run(inputs);
    std::move(inputs.end() - numCaches, inputs.end(), caches.begin());
  }
  std::vector<int64_t> all;
  ArrayRef<int64_t> given = ids.getValues<int64_t>();
  for (int64_t b = 0; b < batch; ++b) {
    llvm::append_range(all, given.slice(b * prompt, prompt));
    llvm::append_range(all, rows[b]);
  }
  return NpyArray::fromValues<int64_t>(DType::I64, {batch, prompt + n}, all);
}

/// Writes `array` to `file`: a .safetensors file holds it in its own dtype
/// as tensor `key`; an .npy holds bf16 (no NumPy dtype) widened to f32.
static llvm::Error writeArray(StringRef file, const NpyArray &array,
                              StringRef key) {
  if (file.ends_with(".safetensors")) {
    SafeTensorsEntry entry;
    entry.name = key.str();
    entry.dtype = getSafeTensorsDTypeName(array.dtype).str();
    entry.shape.assign(array.shape.begin(), array.shape.end());
    entry.data = ArrayRef<char>(
        reinterpret_cast<const char *>(array.data.data()), array.data.size());
    return writeSafeTensorsFile(file, entry);
  }
  if (array.dtype == DType::BF16)
    return writeNpy(file, convertFloats(array, DType::F32));
  return writeNpy(file, array);
}

/// Rounds each float array of `arrays` whose spec is f16 or bf16 to it
/// (`cast`), or explains the mismatch: .npy has no bf16, so a bf16 input
/// comes as f32 and needs --cast-inputs.
static llvm::Error castArrays(MutableArrayRef<NpyArray> arrays,
                              ArrayRef<TensorSpec> specs,
                              ArrayRef<std::string> sources, bool cast) {
  for (auto [i, array] : llvm::enumerate(arrays)) {
    if (i >= specs.size())
      break;
    const TensorSpec &spec = specs[i];
    bool narrow = spec.dtype == DType::F16 || spec.dtype == DType::BF16;
    if (!narrow || array.dtype == spec.dtype || !isFloatDType(array.dtype))
      continue;
    if (!cast)
      return makeError(sources[i] + ": " + spec.name + " of @forward is " +
                       spec.typeString + "; the file holds " +
                       array.describe() + " (pass --cast-inputs to round it " +
                       "to " + getDTypeName(spec.dtype) + ", nearest even)");
    // Only an array of the right shape: else the run's check describes the
    // file as it is.
    NpyArray shapeOnly;
    shapeOnly.dtype = spec.dtype;
    shapeOnly.shape = array.shape;
    if (spec.accepts(shapeOnly))
      array = convertFloats(array, spec.dtype);
  }
  return llvm::Error::success();
}

/// Writes the outputs and read probes to their files and prints them.
static llvm::Error writeResults(const RunResult &result,
                                const CompiledModel &model,
                                const RunnerOptions &options,
                                ArrayRef<std::string> readFiles,
                                llvm::raw_ostream &os) {
  auto print = [&](const Twine &label, const NpyArray &array) {
    if (!options.print)
      return;
    os << label << ": " << array.describe() << "\n";
    printNpyArray(os, array);
  };
  for (auto [i, array] : llvm::enumerate(result.outputs)) {
    if (i < options.outputFiles.size())
      if (llvm::Error err = writeArray(options.outputFiles[i], array, "output"))
        return err;
    print("output " + Twine(i), array);
  }
  for (auto [array, spec, file] :
       llvm::zip_equal(result.readProbes, model.getReadProbes(), readFiles)) {
    if (llvm::Error err = writeArray(file, array, spec.name))
      return err;
    print("probe '" + spec.name + "'", array);
  }
  return llvm::Error::success();
}

/// The timing report of `repeat` runs (asked for, or more than one).
static void reportTimes(double compileSeconds, double weightsSeconds,
                        bool cached, ArrayRef<double> seconds,
                        llvm::raw_ostream &errs) {
  double mean =
      std::accumulate(seconds.begin(), seconds.end(), 0.0) / seconds.size();
  double min = *std::min_element(seconds.begin(), seconds.end());
  if (cached)
    errs << "nnx-run: the machine code came from the compile cache\n";
  errs << llvm::format(
      "nnx-run: compile %.3f ms, weights %.3f ms; forward "
      "x%u (excluding compilation): mean %.6f ms, min %.6f "
      "ms\n",
      (compileSeconds - weightsSeconds) * 1e3, weightsSeconds * 1e3,
      static_cast<unsigned>(seconds.size()), mean * 1e3, min * 1e3);
}

llvm::Error mlir::nnx::runModelFile(const RunnerOptions &options,
                                    llvm::raw_ostream &os,
                                    llvm::raw_ostream &errs) {
  if (!options.family.empty() && options.reads.empty() &&
      options.writes.empty())
    return makeError("--family needs at least one --probe or --patch");
  // Every array first: a missing or malformed file fails fast.
  llvm::Expected<std::vector<NpyArray>> inputs = readArrays(options.inputFiles);
  if (!inputs)
    return inputs.takeError();
  llvm::Expected<std::vector<NpyArray>> patches =
      readArrays(filesOf(options.writes));
  if (!patches)
    return patches.takeError();

  if (options.generate) {
    if (inputs->size() != 1 || !options.reads.empty() ||
        !options.writes.empty() || options.outputFiles.size() > 1)
      return makeError("--generate takes one --input (the token ids), at "
                       "most one --output, and no probes or patches");
    llvm::Expected<NpyArray> tokens =
        generateTokens(options, inputs->front(), errs);
    if (!tokens)
      return tokens.takeError();
    if (!options.outputFiles.empty())
      if (llvm::Error err =
              writeArray(options.outputFiles[0], *tokens, "output"))
        return err;
    if (options.print) {
      os << "tokens: " << tokens->describe() << "\n";
      printNpyArray(os, *tokens);
    }
    return llvm::Error::success();
  }
  auto compileStart = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<CompiledModel>> compiled =
      compileModelFile(options, errs);
  if (!compiled)
    return compiled.takeError();
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();
  CompiledModel &model = **compiled;
  llvm::Expected<MatchedProbes> probes =
      matchProbes(model, options, std::move(*patches));
  if (!probes)
    return probes.takeError();
  size_t numOutputs = model.getOutputs().size();
  if (!options.outputFiles.empty() && options.outputFiles.size() != numOutputs)
    return makeError("the forward has " + Twine(numOutputs) + " output" +
                     (numOutputs == 1 ? "" : "s") + ", got " +
                     Twine(options.outputFiles.size()) + " --output");

  if (llvm::Error err = castArrays(*inputs, model.getInputs(),
                                   options.inputFiles, options.castInputs))
    return err;
  if (llvm::Error err = castArrays(probes->writeArrays, model.getWriteProbes(),
                                   probes->writeSources, options.castInputs))
    return err;
  RunOptions runOptions;
  runOptions.inputSources = options.inputFiles;
  runOptions.writeProbeSources = probes->writeSources;
  runOptions.repeat = options.repeat;
  llvm::Expected<RunResult> result =
      model.run(*inputs, probes->writeArrays, runOptions);
  if (!result)
    return result.takeError();
  // Tensor parallelism: the ranks computed the same results; rank 0 writes.
  if (options.tensorParallel.rank != 0)
    return llvm::Error::success();
  if (llvm::Error err =
          writeResults(*result, model, options, probes->readFiles, os))
    return err;
  if (options.repeat > 1 || options.reportTimes)
    reportTimes(compileSeconds, model.getWeightsSeconds(), model.isFromCache(),
                result->seconds, errs);
  return llvm::Error::success();
}
