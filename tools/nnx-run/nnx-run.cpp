//===- nnx-run.cpp - JIT-compile and run an nnx model on .npy arrays ------===//
//
//   nnx-run MODEL.mlir --input x.npy [--input ...] --output y.npy [...]
//           [--print] [--target=cpu|cuda] [--model NAME]
//           [--probe NAME=file.npy]... [--patch NAME=file.npy]...
//           [--family F] [--repeat N] [--threads N] [--tensor-parallel]
//
// Every problem (a malformed model, a missing file, an array of the wrong
// shape, dtype or rank, a model that does not lower) is an error message and
// a non-zero exit; inputs are checked against the forward's signature before
// anything runs. The work is runModelFile's (nnx/Execution/Runner.h); this
// file is the command line.
//
//===----------------------------------------------------------------------===//
#include "nnx/Execution/Runner.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#ifdef NNX_HAVE_MPI
#include <mpi.h>
#endif

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
                cl::desc("Where to write the next output of the forward, in "
                         "order (one per output, or none): .npy (bf16 "
                         "widened to f32), or .safetensors in its own dtype "
                         "(tensor \"output\")"),
                cl::value_desc("file.npy"), cl::cat(runCategory));
static cl::opt<bool> castInputs(
    "cast-inputs",
    cl::desc("Round float .npy inputs and patches to the forward's f16 or "
             "bf16 types (nearest even; .npy has no bf16)"),
    cl::cat(runCategory));
static cl::opt<bool> printOutputs(
    "print",
    cl::desc("Print every output (and read probe): shape, dtype and values"),
    cl::cat(runCategory));
static cl::opt<Target>
    target("target", cl::desc("Where the forward runs"), cl::init(Target::CPU),
           cl::values(clEnumValN(Target::CPU, "cpu", "the host CPU (default)"),
                      clEnumValN(Target::CUDA, "cuda", "an NVIDIA GPU")),
           cl::cat(runCategory));
static cl::opt<std::string>
    modelName("model",
              cl::desc("The nnx.model to run when the file holds several"),
              cl::value_desc("name"), cl::cat(runCategory));
static cl::opt<std::string> weightsFile(
    "weights",
    cl::desc("Run with the tensors of this safetensors file instead of the "
             "model's own (each parameter by its #nnx.external key, else its "
             "dotted name; dtypes and shapes are checked before running)"),
    cl::value_desc("file.safetensors"), cl::cat(runCategory));
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
           cl::desc("Run the compiled forward N times (N >= 1) and print the "
                    "mean and minimum time per forward (excluding "
                    "compilation) to stderr"),
           cl::value_desc("N"), cl::init(1), cl::cat(runCategory));
static cl::opt<unsigned> generateTokens(
    "generate",
    cl::desc("Generate N tokens greedily from the --input token ids with the "
             "KV cache the compiler derives (nnx-derive-kv-cache); the "
             "output is the ids followed by the new tokens"),
    cl::value_desc("N"), cl::init(0), cl::cat(runCategory));
static cl::opt<int64_t> maxLength(
    "max-length",
    cl::desc("Positions of --generate's KV cache (default: the prompt plus "
             "N)"),
    cl::value_desc("L"), cl::init(0), cl::cat(runCategory));
static cl::opt<unsigned> optLevel("opt-level",
                                  cl::desc("LLVM optimization level (0-3)"),
                                  cl::init(3), cl::cat(runCategory));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Keep the compiled code in this directory (created if absent) "
             "and load it from there when the same model is compiled again "
             "for the same CPU (default: the NNX_CACHE_DIR environment "
             "variable, else no cache)"),
    cl::value_desc("dir"), cl::cat(runCategory));
static cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    cl::desc("Options of the target pipeline, in its syntax, e.g. "
             "'max-isa=avx2 bf16-dot=off' (nnx-opt --help lists "
             "nnx-cpu-pipeline's); nnx-run compiles what `nnx-opt "
             "--nnx-compile-pipeline=\"target-options='<these>'\"` prints "
             "for the module with the host's #nnx.target (--dump-compiled)"),
    cl::value_desc("options"), cl::cat(runCategory));
