//===- Passes.td - nnx lowerings from linalg to the gpu dialect -*- tablegen -*-===//
#ifndef NNX_CONVERSION_LINALGTOGPU_PASSES_TD
#define NNX_CONVERSION_LINALGTOGPU_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXLinalgToGPUPass : NNX_Pass<"nnx-linalg-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Turn every linalg op on buffers into a gpu.launch";
  let description = [{
    Runs after bufferization, on host functions. Every structured linalg op
    on memrefs (and every `memref.copy`) becomes one `gpu.launch`:

    - Contractions (`linalg.matmul`, `linalg.batch_matmul`, and any
      `linalg.generic` that is a contraction with one K dimension, whatever
      its operand layouts; several M or N dimensions, such as batch and
      sequence of a Linear on 3-D activations, are linearized into one) get
      a shared-memory tiled
      kernel: a `tile-m` x `tile-n` output tile per block of 16x16 threads,
      the K loop in steps of `tile-k` staging both operand tiles in
      workgroup memory (`#gpu.address_space<workgroup>`) between
      `gpu.barrier`s, and a (`tile-m`/16) x (`tile-n`/16) register tile of
      accumulators per thread. The payload of the op (multiply, add, casts)
      is cloned for each accumulator, so element types come from the op.
      Batch dimensions go to `gridDim.z`.
    - Every other op gets one thread per point of its parallel iteration
      space (linearized over `block-size` threads per block), with `scf.for`
      loops over its reduction dimensions.

    Grid sizes are computed from the (possibly dynamic) loop ranges and are
    never zero, so an empty batch launches an idle block rather than an
    invalid grid.

    Before:

    ```mlir
    linalg.matmul ins(%x, %w : memref<?x4xf32>, memref<4x8xf32>)
                  outs(%y : memref<?x8xf32>)
    ```

    After (abridged):

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (...) threads(%tx, %ty, %tz) in (...)
        workgroup(%a : memref<64x17xf32, #gpu.address_space<workgroup>>,
                  %b : memref<16x65xf32, #gpu.address_space<workgroup>>) {
      scf.for %kt = %c0 to %numKTiles step %c1 iter_args(...) {
        ... memref.store %v, %a[...]   // stage the tiles
        gpu.barrier
        scf.for %kk = %c0 to %c16 step %c1 iter_args(...) { ... arith.mulf/addf ... }
        gpu.barrier
      }
      ... memref.store %acc, %y[...]
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", "64",
           "Rows of the output tile one block computes (multiple of 16)">,
    Option<"tileN", "tile-n", "int64_t", "64",
           "Columns of the output tile one block computes (multiple of 16)">,
    Option<"tileK", "tile-k", "int64_t", "16",
           "Depth of the operand tiles staged in shared memory">,
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block for the non-contraction kernels">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

def NNXGPUDeviceMemoryPass
    : NNX_Pass<"nnx-gpu-device-memory", "::mlir::func::FuncOp"> {
  let summary = "Place the buffers of a host function that launches kernels "
                "in device memory";
  let description = [{
    Runs after `gpu-kernel-outlining`, before `gpu-async-region`, on every
    function that contains a `gpu.launch_func`:

    - `memref.alloc` / `memref.dealloc` become `gpu.alloc` / `gpu.dealloc`;
    - a host buffer that reaches a kernel (a function argument, a
      `memref.get_global` of constant weights), directly or through a view,
      is copied once into a `gpu.alloc` and every use is redirected to the
      copy;
    - an argument marked `nnx.parameter` (a parameter of a forward built
      with `parameters=arguments`) is taken to be device memory already:
      the runtime uploads each parameter once per compiled model and keeps
      it resident across calls, so no copy is made;
    - a returned buffer that lives in device memory is copied into a fresh
      host `memref.alloc` before the return, so callers see host memory as on
      the CPU target;
    - the device buffers of the function are freed before it returns.

    A host op that would still read or write device memory (for example a
    `memref.load` left on the host) is an error naming the op.
    Together with `gpu-async-region` every copy, launch and free of one call
    runs on one stream, ordered by async tokens, with one synchronization at
    the end.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"
  ];
}

def NNXGPUResultsInPlacePass
    : NNX_Pass<"nnx-gpu-results-in-place", "::mlir::func::FuncOp"> {
  let summary = "Write each result straight into its out-param";
  let description = [{
    After `buffer-results-to-out-params` on the host side of the CUDA
    pipeline, a result whose host buffer the pass could not hoist (one
    `nnx-gpu-device-memory` allocates to copy a device result out, or the
    sizes a result-shapes function returns) is a `memref.alloc` copied into
    the caller's out-param and never freed: the CUDA pipeline runs no
    buffer deallocation. This pass writes such a result into the out-param
    directly: when the only use of an out-param (an entry-block argument) is
    a `memref.copy` from a `memref.alloc` of the same function and type that
    is neither freed, returned nor used after the copy, the allocation's
    uses take the out-param and the allocation and the copy go.

    Before:

    ```mlir
    func.func @forward(%x: memref<?x3xf32>, %out: memref<?x3xf32>) {
      %h = memref.alloc(%n) {alignment = 64 : i64} : memref<?x3xf32>
      gpu.memcpy %h, %dev : memref<?x3xf32>, memref<?x3xf32>
      memref.copy %h, %out : memref<?x3xf32> to memref<?x3xf32>
      return
    }
    ```

    After:

    ```mlir
    func.func @forward(%x: memref<?x3xf32>, %out: memref<?x3xf32>) {
      gpu.memcpy %out, %dev : memref<?x3xf32>, memref<?x3xf32>
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NNXGPUMergeModulesPass
    : NNX_Pass<"nnx-gpu-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel in one gpu.module";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel, each loaded
    with its own `cuModuleLoad` at start-up and compiled with its own `ptxas`
    run. This pass moves every kernel into the first `gpu.module` (named
    `@<first module>`), renaming each kernel after the module it came from so
    names stay unique, and retargets the `gpu.launch_func` ops.

    Before:

    ```mlir
    gpu.module @forward_kernel { gpu.func @forward_kernel(...) kernel {...} }
    gpu.module @forward_kernel_0 { gpu.func @forward_kernel(...) kernel {...} }
    gpu.launch_func @forward_kernel_0::@forward_kernel ...
    ```

    After:

    ```mlir
    gpu.module @forward_kernel {
      gpu.func @forward_kernel(...) kernel {...}
      gpu.func @forward_kernel_0(...) kernel {...}
    }
    gpu.launch_func @forward_kernel::@forward_kernel_0 ...
    ```

    Modules carrying targets or other attributes are left alone.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // NNX_CONVERSION_LINALGTOGPU_PASSES_TD
