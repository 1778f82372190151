"""Reads and writes safetensors files for the weights tests (no numpy needed).

  safetensors.py dump FILE
      Prints the metadata, then one line per tensor in file order:
      `NAME DTYPE [SHAPE] HEX` (HEX: the tensor's bytes as stored).
  safetensors.py write FILE NAME:DTYPE:SHAPE[:HEX] ...
      Writes a file holding the given tensors. SHAPE is `2x3` (empty for a
      scalar); HEX the bytes (default: zeros of the right size).
"""
import json
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def dump(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    start = 8 + n
    print("metadata", json.dumps(header.pop("__metadata__", {}), sort_keys=True))
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, end = info["data_offsets"]
        print(name, info["dtype"], info["shape"], data[start + begin:start + end].hex())


def write(path, specs):
    header, blobs, offset = {}, [], 0
    for spec in specs:
        name, dtype, shape, *rest = spec.split(":")
        dims = [int(d) for d in shape.split("x")] if shape else []
        count = 1
        for d in dims:
            count *= d
        blob = bytes.fromhex(rest[0]) if rest else bytes(count * SIZES[dtype])
        header[name] = {"dtype": dtype, "shape": dims,
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2])
    else:
        write(sys.argv[2], sys.argv[3:])
