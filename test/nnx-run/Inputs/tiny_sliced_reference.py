"""Checks nnx-run's output of a sliced Inputs/tiny.mlir against numpy.

Usage: tiny_sliced_reference.py WEIGHTS X Y FC_ROWS HEAD_ROWS

WEIGHTS is the safetensors file nnx-externalize-weights wrote (read here
with numpy, not through nnx), X the input, Y nnx-run's output; FC_ROWS are
the rows of fc (weight and bias, and the columns of head) the model keeps,
HEAD_ROWS the rows of head, both comma-separated in gather order."""
import json
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    tensors = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        assert info["dtype"] == "F32", info
        begin, end = info["data_offsets"]
        tensors[key] = np.frombuffer(data[begin:end], "<f4").reshape(
            info["shape"])
    return tensors


def find(tensors, suffix):
    (key,) = [k for k in tensors if k.endswith(suffix)]
    return tensors[key]


weights = read_safetensors(sys.argv[1])
x, y = np.load(sys.argv[2]), np.load(sys.argv[3])
fc_rows = [int(i) for i in sys.argv[4].split(",")]
head_rows = [int(i) for i in sys.argv[5].split(",")]
w, b = find(weights, "fc.weight"), find(weights, "fc.bias")
head = find(weights, "head.weight")
hidden = np.maximum(x @ w[fc_rows].T + b[fc_rows], 0)
expected = hidden @ head[head_rows][:, fc_rows].T
assert y.shape == expected.shape, (y.shape, expected.shape)
assert np.allclose(y, expected, rtol=1e-6, atol=1e-6), (y, expected)
print("ok", y.shape)
