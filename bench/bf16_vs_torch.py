#!/usr/bin/python3
"""bf16 models through nnx, side by side with PyTorch's bf16 CPU path.

In one run, at each thread count (default 1 and 2), for
  * the MLP 512 -> 1024 -> 1024 -> 10 (ReLU) at batch 1, 16 and 256, and
  * GPT-2 small (python/tests/models/gpt2.py at the 124M shape, random
    N(0, 0.02) weights) at 1 x 128 and 8 x 128,
the model is cast to bf16 in PyTorch and exported (weights in a safetensors
file next to the .mlir), then timed
  * by PyTorch (eval, no_grad, torch.set_num_threads(n): its bf16 matmuls
    are oneDNN's): one warm-up, then N forwards;
  * by `nnx-run --repeat N --threads n` (a fresh process; compilation
    excluded; the bf16 input rounded with --cast-inputs);
  * and, for nnx's own f32-vs-bf16 ratio, nnx-run on the same model in f32.
Before timing is trusted, nnx's bf16 output is compared with PyTorch's: the
largest difference is printed next to the largest output, and must stay
within the bound python/tests/test_bf16.py derives (2^-7 per rounding step
along the model, relative to the largest output).

Prints, per model, shape and thread count: min / mean per forward for
PyTorch bf16, nnx bf16 and nnx f32, and the ratios nnx bf16 / PyTorch bf16
(<= 1: nnx is as fast or faster) and nnx f32 / nnx bf16 (the bf16 speed-up).
The CPU and whether it has AVX512_BF16 (vdpbf16ps: nnx's bf16 tiles) head
the report.
"""

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from mlp_vs_torch import (configure_environment, cpu_flags,  # noqa: E402
                          cpu_model, parse_nnx_timing, set_torch_threads)
from weights_vs_size import run_once  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--threads", default="1,2",
                   help="comma-separated thread counts")
    p.add_argument("--mlp-batches", default="1,16,256")
    p.add_argument("--gpt2-shapes", default="1x128,8x128",
                   help="comma-separated BATCHxSEQUENCE shapes ('' for none)")
    p.add_argument("--layers", type=int, default=12,
                   help="GPT-2 blocks (12 is GPT-2 small)")
    p.add_argument("--repeat", type=int, default=20,
                   help="timed MLP forwards (GPT-2: a fifth, at least 3)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def time_torch(model, x, repeat):
    import torch
    times = []
    with torch.no_grad():
        out = model(x)
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    return out.float().numpy(), min(times), sum(times) / len(times)


def time_nnx(mlir, x, repeat, threads, workdir):
    """nnx-run --repeat: its output (f32) and (min, mean) seconds."""
    import numpy as np
    from nnx import tools
    xin = os.path.join(workdir, "x.npy")
    yout = os.path.join(workdir, "y.npy")
    np.save(xin, x)
    rc, stderr, _, _, _ = run_once(
        [tools.tool_path("nnx-run"), mlir, "--input", xin, "--output", yout,
         "--cast-inputs", "--repeat", str(repeat), "--threads", str(threads)],
        workdir)
    if rc != 0:
        raise RuntimeError(f"nnx-run failed ({rc}):\n{stderr}")
    _, mean_s, min_s = parse_nnx_timing(stderr)
    return np.load(yout), min_s, mean_s


def export(model, path, inputs, name, functions=()):
    from nnx.torch_export import write
    write(model, path, inputs, name=name, functions=functions, weights=True)


def mlp(seed):
    import torch
    torch.manual_seed(seed)
    dims = [512, 1024, 1024, 10]
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i + 2 < len(dims):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).eval(), len(layers) + 1


def gpt2(layers, seed):
    from models import gpt2 as g
    from models.common import init_weights
    config = g.gpt2_small_config()
    config.n_layer = layers
    model = init_weights(g.GPT2LMHeadModel(config), seed, std=0.02,
                         bias_std=0.02, norm_std=0.02).eval()
    # Rounding steps on the longest path: embeddings, per block two norms,
    # q/k/v, scores, softmax, context, projection, two residual adds, the
    # MLP's three steps; the final norm and the head.
    return model, config, 3 + 13 * layers


