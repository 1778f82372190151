//===- Pipelines.h - nnx named pipelines ------------------------*- C++ -*-===//
#ifndef NNX_PIPELINES_PIPELINES_H
#define NNX_PIPELINES_PIPELINES_H

#include "nnx/Config.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::nnx {

/// Options of `nnx-cpu-pipeline`.
struct NNXCPUPipelineOptions
    : public PassPipelineOptions<NNXCPUPipelineOptions> {
  PassOptions::Option<bool> fastMatmul{
      *this, "fast-matmul",
      llvm::cl::desc("Tile, bufferize and vectorize linalg.matmul with a "
                     "transform-dialect schedule (else: plain loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Split each matmul's N dimension among threads (an "
                     "scf.forall lowered to OpenMP; the compiled code then "
                     "needs libomp, and its thread count is the OpenMP "
                     "runtime's: nnx-run --threads)"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector width the matmul tiles are chosen for: 512 "
                     "(AVX-512), 256 (AVX2), 128 (SSE/NEON), or 0 for the "
                     "module's #nnx.target (128 without one)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> maxISA{
      *this, "max-isa",
      llvm::cl::desc("Cap the module's #nnx.target at an instruction set: "
                     "avx512, avx2 or sse4.2, for the tiles of "
                     "vector-bits=0 and for LLVM's code (nnx-set-target's "
                     "max-isa; empty: no cap). A driver that compiles for "
                     "the host (nnx-run) also caps the host's target with "
                     "it, or with NNX_JIT_MAX_ISA when it is empty"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 matmuls as vdpbf16ps register tiles (weights "
                     "packed in pairs of K at bind time): target (when the "
                     "module's #nnx.target has AVX512_BF16 and the tiles "
                     "are 512 bits), on (whatever the target: the code then "
                     "needs AVX512_BF16 to run) or off (bf16 extended to "
                     "f32 in the f32 tiles)"),
      llvm::cl::init("target")};
  PassOptions::Option<bool> outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("On tensors, before the schedule, move each linalg op "
                     "into a private kernel function shared by equal layers "
                     "(nnx-outline-layers): the schedule, bufferization and "
                     "LLVM see each distinct layer once"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("On buffers, move each loop nest into a private kernel "
                     "function shared by equal layers (nnx-outline-kernels): "
                     "compile time grows with the distinct layer shapes, "
                     "not with depth"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> channelsLast{
      *this, "channels-last",
      llvm::cl::desc("Compute convolutions and pools channels-last, moving "
                     "the layout permutations through elementwise ops until "
                     "they cancel (nnx-channels-last)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse elementwise linalg ops with their producers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Results of public functions become trailing arguments "
                     "the caller allocates (buffer-results-to-out-params); "
                     "a call inside the module cannot size a dynamically "
                     "shaped one"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> runtimeAllocator{
      *this, "runtime-allocator",
      llvm::cl::desc("Allocate temporaries through upstream's generic "
                     "functions (_mlir_memref_to_llvm_alloc / _free), which "
                     "nnx's execution library provides as a caching "
                     "allocator (nnx-run, the C++ and Python APIs); else "
                     "malloc / free, for mlir-runner"),
      llvm::cl::init(false)};
};

/// Appends `nnx-cpu-pipeline` to `pm`: from the forward level (a
/// `func.func` on tensors, as `nnx-build-forward` emits it) to the LLVM
/// dialect, ready for `mlir::ExecutionEngine`. The code is generated for
/// the module's `nnx.target` (#nnx.target, written by nnx-set-target; the
/// default target without one), never by asking the host. Fails at run time if
/// `nnx.probe` ops remain (run `nnx-lower-probes` first).
void buildNNXCPUPipeline(OpPassManager &pm,
                         const NNXCPUPipelineOptions &options);

/// Registers the named pipelines (`nnx-cpu-pipeline`).
void registerNNXPipelines();

/// Options of `nnx-compile-pipeline`: what every driver (nnx-run,
/// nnx.compile, nnx-compile, the C API) compiles a model with.
struct NNXCompilePipelineOptions
    : public PassPipelineOptions<NNXCompilePipelineOptions> {
  PassOptions::Option<std::string> target{
      *this, "target", llvm::cl::desc("Where the code runs: cpu or cuda"),
      llvm::cl::init("cpu")};
  PassOptions::Option<std::string> targetOptions{
      *this, "target-options",
      llvm::cl::desc("The target pipeline's options in its syntax "
                     "(nnx-cpu-pipeline's, nnx-cuda-pipeline's), quoted, "
                     "over the runtime's defaults: out-params, and "
                     "runtime-allocator on the CPU"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> model{
      *this, "model",
      llvm::cl::desc("The nnx.model to compile (default: the only one)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> family{
      *this, "family", llvm::cl::desc("Tracing family of the probe requests"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> familiesDir{
      *this, "families-dir",
      llvm::cl::desc("Directory of family files (drivers pass "
                     "$NNX_FAMILIES_DIR)"),
      llvm::cl::init("")};
  PassOptions::ListOption<std::string> reads{
      *this, "reads",
      llvm::cl::desc("Standardized names to read, in execution order")};
  PassOptions::ListOption<std::string> writes{
      *this, "writes",
      llvm::cl::desc("Standardized names to write, in execution order")};
  PassOptions::Option<int64_t> tensorParallelRanks{
      *this, "tensor-parallel-ranks",
      llvm::cl::desc("Tensor parallelism over this many ranks (0: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tensorParallelRank{
      *this, "tensor-parallel-rank",
      llvm::cl::desc("The rank whose part of the model to compile"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> generate{
      *this, "generate",
      llvm::cl::desc("Compile nnx-derive-kv-cache's prefill or decode "
                     "instead of the forward (empty: the forward)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> maxLength{
      *this, "max-length",
      llvm::cl::desc("Positions the KV cache holds (with generate)"),
      llvm::cl::init(1024)};
};

/// The first stage of `nnx-compile-pipeline`: nnx-prepare-forward with the
/// options' model, probes and tensor-parallel rank. The runtime reads the
/// ABI from the functions it leaves.
void addNNXPrepareStage(OpPassManager &pm,
                        const NNXCompilePipelineOptions &options);

/// The second stage: the target's pipeline with `options.targetOptions`
/// over the runtime's defaults; fails through `errorHandler` on an unknown
/// target or options the runtime cannot run (out-params off).
LogicalResult
addNNXTargetStage(OpPassManager &pm, const NNXCompilePipelineOptions &options,
                  function_ref<LogicalResult(const Twine &)> errorHandler);

/// Both stages: the module the drivers compile, from the structure level
/// (or a forward-level `@forward`) to the LLVM dialect.
LogicalResult buildNNXCompilePipeline(
    OpPassManager &pm, const NNXCompilePipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> errorHandler);

/// Registers `nnx-compile-pipeline`.
void registerNNXCompilePipeline();

/// Adds the dialects the CPU pipeline produces, with the external interface
/// models it relies on (bufferization, tiling, value bounds, transform
/// dialect extensions), to `registry`.
void registerCPUPipelineDialects(DialectRegistry &registry);

/// Options of `nnx-cuda-pipeline`.
struct NNXCUDAPipelineOptions
    : public PassPipelineOptions<NNXCUDAPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target compute capability (sm_80, sm_90, sm_90a, ...)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (default: the PTX ISA version the chip "
                     "needs, e.g. +ptx80)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Embedded object: isa (PTX, JIT-compiled by the "
                     "driver), bin (cubin, via ptxas) or fatbin (both)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int> optLevel{*this, "opt-level",
                                    llvm::cl::desc("NVPTX optimization level"),
                                    llvm::cl::init(3)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit: ptxas and fatbinary in bin/, libdevice "
                     "in nvvm/libdevice/"),
      llvm::cl::init(NNX_CUDA_TOOLKIT_DIR)};
  PassOptions::Option<int64_t> tileM{
      *this, "tile-m", llvm::cl::desc("Contraction output tile rows"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> tileN{
      *this, "tile-n", llvm::cl::desc("Contraction output tile columns"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k",
      llvm::cl::desc("Contraction K step staged in shared memory"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the non-contraction kernels"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Results of public functions become trailing host "
                     "arguments the caller allocates "
                     "(buffer-results-to-out-params)"),
      llvm::cl::init(false)};
};

/// Appends `nnx-cuda-pipeline` to `pm` (CUDAPipeline.cpp): from the forward
/// level to the LLVM dialect with the kernels serialized in a gpu.binary;
/// the host code calls the mgpu* runtime (lib/Runtime/CUDA).
void buildNNXCUDAPipeline(OpPassManager &pm,
                          const NNXCUDAPipelineOptions &options);
/// Checks `chip` and `format`; writes the reason to `os` on failure.
llvm::LogicalResult
verifyNNXCUDAPipelineOptions(const NNXCUDAPipelineOptions &options,
                             llvm::raw_ostream &os);
/// The PTX features `chip` needs by default ("+ptx80" for sm_75..sm_90a).
std::string defaultCUDAFeatures(llvm::StringRef chip);
/// Whether `chip` looks like sm_<digits>[a|f].
bool isValidCUDAChip(llvm::StringRef chip);
/// Registers `nnx-cuda-pipeline`.
void registerNNXCUDAPipeline();
/// Dialects, bufferization models, to-LLVM interfaces, the NVVM target and
/// the GPU/NVVM LLVM IR translations the CUDA pipeline and its JIT need.
void registerNNXCUDAExtensions(DialectRegistry &registry);

} // namespace mlir::nnx

#endif // NNX_PIPELINES_PIPELINES_H
