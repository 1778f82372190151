"""Writes the safetensors files the nnx-run weights tests use into argv[1]:
the weights of Inputs/tiny.mlir (and twice them), and broken variants."""
import json
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

TINY = {
    "fc.weight": np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]], np.float32),
    "fc.bias": np.array([0.5, 0.0, -1.0], np.float32),
    "head.weight": np.array([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]], np.float32),
}
DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64"}


def layout(tensors):
    """(header dict, data bytes) with the tensors packed in order."""
    header, data = {}, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": DTYPES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    return header, data


def write(name, header, data, header_text=None):
    text = header_text if header_text is not None else json.dumps(header)
    blob = text.encode()
    blob += b" " * (-len(blob) % 8)
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob + data)


def save(name, tensors):
    write(name, *layout(tensors))


save("tiny.safetensors", TINY)
save("tiny2.safetensors", {k: 2 * v for k, v in TINY.items()})
# The reference output of the doubled weights on x3 (Inputs/make_inputs.py).
x = np.array([[1, 2], [-1, 0.5], [0, 0]], dtype=np.float32)
h = np.maximum(x @ (2 * TINY["fc.weight"]).T + 2 * TINY["fc.bias"], 0)
np.save(os.path.join(out, "y3_tiny2.npy"), h @ (2 * TINY["head.weight"]).T)

save("missing_key.safetensors", {k: v for k, v in TINY.items() if k != "head.weight"})
save("wrong_shape.safetensors", dict(TINY, **{"fc.weight": TINY["fc.weight"].T.copy()}))
save("wrong_dtype.safetensors", dict(TINY, **{"fc.bias": TINY["fc.bias"].astype(np.float64)}))

header, data = layout(TINY)
write("truncated.safetensors", header, data[:-4])
overlap = json.loads(json.dumps(header))
overlap["fc.bias"]["data_offsets"] = [0, 12]
write("overlap.safetensors", overlap, data)
write("not_json.safetensors", header, data, header_text="{\"fc.weight\": [1, 2")
with open(os.path.join(out, "short_header.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", 1 << 20) + b"{}")
