"""Checks nnx-run's output of a sliced Inputs/tiny.mlir against numpy.

Usage: tiny_sliced_reference.py WEIGHTS X Y FC_ROWS HEAD_ROWS

WEIGHTS is the safetensors file nnx-externalize-weights wrote (read here
with numpy, not through nnx), X the input, Y nnx-run's output; FC_ROWS are
the rows of fc (weight and bias, and the columns of head) the model keeps,
HEAD_ROWS the rows of head, both comma-separated in gather order. The
bound is derived from the computation: testing.mlp_bound in float32 (each
Linear's accumulation, its input's error carried through |W|)."""
import json
import struct
import sys

import numpy as np

from nnx import testing


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
head_kept = head[head_rows][:, fc_rows]
expected, bound = testing.mlp_bound(
    x, [("linear", w[fc_rows], b[fc_rows]), ("relu",),
        ("linear", head_kept, None)], u=testing.U32)
assert y.shape == expected.shape, (y.shape, expected.shape)
testing.assert_within(y, expected, bound, "sliced tiny model")
print("ok", y.shape)
