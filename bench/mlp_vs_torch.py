#!/usr/bin/python3
"""One MLP forward, nnx's compiled CPU code vs PyTorch, on this machine.

The model (default: batch 256, 512 -> 1024 -> 1024 -> 10, ReLU, f32) is
built in PyTorch with a fixed seed, written as nnx IR, and run

  * through `nnx-run --repeat N`: nnx-run JIT-compiles the forward once and
    times each of N calls itself (compilation excluded; the first call is
    in the mean, so the min is the steadier number);
  * through PyTorch (eval mode, no_grad, OpenBLAS): one warm-up call, then
    N timed calls.

Both outputs are compared (atol = rtol = 1e-5) so the timing is of a
correct forward. Prints mean and min per forward for both and the ratios
nnx / torch.
"""

import argparse
import os
import platform
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--dims", default="512,1024,1024,10",
                   help="comma-separated layer widths, input first")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating rounds of N forwards each")
    p.add_argument("--threads", type=int, default=1,
                   help="threads of both: PyTorch / OpenBLAS, and nnx-run --threads")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object of the measurements instead of "
                        "the report (bench/cpu_vs_torch.py collects these)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def blas_libraries():
    """BLAS shared objects mapped into this process (after a matmul)."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in os.path.basename(path).lower():
                libs.add(path)
    return sorted(libs)


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def openblas_coretype():
    """The OpenBLAS kernel family this CPU supports. OpenBLAS picks it from
    the CPU model; in a VM with a masked model name it falls back to the
    generic SSE3 'Prescott' kernels (10-20x slower), so we name it."""
    flags = cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def openblas_corename(blas):
    import ctypes
    for path in blas:
        if "openblas" in os.path.basename(path):
            try:
                lib = ctypes.CDLL(path)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                return lib.openblas_get_corename().decode()
            except (OSError, AttributeError):
                return None
    return None


def set_torch_threads(threads):
    """PyTorch's intra-op threads and its BLAS's: Debian's torch calls the
    system BLAS (OpenBLAS, pthreads), whose thread pool is sized by
    OPENBLAS_NUM_THREADS when it loads and by openblas_set_num_threads, not
    by torch.set_num_threads. A bench that runs several thread counts in one
    process sets both per row, else its "1 thread" Linear layers run on
    every core."""
    import ctypes
    import torch
    torch.set_num_threads(threads)
    for path in blas_libraries():
        if "openblas" in os.path.basename(path):
            try:
                ctypes.CDLL(path).openblas_set_num_threads(threads)
            except (OSError, AttributeError):
                pass


def time_torch(model, x, repeat):
    """Seconds of each of `repeat` PyTorch forwards of `model` on `x` (eval,
    no_grad), after one warm-up call."""
    import torch
    times = []
    with torch.no_grad():
        model(x)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    return times


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# nnx-run --repeat N prints, on stderr:
#   nnx-run: compile C ms, weights W ms; forward xN (excluding compilation):
#   mean M ms, min m ms
# (C: parsing, lowering and JIT; W: reading, checking, permuting the weights)
TIMING = re.compile(r"compile ([0-9.]+) ms, weights [0-9.]+ ms; forward "
                    r"x([0-9]+) \(excluding compilation\): mean ([0-9.]+) ms, "
                    r"min ([0-9.]+) ms")


def parse_nnx_timing(stderr):
    """(compile s, mean s, min s) from nnx-run's --repeat report."""
    m = TIMING.search(stderr)
    if not m:
        raise RuntimeError("cannot find the timing line in nnx-run's stderr:\n"
                           + stderr)
    return float(m.group(1)) * 1e-3, float(m.group(3)) * 1e-3, float(m.group(4)) * 1e-3


def configure_environment(build, threads):
    """The build directory for nnx.tools, and the PyTorch peer's threads and
    OpenBLAS kernels. Must run before numpy / torch are imported: OpenBLAS
    reads these once, when it is loaded."""
    if build:
        os.environ["NNX_BUILD_DIR"] = os.path.abspath(build)
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    if "OPENBLAS_CORETYPE" not in os.environ and openblas_coretype():
        os.environ["OPENBLAS_CORETYPE"] = openblas_coretype()
    os.environ["OMP_NUM_THREADS"] = str(threads)


