// RUN: nnx-opt %s --nnx-cap-target-features=max-isa=avx2 | FileCheck %s --check-prefix=AVX2
// RUN: nnx-opt %s --nnx-cap-target-features=max-isa=sse4.2 | FileCheck %s --check-prefix=SSE
// RUN: nnx-opt %s --nnx-cap-target-features=max-isa=avx512 | FileCheck %s --check-prefix=NONE
// RUN: env -u NNX_JIT_MAX_ISA nnx-opt %s --nnx-cap-target-features | FileCheck %s --check-prefix=NONE
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s --nnx-cap-target-features | FileCheck %s --check-prefix=AVX2
// RUN: not nnx-opt %s --nnx-cap-target-features=max-isa=avx3 2>&1 | FileCheck %s --check-prefix=BAD

// Every llvm.func gets the features that turn off what lies above the cap.
// AVX2-LABEL: llvm.func @f
// AVX2-SAME: target_features = #llvm.target_features<["-avx512f"]>
// AVX2-LABEL: llvm.func @g
// AVX2-SAME: target_features = #llvm.target_features<["-avx512f"]>
// SSE-LABEL: llvm.func @f
// SSE-SAME: target_features = #llvm.target_features<["-avx"]>
// No cap: nothing is stamped.
// NONE-NOT: target_features
// BAD: error: nnx-cap-target-features: max-isa=avx3: not an instruction set nnx knows (expected avx512, avx2 or sse4.2)
llvm.func @f(%x: f32) -> f32 {
  llvm.return %x : f32
}
llvm.func @g() {
  llvm.return
}
