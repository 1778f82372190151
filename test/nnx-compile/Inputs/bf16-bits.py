"""bf16-bits.py round X.npy XB.npy: X (float32) rounded to bf16 (nearest
even, as nnx-run --cast-inputs rounds), written as its 16-bit patterns.
bf16-bits.py same Y.npy REF.safetensors: Y (bf16 bits, uint16) is the BF16
tensor "output" of REF, bit for bit."""
import os
import sys

import numpy as np

# nnx's package imports its compiled bindings only when they are used: its
# pure-Python safetensors module needs none (lit puts python/ on PYTHONPATH).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "python"))
from nnx import safetensors  # noqa: E402

if sys.argv[1] == "round":
    x = np.load(sys.argv[2]).astype(np.float32)
    assert np.all(np.isfinite(x)), "finite inputs only"
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    np.save(sys.argv[3], rounded.astype(np.uint16))
elif sys.argv[1] == "same":
    y = np.load(sys.argv[2])
    ref = safetensors.read_safetensors(sys.argv[3])["output"]
    if y.dtype != np.uint16 or ref.view(np.uint16).shape != y.shape:
        sys.exit(f"{y.dtype} {y.shape} vs {ref.dtype} {ref.shape}")
    if not np.array_equal(y, ref.view(np.uint16)):
        sys.exit(f"{np.count_nonzero(y != ref.view(np.uint16))} elements differ")
    print(f"same bits: {y.shape}")
else:
    sys.exit(__doc__)
