#!/usr/bin/python3
"""Cached generation: nnx's derived KV cache against PyTorch 1.13 with a
cache written the usual way (HF-style `past_key_values`, in this file).

GPT-2 small (python/tests/models/gpt2.py at the 124M shape, seeded random
weights), one thread, a PROMPT-token prompt (default 128) and NEW new tokens
(default 128), greedy. In one run it prints, for f32 and bf16 (`--f32`:
f32 only):

  * nnx: prefill seconds, decode tokens/s (`run.generate`, i.e. prefill then
    one decode per token, each token chosen in Python);
  * nnx with the 12 layers' attention_output read on every token (probes,
    stacked per step as `generate` returns them): decode tokens/s and the
    cost over plain decode;
  * PyTorch: prefill seconds and decode tokens/s of the cached loop below;
  * the bandwidth ratio: decode tokens/s x bytes read per token (the
    weights, plus the cache at its mean length) / the single-core read
    bandwidth this run measures (numpy summing a 1 GiB array);
  * whether both generated the same tokens;
  * heap allocations of one decode step (malloc, calloc, realloc and the
    aligned allocations, counted by bench/malloc_count.c, which the bench
    builds with `cc` and preloads by running itself again): of the Python
    call `decode(token, position, *caches)`, of the runtime's call
    (`CompiledModel.run` through the binding), and of each further run of
    the compiled forward inside one runtime call (`repeat`).

`--small` runs a 2-layer toy instead, to check the script in seconds.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

import nnx  # noqa: E402
from models import build, gpt2  # noqa: E402
from models.common import attention_interface, dropout_add  # noqa: E402


def read_bandwidth(gib=1.0, repeat=3):
    """Bytes per second one core reads (numpy's sum over a large array)."""
    a = np.ones(int(gib * 2**30) // 4, np.float32)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - start)
    return a.nbytes / best


def torch_attention(attn, x, past):
    """GPT2Attention with a cache: (output, (keys, values))."""
    b, t, d = x.shape
    q, k, v = attn.c_attn(x).split(attn.split_size, dim=2)
    shape = (b, t, attn.num_heads, attn.head_dim)
    q, k, v = (y.view(shape).transpose(1, 2) for y in (q, k, v))
    if past is not None:
        k = torch.cat([past[0], k], dim=2)
        v = torch.cat([past[1], v], dim=2)
    scores = q @ k.transpose(-1, -2) * attn.scaling
    total = k.shape[2]
    causal = torch.ones(t, total, dtype=torch.bool).tril(total - t)
    scores = scores.masked_fill(~causal, float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
    return attn.c_proj(out), (k, v)


def torch_step(model, ids, past, start):
    """One cached forward of GPT2LMHeadModel: (logits, past)."""
    tr = model.transformer
    pos = torch.arange(start, start + ids.shape[1])
    h = tr.wte(ids) + tr.wpe(pos)
    new = []
    for i, block in enumerate(tr.h):
        a, kv = torch_attention(block.attn, block.ln_1(h),
                                None if past is None else past[i])
        h = h + a
        h = h + block.mlp(block.ln_2(h))
        new.append(kv)
    return model.lm_head(tr.ln_f(h)), new


def torch_generate(model, ids, steps):
    """Greedy with past_key_values: (tokens, prefill s, decode s)."""
    seq = torch.as_tensor(ids)
    with torch.no_grad():
        start = time.perf_counter()
        logits, past = torch_step(model, seq, None, 0)
        prefill = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(steps):
            token = logits[:, -1].float().argmax(-1)[:, None]
            seq = torch.cat([seq, token], 1)
            if seq.shape[1] == ids.shape[1] + steps:
                break
            logits, past = torch_step(model, token, past, seq.shape[1] - 1)
        decode = time.perf_counter() - start
    return seq.numpy(), prefill, decode


def nnx_generate(run, ids, steps):
    """Greedy through run.generate: (tokens, prefill s, decode s)."""
    prefill, decode = run.generation(ids.shape[1] + steps)
    start = time.perf_counter()
    prefill(ids)
    prefill_s = time.perf_counter() - start
    start = time.perf_counter()
    tokens = run.generate(ids, steps)
    total = time.perf_counter() - start
    if isinstance(tokens, tuple):  # (tokens, probes)
        tokens = tokens[0]
    return tokens, prefill_s, max(total - prefill_s, 1e-9)


def malloc_calls():
    """The preloaded counter of heap allocations (None without it)."""
    import ctypes
    lib = os.environ.get("NNX_BENCH_MALLOC_COUNT")
    if not lib:
        return None
    return ctypes.c_uint64.in_dll(ctypes.CDLL(lib), "nnx_malloc_calls")


def step_allocations(run, ids, steps):
    """Heap allocations of one decode step: (the Python call, the runtime
    call, each further forward in one runtime call), or None."""
    counter = malloc_calls()
    if counter is None:
        return None
    prefill, decode = run.generation(ids.shape[1] + steps)
    outs, _ = prefill(ids)
    caches = list(outs[1:])
    token = np.zeros((ids.shape[0], 1), np.int64)
    position = np.array(ids.shape[1], np.int64)
    args = [token, position] + caches
    decode(*args)  # warm
    counts = []
    for call in (lambda: decode(*args),
                 lambda: decode._c.run(args, [], 1),
                 lambda: decode._c.run(args, [], 11)):
        before = counter.value
        call()
        counts.append(counter.value - before)
    return counts[0], counts[1], (counts[2] - counts[1]) / 10


def bench(model, dtype, prompt, steps, bandwidth):
    model = model.to(dtype)
    ids = np.random.default_rng(0).integers(0, model.config.vocab_size,
                                            (1, prompt))
    options = dict(inputs=[((None, None), torch.int64)],
                   functions=[attention_interface, dropout_add], threads=1)
    run = nnx.compile(model, **options)
    probes = [f"layers.{i}.attention_output"
              for i in range(model.config.n_layer)]
    probed = nnx.compile(model, probes=probes, family="gpt2", **options)
    # The first runs compile prefill and decode and warm both up.
    nnx_generate(run, ids, steps)
    nnx_generate(probed, ids, steps)
    ours, n_prefill, n_decode = nnx_generate(run, ids, steps)
    _, _, p_decode = nnx_generate(probed, ids, steps)
    torch_generate(model, ids, steps)
    theirs, t_prefill, t_decode = torch_generate(model, ids, steps)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    cfg = model.config
    cache = (2 * cfg.n_layer * cfg.n_embd * (prompt + steps / 2)
             * torch.finfo(dtype).bits // 8)
    rate = (steps - 1) / n_decode
    print(f"{str(dtype):15} nnx: prefill {n_prefill:.3f} s, decode "
          f"{rate:.1f} tok/s | PyTorch: prefill {t_prefill:.3f} s, decode "
          f"{(steps - 1) / t_decode:.1f} tok/s | nnx / PyTorch decode "
          f"{t_decode / n_decode:.2f}x | bandwidth ratio "
          f"{rate * (weights + cache) / bandwidth:.2f} | same tokens: "
          f"{np.array_equal(ours, theirs)}")
    print(f"{'':15} nnx with {len(probes)} attention_output probes read per "
          f"token: decode {(steps - 1) / p_decode:.1f} tok/s, "
          f"{100 * (p_decode - n_decode) / n_decode:+.1f}% of decode time")
    allocations = step_allocations(run, ids, steps)
    if allocations:
        print(f"{'':15} heap allocations per decode step: {allocations[0]} "
              f"(the Python call), {allocations[1]} (the runtime's call), "
              f"{allocations[2]:.1f} per further forward in one call")


def rerun_counting_mallocs(argv):
    """Runs this script again with bench/malloc_count.c built and preloaded
    (without a C compiler: again without the counter)."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="nnx-bench-") as tmp:
        lib = os.path.join(tmp, "libmalloc_count.so")
        built = subprocess.run(
            ["cc", "-O2", "-shared", "-fPIC", "-o", lib,
             os.path.join(HERE, "malloc_count.c")]).returncode == 0
        env = dict(os.environ, NNX_BENCH_MALLOC_COUNT=lib if built else "")
        if built:
            env["LD_PRELOAD"] = lib
        return subprocess.run([sys.executable] + argv, env=env).returncode


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompt", type=int, default=128)
    p.add_argument("--new", type=int, default=128)
    p.add_argument("--f32", action="store_true", help="f32 only")
    p.add_argument("--small", action="store_true",
                   help="a 2-layer toy GPT-2, to check the script")
    args = p.parse_args(argv[1:])
    if "NNX_BENCH_MALLOC_COUNT" not in os.environ:
        return rerun_counting_mallocs(argv)
    torch.set_num_threads(1)
    config = gpt2.gpt2_small_config()
    if args.small:
        config = gpt2.small_config()
        config.n_positions = args.prompt + args.new
    bandwidth = read_bandwidth(0.25 if args.small else 1.0)
    print(f"single-core read bandwidth: {bandwidth / 1e9:.1f} GB/s")
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    for dtype in [torch.float32] + ([] if args.f32 else [torch.bfloat16]):
        bench(build("gpt2", config, seed=0), dtype, args.prompt, args.new,
              bandwidth)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
