//===- CompilePipeline.cpp - nnx-compile-pipeline -------------------------===//
//
// What every driver compiles a model with: nnx-prepare-forward, then the
// target's pipeline with the options the runtime needs. nnx-run,
// nnx.compile, nnx-compile and the C API build it through these functions
// (CompiledModel::lower, in its two stages: the runtime reads the ABI in
// between), so `nnx-opt --nnx-compile-pipeline=...` prints what they
// compile (nnx-run --dump-compiled; docs/Running.md, "What nnx-run
// compiles").
//
//===----------------------------------------------------------------------===//
#include "nnx/Pipelines/Passes.h"
#include "nnx/Pipelines/Pipelines.h"
#include "nnx/Support/PassOptions.h"

using namespace mlir;
using namespace mlir::nnx;

static constexpr llvm::StringLiteral kPipeline = "nnx-compile-pipeline";

void mlir::nnx::addNNXPrepareStage(OpPassManager &pm,
                                   const NNXCompilePipelineOptions &options) {
  NNXPrepareForwardPassOptions prepare;
  prepare.model = options.model;
  prepare.family = options.family;
  prepare.familiesDir = options.familiesDir;
  prepare.reads.assign(options.reads.begin(), options.reads.end());
  prepare.writes.assign(options.writes.begin(), options.writes.end());
  prepare.tensorParallelRanks = options.tensorParallelRanks;
  prepare.tensorParallelRank = options.tensorParallelRank;
  prepare.generate = options.generate;
  prepare.maxLength = options.maxLength;
  pm.addPass(createNNXPrepareForwardPass(prepare));
}

/// Parses `text` into `parsed` over the values it holds; the error names the
/// target pipeline and its options.
static LogicalResult
parseTargetOptions(mlir::detail::PassOptions &parsed, StringRef pipeline,
                   StringRef text,
                   function_ref<LogicalResult(const Twine &)> errorHandler) {
  if (failed(checkOptionsGivenOnce(pipeline, text, errorHandler)))
    return failure();
  std::string message;
  llvm::raw_string_ostream os(message);
  if (succeeded(parsed.parseFromString(text, os)))
    return success();
  return errorHandler(pipeline + " options '" + text +
                      "': " + StringRef(message).trim());
}

LogicalResult mlir::nnx::addNNXTargetStage(
    OpPassManager &pm, const NNXCompilePipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  StringRef text = options.targetOptions;
  if (options.target == "cpu") {
    // The runtime allocates the results and serves the temporaries.
    NNXCPUPipelineOptions cpu;
    cpu.outParams = true;
    cpu.runtimeAllocator = true;
    if (failed(parseTargetOptions(cpu, "nnx-cpu-pipeline", text, errorHandler)))
      return failure();
    if (!cpu.outParams || !cpu.runtimeAllocator)
      return errorHandler("nnx-cpu-pipeline options '" + text +
                          "': the runtime needs out-params and "
                          "runtime-allocator");
    buildNNXCPUPipeline(pm, cpu);
    return success();
  }
  if (options.target == "cuda") {
    NNXCUDAPipelineOptions cuda;
    cuda.outParams = true;
    if (failed(
            parseTargetOptions(cuda, "nnx-cuda-pipeline", text, errorHandler)))
      return failure();
    std::string message;
    llvm::raw_string_ostream os(message);
    if (!cuda.outParams)
      return errorHandler("nnx-cuda-pipeline options '" + text +
                          "': the runtime needs out-params");
    if (failed(verifyNNXCUDAPipelineOptions(cuda, os)))
      return errorHandler("target 'cuda': " + message);
    buildNNXCUDAPipeline(pm, cuda);
    return success();
  }
  return errorHandler(kPipeline + ": target '" + options.target +
                      "' is not one nnx compiles for (cpu, cuda)");
}

LogicalResult mlir::nnx::buildNNXCompilePipeline(
    OpPassManager &pm, const NNXCompilePipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  addNNXPrepareStage(pm, options);
  return addNNXTargetStage(pm, options, errorHandler);
}

void mlir::nnx::registerNNXCompilePipeline() {
  registerNNXPassPipeline<NNXCompilePipelineOptions>(
      kPipeline,
      "What nnx-run, nnx.compile, nnx-compile and the C API compile: "
      "nnx-prepare-forward, then the target's pipeline (target=cpu|cuda, "
      "its options in target-options) with out-params and, on the CPU, "
      "runtime-allocator; the CPU's code is for the module's #nnx.target",
      buildNNXCompilePipeline);
}
