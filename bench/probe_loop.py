#!/usr/bin/python3
"""The interpretability loop: many forwards with probes, compiled once.

A GPT-2-small-shaped model (the test tree's python/tests/models/gpt2.py:
d 768, 12 heads, vocabulary 50257, 1024 positions; `--layers` blocks,
random weights at GPT-2's scale) runs `--forwards` prompts of batch x seq
tokens, reading 4 tracing points each time:

- nnx: `nnx.compile(model, family="gpt2", probes=[...])` once (export,
  lowering and JIT, paid once and reported), then one in-process call per
  prompt, returning the logits and the 4 probe values;
- PyTorch (eval, no_grad, same thread count): forward hooks on the same 4
  modules, one forward per prompt.

The first prompt's logits and probe values are compared (atol = rtol =
1e-5) before anything is timed. Prints the compile time, both loops' total
and per-forward seconds, and the ratio nnx / PyTorch (> 1: nnx slower),
with and without the compile time included.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from gpt2_vs_torch import build_model  # noqa: E402
from mlp_vs_torch import configure_environment, cpu_model  # noqa: E402

#: The tracing points read, and the PyTorch module (and output index) each
#: one is in the reference GPT-2.
PROBES = {
    "layers.0.attention_output": ("transformer.h.0.attn", 0),
    "layers.0.mlp_output": ("transformer.h.0.mlp", None),
    "layers.0.layer_output": ("transformer.h.0", None),
    "layers.{last}.layer_output": ("transformer.h.{last}", None),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--forwards", type=int, default=1000)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--layers", type=int, default=2,
                   help="transformer blocks (12 is GPT-2 small)")
    p.add_argument("--prompts", type=int, default=16,
                   help="distinct prompts, cycled through")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def probe_names(layers):
    last = layers - 1
    return {name.format(last=last): (path.format(last=last), index)
            for name, (path, index) in PROBES.items()}


def torch_loop(model, prompts, forwards, probes):
    """PyTorch with forward hooks: the first prompt's (logits, probe values)
    and the loop's seconds."""
    import torch
    captured = {}
    handles = []
    modules = dict(model.named_modules())
    for name, (path, index) in probes.items():
        def hook(mod, args, out, name=name, index=index):
            captured[name] = out if index is None else out[index]
        handles.append(modules[path].register_forward_hook(hook))
    try:
        with torch.no_grad():
            first = model(prompts[0]).numpy()
            first_probes = {k: v.numpy().copy() for k, v in captured.items()}
            t0 = time.perf_counter()
            for i in range(forwards):
                model(prompts[i % len(prompts)])
            seconds = time.perf_counter() - t0
    finally:
        for h in handles:
            h.remove()
    return first, first_probes, seconds


def nnx_loop(run, prompts, forwards):
    """The compiled model: the first prompt's (logits, probe values) and the
    loop's seconds."""
    first, first_probes = run(prompts[0])
    first_probes = {k: v.copy() for k, v in first_probes.items()}
    t0 = time.perf_counter()
    for i in range(forwards):
        run(prompts[i % len(prompts)])
    return first, first_probes, time.perf_counter() - t0


def main(argv=None):
    args = parse_args(argv)
    configure_environment(args.build, args.threads)

    import numpy as np
    import torch

    import nnx
    from models.common import attention_interface

    torch.set_num_threads(args.threads)
    model, config = build_model(args.layers, args.seed)
    probes = probe_names(args.layers)
    rng = np.random.default_rng(args.seed)
    prompts = [rng.integers(0, config.vocab_size, size=(args.batch, args.seq))
               for _ in range(args.prompts)]

    t0 = time.perf_counter()
    run = nnx.compile(model, inputs=[((None, None), torch.int64)],
                      family="gpt2", probes=list(probes),
                      threads=args.threads, functions=[attention_interface])
    compile_s = time.perf_counter() - t0

    ids = [p.astype(np.int64) for p in prompts]
    got, got_probes, nnx_s = nnx_loop(run, ids, args.forwards)
    want, want_probes, torch_s = torch_loop(
        model, [torch.from_numpy(p) for p in ids], args.forwards, probes)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    for name in probes:
        np.testing.assert_allclose(got_probes[name], want_probes[name],
                                   atol=1e-5, rtol=1e-5, err_msg=name)

    n = args.forwards
    params = sum(p.numel() for p in model.parameters())
    print(f"probe loop: GPT-2-shaped, {args.layers} layers ({params / 1e6:.1f}M "
          f"parameters), {n} forwards of {args.batch}x{args.seq} tokens, "
          f"{len(probes)} probes, {args.threads} thread(s), {cpu_model()}")
    print(f"probes: {', '.join(probes)}")
    print("logits and probes agree with PyTorch hooks (atol = rtol = 1e-5)")
    print(f"nnx compile (export + lowering + JIT, once): {compile_s:.2f} s"
          f"{' (machine code from the cache)' if run.from_cache else ''}")
    print(f"nnx loop:     {nnx_s:8.2f} s  ({nnx_s / n * 1e3:7.2f} ms / forward)")
    print(f"PyTorch loop: {torch_s:8.2f} s  ({torch_s / n * 1e3:7.2f} ms / forward)")
    print(f"ratio nnx / PyTorch: {nnx_s / torch_s:.2f}x loop only, "
          f"{(nnx_s + compile_s) / torch_s:.2f}x with the compile")


if __name__ == "__main__":
    main()
