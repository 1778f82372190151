//===- CompiledModel.h - JIT-compile and run a model's forward --*- C++ -*-===//
//
// Compiles an nnx model (structure level) or a forward-level module for a
// target, compiles it to machine code for the host (or loads that code from
// a compile cache) and runs `_mlir_ciface_forward` on .npy arrays.
//
// The forward's signature, after `nnx-build-forward` and `nnx-lower-probes`:
//
//   func.func @forward(<inputs>..., <parameters>..., <write probes>...)
//       -> (<outputs>..., <read probes>...)
//       attributes {llvm.emit_c_interface,
//                   nnx.parameters = [<tensor attribute>, ...],
//                   nnx.parameter_names = ["body.fc.weight", ...],
//                   nnx.write_probes = ["name", ...],
//                   nnx.read_probes = ["name", ...]}
//
// The parameters (nnx-build-forward's default) are runtime values: the
// compiled code depends on the architecture only. The model binds each to
// the stored bytes (no copy for a mapped weights file) when compiled, or to
// another checkpoint's with bindWeights(); they are passed read only.
//
// Compiled, on upstream's memref ABI: the results become trailing arguments
// (buffer-results-to-out-params) that the caller allocates, every memref is
// passed as a `StridedMemRefType<T, Rank> *`:
//
//   void _mlir_ciface_forward(<inputs>..., <parameters>..., <write probes>...,
//                             <outputs>..., <read probes>...)
//
// A result's dynamic dimensions (the batch, ...) are computed before the
// call by `@forward_result_shapes` (same arguments, read only; one
// `tensor<Nxi64>` of the N dynamic result dimensions), which compile() adds
// to the module when a result has one.
//
// Inputs are validated against the signature (count, rank, static
// dimensions, dtype) before anything runs, and so is every write probe; a
// write probe's dynamic dimensions must also be the ones the value it
// replaces has in this run, which `@forward_write_shapes` (the inputs and
// parameters; one `tensor<Nxi64>`) computes from the inputs before the
// call. compile() adds it, before the probes are lowered, when a written
// value has a dynamic dimension. Last, the arguments must agree with each
// other where the graph makes their dimensions meet (two inputs added: the
// same batch): `@forward_shape_checks` returns, for each place where a
// linalg op indexes one loop with dims of two operands that nothing makes
// equal, both sizes; compile() adds it when such a place is left. (The
// write-probe arguments of a forward lowered by hand have no computed
// shape: they are checked like inputs, where they meet another argument.)
//
//===----------------------------------------------------------------------===//
#ifndef NNX_EXECUTION_COMPILEDMODEL_H
#define NNX_EXECUTION_COMPILEDMODEL_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Execution/Target.h"
#include "nnx/Pipelines/ResultShapes.h"
#include "nnx/Support/Npy.h"

#include "nnx-aot/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mlir::nnx {

class ModelJIT;
struct ModelJITOptions;
struct CompiledObject;
struct ForwardTables;

class ParameterBindings;
class RuntimeDescriptor;
struct IndexCheckSpec;

/// One argument or result of the compiled forward.
struct TensorSpec {
  /// "input 0", "output 1", or the probe's name.
  std::string name;
  DType dtype = DType::F32;
  /// ShapedType::kDynamic for dynamic dimensions.
  llvm::SmallVector<int64_t, 4> shape;
  /// The tensor type as MLIR prints it: "tensor<?x4xf32>".
  std::string typeString;
  /// An input the forward updates in place (decode's KV caches,
  /// `nnx.updated_in_place`): the run binds the caller's array without a
  /// copy and writes into it.
  bool updatedInPlace = false;

  /// Whether `array` has this spec's dtype, rank and static dimensions.
  bool accepts(const NpyArray &array) const;
};

