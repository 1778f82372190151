// nnx-cap-target-features: every llvm.func with a body gets the features
// and the CPU of the module's #nnx.target; a target without them (the
// default one, without nnx.target) leaves the functions alone, whatever
// NNX_JIT_MAX_ISA says (drivers read it, not passes).
// RUN: nnx-opt %s --nnx-set-target=max-isa=avx2 --nnx-cap-target-features | FileCheck %s --check-prefix=AVX2
// RUN: nnx-opt %s --nnx-set-target=max-isa=sse4.2 --nnx-cap-target-features | FileCheck %s --check-prefix=SSE
// RUN: nnx-opt %s --nnx-set-target="vector-bits=512 cpu=znver4 features=+avx512f,+avx512bw" --nnx-cap-target-features | FileCheck %s --check-prefix=CPU
// RUN: nnx-opt %s --nnx-set-target=max-isa=avx512 --nnx-cap-target-features | FileCheck %s --check-prefix=NONE
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s --nnx-cap-target-features | FileCheck %s --check-prefix=NONE

// The module's nnx.target goes: the functions carry it now.
// AVX2-NOT: nnx.target
// AVX2-LABEL: llvm.func @f
// AVX2-SAME: target_features = #llvm.target_features<["-avx512f"]>
// AVX2-LABEL: llvm.func @g
// AVX2-SAME: target_features = #llvm.target_features<["-avx512f"]>
// AVX2: llvm.func @external
// AVX2-NOT: target_features
// SSE-LABEL: llvm.func @f
// SSE-SAME: target_features = #llvm.target_features<["-avx"]>
// CPU-LABEL: llvm.func @f
// CPU-SAME: target_cpu = "znver4"
// CPU-SAME: target_features = #llvm.target_features<["+avx512f", "+avx512bw"]>
// NONE-NOT: target_features
// NONE-NOT: target_cpu
llvm.func @f(%x: f32) -> f32 {
  llvm.return %x : f32
}
llvm.func @g() {
  llvm.return
}
llvm.func @external()
