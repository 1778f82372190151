// A strided slice of the input as the result: the lowered code copies it with
// MLIR's runtime `memrefCopy`, which the JIT resolves.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(12, dtype=np.float32).reshape(3, 4))"
// RUN: nnx-run %s --input %t/x.npy --print | FileCheck %s

// CHECK:      output 0: float32 array of shape (3, 2)
// CHECK-NEXT: {{^\[\[}}1, 3],
// CHECK-NEXT: {{^}} [5, 7],
// CHECK-NEXT: {{^}} [9, 11]]

func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %s = tensor.extract_slice %x[0, 1] [%n, 2] [1, 2]
      : tensor<?x4xf32> to tensor<?x2xf32>
  return %s : tensor<?x2xf32>
}
