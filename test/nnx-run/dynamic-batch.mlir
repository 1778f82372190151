// One compiled forward serves any batch size: the same model on batch 1 and
// batch 5 (and batch 3 in run.mlir).

// RUN: %python %S/Inputs/make_inputs.py %t

// x = [2, -3] -> fc [-3.5, -3.5, -4] -> relu 0 -> head [0, 0]
// RUN: nnx-run %s --input %t/x1.npy --print | FileCheck %s --check-prefix=B1
// B1:      output 0: float32 array of shape (1, 2)
// B1-NEXT: {{^\[\[}}0, 0]]{{$}}

// x5 = arange(10).reshape(5, 2) / 4 - 1: rows [-1, -0.75], [-0.5, -0.25],
// [0, 0.25], [0.5, 0.75], [1, 1.25]; e.g. [-1, -0.75] -> fc [-2, 0.625,
// -1.75] -> relu [0, 0.625, 0] -> head [0.625, 0].
// RUN: nnx-run %s --input %t/x5.npy --output %t/y5.npy --print | FileCheck %s --check-prefix=B5
// B5:      output 0: float32 array of shape (5, 2)
// B5-NEXT: {{^\[\[}}0.625, 0],
// B5-NEXT: {{^}} [0.375, 0],
// B5-NEXT: {{^}} [1.125, 2],
// B5-NEXT: {{^}} [2.5, 5],
// B5-NEXT: {{^}} [4.25, 7.75]]

// The file matches an independent NumPy evaluation of the same network.
// RUN: %python -c "import numpy as np; x = np.load('%t/x5.npy'); W = np.array([[1, 2], [-1, 0.5], [0, 1]], np.float32); b = np.array([0.5, 0, -1], np.float32); V = np.array([[1, 1, 1], [2, 0, -1]], np.float32); ref = np.maximum(x @ W.T + b, 0) @ V.T; y = np.load('%t/y5.npy'); assert y.shape == (5, 2), y.shape; assert np.allclose(y, ref, atol=1e-6, rtol=0), (y, ref)"

nnx.model @tiny inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<[[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>}
  }
}
