"""same-bits.py A.npy B.npy [C.npy D.npy ...]: each pair holds the same array,
bit for bit (dtype, shape and every byte); prints what differs otherwise."""
import sys

import numpy as np

pairs = sys.argv[1:]
if len(pairs) % 2:
    sys.exit("usage: same-bits.py A.npy B.npy [...]")
for a_path, b_path in zip(pairs[::2], pairs[1::2]):
    a, b = np.load(a_path), np.load(b_path)
    if a.dtype != b.dtype or a.shape != b.shape:
        sys.exit(f"{a_path}: {a.dtype} {a.shape}, {b_path}: {b.dtype} {b.shape}")
    if a.tobytes() != b.tobytes():
        diff = np.flatnonzero(a.view(np.uint8) != b.view(np.uint8))
        sys.exit(f"{a_path} and {b_path} differ in {diff.size} bytes, "
                 f"max |a - b| = {np.max(np.abs(a.astype(np.float64) - b)):.3g}")
    print(f"same bits: {a_path} {b_path} {a.dtype} {a.shape}")
