"""Compares .npy pairs at the seeds' end-to-end contract.

usage: close.py ACTUAL EXPECTED [ACTUAL EXPECTED ...]

Each pair must have the same shape and dtype and agree within
atol = rtol = 1e-5 (numpy.allclose with testing.CONTRACT). Prints the
largest absolute difference per pair; exits 1 on the first pair that
disagrees.
"""
import sys

import numpy as np

from nnx import testing

args = sys.argv[1:]
if not args or len(args) % 2:
    sys.exit("usage: close.py ACTUAL EXPECTED [ACTUAL EXPECTED ...]")
for actual_path, expected_path in zip(args[::2], args[1::2]):
    actual, expected = np.load(actual_path), np.load(expected_path)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        sys.exit(f"{actual_path}: {actual.dtype}{list(actual.shape)}, expected "
                 f"{expected.dtype}{list(expected.shape)}")
    diff = float(np.max(np.abs(actual.astype(np.float64) - expected)))
    if not np.allclose(actual, expected, **testing.CONTRACT):
        sys.exit(f"{actual_path}: differs from {expected_path} by up to {diff:.3g}")
    print(f"{actual_path}: max |diff| {diff:.3g}")