static cl::opt<std::string> objectFile(
    "dump-object",
    cl::desc("Write the object code the JIT compiled to this file (an ELF "
             "object: llvm-objdump -d shows the kernels' instructions)"),
    cl::value_desc("file.o"), cl::cat(runCategory));
static cl::opt<std::string> compiledModuleFile(
    "dump-compiled",
    cl::desc("Write the module nnx-compile-pipeline lowered (LLVM dialect) "
             "to this file, as `nnx-opt --nnx-compile-pipeline` prints it "
             "for the same options and #nnx.target"),
    cl::value_desc("file.mlir"), cl::cat(runCategory));

static cl::opt<bool> tensorParallel(
    "tensor-parallel",
    cl::desc("Run the model split over the ranks of MPI_COMM_WORLD (start "
             "nnx-run under mpirun -np N, N >= 2): each rank compiles its "
             "part (attention heads and MLP units split, partial sums "
             "added with MPI_Allreduce); every rank reads the same inputs, "
             "rank 0 writes the outputs and probes"),
    cl::cat(runCategory));

// `--threads` is read from argv before LLVM's parser sees it: libLLVM
// registers an undocumented global option of that name, and two options
// cannot share one.
static cl::extrahelp threadsHelp(
    "\nThreads:\n\n"
    "  --threads=<N>  Threads of the compiled code (default 0: one per\n"
    "                 hardware thread). The CPU target splits each "
    "matmul's\n"
    "                 output columns among them: the result does not "
    "depend\n"
    "                 on the count.\n");

/// Removes `--threads=N` / `--threads N` (or one dash) from `args` and
/// returns N (0, one per hardware thread, when absent).
static llvm::Expected<unsigned>
takeThreadsArgument(llvm::SmallVectorImpl<const char *> &args) {
  unsigned threads = 0;
  for (size_t i = 1; i < args.size();) {
    llvm::StringRef arg = args[i];
    if (arg == "--")
      break;
    llvm::StringRef name =
        arg.starts_with("--") ? arg.drop_front(2) : arg.drop_front(1);
    if (!arg.starts_with("-") ||
        (name != "threads" && !name.starts_with("threads="))) {
      ++i;
      continue;
    }
    llvm::StringRef value;
    size_t taken = 1;
    if (name.consume_front("threads=")) {
      value = name;
    } else if (i + 1 < args.size()) {
      value = args[i + 1];
      taken = 2;
    }
    if (value.getAsInteger(10, threads) || threads > 4096)
      return llvm::createStringError(
          "--threads: '" + value.str() +
          "' is not a thread count (0 for one per hardware thread, or "
          "1 to 4096)");
    args.erase(args.begin() + i, args.begin() + i + taken);
  }
  return threads;
}

/// "[rank R] " under --tensor-parallel (MPI initialized), else "".
static std::string rankPrefix;

static int fail(llvm::Error error) {
  [[maybe_unused]] bool collective = error.isA<CollectiveError>();
  if (rankPrefix.empty()) {
    llvm::WithColor::error(llvm::errs(), "nnx-run")
        << llvm::toString(std::move(error)) << "\n";
  } else {
    // One write per message: the ranks share mpirun's stderr, and a message
    // written in pieces interleaves with the other ranks' pieces.
    llvm::errs() << ("nnx-run: error: " + rankPrefix +
                     llvm::toString(std::move(error)) + "\n");
  }
  llvm::errs().flush();
#ifdef NNX_HAVE_MPI
  // One rank's failure ends them all: the others would wait in a
  // collective forever. An error every rank returned together (their
  // programs or inputs disagree) ends each normally, after its message.
  if (!rankPrefix.empty()) {
    if (collective)
      MPI_Finalize();
    else
      MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
  return 1;
}

/// --tensor-parallel: MPI_Init, then this process's rank and the world's
/// size (at least 2) in `options`.
static llvm::Error initTensorParallel(int &argc, char **&argv,
                                      RunnerOptions &options) {
#ifdef NNX_HAVE_MPI
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    MPI_Finalize();
    return llvm::createStringError(
        "--tensor-parallel needs at least 2 ranks: run it under mpirun -np N "
        "(N >= 2)");
  }
  rankPrefix = "[rank " + std::to_string(rank) + "] ";
  options.tensorParallel.ranks = size;
  options.tensorParallel.rank = rank;
  return llvm::Error::success();
#else
  return llvm::createStringError(
      "--tensor-parallel: this nnx-run was built without MPI (install "
      "libopenmpi-dev, scripts/setup.sh does, and reconfigure)");
#endif
}

