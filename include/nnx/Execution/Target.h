//===- Target.h - where a compiled forward runs -----------------*- C++ -*-===//
//
// A target is a lowering from the forward level (func.func @forward on
// tensors, probes already lowered) to the LLVM dialect, plus what the JIT
// needs to link and run the result (runtime libraries, host symbols, LLVM IR
// translations). Each target fills in a TargetConfig in its own file:
// CPUTarget.cpp, CUDATarget.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_EXECUTION_TARGET_H
#define NNX_EXECUTION_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include "nnx-aot/Runtime.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace mlir::nnx {

enum class Target { CPU, CUDA };

/// "cpu", "cuda".
llvm::StringRef stringifyTarget(Target target);
/// The target named `name`, or nullopt.
std::optional<Target> parseTarget(llvm::StringRef name);

/// Everything the execution library needs from a target.
struct TargetConfig {
  /// Adds the passes that take a module holding `func.func @forward` (and
  /// `@forward_result_shapes`) on tensors, with `llvm.emit_c_interface`, to
  /// the LLVM dialect. The lowered functions take upstream's C interface on
  /// host memory: every argument a `StridedMemRefType<T, Rank> *`, and the
  /// results written into trailing arguments the caller allocates
  /// (buffer-results-to-out-params).
  /// `options` are the pipeline's options in its own syntax, parsed over
  /// the target's defaults; an error names a bad one.
  std::function<llvm::Error(OpPassManager &, llvm::StringRef options)>
      buildPipeline;
  /// Writes what the pipeline reads about the machine on `module`, before
  /// anything is compiled (the CPU: the host's #nnx.target, unless the
  /// module states one the host runs); `options` are the pipeline's, as for
  /// buildPipeline. Null: nothing to write.
  std::function<llvm::Error(ModuleOp, llvm::StringRef options)> writeTarget;
  /// Dialect extensions the pipeline needs and translations to LLVM IR the
  /// lowered module needs beyond the builtin and LLVM dialects (e.g. the GPU
  /// dialects' offloading translations); appended to the module's context.
  std::function<void(DialectRegistry &)> registerExtensions;
  /// Shared libraries the JIT opens for symbol resolution.
  llvm::SmallVector<std::string> sharedLibPaths;
  /// Sets how many threads the compiled code's parallel loops use, before
  /// each call of the forward (0: one per hardware thread). Null: the
  /// target's code runs on the calling thread only.
  std::function<void(unsigned)> setThreads;
  /// Host symbols the JIT resolves (e.g. a runtime linked into the tool).
  std::function<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)> symbolMap;
  /// The device the compiled code runs on, as the runtime sees it
  /// (nnx-aot/Runtime.h): where the parameters live and the errors its
  /// driver records (CUDA: device memory, resident across calls; a failed
  /// driver call inside the compiled code), asked after the JIT's
  /// initializers and after every call. Null: the host.
  const nnx_aot_device *device = nullptr;
};

/// Parses `text` (the options of pipeline `name`, in its syntax) into
/// `options`, over the values they hold; the error names the bad option.
llvm::Error parsePipelineOptions(mlir::detail::PassOptions &options,
                                 llvm::StringRef name, llvm::StringRef text);

/// Appends nnx-compile-pipeline's target stage for `target` ("cpu",
/// "cuda") with `options` in the target pipeline's syntax (what
/// `nnx-opt --nnx-compile-pipeline="target=... target-options='...'"`
/// runs after nnx-prepare-forward); the error names a bad option.
llvm::Error buildTargetStage(OpPassManager &pm, llvm::StringRef target,
                             llvm::StringRef options);

/// Fills `config` for `target`; an error when the target cannot be used in
/// this build or on this machine.
llvm::Error getTargetConfig(Target target, TargetConfig &config);

/// The CPU target (CPUTarget.cpp): the nnx CPU pipeline.
llvm::Error configureCPUTarget(TargetConfig &config);
/// The CUDA target (CUDATarget.cpp): the GPU pipeline and the mgpu* runtime.
/// Fails with "not available in this build" until the CUDA target is built.
llvm::Error configureCUDATarget(TargetConfig &config);

} // namespace mlir::nnx

#endif // NNX_EXECUTION_TARGET_H
