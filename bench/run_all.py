#!/usr/bin/python3
"""`make bench`: runs every benchmark in bench/ and, with --record, saves the
output under bench/results/<date>-<host>.txt."""

import argparse
import contextlib
import io
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cuda_vs_cpu  # noqa: E402
import mlp_vs_torch  # noqa: E402

BENCHMARKS = [
    ("mlp_vs_torch", mlp_vs_torch.main, []),
    ("cuda_vs_cpu", cuda_vs_cpu.main, ["--no-record"]),
]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default=os.environ.get("NNX_BUILD_DIR", "build"))
    p.add_argument("--record", action="store_true",
                   help="also write the output to bench/results/")
    args = p.parse_args()
    out = io.StringIO()
    status = 0
    for name, fn, extra in BENCHMARKS:
        buf = io.StringIO()
        header = f"== {name} =="
        print(header)
        try:
            with contextlib.redirect_stdout(buf):
                rc = fn(["--build", args.build] + extra)
        except Exception as e:  # report and go on with the next benchmark
            buf.write(f"FAILED: {type(e).__name__}: {e}\n")
            rc = 1
        print(buf.getvalue(), end="")
        out.write(header + "\n" + buf.getvalue())
        status |= rc or 0
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
