#!/usr/bin/python3
"""GPT-2 small at its real size through nnx, side by side with PyTorch.

The model is the test tree's PyTorch GPT-2 (python/tests/models/gpt2.py) with
the 124M checkpoint's shape (12 layers, d 768, 12 heads, vocabulary 50257,
1024 positions) and random weights drawn with GPT-2's own scale (N(0, 0.02);
nothing is downloaded). It is exported once with `nnx.torch_export.write`
(the forward recorded as Python runs it; the weights, ~0.5 GB, go to a safetensors file next to the .mlir)
with batch and sequence both dynamic, so ONE IR file serves every shape.

For each shape (default batch 1 x 128 and batch 8 x 128), in one run:
- nnx: a fresh `nnx-run --repeat N` process (its compile time, weight
  loading time, per-forward mean and min, and its own peak RSS from wait4);
- PyTorch (eval, no_grad, same thread count, OpenBLAS): one warm-up, then N
  timed forwards;
- the logits are compared (atol = rtol = 1e-5) before anything is printed.

Prints export time, then per shape: compile, weights, forward min/mean for
both, the ratio nnx / PyTorch (> 1: nnx slower) and nnx-run's peak RSS next
to PyTorch's process peak RSS.
"""

import argparse
import os
import resource
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from mlp_vs_torch import (blas_libraries, configure_environment,  # noqa: E402
                          cpu_model, openblas_corename, parse_nnx_timing)
from weights_vs_size import run_once  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--shapes", default="1x128,8x128",
                   help="comma-separated BATCHxSEQUENCE shapes")
    p.add_argument("--repeat", type=int, default=3,
                   help="timed forwards per shape, for each of nnx and PyTorch "
                        "(at least 2: nnx-run reports times from 2 calls on)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layers", type=int, default=12,
                   help="transformer blocks (12 is GPT-2 small)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", default=None,
                   help="where the model is written (default: a temporary "
                        "directory, removed afterwards)")
    return p.parse_args(argv)


def build_model(layers, seed):
    from models import gpt2
    from models.common import init_weights
    config = gpt2.gpt2_small_config()
    config.n_layer = layers
    model = gpt2.GPT2LMHeadModel(config)
    return init_weights(model, seed, std=0.02, bias_std=0.02,
                        norm_std=0.02).eval(), config


def bench_torch(model, ids, repeat):
    """PyTorch's output and (min, mean) seconds of `repeat` forwards after a
    warm-up (also bench/conv_vs_torch.py's)."""
    import torch
    times = []
    with torch.no_grad():
        logits = model(ids)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(ids)
            times.append(time.perf_counter() - t0)
    return logits.numpy(), min(times), sum(times) / len(times)


def bench_nnx(mlir, ids, repeat, workdir, threads, extra=()):
    """nnx-run --repeat on `mlir` (with the options `extra`): its output,
    compile, weights, min and mean seconds, and peak RSS (also
    bench/conv_vs_torch.py's and bench/zoo_vs_torch.py's)."""
    import numpy as np
    from nnx import tools
    xin = os.path.join(workdir, "ids.npy")
    yout = os.path.join(workdir, "logits.npy")
    np.save(xin, ids)
    rc, stderr, rss, wall, _ = run_once(
        [tools.tool_path("nnx-run"), mlir, "--input", xin, "--output", yout,
         "--repeat", str(repeat), "--threads", str(threads), *extra], workdir)
    if rc != 0:
        raise RuntimeError(f"nnx-run failed ({rc}):\n{stderr}")
    compile_s, mean_s, min_s = parse_nnx_timing(stderr)
    weights_ms = float(stderr.split("weights ")[1].split(" ms")[0])
    return np.load(yout), compile_s, weights_ms * 1e-3, min_s, mean_s, rss


def main(argv=None):
    args = parse_args(argv)
    args.repeat = max(args.repeat, 2)
    configure_environment(args.build, args.threads)

    import numpy as np
    import torch

    from models.common import attention_interface
    from nnx.torch_export import write

    torch.set_num_threads(args.threads)
    model, config = build_model(args.layers, args.seed)
    params = sum(p.numel() for p in model.parameters())
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]

    own = tempfile.TemporaryDirectory() if args.workdir is None else None
    workdir = own.name if own else args.workdir
    os.makedirs(workdir, exist_ok=True)
    try:
        mlir = os.path.join(workdir, "gpt2.mlir")
        t0 = time.perf_counter()
        write(model, mlir, [((None, None), torch.int64)], name="gpt2",
              functions=[attention_interface], weights=True)
        export_s = time.perf_counter() - t0
        rows = []
        for batch, seq in shapes:
            ids = np.random.default_rng(seq + batch).integers(
                0, config.vocab_size, size=(batch, seq)).astype(np.int64)
            want, t_min, t_mean = bench_torch(model, torch.from_numpy(ids),
                                              args.repeat)
            got, c_s, w_s, n_min, n_mean, rss = bench_nnx(
                mlir, ids, args.repeat, workdir, args.threads)
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
            rows.append((batch, seq, c_s, w_s, n_min, n_mean, t_min, t_mean, rss))
    finally:
        if own:
            own.cleanup()

    torch_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    blas = blas_libraries()
    load = os.getloadavg()
    print(f"nnx GPT-2 small benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"torch {torch.__version__}, threads {args.threads}, OpenBLAS kernels: "
          f"{openblas_corename(blas) or 'unknown'}")
    print(f"model: GPT-2, {config.n_layer} layers, d {config.n_embd}, "
          f"{config.n_head} heads, vocabulary {config.vocab_size}, "
          f"{params / 1e6:.1f}M parameters (f32, {params * 4 / 2**20:.0f} MiB)")
    print(f"export (recorded forward, weights to safetensors): {export_s:.2f} s "
          f"(target: under 5 s)")
    print("logits agree with PyTorch (atol=rtol=1e-5) for every shape")
    print(f"time per forward, {args.repeat} forwards each (compilation excluded):")
    print("  shape       nnx compile  weights   nnx min   nnx mean  torch min "
          "torch mean  ratio(min)  nnx-run peak RSS")
    for b, t, c_s, w_s, n_min, n_mean, t_min, t_mean, rss in rows:
        print(f"  {b:>2} x {t:<5}  {c_s * 1e3:8.0f} ms {w_s * 1e3:6.0f} ms "
              f"{n_min * 1e3:7.1f} ms {n_mean * 1e3:7.1f} ms {t_min * 1e3:7.1f} ms "
              f"{t_mean * 1e3:7.1f} ms  {n_min / t_min:8.2f}x  {rss / 2**20:8.0f} MiB")
    print(f"  (this PyTorch process, model and runs included: peak RSS "
          f"{torch_rss / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
