#!/usr/bin/env python3
"""Writes the seed corpora of fuzz/corpus/ from the test inputs.

  fuzz/make-corpus.py [--nnx-opt build/bin/nnx-opt]

ir-text: every .mlir of test/ and examples/ (not examples/families), split at
`//--- name` (split-file) and `// -----` (-split-input-file).
surgery: the same pieces, each with the options a RUN line of its test gives
a surgery pass, as the harness's header line.
family: families/*.json and the tracing tests' families, each after the byte
that picks a model, for every model (a family on a model it was not written
for is an input too).
npy, safetensors: small arrays and files of every dtype the readers accept.
ir-bytecode: the bytecode of the ir-text seeds that parse (needs nnx-opt),
and the corrupted files of test/nnx-opt/Inputs.
Seeds longer than the harness's -max_len (the Makefile's) are left out.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
MAX_LEN = {"ir-text": 16384, "ir-bytecode": 16384, "surgery": 16384,
           "family": 8192, "npy": 4096, "safetensors": 4096}
PASSES = ["widen", "deepen", "drop-layer", "low-rank", "expand-embedding",
          "prune", "insert-block", "grow-attention", "widen-residual"]
# The models of fuzz-family.cpp, in its order.
FAMILY_MODELS = ["bloom", "cohere", "falcon", "gemma2", "gpt2", "llama", "tiny"]


def write(harness, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_LEN[harness] or not data.strip():
        return
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:8]
    with open(os.path.join(d, f"{name}-{digest}"), "wb") as f:
        f.write(data)


def split_pieces(text):
    """(split-file name or '', piece) of a test file."""
    files = re.split(r"^//--- (\S+)\n", text, flags=re.M)
    named = [("", files[0])] + list(zip(files[1::2], files[2::2]))
    for fname, body in named:
        for piece in re.split(r"^// -----\n", body, flags=re.M):
            if "nnx." in piece or "func." in piece:
                yield fname, piece


def surgery_options(text):
    """(split-file name or '', pass, options) of each RUN line."""
    for m in re.finditer(r"RUN:.*?nnx-opt (\S+).*?--nnx-(" + "|".join(PASSES) +
                         r')(?:="([^"]*)"|=(\S+))?', text):
        src, opts = m.group(1), m.group(3) or m.group(4) or ""
        fname = os.path.basename(src) if src.startswith("%t/") else ""
        yield fname, m.group(2), opts


def text_seeds():
    paths = sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"),
                             recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        text = open(path).read()
        pieces = list(split_pieces(text))
        for i, (_, piece) in enumerate(pieces):
            write("ir-text", f"{stem}-{i}", piece)
        for fname, pass_, opts in surgery_options(text):
            for i, (pname, piece) in enumerate(pieces):
                if pname == fname:
                    write("surgery", f"{stem}-{i}", f"{pass_} {opts}\n{piece}")


def family_seeds():
    files = sorted(glob.glob(os.path.join(ROOT, "families", "*.json")))
    files += sorted(glob.glob(os.path.join(ROOT, "test", "Dialect", "NNX",
                                           "Tracing", "Inputs", "*.json")))
    for path in files:
        stem = os.path.splitext(os.path.basename(path))[0]
        data = open(path, "rb").read()
        for i, model in enumerate(FAMILY_MODELS):
            write("family", f"{stem}-on-{model}", bytes([i]) + data)


def npy(descr, shape, payload, version=1):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
        if len(shape) != 1 else f"({shape[0]},)")
    fmt = "<H" if version == 1 else "<I"
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    header += " " * pad + "\n"
    return (b"\x93NUMPY" + bytes([version, 0]) + struct.pack(fmt, len(header)) +
            header.encode() + payload)


def npy_seeds():
    for path in glob.glob(os.path.join(ROOT, "examples", "*.npy")):
        write("npy", os.path.splitext(os.path.basename(path))[0],
              open(path, "rb").read())
    for descr, size in [("<f2", 2), ("<f4", 4), ("<f8", 8), ("<i4", 4),
                        ("<i8", 8), ("|b1", 1)]:
        name = descr.strip("<|")
        write("npy", f"{name}-2x3", npy(descr, [2, 3], bytes(range(6 * size))))
        write("npy", f"{name}-scalar", npy(descr, [], bytes(size)))
        write("npy", f"{name}-empty", npy(descr, [0, 4], b""))
    write("npy", "f4-v2", npy("<f4", [3], bytes(12), version=2))
    write("npy", "f4-v3", npy("<f4", [3], bytes(12), version=3))


def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, payload in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def safetensors_seeds():
    sizes = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
             "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1,
             "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
    for dtype, size in sizes.items():
        write("safetensors", dtype.lower(),
              safetensors([("w", dtype, [2, 2], bytes(range(4 * size)))]))
    write("safetensors", "two-meta", safetensors(
        [("a.weight", "F32", [2, 3], bytes(24)), ("a.bias", "F32", [3], bytes(12)),
         ("s", "F32", [], bytes(4)), ("e", "F32", [0, 2], b"")],
        {"format": "pt", "nnx": "1"}))
    write("safetensors", "empty", safetensors([]))


def bytecode_seeds(nnx_opt):
    for path in glob.glob(os.path.join(ROOT, "test", "nnx-opt", "Inputs",
                                       "*.mlirbc")):
        write("ir-bytecode", os.path.splitext(os.path.basename(path))[0],
              open(path, "rb").read())
    if not nnx_opt:
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.mlirbc")
        for seed in sorted(glob.glob(os.path.join(CORPUS, "ir-text", "*"))):
            r = subprocess.run([nnx_opt, seed, "--emit-bytecode", "-o", out],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            if r.returncode == 0:
                write("ir-bytecode", os.path.basename(seed).rsplit("-", 1)[0],
                      open(out, "rb").read())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nnx-opt", help="nnx-opt, for the bytecode seeds")
    args = parser.parse_args()
    shutil.rmtree(CORPUS, ignore_errors=True)
    text_seeds()
    family_seeds()
    npy_seeds()
    safetensors_seeds()
    bytecode_seeds(args.nnx_opt)
    for harness in sorted(os.listdir(CORPUS)):
        files = glob.glob(os.path.join(CORPUS, harness, "*"))
        print(f"{harness}: {len(files)} seeds, "
              f"{sum(os.path.getsize(f) for f in files)} bytes")


if __name__ == "__main__":
    main()
