#!/usr/bin/python3
"""GPT-2 small on 2 MPI ranks (tensor parallel) against one process.

The model is the test tree's PyTorch GPT-2 (python/tests/models/gpt2.py) at
the 124M checkpoint's shape with random weights (N(0, 0.02); nothing is
downloaded), exported once with its weights in a safetensors file. In one
run, on the same machine, the same cores and the same input (default 8 x
128 tokens):

- single: one `nnx-run --repeat N --threads 2` process;
- tensor parallel: `mpirun -np 2 nnx-run --tensor-parallel --repeat N
  --threads 1`, each rank splitting the model with
  nnx-shard-tensor-parallel and binding only its slices of the file.

Each process runs under a fresh small helper interpreter that reports its
own peak RSS (wait4), as bench/weights_vs_size.py does. The logits of the
two runs are compared (atol = rtol = 1e-5) before anything is printed.

Prints per-forward min and mean of both and their ratio (> 1: tensor
parallel slower), each process's peak RSS, and the weights each rank binds,
read off the split IR: the sharded tensors (those the split slices) against
the same tensors whole, and all bound weights (the replicated embeddings and
norms included).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from gpt2_vs_torch import build_model  # noqa: E402
from mlp_vs_torch import configure_environment, cpu_model, parse_nnx_timing  # noqa: E402
from weights_vs_size import run_once  # noqa: E402

MPIRUN = ("mpirun --oversubscribe --allow-run-as-root --mca btl self,vader "
          "--mca plm isolated")

# One rank's helper: runs the command with stderr in <dir>/rank<R>.txt and
# prints the rank, exit status and the command's peak RSS as JSON.
_RANK_HELPER = r"""
import json, os, sys
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
err = os.open(os.path.join(sys.argv[1], "rank%d.txt" % rank),
              os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
null = os.open(os.devnull, os.O_WRONLY)
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                   (os.POSIX_SPAWN_DUP2, err, 2)])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"rank": rank, "rc": os.waitstatus_to_exitcode(status),
                  "maxrss_kib": usage.ru_maxrss}), flush=True)
