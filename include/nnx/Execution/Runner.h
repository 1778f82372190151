//===- Runner.h - run a model file on .npy files ----------------*- C++ -*-===//
//
// What `nnx-run` does, as one library call over CompiledModel: read the
// model and the .npy arrays, compile the forward (with the requested
// probes), run it, and write and print the results. The tool only turns its
// command line into RunnerOptions.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_EXECUTION_RUNNER_H
#define NNX_EXECUTION_RUNNER_H

#include "nnx/Execution/CompiledModel.h"
#include "nnx/Execution/Target.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::nnx {

/// A tracing point and its .npy file.
struct NamedFile {
  std::string name;
  std::string file;
};

struct RunnerOptions {
  /// The .mlir file: an nnx.model or a forward-level func.func @forward.
  std::string modelFile;
  /// The nnx.model to run when the file holds several.
  std::string modelName;
  /// A safetensors checkpoint to run the model with instead of its own
  /// tensors (names, dtypes and shapes checked first); empty: the model's.
  std::string weightsFile;
  /// One .npy file per input of the forward, in order.
  std::vector<std::string> inputFiles;
  /// Where to write each output, in order (one per output, or none): an
  /// .npy file (bf16, which .npy lacks, widened exactly to f32), or a
  /// .safetensors file holding it in its own dtype as tensor "output".
  std::vector<std::string> outputFiles;
  /// Read probes: each tracing point's value is written to its file.
  std::vector<NamedFile> reads;
  /// Write probes: each tracing point's value is replaced by its file's.
  std::vector<NamedFile> writes;
  /// The family definition that maps tracing names to the model, and the
  /// directory of family files (see nnx-insert-probes).
  std::string family;
  std::string familiesDir;
  Target target = Target::CPU;
  /// How many times to run the forward; more than once, or
  /// `reportTimes`, prints timings.
  unsigned repeat = 1;
  /// Print the timings even of one run (nnx-run's explicit --repeat 1).
  bool reportTimes = false;
  /// LLVM optimization level of the JIT (0-3).
  unsigned optLevel = 3;
  /// Where to write the JIT's object code (CompileOptions::objectFile).
  std::string objectFile;
  /// Where to write the lowered module (CompileOptions::compiledModuleFile).
  std::string compiledModuleFile;
  /// The compile cache (CompileOptions::cacheDir).
  std::string cacheDir;
  /// The target pipeline's options (CompileOptions::pipelineOptions).
  std::string pipelineOptions;
  /// Threads of the compiled code (CompileOptions::threads); 0: one per
  /// hardware thread.
  unsigned threads = 0;
  /// Print every output and read probe: shape, dtype and values.
  bool print = false;
  /// Round float inputs and patches to the forward's f16 / bf16 types
  /// (nearest even); else an input's dtype must be the forward's.
  bool castInputs = false;
  /// Tensor parallelism (CompileOptions::tensorParallel): every rank runs
  /// its part on the same inputs; only rank 0 writes and prints the outputs
  /// and probes.
  CompileOptions::TensorParallel tensorParallel;
  /// Generate this many tokens greedily from the one input (token ids, B x
  /// T int64) with the KV cache nnx-derive-kv-cache derives (prefill, then
  /// one decode per token); the output is the ids followed by the new
  /// tokens (B x (T + generate) int64). 0: run the forward.
  unsigned generate = 0;
  /// Positions of the generation's cache; 0: T + generate.
  int64_t maxLength = 0;
};

/// Splits each `NAME=file.npy` of `args`, the values of the option `--flag`;
/// a malformed or repeated name is an error.
llvm::Expected<std::vector<NamedFile>>
parseNamedFiles(llvm::ArrayRef<std::string> args, llvm::StringRef flag);

/// Reads every array first, then the model (its diagnostics, with
/// file:line:col, go to `errs`), compiles, matches the probes to the
/// forward's trailing arguments and results by name, runs, and writes the
/// results to their files. Printed arrays go to `os`, the timing of
/// `repeat > 1` runs (or of `reportTimes`) to `errs`. Every problem is an
/// error; no file is written before the run succeeded.
llvm::Error runModelFile(const RunnerOptions &options, llvm::raw_ostream &os,
                         llvm::raw_ostream &errs);

} // namespace mlir::nnx

#endif // NNX_EXECUTION_RUNNER_H
