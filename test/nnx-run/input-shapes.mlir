// The arguments must agree where the graph makes their dimensions meet,
// checked before anything runs (@forward_shape_checks): x and bias (both
// tensor<?x?xf32>) are added, so their batch and width must be equal, and
// the product contracts the sum's width with w's rows. An array that
// disagrees is named, with the dimension, the expected and the given size
// and the op where the two meet; one that agrees runs.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; [np.save('%t/%%s.npy' %% n, np.arange(np.prod(s), dtype=np.float32).reshape(s) / 8) for n, s in [('x', (2, 4)), ('b', (2, 4)), ('w', (4, 3)), ('b25', (2, 5)), ('b34', (3, 4)), ('w53', (5, 3))]]"

// RUN: nnx-run %s --input %t/x.npy --input %t/b.npy --input %t/w.npy --output %t/y.npy
// RUN: %python -c "import numpy as np; x, b, w, y = (np.load('%t/%%s.npy' %% n) for n in 'xbwy'); assert y.shape == (2, 3) and np.allclose(y, (x + b) @ w, atol=1e-5), y"

// RUN: not nnx-run %s --input %t/x.npy --input %t/b25.npy --input %t/w.npy --output %t/bad.npy 2>&1 | FileCheck %s --check-prefix=WIDTH
// WIDTH: nnx-run: error: input 1: dimension 1 is 5, expected 4 (as dimension 1 of input 0: 'linalg.generic' (add_0) at {{.*}}input-shapes.mlir:[[@LINE+9]]:8 runs both in one loop); got float32 array of shape (2, 5) from {{.*}}b25.npy
// RUN: not nnx-run %s --input %t/x.npy --input %t/b34.npy --input %t/w.npy --output %t/bad.npy 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: nnx-run: error: input 1: dimension 0 is 3, expected 2 (as dimension 0 of input 0: 'linalg.generic' (add_0) at {{.*}}input-shapes.mlir:[[@LINE+7]]:8 runs both in one loop); got float32 array of shape (3, 4) from {{.*}}b34.npy
// RUN: not nnx-run %s --input %t/x.npy --input %t/b.npy --input %t/w53.npy --output %t/bad.npy 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: nnx-run: error: input 2: dimension 0 is 5, expected 4 (as dimension 1 of operand 0: 'linalg.matmul' at {{.*}}input-shapes.mlir:[[@LINE+11]]:8 runs both in one loop); got float32 array of shape (5, 3) from {{.*}}w53.npy
// RUN: not ls %t/bad.npy

func.func @forward(%x: tensor<?x?xf32>, %bias: tensor<?x?xf32>,
                   %w: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %s = arith.addf %x, %bias {nnx.source = "add_0"} : tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %y = linalg.matmul ins(%s, %w : tensor<?x?xf32>, tensor<?x3xf32>)
                     outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
