#!/usr/bin/python3
"""nnx's CPU code against PyTorch + OpenBLAS, at 1 and 2 threads, in one run.

Rows (each measured in its own process, since OpenBLAS reads its thread
count once, when it is loaded; nnx-run gets the same --threads):

- the MLP 512 -> 1024 -> 1024 -> 10 (ReLU, f32; bench/mlp_vs_torch.py) at
  batch 1, 16 and 256;
- one GPT-2 block (d 768, 12 heads, 1 x 128 tokens; bench/block_vs_torch.py).

Every row checks the outputs against PyTorch (atol = rtol = 1e-5) first. The
table gives per-forward minimum times, the ratio nnx / PyTorch (<= 1: nnx is
as fast or faster) and, for the MLP, nnx's GFLOP/s as a share of this
machine's FMA peak: one core's peak is measured by bench/fma_peak.c (every
vector width the CPU runs, detected at run time; the fastest counts), times
the thread count. The peak is validated in the same run: a large sgemm on
one thread (PyTorch over OpenBLAS, the kernel set it used printed) must not
exceed it, or the run fails.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mlp_vs_torch import cpu_model  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--threads", default="1,2",
                   help="comma-separated thread counts")
    p.add_argument("--batches", default="1,16,256",
                   help="comma-separated MLP batch sizes")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating nnx / PyTorch rounds per row (--rounds of "
                        "bench/mlp_vs_torch.py and bench/block_vs_torch.py)")
    p.add_argument("--no-block", action="store_true",
                   help="skip the GPT-2 block rows")
    return p.parse_args(argv)


def fma_peak():
    """(ISA, one core's f32 FMA peak in GFLOP/s, {ISA: GFLOP/s} of every
    width), or (None, None, {}) without a C compiler or on a CPU without
    AVX2 + FMA."""
    cc = shutil.which("clang-22") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None, None, {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "fma_peak")
        built = subprocess.run([cc, "-O2", os.path.join(HERE, "fma_peak.c"),
                                "-o", exe], capture_output=True, text=True)
        if built.returncode:
            return None, None, {}
        out = subprocess.run([exe], capture_output=True, text=True)
    if out.returncode:
        return None, None, {}
    widths = {}
    for line in out.stdout.splitlines():
        words = line.split()
        if words[0] == "peak":
            return words[1], float(words[2]), widths
        widths[words[0]] = float(words[1])
    return None, None, widths


# One thread's large sgemm (PyTorch over OpenBLAS, as the MLP rows' peer),
# in its own process with the OpenBLAS set-up of bench/mlp_vs_torch.py.
SGEMM = """
import json, sys, time
sys.path.insert(0, %r)
from mlp_vs_torch import blas_libraries, configure_environment, openblas_corename
configure_environment(None, 1)
import os, torch
torch.set_num_threads(1)
n = %d
a, b = torch.randn(n, n), torch.randn(n, n)
torch.mm(a, b)
times = []
for _ in range(5):
    start = time.perf_counter()
    torch.mm(a, b)
    times.append(time.perf_counter() - start)
best = min(times)
print(json.dumps({"n": n, "gflops": 2 * n ** 3 / best / 1e9,
                  "openblas": openblas_corename(blas_libraries()),
                  "coretype": os.environ.get("OPENBLAS_CORETYPE", "unset")}))
"""


def sgemm(n=2048):
    """{n, gflops, openblas (the kernel set's name), coretype} of one
    thread's n x n x n sgemm, the best of 5."""
    proc = subprocess.run([sys.executable, "-c", SGEMM % (HERE, n)],
                          capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("the sgemm check failed:\n" + proc.stdout + proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(script, extra, build):
    cmd = [sys.executable, os.path.join(HERE, script), "--json"] + extra
    if build:
        cmd += ["--build", build]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                           + proc.stdout + proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    args = parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    isa, peak, widths = fma_peak()
    gemm = sgemm()
    rows = []
    for t in threads:
        for b in batches:
            rows.append(("MLP", f"batch {b}", t, measure(
                "mlp_vs_torch.py", ["--batch", str(b), "--threads", str(t),
                                    "--rounds", str(args.rounds)], args.build)))
        if not args.no_block:
            rows.append(("GPT-2 block", "1 x 128", t, measure(
                "block_vs_torch.py", ["--threads", str(t), "--rounds",
                                      str(args.rounds)], args.build)))

    load = os.getloadavg()
    print(f"nnx CPU vs PyTorch  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if peak:
        print(f"FMA peak (bench/fma_peak.c, {isa}): {peak:.1f} GFLOP/s per core ("
              + ", ".join(f"{w} {g:.1f}" for w, g in widths.items()) + ")")
    print(f"sgemm {gemm['n']}^3 on one thread (PyTorch, OpenBLAS kernels "
          f"{gemm['openblas'] or 'unknown'}, OPENBLAS_CORETYPE={gemm['coretype']}): "
          f"{gemm['gflops']:.1f} GFLOP/s"
          + (f" = {100 * gemm['gflops'] / peak:.0f}% of the peak" if peak else ""))
    if peak and gemm["gflops"] > peak:
        print("ERROR: the sgemm exceeds the measured FMA peak: bench/fma_peak.c "
              "does not measure this CPU's peak")
        return 1
    print("outputs agree with PyTorch (atol=rtol=1e-5) in every row; "
          "per-forward minimum times")
    print(f"  {'model':12} {'input':10} {'threads':>7} {'nnx ms':>9} "
          f"{'torch ms':>9} {'nnx/torch':>9} {'nnx GFLOP/s':>11} {'% peak':>7}")
    worst = 0.0
    for model, shape, t, r in rows:
        ratio = r["nnx_min_s"] / r["torch_min_s"]
        worst = max(worst, ratio)
        gflops = r["gflop"] / r["nnx_min_s"]
        share = f"{100 * gflops / (peak * t):6.0f}%" if peak else "      -"
        print(f"  {model:12} {shape:10} {t:>7} {r['nnx_min_s'] * 1e3:9.3f} "
              f"{r['torch_min_s'] * 1e3:9.3f} {ratio:8.2f}x {gflops:11.1f} "
              f"{share}")
    print(f"  worst ratio nnx / PyTorch: {worst:.2f}x (<= 1: nnx as fast or "
          "faster in every row)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
