"""Checks partial-sum-mlp.mlir's output on 2 ranks against numpy: the
second Linear's matmul summed over the ranks (twice), its bias once."""
import sys

import numpy as np

x = np.load(sys.argv[1])
y = np.load(sys.argv[2])
w0 = np.array([[0.5, -1.0, 0.25, 2.0], [1.5, 0.0, -0.5, 1.0],
               [-2.0, 0.75, 1.0, 0.5]], np.float32)
b0 = np.array([0.1, -0.2, 0.3], np.float32)
w2 = np.array([[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]], np.float32)
b2 = np.array([10.0, -20.0], np.float32)
h = np.maximum(x @ w0.T + b0, 0)
want = 2 * (h @ w2.T) + b2
assert y.shape == want.shape, (y.shape, want.shape)
np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
print("ok")
