// REQUIRES: avx512bf16
// The bf16 matmuls' instruction on an AVX512_BF16 host: vdpbf16ps in the
// object code the JIT compiled (the host's features decide); under an AVX2
// cap, none (the f32 tiles' FMAs on extended operands), and the same
// results within the bound.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/bf16_mlp.py make %t
// RUN: nnx-run %t/mlp.mlir --input %t/x.npy --cast-inputs --output %t/y.npy --dump-object %t/dot.o
// RUN: llvm-objdump -d --no-show-raw-insn %t/dot.o | FileCheck %s --check-prefix=DOT
// DOT: vdpbf16ps %zmm
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-run %t/mlp.mlir --input %t/x.npy --cast-inputs --output %t/y2.npy --dump-object %t/fma.o
// RUN: llvm-objdump -d --no-show-raw-insn %t/fma.o | FileCheck %s --check-prefix=FMA
// FMA-NOT: vdpbf16ps
// FMA: vfmadd{{[0-9]+}}ps %ymm
// FMA-NOT: vdpbf16ps
// RUN: %python %S/Inputs/bf16_mlp.py check %t %t/y.npy
// RUN: %python %S/Inputs/bf16_mlp.py check %t %t/y2.npy
