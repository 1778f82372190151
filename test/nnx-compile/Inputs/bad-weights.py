"""bad-weights.py GOOD.safetensors DIR: writes the broken weights files of
errors.test into DIR, each from GOOD (the example MLP's) with one fault."""
import os
import struct
import sys

import numpy as np

# nnx's package imports its compiled bindings only when they are used: its
# pure-Python safetensors module needs none (lit puts python/ on PYTHONPATH).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "python"))
from nnx import safetensors  # noqa: E402

good, out = sys.argv[1], sys.argv[2]
tensors = safetensors.read_safetensors(good)


def write(name, table):
    safetensors.write_safetensors(os.path.join(out, name), table)


write("missing-key.safetensors",
      {k: v for k, v in tensors.items() if k != "head.bias"})
write("wrong-shape.safetensors",
      dict(tensors, **{"fc1.weight": tensors["fc1.weight"].T.copy()}))
write("wrong-dtype.safetensors",
      dict(tensors,
           **{"fc1.weight": tensors["fc1.weight"].astype(np.float64)}))
with open(good, "rb") as f:
    data = f.read()
with open(os.path.join(out, "truncated.safetensors"), "wb") as f:
    f.write(data[:-8])
header = b"{not json}      "
with open(os.path.join(out, "garbage.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header)
with open(os.path.join(out, "long-header.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", 1000000) + b"{}" + b" " * 14)
header = (b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
          b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}')
with open(os.path.join(out, "duplicate.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + b"\0" * 4)
with open(os.path.join(out, "short.safetensors"), "wb") as f:
    f.write(b"abc")
