// nnx-run compiles with nnx-compile-pipeline, the pipeline nnx-opt runs:
// for a module that states its #nnx.target, what nnx-run lowered
// (--dump-compiled, before the JIT) is, byte for byte, what
// `nnx-opt --nnx-compile-pipeline` prints, with the same target options
// (--pipeline-options = target-options), and a stated target is kept
// whatever NNX_JIT_MAX_ISA says (the variable caps the host's target only;
// docs/Running.md, "What nnx-run compiles").
// REQUIRES: avx2

// RUN: %python %S/Inputs/make_inputs.py %t
// RUN: env -u NNX_JIT_MAX_ISA nnx-run %s --input %t/x3.npy --print --dump-compiled %t/run.mlir | FileCheck %s --check-prefix=OUT
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-run %s --input %t/x3.npy --dump-compiled %t/run-avx2.mlir
// RUN: env NNX_JIT_MAX_ISA=sse4.2 nnx-run %s --input %t/x3.npy --dump-compiled %t/run-sse.mlir
// RUN: env -u NNX_JIT_MAX_ISA nnx-opt %s --nnx-compile-pipeline -o %t/opt.mlir
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s --nnx-compile-pipeline="target=cpu" -o %t/opt-avx2.mlir
// RUN: cmp %t/run.mlir %t/opt.mlir
// RUN: cmp %t/run-avx2.mlir %t/opt.mlir
// RUN: cmp %t/run-sse.mlir %t/opt.mlir
// RUN: cmp %t/opt-avx2.mlir %t/opt.mlir
// RUN: FileCheck %s --check-prefix=IR < %t/run.mlir

// The target pipeline's options, through nnx-run and through the pipeline.
// RUN: nnx-run %s --input %t/x3.npy --pipeline-options="outline-kernels=false fuse-elementwise=false" --dump-compiled %t/run-opts.mlir --print | FileCheck %s --check-prefix=OUT
// RUN: nnx-opt %s --nnx-compile-pipeline="target-options='outline-kernels=false fuse-elementwise=false'" -o %t/opt-opts.mlir
// RUN: cmp %t/run-opts.mlir %t/opt-opts.mlir
// RUN: not cmp -s %t/run-opts.mlir %t/run.mlir
// RUN: FileCheck %s --check-prefix=INLINE < %t/run-opts.mlir

// OUT:      output 0: float32 array of shape (3, 2)
// OUT-NEXT: {{\[\[}}6.5, 10],
// OUT-NEXT: [1.75, 1],
// OUT-NEXT: [0.5, 1]]

// The stated target's CPU and features on every function.
// IR-NOT:   nnx.target
// IR:       llvm.func @_mlir_ciface_forward(
// IR:       llvm.func @forward_kernel_{{[0-9]+}}({{.*}}target_cpu = "x86-64-v3"
// IR-SAME:  target_features = #llvm.target_features<["+avx2", "+fma"]>

// INLINE-NOT: llvm.func @forward_kernel_

// A stated target this host cannot run is refused before anything is
// compiled, naming what it lacks.
// RUN: nnx-opt %s --nnx-set-target="vector-bits=256 features=+avx2,+nnx-no-such-feature" -o %t/alien.mlir
// RUN: not nnx-run %t/alien.mlir --input %t/x3.npy 2>&1 | FileCheck %s --check-prefix=ALIEN
// ALIEN: nnx-run: error: the module's target #nnx.target<vector_bits = 256, features = "+avx2,+nnx-no-such-feature"> needs 'nnx-no-such-feature', which this host ({{.*}}) lacks; remove the module's nnx.target to compile for the host

// A file that cannot be written is an error naming it.
// RUN: not nnx-run %s --input %t/x3.npy --dump-compiled %t/no/such/dir/m.mlir 2>&1 | FileCheck %s --check-prefix=BADPATH
// BADPATH: nnx-run: error: cannot write the compiled module: {{.*}}no/such/dir/m.mlir: {{.*}}No such file or directory

// The pipeline's own refusals.
// RUN: not nnx-opt %s --nnx-compile-pipeline="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: nnx-compile-pipeline: target 'tpu' is not one nnx compiles for (cpu, cuda)
// RUN: not nnx-opt %s --nnx-compile-pipeline="target-options='out-params=false'" 2>&1 | FileCheck %s --check-prefix=OUTPARAMS
// OUTPARAMS: error: nnx-cpu-pipeline options 'out-params=false': the runtime needs out-params and runtime-allocator
// RUN: not nnx-opt %s --nnx-compile-pipeline="target-options='no-such-option=1'" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: nnx-cpu-pipeline options 'no-such-option=1': {{.*}}no such option no-such-option

module attributes {nnx.target = #nnx.target<vector_bits = 256, features = "+avx2,+fma", cpu = "x86-64-v3">} {
  nnx.model @tiny inputs(tensor<?x2xf32>) {
    nnx.sequential @net keying = named {
      nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                      bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
      nnx.relu @act
      nnx.linear @head {weight = dense<[[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>}
    }
  }
}
