#!/usr/bin/python3
"""Compile time and peak memory of nnx-run against the size of the weights.

Two MLPs of the same depth (4 Linear layers, width -> width, ReLU between,
f32), by default widths 256 (~1 MiB of weights) and 3072 (~144 MiB), are
built in PyTorch with a fixed seed and written with `nnx.torch_export.write`
in its default, automatic weights mode: the small one inline
(`dense_resource`), the big one, above INLINE_WEIGHTS_LIMIT (64 MiB), as
`#nnx.external` tensors of a safetensors file next to the .mlir.

Each model then runs `--runs` times, each time in a fresh nnx-run process
(`--input x.npy --output y.npy --repeat 2`): nnx-run prints its compile
time (parsing, lowering, JIT) and, apart, the time it spent on the weights
(reading, checking, transposing a Linear's weight once into the layout the
compiled code reads), and the child's own peak RSS is read from `os.wait4` (the rusage of
that one child, so the maxima of different runs never mix). The output is
compared with PyTorch's (atol = rtol = 1e-5).

Targets (the weights-outside-the-IR issue): with the parameters passed to
the compiled forward as arguments, compilation should not depend on the
weight values, and the mapped file should cost about its own size in memory:

  compile(big) / compile(small)                       <= 1.5
  (peak RSS(big) - peak RSS(small)) / weight bytes(big) <= 1.3

PASS / FAIL is printed per target (from the medians of the runs); like the
other benchmarks it exits non-zero only if outputs disagree.
"""

import argparse
import os
import re
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))

from mlp_vs_torch import cpu_model, parse_nnx_timing  # noqa: E402

COMPILE_TARGET = 1.5
RSS_TARGET = 1.3


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--widths", default="256,3072",
                   help="two comma-separated widths, small first")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--runs", type=int, default=3,
                   help="fresh nnx-run processes per model (medians are used)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compare-inline", action="store_true",
                   help="also run the big model forced inline (weights=False), "
                        "for comparison (writes and parses ~2x its weights as hex)")
    p.add_argument("--workdir", default=None,
                   help="where the models are written (default: a temporary "
                        "directory, removed afterwards)")
    return p.parse_args(argv)


def build_mlp(width, layers, seed):
    import torch
    from torch import nn
    torch.manual_seed(seed)
    mods = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods).eval()


# Runs one command in a fresh, small interpreter and reports the command's
# own peak RSS. Not run from this process: on exec, Linux records the old
# address space's high-water RSS in the new program's maxrss, so a child
# forked (or vforked) from this process, which holds torch and the model,
# would report at least this process's peak. The helper is exec'd afresh
# (about 10 MiB: its own VmHWM, the floor of what its child can report, is
# printed too), so its child's maxrss is the command's own.
_HELPER = r"""
import json, os, sys, time
err = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
null = os.open(os.devnull, os.O_WRONLY)
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                   (os.POSIX_SPAWN_DUP2, err, 2)])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open("/proc/self/status") as f:
    hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
print(json.dumps({"rc": os.waitstatus_to_exitcode(status),
                  "maxrss_kib": usage.ru_maxrss, "helper_hwm_kib": hwm,
                  "wall_s": wall}))
"""