"""

EXTERNAL = re.compile(r'#nnx\.external<"([^"]+)"((?:, slices = \[[^\]]*\])?)> '
                      r': tensor<([0-9x]+)x(f32|f16|bf16)>')
BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--shape", default="8x128", help="BATCHxSEQUENCE")
    p.add_argument("--repeat", type=int, default=3,
                   help="timed forwards (at least 2)")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mpirun", default=MPIRUN,
                   help=f"the MPI launcher and its flags (default: {MPIRUN})")
    p.add_argument("--workdir", default=None,
                   help="where the model is written (default: a temporary "
                        "directory, removed afterwards)")
    return p.parse_args(argv)


def bound_weights(text):
    """{key: (bytes, sliced)} of the #nnx.external tensors in `text`, each
    key once (GPT-2's tied embedding and head share one)."""
    out = {}
    for key, slices, dims, dtype in EXTERNAL.findall(text):
        n = BYTES[dtype]
        for d in dims.split("x"):
            n *= int(d)
        out[key] = (n, bool(slices))
    return out


def weights_per_rank(tools, mlir, ranks):
    """Per rank: (sharded bytes, the same tensors whole, all bound bytes);
    and the single process's bound bytes."""
    with open(mlir) as f:
        whole = bound_weights(f.read())
    rows = []
    for rank in range(ranks):
        text = subprocess.run(
            [tools.tool_path("nnx-opt"), mlir,
             f"--nnx-shard-tensor-parallel=ranks={ranks} rank={rank}"],
            stdout=subprocess.PIPE, text=True, check=True).stdout
        split = bound_weights(text)
        sharded = sum(n for n, sliced in split.values() if sliced)
        sharded_whole = sum(whole[k][0] for k, (_, s) in split.items() if s)
        rows.append((sharded, sharded_whole, sum(n for n, _ in split.values())))
    return rows, sum(n for n, _ in whole.values())


def run_tensor_parallel(args, tools, mlir, xin, yout, workdir):
    """mpirun -np 2 nnx-run --tensor-parallel: per rank (rc, stderr, RSS)."""
    cmd = shlex.split(args.mpirun) + [
        "-np", "2", "/usr/bin/python3", "-S", "-c", _RANK_HELPER, workdir,
        tools.tool_path("nnx-run"), mlir, "--tensor-parallel", "--input", xin,
        "--output", yout, "--repeat", str(args.repeat), "--threads", "1"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    ranks = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            with open(os.path.join(workdir, f"rank{r['rank']}.txt")) as f:
                ranks[r["rank"]] = (r["rc"], f.read(), r["maxrss_kib"] * 1024)
    if out.returncode != 0 or sorted(ranks) != [0, 1] or any(
            rc for rc, _, _ in ranks.values()):
        raise RuntimeError(f"mpirun failed ({out.returncode}):\n{out.stdout}\n"
                           + "\n".join(e for _, e, _ in ranks.values()))
    return [ranks[0], ranks[1]]


def main(argv=None):
    args = parse_args(argv)
    args.repeat = max(args.repeat, 2)
    launcher = shlex.split(args.mpirun)[0]
    if not shutil.which(launcher):
        print(f"tp_vs_single: skipped: no {launcher} on the PATH (install "
              "openmpi-bin libopenmpi-dev: scripts/setup.sh does)")
        return 0
    configure_environment(args.build, 2)

    import numpy as np
    import torch

    from models.common import attention_interface
    from nnx import tools
    from nnx.torch_export import write

    batch, seq = (int(v) for v in args.shape.split("x"))
    model, config = build_model(args.layers, args.seed)
    own = tempfile.TemporaryDirectory() if args.workdir is None else None
    workdir = own.name if own else args.workdir
    os.makedirs(workdir, exist_ok=True)
    try:
        mlir = os.path.join(workdir, "gpt2.mlir")
        write(model, mlir, [((None, None), torch.int64)], name="gpt2",
              functions=[attention_interface], weights=True)
        del model
        ids = np.random.default_rng(seq + batch).integers(
            0, config.vocab_size, size=(batch, seq)).astype(np.int64)
        xin = os.path.join(workdir, "ids.npy")
        np.save(xin, ids)
        single_out = os.path.join(workdir, "single.npy")
        rc, stderr, single_rss, _, _ = run_once(
            [tools.tool_path("nnx-run"), mlir, "--input", xin, "--output",
             single_out, "--repeat", str(args.repeat), "--threads", "2"], workdir)
        if rc != 0:
            raise RuntimeError(f"nnx-run failed ({rc}):\n{stderr}")
        single = parse_nnx_timing(stderr)
        tp_out = os.path.join(workdir, "tp.npy")
        ranks = run_tensor_parallel(args, tools, mlir, xin, tp_out, workdir)
        np.testing.assert_allclose(np.load(tp_out), np.load(single_out),
                                   atol=1e-5, rtol=1e-5)
        weights, single_bytes = weights_per_rank(tools, mlir, 2)
    finally:
        if own:
            own.cleanup()

    mib = 2.0 ** 20
    load = os.getloadavg()
    print(f"nnx tensor-parallel benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"model: GPT-2, {config.n_layer} layers, d {config.n_embd}, "
          f"{config.n_head} heads, vocabulary {config.vocab_size}; input "
          f"{batch} x {seq}; {args.repeat} timed forwards each")
    print("logits of 2 ranks agree with the single process (atol=rtol=1e-5)")
    print("  run                     min/forward  mean/forward  peak RSS   "
          "weights bound  sharded (vs whole)")
    _, s_mean, s_min = single
    print(f"  single, 2 threads       {s_min * 1e3:8.1f} ms  {s_mean * 1e3:8.1f} ms"
          f"  {single_rss / mib:6.0f} MiB  {single_bytes / mib:8.0f} MiB")
    # Rank 0 alone reports the times; every forward ends with an all_reduce
    # the ranks share, so they all take as long.
    _, mean, mn = parse_nnx_timing(ranks[0][1])
    for rank, ((_, err, rss), (sh, sh_whole, bound)) in enumerate(
            zip(ranks, weights)):
        times = (f"{mn * 1e3:8.1f} ms  {mean * 1e3:8.1f} ms" if rank == 0
                 else f"{'(as rank 0)':>24}")
        print(f"  rank {rank}/2, 1 thread      {times}  {rss / mib:6.0f} MiB  "
              f"{bound / mib:8.0f} MiB  {sh / mib:6.0f} of {sh_whole / mib:.0f} MiB"
              f" = {sh / sh_whole:.3f}x")
    print(f"  ratio (2 ranks / single, min per forward): {mn / s_min:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
