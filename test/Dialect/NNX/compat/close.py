"""python3 close.py GOT.npy EXPECTED.npy: exit 1 unless GOT is EXPECTED's
shape and dtype and within the seeds' end-to-end 1e-5 (relative to the
largest magnitude of EXPECTED, at least 1): a file must mean today what it
meant when it was written, up to the float32 rounding of another CPU."""
import sys

import numpy as np

got, expected = np.load(sys.argv[1]), np.load(sys.argv[2])
if got.shape != expected.shape or got.dtype != expected.dtype:
    sys.exit("%s: %s %s, expected %s %s" % (sys.argv[1], got.dtype, got.shape,
                                            expected.dtype, expected.shape))
scale = max(1.0, float(np.abs(expected).max()))
err = float(np.abs(got.astype(np.float64) - expected).max()) / scale
if not err <= 1e-5:
    sys.exit("%s: differs from %s by %g of max |expected|" % (sys.argv[1], sys.argv[2], err))
print("close")
