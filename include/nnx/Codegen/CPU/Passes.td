//===- Passes.td - nnx CPU code generation passes ----------*- tablegen -*-===//
//
// The passes of the CPU pipeline after nnx-build-forward: the schedule that
// tiles, packs and vectorizes the contractions (and rewrites convolutions
// into them), the temporaries, the math approximations, the kernels'
// outlining and the target-feature cap.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CODEGEN_CPU_PASSES_TD
#define NNX_CODEGEN_CPU_PASSES_TD

include "nnx/Support/PassBase.td"

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
      `linalg.transpose` per call. Convolutions (groups 1, grouped,
      depthwise) become matmuls per kernel tap (and group) or over
      gathered patches (ConvToMatmuls.cpp), and a conv's elementwise
      epilogue is applied to each of its blocks (ConvEpilogues.cpp). A
      reduction's parallel loop over its input's contiguous dim moves
      innermost (ReductionLoopOrder.cpp). A channels-last pool of at
      most 64 taps becomes one elementwise generic of its taps, each a
      strided slice of the input, folded by the pool's own op
      (PoolingTaps.cpp). A matmul whose static N would
      leave a partial cache tile or a register tile that is not a power of
      two wide is split into column blocks (168: 128, 32, 8). Then every
      `linalg.matmul` is tiled
      for the caches (48x128x128, loops ordered
      N, K, M so a 128x128 block of the weight stays in L2), then for
      registers, by `vector-bits` (M x N x K: 6x64x1 for AVX-512, 6x16x1
      for AVX2, 4x8x1 for SSE / NEON; `kMatmulTiles` in
      MatmulSchedule.cpp, bound to the schedule's entry sequences as
      `!transform.param<i64>` arguments); the register-tile loops are peeled so the main
      tiles have static shapes, which are vectorized to `vector.contract`.
      Partial tiles (a dynamic batch remainder) stay scalar linalg ops.
      Loop-invariant subsets are hoisted, so the accumulator tile lives in
      registers across the K loop.
    * `lower-vectors` (on buffers): a K loop's n-D accumulator carried as
      one vector per row, and n-D elementwise ops computed row by row
      (BlockedAccumulation.cpp); contractions lowered to outer products
      (vector FMAs), transfers to rank-1 loads and stores; an elementwise
      generic computing on bf16 or f16 whose innermost dim is static, a
      multiple of the lanes and contiguous becomes loops of vector ops
      along it (NarrowFloatVectors.cpp: LLVM's vectorizer keeps such loops
      scalar).

    The register tiles and the bf16 tiles follow the module's `nnx.target`
    (`#nnx.target`: `vector_bits`, `avx512_bf16`; without one the default
    target, 128 bits), never the host the pass runs on; `vector-bits`
    overrides the target's width for the tiles.

    bf16 matmuls (bf16 operands, f32 accumulators) on AVX512_BF16 targets
    (`bf16-dot`): at `tile-matmul` a 4-D contraction over pairs of K with
    B packed K/2 x N x 2 (a parameter's bind-time layout
    `{shape = [N, K/2, 2], permutation = [1, 0, 2]}`; a convolution's taps
    slice one weight packed whole, kh x kw x C/2 x F x 2, its HWCF
    permutation and the split composed into one layout), at
    `lower-vectors` 6 x 64 register tiles of `x86vector.avx512.dot`
    (BF16Matmul.cpp).
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
           "256 (AVX2), 128 (SSE/NEON), or 0 for the module's #nnx.target "
           "(its vector_bits; 128 without one)">,
    Option<"parallel", "parallel", "bool", /*default=*/"false",
           "Split N into cache tiles with an scf.forall (threads) instead "
           "of an scf.for (a batched contraction's batch loop is an "
           "scf.forall either way)">,
    Option<"bf16Dot", "bf16-dot", "std::string", /*default=*/"\"target\"",
           "bf16 x bf16 -> f32 matmuls as vdpbf16ps register tiles "
           "(x86vector.avx512.dot, B packed in pairs of K): target (when the "
           "module's #nnx.target has avx512_bf16 and the tiles are 512 "
           "bits), on (whatever the target: the code then needs AVX512_BF16 "
           "to run), or off (the bf16 operands extended to f32 in the f32 "
           "tiles)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect",
    "::mlir::transform::TransformDialect",
    "::mlir::x86vector::X86VectorDialect", "::mlir::nnx::NNXDialect"
  ];
}

