//===- Passes.td - nnx lowerings ---------------------------*- tablegen -*-===//
#ifndef NNX_CONVERSION_PASSES_TD
#define NNX_CONVERSION_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXBuildForwardPass : NNX_Pass<"nnx-build-forward", "::mlir::ModuleOp"> {
  let summary = "Lower every nnx.model to a func.func on tensors";
  let description = [{
    Turns each `nnx.model` into a `func.func` on tensors built from upstream
    `linalg`, `arith`, `math` and `tensor` ops, and erases the model. The
    function is `@forward` when the module holds one model and
    `@<model>_forward` when it holds several; it carries
    `llvm.emit_c_interface`. The batch dimension stays dynamic; element
    types come from the parameters.

    Parameters and buffers (`parameters=arguments`, the default) become
    arguments after the inputs, one per distinct tensor, marked
    `bufferization.writable = false`; the function lists their tensor
    attributes in `nnx.parameters`, their dotted names (`body.fc.weight`) in
    `nnx.parameter_names`, and the weights file of `#nnx.external` tensors
    in `nnx.weights`. The compiled code then depends on the architecture
    only: the runner binds the stored bytes (a mapped safetensors file, a
    resource blob) at call time. `parameters=constants` embeds inline
    tensors as `arith.constant`s instead, for a self-contained function.
    Train/eval mode is per module (dropout, batch_norm).

    A module (or an op of a forward region) carrying `nnx.probes` gets
    `nnx.probe` ops on the requested inputs/outputs.

    Refused, with a diagnostic on the offending module naming its path:
    uninitialized lazy layers, a `module_list` used as a forward, subclasses
    with their own forward, ops in forward regions that are not upstream
    arith/math/tensor/linalg ops or `nnx.call`.

    Before:

    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) {
      nnx.sequential @net keying = positional {
        nnx.linear @"0" {weight = dense<0.5> : tensor<2x4xf32>}
        nnx.relu @"1"
      }
    }
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<?x4xf32>,
                       %w: tensor<2x4xf32> {bufferization.writable = false})
        -> tensor<?x2xf32>
        attributes {llvm.emit_c_interface,
                    nnx.parameter_names = ["0.weight"],
                    nnx.parameters = [dense<5.0e-01> : tensor<2x4xf32>]} {
      ...
      %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                          affine_map<(m, n, k) -> (n, k)>,
                                          affine_map<(m, n, k) -> (m, n)>]
                         ins(%x, %w : tensor<?x4xf32>, tensor<2x4xf32>)
                         outs(%zero : tensor<?x2xf32>) -> tensor<?x2xf32>
      %r = linalg.generic ... { arith.maximumf ... }
      return %r : tensor<?x2xf32>
    }
    ```
  }];
  let options = [
    Option<"parameters", "parameters", "::mlir::nnx::ParameterMode",
           /*default=*/"::mlir::nnx::ParameterMode::Arguments",
           "How the forward gets the parameters and buffers",
           [{::llvm::cl::values(
             clEnumValN(::mlir::nnx::ParameterMode::Arguments, "arguments",
                        "trailing arguments the runner binds (the default)"),
             clEnumValN(::mlir::nnx::ParameterMode::Constants, "constants",
                        "arith.constant tensors (inline tensors only)"))}]>,
    Option<"checkIndices", "check-indices", "bool", /*default=*/"true",
           "Check an embedding's ids at run time: the forward returns the "
           "first out-of-range position and id of each lookup after its "
           "outputs (nnx.index_checks), which nnx-run reports as an error; "
           "false clamps bad ids into the table">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::bufferization::BufferizationDialect",
    // The run-time checks (RuntimeChecks.h) of the layers' sizes.
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect"
  ];
}

def NNXLowerFunctionalPass : NNX_Pass<"nnx-lower-functional"> {
  let summary = "Lower the nnx.fn functional ops to linalg and tensor ops";
  let description = [{
    Rewrites every `nnx.fn` op (the functional code of forward regions) into
    upstream ops on tensors, and makes the upstream ops the exporter emits
    beside them fit both pipelines:

    * broadcasting binary ops, comparisons, `where`, `expand`, `tril` /
      `triu`, `arange`: one `linalg.generic` each, broadcast operand dims
      read at index 0 (no `linalg.broadcast`, no reshape);
    * `matmul`: one `linalg.generic` contraction (parallel batch, m, n;
      reduction k) into a zero-filled init, batch dims broadcast the same
      way, `transpose_b` in the indexing map;
    * `reshape`: `tensor.expand_shape` / `tensor.collapse_shape` when the
      reshape is a pure expansion or collapse whose every group holds at
      most one dynamic dim, else `tensor.reshape` with a shape tensor
      (never a reshape group with two dynamic dims: MLIR 22.1's
      `expand-strided-metadata` crashes on it, llvm-project #186830);
    * `permute`: `linalg.transpose`; `softmax`: `linalg.softmax` (the
      lowering of `nnx.softmax`); `mean` / `sum`: a `linalg.generic`
      reduction (plus `tensor.expand_shape` to unit dims for `keepdim`);
    * activations and dropout: the lowerings of the leaf ops (`nnx.gelu`,
      `nnx.dropout`, ...), so the numerics are the same;
    * `tensor.concat` becomes `tensor.empty` + `tensor.insert_slice`s and a
      ranked `tensor.splat` a `linalg.fill`, which both bufferize.

    Every dynamic size the lowering assumes (dims the broadcasting rule
    pairs, matmul's contracted dim, a reshape's element count or groups,
    `tensor.concat`'s other dims, a slice inside its source) is checked at
    run time beside the op: an `scf.if` that calls `nnxRuntimeFail` with
    a message naming the op, its label and location, and both sizes
    (`RuntimeChecks.h`; docs/Lowering.md, "Run-time checks"). Checks that
    hold in every run are folded away.

    Before:

    ```mlir
    %s = nnx.fn.matmul %q, %k {transpose_b}
        : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
    ```

    After:

    ```mlir
    %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %s = linalg.generic {indexing_maps = [
             affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>,
             affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>,
             affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
           iterator_types = ["parallel", "parallel", "parallel", "parallel",
                             "reduction"]}
        ins(%q, %k : ...) outs(%z : tensor<?x4x?x?xf32>) { mulf, addf }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def NNXVerifyTensorOpsPass : NNX_Pass<"nnx-verify-tensor-ops"> {
  let summary = "Refuse upstream tensor ops whose behaviour is undefined";
  let description = [{
    The first step of the CPU and CUDA pipelines. Upstream's verifiers accept
    some ops whose behaviour MLIR leaves undefined, and its passes then
    crash on them (a `tensor.dim` index of -2 in the value-bounds analysis)
    or the compiled code reads out of bounds (a slice with stride -1). This
    pass checks every op of the module with `mlir::nnx::verifyUpstreamOp`
    (nnx/Dialect/NNX/IR/UpstreamOpChecks.h), the check `nnx.forward`'s
    verifier runs on its body, and reports each offending op:

    ```mlir
    %c = arith.constant -2 : index
    // error: 'tensor.dim' op index -2 is out of range for a source of rank 2
    %d = tensor.dim %x, %c : tensor<?x?xf32>
    ```
  }];
}

def NNXCheckNoProbesPass : NNX_Pass<"nnx-check-no-probes", "::mlir::ModuleOp"> {
  let summary = "Fail if nnx.probe ops remain (run nnx-lower-probes first)";
  let description = [{
    The first step of the CPU pipeline: `nnx.probe` ops have no lowering of
    their own; `nnx-lower-probes` turns them into function results and
    arguments. This pass reports every remaining probe as an error.
  }];
}

def NNXDecomposeAggregatesPass : NNX_Pass<"nnx-decompose-aggregates"> {
  let summary = "Decompose aggregated linalg ops (linalg.softmax) into generics";
  let description = [{
    `nnx-build-forward` emits upstream named ops where they exist, such as
    `linalg.softmax`. Ops implementing `linalg::AggregatedOpInterface` have
    no loop lowering of their own; this pass replaces each by its upstream
    decomposition (for softmax: a max reduction, `exp(x - max)`, a sum
    reduction and a division), which both the CPU and the CUDA pipelines
    run as their first tensor-level step.

    Before:

    ```mlir
    %e = tensor.empty(%n) : tensor<?x5xf32>
    %s = linalg.softmax dimension(1) ins(%x : tensor<?x5xf32>)
                                     outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
    ```

    After: two `linalg.generic` reductions (max, then sum of exponentials)
    and two elementwise `linalg.generic`s (`exp(x - max)`, the division).
  }];
}

def NNXApplyCPUSchedulePass : NNX_Pass<"nnx-apply-cpu-schedule", "::mlir::ModuleOp"> {
  let summary = "Apply one stage of nnx's transform-dialect CPU schedule";
  let description = [{
    The CPU pipeline's fast matmul, as a transform-dialect schedule embedded
    in the pass (see docs/Lowering.md). Two stages:

    * `tile-matmul` (on tensors, before bufferization): a `linalg.matmul`
      that reads B transposed (`indexing_maps` (m, k), (n, k), (m, n): a
      Linear's weight as `nnx-build-forward` emits it) first gets B in
      K x N layout: folded into a new constant when B is constant; when B
      is a parameter argument (`nnx.parameter`) that only such matmuls
      read, the argument itself is asked for transposed (its type becomes
      K x N and the function's `nnx.parameter_layouts` maps the
      parameter's name to the permutation `array<i64: 1, 0>`, which the
      runner applies once when it binds the weights); else through a
      `linalg.transpose` per call. Then every `linalg.matmul` is tiled
      for the caches (48x128x128, loops ordered
      N, K, M so a 128x128 block of the weight stays in L2), then for
      registers, by `vector-bits` (M x N x K: 6x64x1 for AVX-512, 6x16x1
      for AVX2, 4x8x1 for SSE / NEON; `kMatmulTiles` in
      ApplyCPUSchedule.cpp); the register-tile loops are peeled so the main
      tiles have static shapes, which are vectorized to `vector.contract`.
      Partial tiles (a dynamic batch remainder) stay scalar linalg ops.
      Loop-invariant subsets are hoisted, so the accumulator tile lives in
      registers across the K loop.
    * `lower-vectors` (on buffers): contractions lowered to outer products
      (vector FMAs), transfers to rank-1 loads and stores.
  }];
  let options = [
    Option<"stage", "stage", "::mlir::nnx::CPUScheduleStage",
           /*default=*/"::mlir::nnx::CPUScheduleStage::TileMatmul",
           "The stage to apply",
           [{::llvm::cl::values(
               clEnumValN(::mlir::nnx::CPUScheduleStage::TileMatmul,
                          "tile-matmul", "tile and vectorize (tensors)"),
               clEnumValN(::mlir::nnx::CPUScheduleStage::LowerVectors,
                          "lower-vectors", "lower the vectors (buffers)"))}]>,
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width the tiles are chosen for: 512 (AVX-512), "
           "256 (AVX2), 128 (SSE/NEON), or 0 for the host's widest">,
    Option<"maxISA", "max-isa", "std::string", /*default=*/"\"\"",
           "With vector-bits=0, the host's width capped at an instruction "
           "set: avx512, avx2 or sse4.2 (empty: NNX_JIT_MAX_ISA, else no "
           "cap)">,
    Option<"parallel", "parallel", "bool", /*default=*/"false",
           "Split N into cache tiles with an scf.forall (threads) instead "
           "of an scf.for (a batched contraction's batch loop is an "
           "scf.forall either way)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect",
    "::mlir::transform::TransformDialect"
  ];
}

def NNXDuplicateEmptyTensorsPass
    : NNX_Pass<"nnx-duplicate-empty-tensors", "::mlir::func::FuncOp"> {
  let summary = "Split the uses of shared tensor.empty ops and fills of them";
  let description = [{
    CSE merges equal `tensor.empty` ops, and equal `linalg.fill`s of them,
    so that one value becomes the destination (`outs`) of many ops, layers
    apart. One-shot bufferization checks each in-place write against every
    use of every value that aliases the destination; with one destination
    shared along a whole model, all its writers end up in one alias set,
    which is quadratic work per op and cubic in the model's depth (1,000
    ReLUs: more than a minute in bufferization). Run just before
    bufferization, this pass bounds that:

    * the uses of a `tensor.empty` are split, in program order, into groups
      of at most `uses-per-empty`, each group with its own clone of the op
      (so neighbouring ops still share, and may reuse, one buffer);
    * a `linalg.fill` of a `tensor.empty` gets a clone (with its own clone
      of the empty) for each use but the last, except where an op only
      reads it (a DPS input), so that two reductions starting from the
      same filled tensor each fill their own buffer instead of one of them
      copying it.

    Clones are inserted just before the original, so none moves into a
    loop. Values are unchanged: an empty tensor has no contents, a fill's
    are recomputed.

    Before (`uses-per-empty=1`):

    ```mlir
    %e = tensor.empty(%n) : tensor<?x64xf32>
    %1 = linalg.generic ... ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>)
    %2 = linalg.generic ... ins(%1 : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>)
    ```

    After:

    ```mlir
    %e_0 = tensor.empty(%n) : tensor<?x64xf32>
    %e = tensor.empty(%n) : tensor<?x64xf32>
    %1 = linalg.generic ... ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>)
    %2 = linalg.generic ... ins(%1 : tensor<?x64xf32>) outs(%e_0 : tensor<?x64xf32>)
    ```
  }];
  let options = [
    Option<"usesPerEmpty", "uses-per-empty", "unsigned", /*default=*/"8",
           "Most uses that one tensor.empty keeps (0: no limit)">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def NNXApproximateMathPass : NNX_Pass<"nnx-approximate-math"> {
  let summary = "Replace f32 exp, tanh and erf by branch-free polynomial "
                "approximations, and f32 sqrt, floor, abs and fma by LLVM "
                "intrinsics, so that their loops vectorize";
  let description = [{
    The CPU pipeline's elementwise loops (GELU, softmax, SiLU, sigmoid) call
    `math.exp`, `math.tanh` and `math.erf`; lowered to libm calls, each
    element costs a call and the loop stays scalar. This pass rewrites them,
    on `f32` scalars and vectors, into polynomial approximations: exp and
    tanh upstream's (`populateMathPolynomialApproximationPatterns`:
    Cephes-style range reduction and a polynomial, within a few ulp of the
    exact value), erf the pass's own (piecewise least-squares polynomials,
    max abs error 6e-8 against float64, about 1 ulp; upstream's reaches
    2.4e-7), all plain arithmetic: LLVM's loop vectorizer then turns each
    loop into vector code. For the same reason f32 `math.sqrt`, `math.floor` and
    `math.absf` become LLVM's intrinsics (exact, like libm's; a `sqrtf` call
    may set errno, which keeps LLVM from vectorizing it), and the
    approximations' `math.fma` LLVM's `fma` (not libm's `fmaf`), and
    `math.absi` LLVM's `abs` (convert-math-to-libm refuses it). Other
    functions and other types are left alone (they still become libm
    calls). The reference tests (every layer and six
    transformer families against PyTorch at atol = rtol = 1e-5) hold with
    it.

    ```mlir
    %y = math.tanh %x : f32
    ```
    becomes a sequence of `arith` ops (clamps, a rational polynomial) with
    no call.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::vector::VectorDialect"
  ];
}

def NNXOutlineKernelsPass : NNX_Pass<"nnx-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline each loop nest of a function on buffers into a "
                "shared kernel function";
  let description = [{
    Compile time of a deep model: the forward is one function holding every
    layer's loops, and each layer's tiled, vectorized matmul is lowered and
    then optimized by LLVM once per layer although the twelve blocks of a
    transformer (or a chain of equal Linears) run the same code. On buffers
    (after bufferization and the matmul schedule), this pass moves every
    top-level op with regions of a function body (an `scf.for` nest, a
    `linalg` op) into a private function, `@<function>_kernel_<n>`, and
    replaces it by a `func.call`:

    * the values the op uses from outside become arguments, in order of
      first use, except constants (`arith.constant` and other constant-like
      ops), which are cloned into the kernel so that its loop bounds and
      vector shapes stay static;
    * the op's results become the kernel's results;
    * a kernel equal to an earlier one (same types, same body) is not
      kept: the call goes to the earlier one. Equal layers of a model
      share one kernel, so what follows (lowering to LLVM, LLVM's
      optimization and code generation) grows with the number of distinct
      layer shapes, not with depth.

    Functions whose top-level ops have no regions are left alone; values
    and memory effects are unchanged (a kernel reads and writes the same
    buffers the op did).

    Before:

    ```mlir
    func.func @forward(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
      %cst = arith.constant 0.0 : f32
      linalg.generic {...} ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
      ^bb0(%in: f32, %out: f32):
        %0 = arith.maximumf %in, %cst : f32
        linalg.yield %0 : f32
      }
      return
    }
    ```

    After:

    ```mlir
    func.func @forward(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
      call @forward_kernel_0(%x, %y) : (memref<?x64xf32>, memref<?x64xf32>) -> ()
      return
    }
    func.func private @forward_kernel_0(%arg0: memref<?x64xf32>, %arg1: memref<?x64xf32>) {
      %cst = arith.constant 0.0 : f32
      linalg.generic {...} ins(%arg0 : ...) outs(%arg1 : ...) {...}
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def NNXCapTargetFeaturesPass
    : NNX_Pass<"nnx-cap-target-features", "::mlir::ModuleOp"> {
  let summary = "Keep the code LLVM emits within an instruction-set cap";
  let description = [{
    The last step of `nnx-cpu-pipeline`. With a cap (`max-isa=avx2`, or the
    `NNX_JIT_MAX_ISA` environment variable when the option is empty), every
    `llvm.func` with a body gets the `target_features` that clear the wider
    instruction sets ("-avx512f" for avx2, "-avx" for sse4.2; clearing a
    feature clears every feature that implies it). LLVM's optimizer and
    code generator, in the JIT, in `mlir-runner` or in an object file,
    then use no wider register than the cap on any host. Without a cap
    the module is unchanged. The matmul schedule reads the same cap for
    its tile table (`nnx-apply-cpu-schedule`, vector-bits=0).

    ```mlir
    llvm.func @forward(...) { ... }
    ```
    becomes, with max-isa=avx2,
    ```mlir
    llvm.func @forward(...) attributes {
        target_features = #llvm.target_features<["-avx512f"]>} { ... }
    ```
  }];
  let options = [
    Option<"maxISA", "max-isa", "std::string", /*default=*/"\"\"",
           "avx512, avx2 or sse4.2 (empty: NNX_JIT_MAX_ISA, else no cap)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // NNX_CONVERSION_PASSES_TD
