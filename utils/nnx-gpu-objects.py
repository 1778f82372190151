#!/usr/bin/env python3
"""Writes the objects embedded in the gpu.binary ops of an MLIR file.

    nnx-gpu-objects.py lowered.mlir OUTDIR

For every `gpu.binary @name [#gpu.object<#nvvm.target<...>, ..., "...">]`
writes OUTDIR/<name>.<chip>.<ext>: .ptx for PTX (format=isa, `assembly =`),
.cubin for ELF cubins (format=bin, `bin =`), .fatbin for fat binaries.
Prints one line per file: "<path> <kind> <chip> <bytes>". Exits 1 when the
file holds no gpu.binary.
"""
import os
import re
import sys

BINARY = re.compile(r'gpu\.binary\s+@("?)([\w.$-]+)\1[^\[]*\[')
OBJECT = re.compile(r'#gpu\.object<#nvvm\.target<([^>]*)>')
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
HEX = set("0123456789abcdefABCDEF")


def decode(body):
    """MLIR string escapes: \\XX (hex), \\\\, \\", \\n, \\t."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in HEX and i + 2 < len(body) and body[i + 2] in HEX:
            out.append(int(body[i + 1:i + 3], 16))
            i += 3
        else:
            out += {"n": b"\n", "t": b"\t"}.get(nxt, nxt.encode("utf-8"))
            i += 2
    return bytes(out)


def objects(text):
    for b in BINARY.finditer(text):
        name = b.group(2)
        pos = b.end()
        while True:
            o = OBJECT.match(text, text.find("#gpu.object<", pos))
            if not o or text.find("]", pos) < o.start():
                break
            chip = re.search(r'chip\s*=\s*"([^"]+)"', o.group(1))
            chip = chip.group(1) if chip else "unknown"
            # The object's payload is the last string before the object's '>'.
            rest = text[o.end():]
            kind = "fatbin"
            m = re.match(r'\s*,\s*(?:properties\s*=\s*\{[^}]*\}\s*,\s*)?'
                         r'(?:(assembly|bin|offload)\s*=\s*)?"', rest)
            if not m:
                break
            if m.group(1) == "assembly":
                kind = "ptx"
            elif m.group(1) == "bin":
                kind = "cubin"
            elif m.group(1) == "offload":
                kind = "llvm"
            s = STRING.match(rest, m.end() - 1)
            data = decode(s.group(1))
            if kind == "fatbin" and data.startswith(b"\x7fELF"):
                kind = "cubin"
            yield name, chip, kind, data
            pos = o.end() + s.end()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    os.makedirs(sys.argv[2], exist_ok=True)
    found = 0
    for name, chip, kind, data in objects(text):
        path = os.path.join(sys.argv[2], f"{name}.{chip}.{kind}")
        with open(path, "wb") as f:
            f.write(data)
        print(path, kind, chip, len(data))
        found += 1
    if not found:
        sys.exit(f"{sys.argv[1]}: no gpu.binary with an NVVM object")


if __name__ == "__main__":
    main()
