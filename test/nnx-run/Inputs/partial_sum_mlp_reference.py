"""Checks partial-sum-mlp.mlir's output on 2 ranks against numpy: the
second Linear's matmul summed over the ranks (twice), its bias once.

The bound is derived from the computation (test/README.md): the first
Linear and the ReLU as testing.mlp_bound carries them in float32, then each
rank's 3-term product, their sum over the 2 ranks and the bias, one float32
sum of 7 terms (the hidden units counted twice), with the hidden units'
error carried through |W2| twice."""
import sys

import numpy as np

from nnx import testing

x = np.load(sys.argv[1])
y = np.load(sys.argv[2])
w0 = np.array([[0.5, -1.0, 0.25, 2.0], [1.5, 0.0, -0.5, 1.0],
               [-2.0, 0.75, 1.0, 0.5]], np.float32)
b0 = np.array([0.1, -0.2, 0.3], np.float32)
w2 = np.array([[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]], np.float32)
b2 = np.array([10.0, -20.0], np.float32)
h, h_err = testing.mlp_bound(x, [("linear", w0, b0), ("relu",)], u=testing.U32)
twice = np.hstack([w2, w2])
want, own = testing.matmul_bound(np.hstack([h, h]), twice.T, b2)
bound = np.hstack([h_err, h_err]) @ np.abs(twice.T) + own
testing.assert_within(y, want, bound, "partial-sum MLP on 2 ranks")
print("ok")