def run_once(args, workdir):
    """Runs `args` in a fresh child of a fresh helper interpreter; returns
    (exit status, stderr, peak RSS bytes, wall seconds, helper peak RSS)."""
    import json
    err = os.path.join(workdir, "stderr.txt")
    out = subprocess.run(["/usr/bin/python3", "-S", "-c", _HELPER, err] + list(args),
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    r = json.loads(out)
    with open(err) as f:
        stderr = f.read()
    return (r["rc"], stderr, r["maxrss_kib"] * 1024, r["wall_s"],
            r["helper_hwm_kib"] * 1024)


def measure(width, args, workdir, weights=None):
    """Exports the MLP of `width` (`weights` as for torch_export.write; None:
    automatic), runs it; returns a dict of numbers."""
    import numpy as np
    import torch

    from nnx import tools
    from nnx.torch_export import INLINE_WEIGHTS_LIMIT, write

    model = build_mlp(width, args.layers, args.seed)
    weight_bytes = sum(t.numel() * t.element_size()
                       for t in model.state_dict().values())
    stem = f"mlp{width}" + ("" if weights is None else f"_{weights}")
    mlir = os.path.join(workdir, stem + ".mlir")
    t0 = time.perf_counter()
    text = write(model, mlir, [(None, width)], name=f"mlp{width}",
                 weights=weights)
    export_s = time.perf_counter() - t0
    external = "#nnx.external" in text
    weights_file = os.path.join(workdir, stem + ".safetensors")
    if weights is None:
        assert external == (weight_bytes > INLINE_WEIGHTS_LIMIT)
    assert external == os.path.exists(weights_file)
    del text

    x = np.random.default_rng(args.seed).standard_normal(
        (args.batch, width)).astype(np.float32)
    xin = os.path.join(workdir, f"x{width}.npy")
    yout = os.path.join(workdir, f"y{width}.npy")
    np.save(xin, x)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    del model

    compiles, weight_times, rss, walls, helpers = [], [], [], [], []
    for _ in range(args.runs):
        if os.path.exists(yout):
            os.unlink(yout)
        rc, stderr, peak, wall, helper = run_once(
            [tools.tool_path("nnx-run"), mlir, "--input", xin, "--output",
             yout, "--repeat", "2"], workdir)
        if rc != 0:
            raise RuntimeError(f"nnx-run on {mlir} exited {rc}:\n{stderr}")
        np.testing.assert_allclose(np.load(yout), want, atol=1e-5, rtol=1e-5)
        compiles.append(parse_nnx_timing(stderr)[0])
        weight_times.append(
            float(re.search(r"weights ([0-9.]+) ms;", stderr).group(1)) * 1e-3)
        rss.append(peak)
        walls.append(wall)
        helpers.append(helper)
    return {
        "width": width, "weight_bytes": weight_bytes, "external": external,
        "mode": ("external" if external else "inline")
                + ("" if weights is None else " (forced)"),
        "mlir_bytes": os.path.getsize(mlir),
        "file_bytes": os.path.getsize(weights_file) if external else 0,
        "export_s": export_s, "compiles": compiles, "rss": rss, "walls": walls,
        "compile": statistics.median(compiles), "peak": statistics.median(rss),
        "weights_s": statistics.median(weight_times),
        "wall": statistics.median(walls), "last_stderr": stderr.strip(),
        "helper_peak": max(helpers),
    }


def verdict(value, target):
    return "PASS" if value <= target else "FAIL"


def main(argv=None):
    args = parse_args(argv)
    if args.build:
        os.environ["NNX_BUILD_DIR"] = os.path.abspath(args.build)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)

    widths = [int(w) for w in args.widths.split(",")]
    if len(widths) != 2:
        raise SystemExit("--widths takes two widths, small first")
    mib = 1 << 20
    load = os.getloadavg()
    print(f"nnx weights-vs-size benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    from nnx import tools
    print(f"python {platform.python_version()}, torch {torch.__version__}, "
          f"nnx-run {tools.tool_path('nnx-run')}")
    print(f"model: {args.layers} x Linear(width, width), ReLU between, f32, "
          f"batch {args.batch}; {args.runs} fresh nnx-run processes each "
          "(--repeat 2), medians")
    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        results = [measure(w, args, workdir) for w in widths]
        extra = [measure(widths[1], args, workdir, weights=False)] \
            if args.compare_inline else []
    print("outputs agree with PyTorch (atol=rtol=1e-5) in every run")
    print(f"  {'width':>6} {'weights MiB':>12} {'mode':>17} {'.mlir MiB':>10} "
          f"{'export s':>9} {'compile ms':>11} {'weights ms':>11} "
          f"{'peak RSS MiB':>13} "
          f"{'process s':>10}")
    for r in results + extra:
        print(f"  {r['width']:6d} {r['weight_bytes'] / mib:12.2f} "
              f"{r['mode']:>17} "
              f"{r['mlir_bytes'] / mib:10.2f} {r['export_s']:9.2f} "
              f"{r['compile'] * 1e3:11.0f} {r['weights_s'] * 1e3:11.0f} "
              f"{r['peak'] / mib:13.1f} "
              f"{r['wall']:10.2f}")
    for r in results + extra:
        print(f"  width {r['width']} {r['mode']}: weight bytes {r['weight_bytes']}"
              + (f", safetensors file {r['file_bytes']} bytes" if r['external']
                 else "")
              + "; compile ms per run "
              + " ".join(f"{c * 1e3:.0f}" for c in r["compiles"])
              + "; peak RSS MiB per run "
              + " ".join(f"{p / mib:.1f}" for p in r["rss"]))
    floor = max(r["helper_peak"] for r in results + extra)
    print(f"  (peak RSS is nnx-run's own, read by a fresh helper interpreter "
          f"whose own peak, {floor / mib:.1f} MiB, is the floor)")
    small, big = results
    compile_ratio = big["compile"] / small["compile"]
    rss_ratio = (big["peak"] - small["peak"]) / big["weight_bytes"]
    print(f"compile({big['width']}) / compile({small['width']}) = "
          f"{compile_ratio:.2f}  (target <= {COMPILE_TARGET})  "
          f"{verdict(compile_ratio, COMPILE_TARGET)}")
    print(f"(RSS({big['width']}) - RSS({small['width']})) / weight_bytes("
          f"{big['width']}) = {rss_ratio:.2f}  (target <= {RSS_TARGET})  "
          f"{verdict(rss_ratio, RSS_TARGET)}")
    print("nnx-run's own report (last run of each):")
    for r in results + extra:
        for line in r["last_stderr"].splitlines():
            print(f"  | {r['width']} {r['mode']}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