/// The options LLVM's parser accepts but nnx-run does not: an --opt-level
/// above 3, or an empty name or path (which would read as not given).
static llvm::Error checkOptionValues() {
  if (optLevel > 3)
    return llvm::createStringError("--opt-level: " + llvm::Twine(optLevel) +
                                   " is not an LLVM optimization level (0-3)");
  if (repeat == 0)
    return llvm::createStringError(
        "--repeat: 0 runs nothing to time; give N >= 1 or leave it out");
  for (cl::opt<std::string> *option :
       {&modelName, &weightsFile, &family, &familiesDir, &objectFile, &cacheDir,
        &compiledModuleFile})
    if (option->getNumOccurrences() && option->empty())
      return llvm::createStringError("--" + option->ArgStr +
                                     ": the value is empty; give a " +
                                     option->ValueStr + " or leave it out");
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(runCategory);
  llvm::SmallVector<const char *> args(argv, argv + argc);
  llvm::Expected<unsigned> threads = takeThreadsArgument(args);
  if (!threads)
    return fail(threads.takeError());
  cl::ParseCommandLineOptions(
      args.size(), args.data(),
      "nnx-run: JIT-compile an nnx model's forward and run it on .npy "
      "arrays\n\n"
      "  nnx-run model.mlir --input x.npy --output y.npy [--print]\n\n"
      "The model file holds an nnx.model (or a forward-level func.func "
      "@forward).\nInputs are checked against the forward's signature "
      "(count, dtype, rank,\nstatic dimensions) before anything runs.\n");

  if (llvm::Error err = checkOptionValues())
    return fail(std::move(err));
  RunnerOptions options;
  llvm::Expected<std::vector<NamedFile>> reads =
      parseNamedFiles(probeArgs, "probe");
  if (!reads)
    return fail(reads.takeError());
  llvm::Expected<std::vector<NamedFile>> writes =
      parseNamedFiles(patchArgs, "patch");
  if (!writes)
    return fail(writes.takeError());
  options.reads = std::move(*reads);
  options.writes = std::move(*writes);
  options.modelFile = modelFile;
  options.modelName = modelName;
  options.weightsFile = weightsFile;
  options.inputFiles.assign(inputFiles.begin(), inputFiles.end());
  options.outputFiles.assign(outputFiles.begin(), outputFiles.end());
  options.family = family;
  options.familiesDir = familiesDir;
  options.target = target;
  options.repeat = repeat;
  options.reportTimes = repeat.getNumOccurrences() > 0;
  options.optLevel = optLevel;
  options.objectFile = objectFile;
  options.compiledModuleFile = compiledModuleFile;
  options.cacheDir = cacheDir;
  options.pipelineOptions = pipelineOptions;
  options.threads = *threads;
  options.print = printOutputs;
  options.castInputs = castInputs;
  options.generate = generateTokens;
  options.maxLength = maxLength;
  if (tensorParallel)
    if (llvm::Error err = initTensorParallel(argc, argv, options))
      return fail(std::move(err));
  if (llvm::Error err = runModelFile(options, llvm::outs(), llvm::errs()))
    return fail(std::move(err));
#ifdef NNX_HAVE_MPI
  if (tensorParallel)
    MPI_Finalize();
#endif
  return 0;
}