struct CompileOptions {
  Target target = Target::CPU;
  /// The nnx.model to compile; empty: the module's only model.
  std::string modelName;
  /// Tracing requests: when `reads` or `writes` is not empty,
  /// nnx-insert-probes runs with these options on the structure level
  /// before the forward is built, and the probes become trailing arguments
  /// (writes) and results (reads) of the forward.
  NNXInsertProbesPassOptions probes;
  /// LLVM optimization level of the JIT (0-3).
  unsigned optLevel = 3;
  /// Where to write the object code the JIT compiled (an ELF object file,
  /// for llvm-objdump or perf); empty: nowhere.
  std::string objectFile;
  /// Where to write the module nnx-compile-pipeline lowered (LLVM dialect,
  /// as nnx-opt prints it), before the JIT translates it; empty: nowhere.
  std::string compiledModuleFile;
  /// Threads of the compiled code's parallel loops (the CPU target's
  /// matmuls split their columns among them; the result does not depend on
  /// the count); 0 (the default): one per hardware thread.
  unsigned threads = 0;
  /// A safetensors file whose tensors the forward runs with instead of the
  /// model's own (CompiledModel::bindWeights); empty: the model's.
  std::string weightsFile;
  /// The compile cache, a directory (created if absent): a model whose
  /// forward-level program (without its parameters' tensors), options and
  /// host CPU match a lowering there loads its object without running the
  /// target pipeline; one whose LLVM IR matches an object, without running
  /// LLVM (docs/Running.md, "Compile cache"). Empty: the NNX_CACHE_DIR
  /// environment variable, else no cache.
  std::string cacheDir;
  /// Options of the target pipeline, in its own syntax, over the target's
  /// defaults: "max-isa=avx2 bf16-dot=off" for nnx-cpu-pipeline,
  /// "chip=sm_90" for nnx-cuda-pipeline. The runtime's out-params (and on
  /// the CPU runtime-allocator) cannot be turned off.
  std::string pipelineOptions;
  /// Generation (nnx-prepare-forward's generate / max-length): "prefill" or
  /// "decode" compiles that function of nnx-derive-kv-cache, with a KV
  /// cache of `maxLength` positions, instead of the forward; empty: the
  /// forward.
  std::string generate;
  int64_t maxLength = 1024;
  /// Tensor parallelism: with `ranks` > 0, the model is compiled as rank
  /// `rank`'s part of it (nnx-prepare-forward's tensor-parallel-ranks /
  /// tensor-parallel-rank: shardTensorParallel before the forward is built,
  /// after the probes), its partial sums as MPI_Allreduce calls over
  /// MPI_COMM_WORLD, which must then hold `ranks` processes (MPI_Init done
  /// by the caller).
  struct TensorParallel {
    int64_t ranks = 0;
    int64_t rank = 0;
  } tensorParallel;
};

/// An error every rank of a tensor-parallel job returns from the same call
/// (they found out together that their programs or their calls disagree,
/// TensorParallelSync.h): the job can end normally (MPI_Finalize), with no
/// rank left waiting, instead of being aborted.
class CollectiveError
    : public llvm::ErrorInfo<CollectiveError, llvm::StringError> {
public:
  using ErrorInfo::ErrorInfo;
  static char ID;
};

struct RunOptions {
  /// Where each input / write-probe array came from ("x.npy"), for error
  /// messages; may be empty.
  llvm::ArrayRef<std::string> inputSources;
  llvm::ArrayRef<std::string> writeProbeSources;
  /// How many times to run the forward (the outputs are the last run's).
  unsigned repeat = 1;
};

/// The shapes of the results of one call, in the order of getOutputs() and
/// getReadProbes().
struct ResultShapes {
  std::vector<llvm::SmallVector<int64_t, 4>> outputs;
  std::vector<llvm::SmallVector<int64_t, 4>> readProbes;
};

struct RunResult {
  std::vector<NpyArray> outputs;
  std::vector<NpyArray> readProbes;
  /// Wall-clock seconds of each call of the compiled forward (excluding
  /// compilation and the copies in and out).
  std::vector<double> seconds;
};

class CompiledModel {
public:
  /// Compiles `module` (lowered in place): builds the forward of its nnx.model
  /// (or uses its func.func @forward when it holds no model), lowers probes,
  /// runs the target pipeline and JIT-compiles the result. On failure the
  /// MLIR diagnostics have gone to the context's handler and the error says
  /// which step failed.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  compile(ModuleOp module, const CompileOptions &options = {});