def NNXChannelsLastPass
    : NNX_Pass<"nnx-channels-last", "::mlir::func::FuncOp"> {
  let summary = "Compute convolutions and pools channels-last, transposing "
                "only where a layout is needed";
  let description = [{
    PyTorch's convolutions are NCHW, and nnx-build-forward lowers them so
    (`linalg.conv_2d_nchw_fchw`). The CPU's conv kernels are matmuls over
    the channels, which want them last: a conv lowered alone copies its
    input to NHWC and its result back. This pass decides the layout for
    the whole function instead:

    * every NCHW conv (groups 1: `linalg.conv_2d_nhwc_hwcf`; grouped:
      `linalg.conv_2d_nhwgc_gfhwc`, its filter G x Fg x kh x kw x Cg;
      depthwise: `linalg.depthwise_conv_2d_nhwc_hwc`) and pool (`pooling_nhwc_max`,
      `pooling_nhwc_sum`) becomes its NHWC form, its input and destination
      permuted to NHWC (a constant padding stays a padding, of the permuted
      input; a fill of an empty destination is a fill of a permuted one),
      its filter permuted to kh x kw x C x F (a `linalg.transpose` of the
      parameter, which the parameter layouts fold: the runner permutes the
      stored weight once) and its result permuted back;
    * an elementwise `linalg.generic` (all loops parallel, the identity
      result map, no `linalg.index`) that reads such a permutation through
      the identity map computes in the permutation's source layout instead:
      its loops are permuted, it reads the NHWC tensor as it is (its other
      operands through permuted maps: a per-channel vector stays a vector)
      and its result is permuted back after it. So the permutation back
      moves down through BatchNorm, activations and residual adds;
    * a `tensor.insert_slice` of a permutation into one by the same
      permutation (or into an empty tensor or a fill of one) inserts the
      sources and is permuted after: a concatenation (DenseNet's) stays
      NHWC;
    * a permutation of a permutation is one, or none: where the next conv
      permutes a moved-down result to NHWC, both go.

    What is left are the permutations where a layout is needed: the
    model's input and output, and ops that are not elementwise (a
    reshape, a reduction), where elementwise fusion folds
    them into their neighbours' indexing maps. The permutations are
    `linalg.generic` copies, not `linalg.transpose`, so that fusion can.

    Values are unchanged: every rewrite moves data, never arithmetic.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
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

def NNXOutlineLayersPass : NNX_Pass<"nnx-outline-layers", "::mlir::ModuleOp"> {
  let summary = "Outline each linalg op of a function on tensors into a "
                "kernel function shared by equal layers";
  let description = [{
    Compile time of a deep model: the 50 bottlenecks of a ResNet-152 repeat
    a few layer shapes, but the matmul schedule, bufferization and the
    passes after them worked on every layer of the one flat forward.
    `nnx-outline-kernels` shares code from the buffers on; this pass does
    it on tensors, before the schedule, so that everything after it sees
    each distinct layer once and the forward is a chain of calls.

    Every top-level linalg op of a function body whose body reads nothing
    from outside but constants (not a lone `linalg.fill`, and not a gather
    reading a captured table) moves into a private function,
    `@<function>_layer_<n>`, with the producers that only it uses and that
    its schedule needs to see: the `linalg.fill` of a destination, the
    `tensor.pad` of an input (a convolution folds a zero padding into its
    own copy of the input), the `linalg.transpose` of an argument (a
    filter in its reader's layout, folded into a parameter layout later),
    a broadcast producer (an elementwise generic the op reads through a
    projected permutation onto fewer loops: BatchNorm's per-channel scale)
    and a static `tensor.empty` input (a pooling window). The producers
    come in the order of the operands they produce, a transpose's or
    broadcast producer's static destination with it (a private clone where
    CSE merged equal ones), so that equal layers group equally wherever
    the producers sit. A convolution whose result only an elementwise
    generic reads, through the identity over its loops (BatchNorm, ReLU, a
    residual add), takes that generic and its producers into its kernel:
    the schedule applies it to each block of the conv while the block is in
    cache (ConvEpilogues.cpp). The op becomes a `func.call`:

    * the values the group uses from outside become arguments, in order of
      first use (a destination's `tensor.empty` too: the caller allocates
      it and the kernel writes it in place), except constants, which are
      cloned into the kernel;
    * the op's results become the kernel's results;
    * a kernel equal to an earlier one (same types, same body) is not
      kept: the call goes to the earlier one.

    The schedule moves the layout a kernel reads a weight argument in (a
    convolution's kh x kw x C x F, a Linear's K x N) out to the callers, so
    parameters are still bound in the layout their kernels read. After
    bufferization, `drop-equivalent-buffer-results` turns the results a
    kernel writes into its destination argument into plain writes.

    Before:

    ```mlir
    func.func @forward(%x: tensor<?x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>, %d: index) -> tensor<?x8xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty(%d) : tensor<?x8xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
      %h = linalg.matmul ins(%x, %w1 : ...) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
      %e2 = tensor.empty(%d) : tensor<?x8xf32>
      %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
      %y = linalg.matmul ins(%h, %w2 : ...) outs(%f2 : tensor<?x8xf32>) -> tensor<?x8xf32>
      return %y : tensor<?x8xf32>
    }
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<?x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>, %d: index) -> tensor<?x8xf32> {
      %e = tensor.empty(%d) : tensor<?x8xf32>
      %h = call @forward_layer_0(%x, %w1, %e) : (...) -> tensor<?x8xf32>
      %e2 = tensor.empty(%d) : tensor<?x8xf32>
      %y = call @forward_layer_0(%h, %w2, %e2) : (...) -> tensor<?x8xf32>
      return %y : tensor<?x8xf32>
    }
    func.func private @forward_layer_0(%a: tensor<?x8xf32>, %b: tensor<8x8xf32>, %c: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %zero = arith.constant 0.0 : f32
      %f = linalg.fill ins(%zero : f32) outs(%c : tensor<?x8xf32>) -> tensor<?x8xf32>
      %r = linalg.matmul ins(%a, %b : ...) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
      return %r : tensor<?x8xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def NNXPublicResultsToOutParamsPass
    : NNX_Pass<"nnx-public-results-to-out-params", "::mlir::ModuleOp"> {
  let summary = "Results of public functions on buffers become arguments "
                "the caller allocates";
  let description = [{
    Upstream's `buffer-results-to-out-params` with `modify-public-functions`
    for nnx-run's ABI (the `out-params` option of `nnx-cpu-pipeline`), but
    for public functions only: each memref result of a public function
    becomes a trailing argument, the result is copied into it and the
    function returns nothing. A private function (a layer kernel of
    `nnx-outline-layers` whose result one-shot bufferization could not
    place in its destination argument) keeps its results: its caller owns
    them, and one of dynamic shape could not be allocated by the caller.

    Before:

    ```mlir
    func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
      %r = call @kernel(%x) : (memref<4xf32>) -> memref<4xf32>
      return %r : memref<4xf32>
    }
    func.func private @kernel(%x: memref<4xf32>) -> memref<4xf32> {...}
    ```

    After:

    ```mlir
    func.func @forward(%x: memref<4xf32>, %out: memref<4xf32>) {
      %r = call @kernel(%x) : (memref<4xf32>) -> memref<4xf32>
      memref.copy %r, %out : memref<4xf32> to memref<4xf32>
      return
    }
    func.func private @kernel(%x: memref<4xf32>) -> memref<4xf32> {...}
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NNXExpandBF16CastsPass
    : NNX_Pass<"nnx-expand-bf16-casts", "::mlir::ModuleOp"> {
  let summary = "bf16 arithmetic in f32; bf16 conversions without AVX512_BF16";
  let description = [{
    Without AVX512_BF16 (`vcvtneps2bf16`), LLVM converts f32 to bf16 (and
    promotes bf16 arithmetic through f32) by calling compiler-rt's
    `__truncsfbf2`, which the JIT does not link. This pass first rewrites
    every arith, vector and math op computing on bf16 into the f32 op
    between `arith.extf` / `arith.truncf` (upstream's
    arith-emulate-unsupported-floats and math-extend-to-supported-types:
    one rounding per op, as before), then every `arith.truncf` to bf16
    (rounding to nearest, ties to even; NaN stays NaN) and `arith.extf`
    from bf16 (a shift) into integer ops that vectorize (upstream's bf16
    expansion of arith-expand). The second step runs when the module's
    `nnx.target` (`#nnx.target`; without one the default target) has no
    `avx512_bf16`, or with `always`; the first always runs, since no x86
    instruction computes on bf16 and LLVM keeps the loops of the ops it
    promotes itself scalar (a bf16 max pool ran one element at a time).
    The results are the bits the instructions give.
  }];
  let options = [
    Option<"always", "always", "bool", /*default=*/"false",
           "Expand whatever the target has">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::nnx::NNXDialect"];
}

def NNXSetTargetPass : NNX_Pass<"nnx-set-target", "::mlir::ModuleOp"> {
  let summary = "Write the CPU the module's code is generated for";
  let description = [{
    Writes the module's `nnx.target` (`#nnx.target`, docs/Lowering.md):
    the data the CPU code generation passes read instead of asking the host
    (`nnx-apply-cpu-schedule`'s tiles, `nnx-expand-bf16-casts`,
    `nnx-cap-target-features`). With `vector-bits`, the target is the one
    the options spell (`avx512-bf16`, `features`, `cpu` default to false
    and empty); without, the module's own target is kept (the default
    target, `#nnx.target<vector_bits = 128>`, when it has none). Then
    `max-isa` caps it at an instruction set: `vector_bits` at most the
    set's width, no `avx512_bf16` below AVX-512, and the features that
    clear the wider sets added. Nothing here asks the host: a driver that
    compiles for the host (nnx-run, nnx-compile, the Python and C APIs)
    runs this pass with the host's values.

    ```mlir
    module { ... }
    ```
    becomes, with `vector-bits=512 avx512-bf16=true max-isa=avx2`,
    ```mlir
    module attributes {nnx.target = #nnx.target<vector_bits = 256,
                                                features = "-avx512f">} { ... }
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "The widest vector register: 128, 256 or 512 (0: keep the "
           "module's target)">,
    Option<"avx512BF16", "avx512-bf16", "bool", /*default=*/"false",
           "Whether the CPU runs AVX512_BF16 (needs vector-bits=512)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "LLVM target features for every function, comma-separated "
           "+name / -name">,
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "The CPU LLVM compiles for (empty: the code generator's)">,
    Option<"maxISA", "max-isa", "std::string", /*default=*/"\"\"",
           "Cap the target at an instruction set: avx512, avx2 or sse4.2 "
           "(empty: no cap)">
  ];
  let dependentDialects = ["::mlir::nnx::NNXDialect"];
}

def NNXCapTargetFeaturesPass
    : NNX_Pass<"nnx-cap-target-features", "::mlir::ModuleOp"> {
  let summary = "Give LLVM the features and CPU of the module's target";
  let description = [{
    The last step of `nnx-cpu-pipeline`. Every `llvm.func` with a body
    gets the `features` of the module's `nnx.target` (`#nnx.target`) as
    its `target_features` and its `cpu` as its `target_cpu`. An
    instruction-set cap (`nnx-set-target{max-isa=avx2}`) puts the features
    that clear the wider sets there ("-avx512f" for avx2, "-avx" for
    sse4.2; clearing a feature clears every feature that implies it), so
    LLVM's optimizer and code generator, in the JIT, in `mlir-runner` or
    in an object file, then use no wider register than the cap on any
    host. A target without features or CPU (the default target, when the
    module has none) leaves the functions as they are. The matmul schedule
    reads the same target for its tiles (`nnx-apply-cpu-schedule`). The
    module's `nnx.target` is then removed: what LLVM needs of it is on the
    functions, and the output is plain LLVM dialect, which `mlir-translate`
    and `mlir-runner` read without the nnx dialect.

    ```mlir
    module attributes {nnx.target = #nnx.target<vector_bits = 256,
                                                features = "-avx512f">} {
      llvm.func @forward(...) { ... }
    }
    ```
    becomes
    ```mlir
    llvm.func @forward(...) attributes {
        target_features = #llvm.target_features<["-avx512f"]>} { ... }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::nnx::NNXDialect"];
}

#endif // NNX_CODEGEN_CPU_PASSES_TD
