// nnx-cpu-pipeline compiles for the module's #nnx.target, never for the
// host: the same module and target give the same bytes whatever the host
// and whatever NNX_JIT_MAX_ISA says (drivers read the variable; nnx-opt
// does not), and different targets give different code.
// RUN: env -u NNX_JIT_MAX_ISA nnx-opt %s --nnx-set-target="vector-bits=512 avx512-bf16=true cpu=sapphirerapids" --nnx-cpu-pipeline -o %t.512
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s --nnx-set-target="vector-bits=512 avx512-bf16=true cpu=sapphirerapids" --nnx-cpu-pipeline -o %t.512-env
// RUN: diff %t.512 %t.512-env
// RUN: env -u NNX_JIT_MAX_ISA nnx-opt %s --nnx-cpu-pipeline -o %t.default
// RUN: env NNX_JIT_MAX_ISA=sse4.2 nnx-opt %s --nnx-cpu-pipeline -o %t.default-env
// RUN: diff %t.default %t.default-env
// RUN: FileCheck %s --check-prefix=AVX512 < %t.512
// RUN: nnx-opt %s --nnx-set-target=vector-bits=256 --nnx-cpu-pipeline | FileCheck %s --check-prefix=AVX2
// RUN: mlir-translate --mlir-to-llvmir %t.512 | FileCheck %s --check-prefix=LLVMIR
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.default
// The pipeline's max-isa caps the module's target (the AVX2 tiles and
// features), as nnx-set-target's does.
// RUN: nnx-opt %s --nnx-set-target=vector-bits=512 --nnx-cpu-pipeline=max-isa=avx2 | FileCheck %s --check-prefix=CAPPED

// 512-bit targets: 6 x 64 register tiles (a row of 64 lanes per FMA), the
// target's CPU on every function, no features (none were given).
// The target is on the functions now, not on the module (plain LLVM
// dialect, which mlir-translate reads).
// AVX512-NOT: nnx.target
// AVX512-LABEL: llvm.func @forward_layer_{{[0-9]+}}_kernel_
// AVX512-SAME:    target_cpu = "sapphirerapids"
// AVX512:         llvm.intr.fmuladd({{.*}}) : (vector<64xf32>, vector<64xf32>, vector<64xf32>) -> vector<64xf32>
// AVX512-NOT:     target_features

// LLVMIR: define {{.*}} @forward_layer_{{[0-9]+}}_kernel_{{[0-9]+}}({{.*}}) #[[ATTRS:[0-9]+]]
// LLVMIR: attributes #[[ATTRS]] = {{{.*}}"target-cpu"="sapphirerapids"

// 256-bit targets: 6 x 16 tiles.
// AVX2-LABEL: llvm.func @forward_layer_{{[0-9]+}}_kernel_
// AVX2-NOT:     vector<64xf32>
// AVX2:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// AVX2-NOT:     vector<64xf32>

// No target: the default one's 128-bit tiles (4 x 8), nothing stamped.
// DEFAULT-NOT:   nnx.target
// DEFAULT-LABEL: llvm.func @forward_layer_{{[0-9]+}}_kernel_
// DEFAULT-NOT:     vector<16xf32>
// DEFAULT:         llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// DEFAULT-NOT:     target_features
// DEFAULT-NOT:     vector<16xf32>

// CAPPED-NOT: nnx.target
// CAPPED-LABEL: llvm.func @forward_layer_{{[0-9]+}}_kernel_
// CAPPED-SAME:    target_features = #llvm.target_features<["-avx512f"]>
// CAPPED:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
func.func @forward(%x: tensor<?x32xf32>, %w: tensor<32x128xf32>) -> tensor<?x128xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %e = tensor.empty(%n) : tensor<?x128xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x32xf32>, tensor<32x128xf32>) outs(%f : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %m : tensor<?x128xf32>
}