  ~CompiledModel();

  Target getTarget() const { return target; }
  llvm::ArrayRef<TensorSpec> getInputs() const { return inputs; }
  /// The parameters the forward takes after its inputs, as stored (the
  /// model's dtype and shape); `name` is the dotted name (`body.fc.weight`).
  llvm::ArrayRef<TensorSpec> getParameters() const;
  /// The key each parameter is looked up by in a weights file: its
  /// #nnx.external key, else its dotted name.
  llvm::ArrayRef<std::string> getParameterKeys() const;
  /// Runs the forward with the tensors of the safetensors file at `path`
  /// instead of the model's own: every parameter's key must be there with
  /// the parameter's dtype and shape (checked before anything changes; the
  /// error names the tensor and the file). The file stays mapped, never
  /// copied whole; a tensor the compiled code wants in another layout is
  /// permuted once, here.
  llvm::Error bindWeights(llvm::StringRef path);
  /// Seconds spent reading, checking, permuting and uploading the weights
  /// when the model was compiled (or last rebound); part of compile()'s
  /// time, not of compilation proper.
  double getWeightsSeconds() const { return weightsSeconds; }
  /// Whether the machine code came from the compile cache.
  bool isFromCache() const;
  llvm::ArrayRef<TensorSpec> getOutputs() const { return outputs; }
  llvm::ArrayRef<TensorSpec> getWriteProbes() const { return writeProbes; }
  llvm::ArrayRef<TensorSpec> getReadProbes() const { return readProbes; }

  /// Checks `inputs` and `writeProbes` against the signature: count, dtype,
  /// rank, static dimensions; then every dimension of every write probe
  /// against the shape of the value it replaces in a call on `inputs`
  /// (getWriteProbeShapes()); then that the arrays agree where the graph
  /// makes their dimensions meet (`@forward_shape_checks`). An error names
  /// the array, the dimension, the expected and the given size.
  llvm::Error validate(llvm::ArrayRef<NpyArray> inputs,
                       llvm::ArrayRef<NpyArray> writeProbes,
                       const RunOptions &options = {}) const;

  /// Validates `inputs`, then computes the shape each write probe must have
  /// in a call on them, in the order of getWriteProbes(): static dimensions
  /// from the signature, dynamic ones from the compiled
  /// `@forward_write_shapes`. Those of a probe lowered by hand stay
  /// ShapedType::kDynamic (validate() checks it where it meets the inputs).
  llvm::Expected<std::vector<llvm::SmallVector<int64_t, 4>>>
  getWriteProbeShapes(llvm::ArrayRef<NpyArray> inputs,
                      const RunOptions &options = {}) const;

  /// Validates, then computes the shape of every result of a call on these
  /// arrays (static dimensions from the signature, dynamic ones from the
  /// compiled `@forward_result_shapes`); the forward does not run.
  llvm::Expected<ResultShapes>
  getResultShapes(llvm::ArrayRef<NpyArray> inputs,
                  llvm::ArrayRef<NpyArray> writeProbes = {},
                  const RunOptions &options = {}) const;

  /// The inputs are copied into the call's arguments, except those updated
  /// in place (TensorSpec::updatedInPlace: decode's KV caches): the forward
  /// reads and writes the caller's array itself, so runInto() and run()
  /// update it (the arrays are `const` to every other input).
  ///
  /// Validates, then runs the forward `options.repeat` times, writing the
  /// results into caller-owned arrays: one per output and read probe, each
  /// with that result's dtype and the shape getResultShapes() gives (else an
  /// error and nothing runs). Their storage is written in place, never
  /// reallocated.
  llvm::Expected<std::vector<double>>
  runInto(llvm::ArrayRef<NpyArray> inputs, llvm::ArrayRef<NpyArray> writeProbes,
          llvm::MutableArrayRef<NpyArray> outputs,
          llvm::MutableArrayRef<NpyArray> readProbes,
          const RunOptions &options = {});

