// A bf16 model run by nnx-run: .npy has no bf16, so an f32 input is refused
// unless --cast-inputs rounds it (nearest even); the output is written as
// f32 .npy (exact) or, in its own dtype, into a safetensors file; --print
// shows the dtype. The values are within the bf16 bound of the float64
// function (Inputs/bf16_mlp.py: f32 accumulation, one rounding per op),
// with the host's tiles and with the f32 tiles (NNX_JIT_MAX_ISA=avx2, as on
// a host without AVX512_BF16), at 1 and 2 threads.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/bf16_mlp.py make %t
// RUN: not nnx-run %t/mlp.mlir --input %t/x.npy 2>&1 | FileCheck %s --check-prefix=NOCAST
// NOCAST: nnx-run: error: {{.*}}x.npy: input 0 of @forward is tensor<?x64xbf16>; the file holds float32 array of shape (5, 64) (pass --cast-inputs to round it to bfloat16, nearest even)

// A file of the wrong shape is described as it is, cast or not.
// RUN: %python -c "import numpy as np; np.save('%t/x63.npy', np.zeros((5, 63), np.float32))"
// RUN: not nnx-run %t/mlp.mlir --input %t/x63.npy --cast-inputs 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: nnx-run: error: input 0: expected tensor<?x64xbf16>, got float32 array of shape (5, 63) from {{.*}}x63.npy

// RUN: nnx-run %t/mlp.mlir --input %t/x.npy --cast-inputs --output %t/y.npy --print | FileCheck %s --check-prefix=PRINT
// PRINT: output 0: bfloat16 array of shape (5, 10)
// RUN: nnx-run %t/mlp.mlir --input %t/x.npy --cast-inputs --output %t/y.safetensors
// RUN: %python %S/Inputs/bf16_mlp.py check %t %t/y.npy %t/y.safetensors
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-run %t/mlp.mlir --input %t/x.npy --cast-inputs --output %t/y2.npy --threads 2
// RUN: %python %S/Inputs/bf16_mlp.py check %t %t/y2.npy
