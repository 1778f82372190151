// What the JIT compiled, read from its object code (--dump-object; x86-64
// hosts): the loops the MLIR matmul schedule leaves to LLVM (here a tanh
// GELU over a dynamic batch) are vectorized for the host CPU (packed
// divisions: the GELU's rational tanh; the matmul kernels never divide),
// and temporaries come from the execution library's caching allocator
// (upstream's generic allocation functions), not from malloc.

// RUN: %python %S/Inputs/make_inputs.py %t
// RUN: nnx-run %s --input %t/x5.npy --output %t/y5.npy --dump-object %t/model.o
// RUN: llvm-objdump -d --no-show-raw-insn %t/model.o | FileCheck %s --check-prefix=ASM
// ASM: {{v?divps}}
// RUN: llvm-nm %t/model.o | FileCheck %s --check-prefix=SYMS
// SYMS-NOT: {{ (malloc|free)$}}
// SYMS-DAG: U _mlir_memref_to_llvm_alloc
// SYMS-DAG: U _mlir_memref_to_llvm_free
// SYMS-NOT: {{ (malloc|free)$}}
// Packed wrappers (`_mlir_<f>(void **)`) only of the C-interface entry
// points: a wrapper of `forward` itself passes each of its scalar
// arguments (thousands in a deep convnet) in one block, which instruction
// selection takes quadratic time over.
// RUN: llvm-nm %t/model.o | FileCheck %s --check-prefix=WRAPPERS
// WRAPPERS-DAG: T _mlir__mlir_ciface_forward{{$}}
// WRAPPERS-DAG: T _mlir_ciface_forward{{$}}
// WRAPPERS-DAG: T forward{{$}}
// RUN: llvm-nm %t/model.o | FileCheck %s --check-prefix=NOWRAPPERS
// NOWRAPPERS-NOT: {{ _mlir_forward}}
// NOWRAPPERS-NOT: {{ _mlir_forward_kernel}}

// The output is the model's (tanh GELU as PyTorch's, in NumPy).
// RUN: %python -c "import numpy as np; x = np.load('%t/x5.npy'); h = x @ np.full((64, 2), 0.5, np.float32).T + (np.arange(64, dtype=np.float32) - 32) / 8; g = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3))); ref = g @ np.full((2, 64), 0.25, np.float32).T; y = np.load('%t/y5.npy'); assert y.shape == (5, 2), y.shape; assert np.allclose(y, ref, atol=1e-5, rtol=1e-5), (y, ref)"

// A file that cannot be written is an error, not a silent skip.
// RUN: not nnx-run %s --input %t/x5.npy --dump-object %t/no/such/dir/model.o 2>&1 | FileCheck %s --check-prefix=BADPATH
// BADPATH: nnx-run: error: cannot write the object file: {{.*}}no/such/dir/model.o: {{.*}}No such file or directory

nnx.model @gelu_mlp inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<64x2xf32>,
                    bias = dense<[-4.0, -3.875, -3.75, -3.625, -3.5, -3.375, -3.25, -3.125, -3.0, -2.875, -2.75, -2.625, -2.5, -2.375, -2.25, -2.125, -2.0, -1.875, -1.75, -1.625, -1.5, -1.375, -1.25, -1.125, -1.0, -0.875, -0.75, -0.625, -0.5, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875, 2.0, 2.125, 2.25, 2.375, 2.5, 2.625, 2.75, 2.875, 3.0, 3.125, 3.25, 3.375, 3.5, 3.625, 3.75, 3.875]> : tensor<64xf32>}
    nnx.gelu @act {approximate = #nnx.gelu_approximation<tanh>}
    nnx.linear @head {weight = dense<0.25> : tensor<2x64xf32>}
  }
}