  /// Validates, then runs the forward `options.repeat` times into arrays it
  /// allocates (runInto()). Under tensor parallelism every rank calls it
  /// together and runs rank 0's `inputs` and `writeProbes` (broadcast; the
  /// other ranks' arrays are not read): the ranks first learn whether each
  /// could make the call (failCall()), and all fail when one did.
  llvm::Expected<RunResult> run(llvm::ArrayRef<NpyArray> inputs,
                                llvm::ArrayRef<NpyArray> writeProbes = {},
                                const RunOptions &options = {});

  /// A call of run() this rank cannot make (its arguments failed before
  /// it): under tensor parallelism it still meets the other ranks' run(),
  /// which then fail instead of waiting for it. Returns `err`.
  llvm::Error failCall(llvm::Error err);

  /// What the runtime's descriptor holds of this forward (ForwardTables.h).
  ForwardTables describeForRuntime() const;

private:
  CompiledModel() = default;

  friend llvm::Expected<CompiledObject>
  compileAheadOfTime(ModuleOp module, const CompileOptions &options,
                     llvm::StringRef prefix, bool embedWeights);

  /// compile()'s steps before machine code: the target's dialects,
  /// nnx-prepare-forward and the ABI it describes, the weights (only their
  /// names, keys and types without `bindWeights`), the target pipeline and
  /// the parameter layouts it asks for.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  lower(ModuleOp module, const CompileOptions &options,
        const TargetConfig &config, bool bindWeights);
  /// lower()'s steps up to the target pipeline: `module` is then at the
  /// forward level.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  prepare(ModuleOp module, const CompileOptions &options,
          const TargetConfig &config, bool bindWeights);
  /// lower()'s last steps: the target pipeline (forward level -> LLVM
  /// dialect) and the parameter layouts it asks for.
  llvm::Error lowerToTarget(ModuleOp module, const CompileOptions &options,
                            const TargetConfig &config);
  /// The machine code of `module` (forward level), loaded: the compile
  /// cache's lowering of it when it has one (CompileCache.h), else
  /// lowerToTarget's module compiled (and its lowering cached).
  llvm::Expected<std::unique_ptr<ModelJIT>>
  lowerAndLoad(ModuleOp module, const CompileOptions &options,
               const TargetConfig &config, const ModelJITOptions &jitOptions);
  /// The machine code and parameter layouts of the lowering cached under
  /// `key`; null when the cache has no whole entry of it.
  llvm::Expected<std::unique_ptr<ModelJIT>>
  loadCachedLowering(MLIRContext *context, llvm::StringRef key,
                     const ModelJITOptions &jitOptions);
  /// The functions the lowered module must export: `_mlir_ciface_forward`
  /// and the shape functions it has.
  std::vector<std::string> getEntryPoints() const;

  /// Reads the specs of the arguments and results of `forward`.
  llvm::Error readSignature(func::FuncOp forward);
  /// Reads what nnx-prepare-forward wrote into `module`: @forward's
  /// signature (readSignature), the write probes @forward_write_shapes
  /// measures, whether @forward_result_shapes exists, the shape checks.
  llvm::Error readABI(ModuleOp module);
  /// Sets `measuredWriteProbes` from the names of the write probes
  /// `@forward_write_shapes` measures, in order.
  llvm::Error matchMeasuredWriteProbes(llvm::ArrayRef<std::string> names);

  /// Checks the count, dtype and rank of `inputs` and `writeProbes` (the
  /// runtime checks the rest).
  llvm::Error checkArrays(llvm::ArrayRef<NpyArray> inputs,
                          llvm::ArrayRef<NpyArray> writeProbes,
                          const RunOptions &options) const;
  /// Binds the parameters to the runtime (again after bindWeights), with
  /// the descriptor of the compiled functions (made once).
  llvm::Error bindRuntime(const nnx_aot_device *device);
  /// The runtime's last error, with the file the array it blames came
  /// from.
  llvm::Error runtimeError(const RunOptions &options) const;
  /// The shapes of every result of a call on checked arrays; the runtime
  /// checks the rest of the call first.
  llvm::Expected<ResultShapes>
  computeResultShapes(llvm::ArrayRef<NpyArray> inputs,
                      llvm::ArrayRef<NpyArray> writeProbes,
                      const RunOptions &options) const;
  /// Runs the forward `repeat` times on checked arrays, into `results`
  /// (outputs, then read probes) of the right shapes; the seconds of each
  /// call.
  llvm::Expected<std::vector<double>>
  invoke(llvm::ArrayRef<NpyArray> inputs, llvm::ArrayRef<NpyArray> writeProbes,
         llvm::ArrayRef<NpyArray *> results, const RunOptions &options);
  /// compile() on this rank alone; run() on arrays every rank agrees on.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  compileHere(ModuleOp module, const CompileOptions &options);
  llvm::Expected<RunResult> runHere(llvm::ArrayRef<NpyArray> inputs,
                                    llvm::ArrayRef<NpyArray> writeProbes,
                                    const RunOptions &options);

  Target target = Target::CPU;
  /// The ranks this part of a split model runs on (ranks 0: not split), and
  /// the SHA-1 of its forward-level IR, which every rank's must equal.
  CompileOptions::TensorParallel parallel;
  std::array<uint8_t, 20> fingerprint = {};
  std::unique_ptr<ModelJIT> engine;
  std::function<void(unsigned)> setThreads;
  unsigned threads = 0;
  /// The model's name, for the runtime's errors.
  std::string modelName;
  std::vector<TensorSpec> inputs, outputs, writeProbes, readProbes;
  double weightsSeconds = 0;
  /// The weights the forward runs with, as stored (Parameters.h).
  std::unique_ptr<ParameterBindings> parameters;
  /// The forward as the runtime sees it, and the runtime's model: the
  /// parameters bound in their layouts (in the device's memory where the
  /// target has one), and the storage of a call, kept from call to call
  /// so that a repeated call allocates nothing. `callMutex` makes calls on
  /// one model take turns.
  std::unique_ptr<RuntimeDescriptor> descriptor;
  struct FreeRuntimeModel {
    void operator()(nnx_aot_model *model) const;
  };
  std::unique_ptr<nnx_aot_model, FreeRuntimeModel> runtime;
  const nnx_aot_device *device = nullptr;
  mutable std::mutex callMutex;
  /// The runtime's arguments of the call in flight, under `callMutex`.
  struct CallScratch {
    llvm::SmallVector<const void *, 32> data;
    llvm::SmallVector<const int64_t *, 32> dims;
    llvm::SmallVector<void *, 8> results;
    llvm::SmallVector<int64_t, 8> capacities;
    llvm::SmallVector<int64_t *, 8> resultDims;
    llvm::SmallVector<int64_t, 32> resultWords;
  };
  mutable CallScratch call;
  /// Sets `call`'s arguments: the inputs, then the write probes (a data
  /// pointer and the dimensions of each).
  void setArguments(llvm::ArrayRef<NpyArray> inputs,
                    llvm::ArrayRef<NpyArray> writeProbes) const;
  /// Whether the module has `@forward_result_shapes` (a result has a
  /// dynamic dimension).
  bool hasResultShapesFunction = false;
  /// The write probes `@forward_write_shapes` measures, as indices into
  /// `writeProbes`, in the order of its dimensions; empty without it.
  std::vector<size_t> measuredWriteProbes;
  /// What `@forward_shape_checks` checks, in the order of its pairs; empty
  /// without it.
  std::vector<ShapeCheck> shapeChecks;
  /// The forward's run-time index checks (`nnx.index_checks`), whose
  /// results follow the outputs.
  std::vector<IndexCheckSpec> indexChecks;
};

/// Registers the dialects of the IR CompiledModel::compile takes: nnx (the
/// structure level) and the forward level (func, arith, math, tensor,
/// linalg, bufferization). Parse a model in a context with these; compile()
/// adds what the target's pipeline needs.
void registerExecutionDialects(DialectRegistry &registry);

/// Registers the LLVM IR translations every target needs (builtin, LLVM) and
/// initializes the native LLVM target; called by CompiledModel::compile.
void registerExecutionTranslations(DialectRegistry &registry);

} // namespace mlir::nnx

#endif // NNX_EXECUTION_COMPILEDMODEL_H
