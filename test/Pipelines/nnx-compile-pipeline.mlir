// nnx-compile-pipeline: what the drivers compile (test/nnx-run/
// compile-pipeline.mlir checks nnx-run's module is this one, byte for
// byte). nnx-prepare-forward with the model and probe options, then the
// target's pipeline with the runtime's out-params (and on the CPU its
// allocator), for the module's #nnx.target.

// On the CPU, the model named, its C interface and shape functions, the
// temporaries through the runtime's allocator.
// RUN: nnx-opt %s --nnx-compile-pipeline="model=second" | FileCheck %s --check-prefix=CPU
// CPU-DAG:  llvm.func @_mlir_memref_to_llvm_alloc(
// CPU-DAG:  llvm.func @_mlir_ciface_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {nnx.parameter = "fc.weight"}
// CPU-DAG:  llvm.func @_mlir_ciface_forward_result_shapes(
// CPU-NOT:  nnx.model

// The same as the two stages spelled out.
// RUN: nnx-opt %s --nnx-compile-pipeline="model=second target-options='fuse-elementwise=false'" -o %t.pipeline
// RUN: nnx-opt %s --nnx-prepare-forward="model=second" --nnx-cpu-pipeline="out-params runtime-allocator fuse-elementwise=false" -o %t.stages
// RUN: cmp %t.pipeline %t.stages

// With CUDA, the device code in one gpu.binary and the results in the
// caller's buffers.
// RUN: nnx-opt %s --nnx-compile-pipeline="model=second target=cuda target-options='chip=sm_90 format=isa'" | FileCheck %s --check-prefix=CUDA
// CUDA-DAG: gpu.binary @forward_kernel [#gpu.object<#nvvm.target<{{.*}}chip = "sm_90"
// CUDA-DAG: llvm.func @_mlir_ciface_forward(

// Refusals: two models and none named; options the runtime cannot run.
// RUN: not nnx-opt %s --nnx-compile-pipeline 2>&1 | FileCheck %s --check-prefix=WHICH
// WHICH: error: {{.*}}first{{.*}}second
// RUN: not nnx-opt %s --nnx-compile-pipeline="model=second target=cuda target-options='out-params=false'" 2>&1 | FileCheck %s --check-prefix=CUDA-OUT
// CUDA-OUT: error: nnx-cuda-pipeline options 'out-params=false': the runtime needs out-params
// RUN: not nnx-opt %s --nnx-compile-pipeline="model=second target=cuda target-options='chip=gfx90a'" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: target 'cuda': nnx-cuda-pipeline: option 'chip' must name an NVIDIA compute capability like sm_80 or sm_90a, got 'gfx90a'
// RUN: not nnx-opt %s --nnx-compile-pipeline="target=cpu target=cpu" 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: 'nnx-compile-pipeline': option 'target' is given twice ('target=cpu', then 'target=cpu'); give it once

nnx.model @first inputs(tensor<?x2xf32>) {
  nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>}
}
nnx.model @second inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>}
    nnx.relu @act
  }
}