def main(argv=None):
    args = parse_args(argv)
    configure_environment(args.build, args.threads)

    import numpy as np
    import torch
    from torch import nn

    from nnx import tools
    from nnx.torch_export import export

    torch.set_num_threads(args.threads)
    dims = [int(d) for d in args.dims.split(",")]
    torch.manual_seed(args.seed)
    layers = []
    for i in range(len(dims) - 1):
        layers.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers).eval()
    x = np.random.default_rng(args.seed).standard_normal(
        (args.batch, dims[0])).astype(np.float32)
    flops = 2.0 * args.batch * sum(dims[i] * dims[i + 1] for i in range(len(dims) - 1))

    xt = torch.from_numpy(x)
    text = export(model, [(None, dims[0])], name="mlp")
    with torch.no_grad():
        want = model(xt).numpy()

    # Rounds alternate the two, so that load on a shared machine hits both
    # alike; each round is N timed forwards of each.
    torch_times, nnx_means, nnx_mins, nnx_compiles, nnx_walls = [], [], [], [], []
    for _ in range(args.rounds):
        torch_times += time_torch(model, xt, args.repeat)
        t0 = time.perf_counter()
        got, stderr = tools.nnx_run(text, [x],
                                    extra_args=["--repeat", str(args.repeat),
                                                "--threads", str(args.threads)])
        nnx_walls.append(time.perf_counter() - t0)
        c, mean, mn = parse_nnx_timing(stderr)
        nnx_compiles.append(c)
        nnx_means.append(mean)
        nnx_mins.append(mn)
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    torch_mean = float(np.mean(torch_times))
    torch_min = float(np.min(torch_times))
    nnx_mean = float(np.mean(nnx_means))
    nnx_min = float(np.min(nnx_mins))
    nnx_compile = float(np.median(nnx_compiles))
    nnx_wall = float(np.median(nnx_walls))
    blas = blas_libraries()
    if args.json:
        import json
        print(json.dumps({"batch": args.batch, "threads": args.threads,
                          "dims": dims, "gflop": flops / 1e9,
                          "nnx_min_s": nnx_min, "nnx_mean_s": nnx_mean,
                          "torch_min_s": torch_min, "torch_mean_s": torch_mean,
                          "nnx_compile_s": nnx_compile,
                          "openblas": openblas_corename(blas)}))
        return 0

    load = os.getloadavg()
    print(f"nnx MLP benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"torch {torch.__version__}, threads {args.threads}, BLAS: "
          f"{', '.join(sorted({os.path.realpath(b) for b in blas})) or 'none mapped'}")
    core = openblas_corename(blas)
    print(f"OpenBLAS kernels: {core or 'unknown'} "
          f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')})")
    if not any("openblas" in b for b in blas):
        print("WARNING: PyTorch is not using OpenBLAS; install "
              "libopenblas0-pthread (scripts/setup.sh) before comparing")
    print(f"model: batch {args.batch}, {' -> '.join(map(str, dims))}, ReLU, f32, "
          f"{flops / 1e9:.3f} GFLOP per forward")
    print(f"outputs agree (atol=rtol=1e-5), shape {got.shape}")
    print(f"{args.rounds} rounds x {args.repeat} forwards each, time per forward "
          "(compilation excluded):")
    print(f"  {'':8} {'mean ms':>10} {'min ms':>10} {'GFLOP/s(min)':>13}")
    for name, mean, mn in (("nnx", nnx_mean, nnx_min),
                           ("pytorch", torch_mean, torch_min)):
        print(f"  {name:8} {mean * 1e3:10.3f} {mn * 1e3:10.3f} "
              f"{flops / mn / 1e9:13.2f}")
    print(f"  ratio nnx / pytorch: mean {nnx_mean / torch_mean:.2f}x, "
          f"min {nnx_min / torch_min:.2f}x  (>1: nnx slower)")
    print(f"  nnx compile {nnx_compile * 1e3:.0f} ms; whole nnx-run process "
          f"(compile, .npy I/O, {args.repeat} calls) {nnx_wall:.2f} s (medians)")
    print("nnx-run's own report (last round):")
    for line in stderr.strip().splitlines():
        print("  | " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
