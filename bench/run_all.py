#!/usr/bin/python3
"""`make bench`: runs every benchmark in bench/ and, with --record, saves the
output under bench/results/<date>-<host>.txt."""

import argparse
import io
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Each benchmark runs in its own process: OpenBLAS reads OPENBLAS_CORETYPE and
# OPENBLAS_NUM_THREADS once, when it is first loaded, so a benchmark that sets
# them must be the first to load numpy (in one process, an earlier import
# left the PyTorch peer on 2 threads and the generic kernels).
BENCHMARKS = [
    ("cpu_vs_torch", []),
    ("mlp_vs_torch", []),
    ("cuda_vs_cpu", ["--no-record"]),
    ("weights_vs_size", []),
    ("gpt2_vs_torch", []),
    ("tp_vs_single", []),
    ("bf16_vs_torch", []),
    ("conv_vs_torch", []),
    ("compile_vs_depth", []),
]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default=os.environ.get("NNX_BUILD_DIR", "build"))
    p.add_argument("--record", action="store_true",
                   help="also write the output to bench/results/")
    args = p.parse_args()
    out = io.StringIO()
    status = 0
    for name, extra in BENCHMARKS:
        header = f"== {name} =="
        print(header, flush=True)
        proc = subprocess.run(
            [sys.executable, os.path.join(HERE, name + ".py"), "--build",
             args.build] + extra, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        text = proc.stdout
        if proc.returncode:
            text += f"FAILED: exit status {proc.returncode}\n"
        print(text, end="")
        out.write(header + "\n" + text)
        status |= proc.returncode
    if args.record:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        path = os.path.join(HERE, "results", time.strftime("%Y-%m-%d") + "-"
                            + socket.gethostname().split(".")[0] + ".txt")
        with open(path, "w") as f:
            f.write(out.getvalue())
        print(f"recorded in {os.path.relpath(path)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
