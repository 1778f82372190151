"""Compares the outputs nnx-capi-test printed with .npy references.

    compare.py OUT.txt SECTION=REF.npy ... SECTION~=REF.npy ...

Each `== SECTION` block of OUT.txt holds `output 0: float32 (4, 3)` and
the values (`%.9g`, which reads back to the same float32). `=` asks for
the same shape and the same values bit for bit, `~=` for the seeds'
end-to-end contract, atol = rtol = 1e-5 (a function-preserving edit
computed along another path; test/README.md).
"""
import sys

import numpy as np


def read_sections(path):
    sections, current, values = {}, None, []
    for line in open(path):
        line = line.strip()
        if line.startswith("== "):
            current = line[3:]
            sections[current] = {}
        elif current and line.startswith("output "):
            index, rest = line[len("output "):].split(":", 1)
            dtype, shape = rest.split(None, 1)
            shape = tuple(int(d) for d in shape.strip("()").split(",") if d.strip())
            values = []
            sections[current][int(index)] = (dtype, shape, values)
        elif current and sections[current] and line and (
                line[0] in "-0123456789" or line[:3] in ("nan", "inf")):
            values.extend(float(v) for v in line.split())
        else:
            current = None
    return sections


def main():
    sections = read_sections(sys.argv[1])
    failed = False
    for arg in sys.argv[2:]:
        exact = "~=" not in arg
        name, ref_path = arg.split("=" if exact else "~=", 1)
        dtype, shape, values = sections[name][0]
        ref = np.load(ref_path)
        got = np.array(values, dtype=dtype).reshape(shape)
        if got.shape != ref.shape or got.dtype != ref.dtype:
            print(f"{name}: {got.dtype}{got.shape}, reference {ref.dtype}{ref.shape}")
            failed = True
        elif exact and not np.array_equal(got, ref):
            print(f"{name}: differs from {ref_path}: max |diff| "
                  f"{np.abs(got - ref).max()}")
            failed = True
        elif not exact and not np.allclose(got, ref, rtol=1e-5, atol=1e-5):
            print(f"{name}: not within 1e-5 of {ref_path}: max |diff| "
                  f"{np.abs(got - ref).max()}")
            failed = True
        else:
            print(f"{name}: {'identical to' if exact else 'within 1e-5 of'} "
                  f"the reference {got.shape}")
    sys.exit(1 if failed else 0)


main()