def row(name, shape, threads, torch_t, nnx_t, f32_t, diff, top, bound):
    ratio = nnx_t[0] / torch_t[0]
    speedup = f32_t[0] / nnx_t[0]
    print(f"{name:6s} {shape:>8s} {threads:>2d}t  torch bf16 {torch_t[0]*1e3:9.2f} "
          f"({torch_t[1]*1e3:9.2f})  nnx bf16 {nnx_t[0]*1e3:9.2f} "
          f"({nnx_t[1]*1e3:9.2f})  nnx f32 {f32_t[0]*1e3:9.2f}  "
          f"bf16/torch {ratio:5.2f}  f32/bf16 {speedup:5.2f}  "
          f"|diff| {diff:.2e} of {top:.2e} (bound {bound:.2e})", flush=True)
    return ratio, speedup


def check(got, want, steps):
    import numpy as np
    diff = float(np.abs(got - want).max())
    top = float(np.abs(want).max())
    bound = steps * 2.0 ** -7 * top
    if not diff <= bound:
        raise AssertionError(f"nnx bf16 differs from PyTorch bf16 by {diff} "
                             f"(largest output {top}; bound {bound})")
    return diff, top, bound


def bench_mlp(args, threads, workdir):
    import torch
    model, steps = mlp(args.seed)
    f32 = os.path.join(workdir, "mlp-f32.mlir")
    bf16 = os.path.join(workdir, "mlp-bf16.mlir")
    export(model, f32, [(None, 512)], "mlp")
    model = model.to(torch.bfloat16)
    export(model, bf16, [(None, 512)], "mlp")
    for batch in [int(b) for b in args.mlp_batches.split(",") if b]:
        x = torch.randn(batch, 512, generator=torch.Generator().manual_seed(
            batch)).to(torch.bfloat16)
        xf = x.float().numpy()
        for n in threads:
            set_torch_threads(n)
            want, *t = time_torch(model, x, args.repeat)
            got, *b = time_nnx(bf16, xf, args.repeat, n, workdir)
            _, *f = time_nnx(f32, xf, args.repeat, n, workdir)
            yield ("mlp", f"b{batch}", n, t, b, f) + check(got, want, steps)


def bench_gpt2(args, threads, workdir):
    import numpy as np
    import torch
    from models.common import attention_interface
    shapes = [tuple(int(v) for v in s.split("x"))
              for s in args.gpt2_shapes.split(",") if s]
    if not shapes:
        return
    model, config, steps = gpt2(args.layers, args.seed)
    f32 = os.path.join(workdir, "gpt2-f32.mlir")
    bf16 = os.path.join(workdir, "gpt2-bf16.mlir")
    export(model, f32, [((None, None), torch.int64)], "gpt2",
           [attention_interface])
    model = model.to(torch.bfloat16)
    export(model, bf16, [((None, None), torch.int64)], "gpt2",
           [attention_interface])
    repeat = max(3, args.repeat // 5)
    for batch, seq in shapes:
        ids = np.random.default_rng(seq + batch).integers(
            0, config.vocab_size, size=(batch, seq)).astype(np.int64)
        for n in threads:
            set_torch_threads(n)
            want, *t = time_torch(model, torch.from_numpy(ids), repeat)
            got, *b = time_nnx(bf16, ids, repeat, n, workdir)
            _, *f = time_nnx(f32, ids, repeat, n, workdir)
            yield ("gpt2", f"{batch}x{seq}", n, t, b, f) + check(got, want, steps)


def main(argv=None):
    args = parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    configure_environment(args.build, max(threads))
    import torch
    flags = cpu_flags()
    has_bf16 = "avx512_bf16" in flags
    print(f"{time.strftime('%Y-%m-%d')}  {cpu_model()}  AVX512_BF16: "
          f"{'yes (nnx: vdpbf16ps tiles)' if has_bf16 else 'no (nnx: bf16 extended to f32 in the f32 tiles)'}  "
          f"torch {torch.__version__}, mkldnn bf16: "
          f"{torch.backends.mkldnn.is_available()}")
    print("times in ms: min (mean)")
    ratios, speedups = [], []
    with tempfile.TemporaryDirectory() as workdir:
        for bench in (bench_mlp, bench_gpt2):
            for r in bench(args, threads, workdir):
                ratio, speedup = row(*r)
                ratios.append((r[0], r[1], r[2], ratio))
                speedups.append((r[0], r[1], r[2], speedup))
    worst = max(ratios, key=lambda r: r[3])
    print(f"worst nnx bf16 / torch bf16: {worst[3]:.2f} ({worst[0]} {worst[1]}, "
          f"{worst[2]} thread{'s' if worst[2] > 1 else ''})")
    b256 = [s for s in speedups if s[0] == "mlp" and s[1] == "b256"]
    for s in b256:
        print(f"nnx f32 / nnx bf16, MLP batch 256, {s[2]} thread(s): {s[3]:.2f}")


if __name__ == "__main__":
    main()
