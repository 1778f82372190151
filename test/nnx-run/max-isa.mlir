// The JIT capped below the host's instruction set (NNX_JIT_MAX_ISA,
// docs/Running.md "Instruction set"; x86-64 hosts): on an AVX-512 host the
// code then uses no zmm register (ymm FMAs under avx2; under sse4.2 no ymm,
// no FMA), and its outputs are the model's as without the cap (the 1e-5 contract).

// RUN: %python %S/Inputs/make_inputs.py %t
// RUN: nnx-run %s --input %t/x8.npy --output %t/host.npy
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-run %s --input %t/x8.npy --output %t/avx2.npy --dump-object %t/avx2.o
// RUN: llvm-objdump -d --no-show-raw-insn %t/avx2.o | FileCheck %s --check-prefix=AVX2 --implicit-check-not=zmm
// AVX2: vfmadd{{[0-9]+}}ps {{.*}}%ymm
// RUN: env NNX_JIT_MAX_ISA=sse4.2 nnx-run %s --input %t/x8.npy --output %t/sse.npy --dump-object %t/sse.o
// RUN: llvm-objdump -d --no-show-raw-insn %t/sse.o | FileCheck %s --check-prefix=SSE --implicit-check-not=ymm --implicit-check-not=zmm --implicit-check-not=vfmadd
// SSE: mulps
// RUN: %python -c "import numpy as np; from nnx import testing; h = np.load('%t/host.npy'); [np.testing.assert_allclose(np.load('%t/' + n + '.npy'), h, **testing.CONTRACT) for n in ('avx2', 'sse')]"

// nnx-opt asks neither the host nor the variable (docs/Lowering.md,
// "Target"): the cap of the pipeline's max-isa, or of nnx-set-target,
// reaches the matmul schedule (the AVX2 table's 6 x 16 register tiles: two
// 8-lane vectors per row) and every function's target features.
// RUN: nnx-opt %s --nnx-build-forward --nnx-cpu-pipeline=max-isa=avx2 | FileCheck %s --check-prefix=IR
// RUN: nnx-opt %s --nnx-build-forward --nnx-set-target=max-isa=avx2 --nnx-cpu-pipeline | FileCheck %s --check-prefix=IR
// IR: llvm.func @forward
// IR-SAME: target_features = #llvm.target_features<["-avx512f"]>
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s --nnx-build-forward --nnx-cpu-pipeline | FileCheck %s --check-prefix=NOCAP
// NOCAP-NOT: target_features
// RUN: nnx-opt %s --nnx-build-forward --nnx-set-target="vector-bits=512 max-isa=avx2" --nnx-apply-cpu-schedule | FileCheck %s --check-prefix=TILES
// TILES: vector.contract {{.*}} vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>

// A name the cap does not know is an error naming it.
// RUN: env NNX_JIT_MAX_ISA=avx3 not nnx-run %s --input %t/x8.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: NNX_JIT_MAX_ISA=avx3: not an instruction set nnx knows (expected avx512, avx2 or sse4.2)

nnx.model @mlp inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<128x8xf32>,
                    bias = dense<-0.25> : tensor<128xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<0.125> : tensor<64x128xf32>}
  }
}
