#!/usr/bin/env python3
"""Writes the seed corpora of fuzz/corpus/ from the test inputs.

  fuzz/make-corpus.py [--nnx-opt build/bin/nnx-opt]

ir-text: every .mlir of test/ and examples/ (not examples/families), split at
`//--- name` (split-file) and `// -----` (-split-input-file).
surgery: the pieces a RUN line of a test (.mlir or .test) runs a surgery pass
on (`%s`, `%t/<split-file name>`, `%S/...`, `%nnx_src/...`, or an earlier RUN
line's `-o` output), each with the pass's options as the harness's header
line; a pass after others on the line (`--nnx-record-base
--nnx-materialize-recipe`) gets the piece nnx-opt made with those (needs
nnx-opt).
family: families/*.json and the tracing tests' families, each after the byte
that picks a model, for every model (a family on a model it was not written
for is an input too).
npy, safetensors: small arrays and files of every dtype the readers accept.
ir-bytecode: the bytecode of the ir-text seeds that parse (needs nnx-opt),
and the .mlirbc files of test/ (corrupted inputs, compatibility files).
aot-weights: a link to the safetensors seeds.
Seeds longer than the harness's -max_len (the Makefile's) and copies of a
seed already written (same bytes) are left out.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
MAX_LEN = {"ir-text": 16384, "ir-bytecode": 16384, "surgery": 16384,
           "family": 8192, "npy": 4096, "safetensors": 4096}
# The passes of fuzz-surgery.cpp.
PASSES = ["widen", "deepen", "drop-layer", "low-rank", "expand-embedding",
          "prune", "insert-block", "grow-attention", "widen-residual",
          "shard-tensor-parallel", "lora-merge", "lora-unmerge", "record-base",
          "validate-recipe", "materialize-recipe", "rebuild", "convert-float"]
# The models of fuzz-family.cpp, in its order.
FAMILY_MODELS = ["bloom", "cohere", "falcon", "gemma2", "gpt2", "llama", "tiny"]


# The digests written per harness: a piece two tests share is one seed.
WRITTEN = {}


def write(harness, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_LEN[harness] or not data.strip():
        return
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:8]
    if digest in WRITTEN.setdefault(harness, set()):
        return
    WRITTEN[harness].add(digest)
    with open(os.path.join(d, f"{name}-{digest}"), "wb") as f:
        f.write(data)


def split_pieces(text, named_only=False):
    """(split-file name or '', piece) of a test file: its IR pieces (`.mlir`
    parts of split-file, split at `// -----`); only the named parts when
    `named_only` (a .test file's own lines are RUN and CHECK lines)."""
    files = re.split(r"^(?://|#)--- (\S+)\n", text, flags=re.M)
    named = list(zip(files[1::2], files[2::2]))
    if not named_only:
        named = [("", files[0])] + named
    for fname, body in named:
        if fname and not fname.endswith(".mlir"):
            continue
        for piece in re.split(r"^// -----\n", body, flags=re.M):
            if "nnx." in piece or "func." in piece:
                yield fname, piece


# The first nnx-opt of a RUN line: its input and the flags up to a pipe.
RUN_OPT = re.compile(r"RUN:.*?\bnnx-opt (\S+)([^|\n]*)")
PASS_FLAG = re.compile(r'--nnx-([a-z0-9-]+)(?:="([^"]*)"|=(\S+))?')
OUT_FLAG = re.compile(r"(?:^|\s)-o\s+(\S+)")


def source_pieces(token, path, pieces, outputs):
    """The IR pieces the RUN line input `token` of test `path` names, or
    None: the test itself, a split-file part, a file of the tree, or an
    earlier RUN line's `-o` output."""
    if token == "%s":
        return [p for name, p in pieces if name == ""]
    if token.startswith("%t/"):
        return [p for name, p in pieces if name == token[3:]] or None
    for prefix, base in (("%S/", os.path.dirname(path)), ("%nnx_src/", ROOT)):
        if token.startswith(prefix):
            src = os.path.normpath(os.path.join(base, token[len(prefix):]))
            if not src.endswith(".mlir") or not os.path.isfile(src):
                return None
            return [p for _, p in split_pieces(open(src).read())]
    return outputs.get(token)


def run_pass(nnx_opt, piece, name, opts):
    """`piece` after nnx-opt's --nnx-<name>=<opts>, or None if it failed."""
    flag = f"--nnx-{name}" + (f"={opts}" if opts else "")
    try:
        r = subprocess.run([nnx_opt, "-", flag], input=piece.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=120)
    except subprocess.TimeoutExpired:
        return None
    return r.stdout.decode() if r.returncode == 0 else None


# A surgery seed whose pass takes nnx-opt more CPU time than this is left
# out: ASan and coverage make it ten times slower in fuzz-surgery, up to
# run-fuzzers.sh's 25 s per input (grow-attention and prune on an attention
# of TinyLlama's size, 2048x2048 weights, took 17 to 34 s there).
MAX_SURGERY_CPU_SECONDS = 1.0


def write_surgery(nnx_opt, name, header, piece):
    """Writes the surgery seed `header` + `piece`, unless nnx-opt (when
    given) takes too long over it."""
    data = f"{header}\n{piece}".encode()
    if (len(data) > MAX_LEN["surgery"] or
            hashlib.sha1(data).hexdigest()[:8] in WRITTEN.get("surgery", ())):
        return
    if nnx_opt:
        pass_, _, opts = header.partition(" ")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run_pass(nnx_opt, piece, pass_, opts)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if (after.ru_utime + after.ru_stime - before.ru_utime -
                before.ru_stime) > MAX_SURGERY_CPU_SECONDS:
            print(f"surgery: left out {name} ({header}): too slow")
            return
    write("surgery", name, data)


def surgery_seeds(stem, path, text, pieces, nnx_opt):
    """The surgery seeds of the RUN lines of one test file."""
    outputs = {}
    for line in text.splitlines():
        m = RUN_OPT.search(line)
        if not m:
            continue
        current = source_pieces(m.group(1), path, pieces, outputs)
        flags = [(f.group(1), f.group(2) or f.group(3) or "")
                 for f in PASS_FLAG.finditer(m.group(2))]
        out = OUT_FLAG.search(m.group(2))
        for i, (name, opts) in enumerate(flags):
            if current is None or name not in PASSES:
                current = None
                break
            for piece in current:
                write_surgery(nnx_opt, f"{stem}-{name}", f"{name} {opts}",
                              piece)
            if not nnx_opt or (i + 1 == len(flags) and not out):
                current = None
                break
            current = [out for out in (run_pass(nnx_opt, p, name, opts)
                                       for p in current) if out is not None]
        if out and current:
            outputs[out.group(1)] = current


# Ops no surgery test runs a pass over (recurrent layers and cells, guards,
# uncalled and entry forwards): a piece that holds one gets a seed for each
# pass that takes a layer, naming its first or last layer, and for the
# passes over the whole model.
UNTESTED = re.compile(r"nnx\.(lstm|gru|rnn|lstm_cell|gru_cell|rnn_cell|"
                      r"fn\.guard|uncalled|entry)\b")
LAYER = re.compile(r"nnx\.(?!model\b|forward\b|module\b|fn\b)[a-z_]+ @(\w+)")
LAYER_HEADERS = ["widen layer={0} width=9", "prune layer={1} keep=1",
                 "low-rank layer={0} rank=1", "drop-layer layer={1}",
                 "deepen after={0}"]
MODEL_HEADERS = ["shard-tensor-parallel ranks=2 rank=1",
                 "convert-float from=f32 to=bf16", "record-base"]


def untested_surface_seeds(stem, piece, nnx_opt):
    if not UNTESTED.search(piece):
        return
    names = LAYER.findall(piece)
    headers = MODEL_HEADERS + ([h.format(names[0], names[-1])
                                for h in LAYER_HEADERS] if names else [])
    for header in headers:
        write_surgery(nnx_opt, f"{stem}-{header.split()[0]}", header, piece)


def text_seeds(nnx_opt):
    paths = sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"),
                             recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.test"),
                              recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        text = open(path).read()
        pieces = list(split_pieces(text, path.endswith(".test")))
        for i, (_, piece) in enumerate(pieces):
            write("ir-text", f"{stem}-{i}", piece)
            untested_surface_seeds(stem, piece, nnx_opt)
        surgery_seeds(stem, path, text, pieces, nnx_opt)


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
    # fuzz-npy's finding of issue 46: an empty array of 395 million empty rows.
    write("npy", "b1-empty-many-rows",
          npy("|b1", [6, 1, 4, 4, 6, 1, 446, 1, 4, 4, 6, 1, 4, 4, 0, 4], b""))
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
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlirbc"),
                                 recursive=True)):
        write("ir-bytecode", os.path.splitext(os.path.basename(path))[0],
              open(path, "rb").read())
    if not nnx_opt:
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.mlirbc")
        text_dir = os.path.join(CORPUS, "ir-text")
        for seed in sorted(glob.glob(os.path.join(text_dir, "*"))):
            # Run from the seed's directory: its locations name the seed, not
            # this checkout's path.
            r = subprocess.run([os.path.abspath(nnx_opt),
                                os.path.basename(seed), "--emit-bytecode",
                                "-o", out], cwd=text_dir,
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
    text_seeds(args.nnx_opt)
    family_seeds()
    npy_seeds()
    safetensors_seeds()
    bytecode_seeds(args.nnx_opt)
    os.symlink("safetensors", os.path.join(CORPUS, "aot-weights"))
    for harness in sorted(os.listdir(CORPUS)):
        if os.path.islink(os.path.join(CORPUS, harness)):
            print(f"{harness}: the {os.readlink(os.path.join(CORPUS, harness))}"
                  " seeds")
            continue
        files = glob.glob(os.path.join(CORPUS, harness, "*"))
        print(f"{harness}: {len(files)} seeds, "
              f"{sum(os.path.getsize(f) for f in files)} bytes")


if __name__ == "__main__":
    main()
