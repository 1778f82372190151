#!/usr/bin/python3
"""One GPT-2 transformer block through nnx, side by side with PyTorch.

The block is the test tree's PyTorch GPT-2 block (python/tests/models/gpt2.py:
ln_1, fused-QKV causal attention with 12 heads, c_proj, residual, ln_2, MLP
768 -> 3072 -> 768 with tanh GELU, residual) at GPT-2 small's width (d 768),
random weights drawn with GPT-2's scale (N(0, 0.02)). It is exported once with
`nnx.torch_export.write` (batch and sequence both dynamic; weights to a
safetensors file) and run on hidden states of shape batch x seq x 768:

- nnx: `nnx-run --repeat N --threads T` (compilation excluded, min of N);
- PyTorch (eval, no_grad, the same T threads, OpenBLAS): a warm-up, N timed;

alternating, `--rounds` times (the minimum over all rounds is reported).

The outputs are compared (atol = rtol = 1e-5) before anything is printed.
"""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from mlp_vs_torch import (configure_environment, cpu_model,  # noqa: E402
                          parse_nnx_timing, time_torch)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating rounds of N forwards of each")
    p.add_argument("--threads", type=int, default=1,
                   help="threads of both: PyTorch / OpenBLAS, and nnx-run --threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true",
                   help="print one JSON object of the measurements")
    return p.parse_args(argv)


def block_flops(batch, seq, d, heads):
    """Multiply-adds x 2 of the block's matmuls (norms, softmax, GELU and
    adds are not counted)."""
    linear = 2 * batch * seq * (d * 3 * d + d * d + d * 4 * d + 4 * d * d)
    attention = 2 * 2 * batch * heads * seq * seq * (d // heads)
    return linear + attention


def main(argv=None):
    args = parse_args(argv)
    configure_environment(args.build, args.threads)

    import numpy as np
    import torch

    from models import gpt2
    from models.common import attention_interface, init_weights
    from nnx import tools
    from nnx.torch_export import write

    torch.set_num_threads(args.threads)
    config = gpt2.gpt2_small_config()
    block = init_weights(gpt2.GPT2Block(config), args.seed, std=0.02,
                         bias_std=0.02, norm_std=0.02).eval()
    x = np.random.default_rng(args.seed).standard_normal(
        (args.batch, args.seq, config.n_embd)).astype(np.float32)
    xt = torch.from_numpy(x)

    with torch.no_grad():
        want = block(xt).numpy()

    # Rounds alternate the two (N PyTorch forwards, then one nnx-run
    # --repeat N), so that load on a shared machine hits both alike.
    times, nnx_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        mlir = os.path.join(tmp, "block.mlir")
        write(block, mlir, [((None, None, config.n_embd), torch.float32)],
              name="gpt2_block", functions=[attention_interface], weights=True)
        xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        np.save(xin, x)
        for _ in range(args.rounds):
            times += time_torch(block, xt, args.repeat)
            proc = tools.run_tool("nnx-run", [
                mlir, "--input", xin, "--output", yout, "--repeat",
                str(args.repeat), "--threads", str(args.threads)])
            got = np.load(yout)
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
            nnx_runs.append(parse_nnx_timing(proc.stderr))
    compile_s = sorted(r[0] for r in nnx_runs)[len(nnx_runs) // 2]
    nnx_mean = sum(r[1] for r in nnx_runs) / len(nnx_runs)
    nnx_min = min(r[2] for r in nnx_runs)
    torch_min, torch_mean = min(times), sum(times) / len(times)
    flops = block_flops(args.batch, args.seq, config.n_embd, config.n_head)
    if args.json:
        print(json.dumps({"batch": args.batch, "seq": args.seq,
                          "threads": args.threads, "gflop": flops / 1e9,
                          "nnx_min_s": nnx_min, "nnx_mean_s": nnx_mean,
                          "torch_min_s": torch_min, "torch_mean_s": torch_mean,
                          "nnx_compile_s": compile_s}))
        return 0
    print(f"nnx GPT-2 block benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus; threads {args.threads}")
    print(f"block: d {config.n_embd}, {config.n_head} heads, input "
          f"{args.batch} x {args.seq} x {config.n_embd}, {flops / 1e9:.3f} GFLOP "
          "in matmuls; outputs agree (atol=rtol=1e-5)")
    print(f"  nnx     min {nnx_min * 1e3:8.3f} ms  mean {nnx_mean * 1e3:8.3f} ms"
          f"  (compile {compile_s:.2f} s)")
    print(f"  pytorch min {torch_min * 1e3:8.3f} ms  mean {torch_mean * 1e3:8.3f} ms")
    print(f"  ratio nnx / pytorch (min): {nnx_min / torch_min:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
