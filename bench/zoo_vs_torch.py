#!/usr/bin/python3
"""torchvision's classification models through nnx, against PyTorch (oneDNN).

Every model of the zoo (python/tests/zoo: torchvision's classifiers built
with `weights=None`, BatchNorm statistics calibrated on random images at the
bench's size), exported once with the batch dynamic at --size pixels (224,
the size users run; a model built for another size runs at its own), then
for each thread count and batch:
- PyTorch in this process (no_grad, one warm-up and --repeat timed
  forwards; its convolutions are oneDNN's, its Linear layers OpenBLAS's),
  with torch.set_num_threads and OpenBLAS's own thread count both set to
  the row's (mlp_vs_torch.set_torch_threads);
- a fresh `nnx-run --repeat` process with the same --threads. The first row
  of a model compiles with an empty compile cache (its compile seconds are
  the table's); later rows reuse that cache.

The outputs are compared first, by the zoo test's criterion
(tests/zoo/check.py judge): within atol = rtol = 1e-5 of PyTorch's
float32 output (the contract) or, where that output itself misses PyTorch's
float64 one by more (deep random nets; computed only then, once per model
and batch), no farther from float64 than 1.5x PyTorch's float32 is ("yes
(f64 ...)": both distances in contract units). A row that misses says so
with its largest difference. Each row prints the
compile seconds, nnx and PyTorch minimum ms per forward, the ratio
nnx / PyTorch (< 1: nnx faster), nnx's GFLOP/s (the convolutions' and
matmuls' multiply-adds, counted by a dispatch mode on PyTorch's own run, x2)
and its share of the FMA peak (bench/fma_peak.c, one core, times the
threads). Then the geometric mean of the ratio per family, thread count and
batch. A model that fails to export or compile gets a row with the error.

With --dtypes float32,bfloat16 each model also runs cast to bf16 (PyTorch's
model.to(torch.bfloat16), exported so; nnx-run rounds the input with
--cast-inputs): PyTorch's bf16 path against nnx's, "agree" meaning nnx's
bf16 output is no farther from PyTorch's float32 output than 1.5x PyTorch's
own bf16 output is, and a last table gives nnx's float32 / bfloat16 time
(the bf16 speed-up).

  /usr/bin/python3 bench/zoo_vs_torch.py --models resnet50,mobilenet_v2
  /usr/bin/python3 bench/zoo_vs_torch.py            # every model: hours
"""

import argparse
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from cpu_vs_torch import fma_peak  # noqa: E402
from gpt2_vs_torch import bench_nnx, bench_torch  # noqa: E402
from mlp_vs_torch import (configure_environment, cpu_model,  # noqa: E402
                          set_torch_threads)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="the build directory (default: $NNX_BUILD_DIR or "
                   "../build)")
    p.add_argument("--models", default="all",
                   help="comma-separated zoo model names, or 'all' (every "
                   "torchvision classification model)")
    p.add_argument("--batches", default="1,16")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--size", type=int, default=224,
                   help="image size (a model built for one size runs at it)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dtypes", default="float32",
                   help="comma-separated: float32, bfloat16")
    p.add_argument("--workdir", default=None,
                   help="keep the exported models here (default: a "
                   "temporary directory)")
    return p.parse_args(argv)


def classifier_names():
    import zoo
    return [name for name, seg in zoo.torchvision_names() if not seg]


def count_flops(model, x):
    """Floating-point operations of one forward of `model` on `x`: 2 x the
    multiply-adds of its convolutions and matrix products, as PyTorch
    dispatches them."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    aten = torch.ops.aten

    class Counter(TorchDispatchMode):
        flops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            packet = func.overloadpacket
            if packet is aten.convolution:
                w = args[1]
                # Output elements x (input channels per group x window).
                Counter.flops += 2 * out.numel() * math.prod(w.shape[1:])
            elif packet in (aten.mm, aten.bmm):
                Counter.flops += 2 * out.numel() * args[0].shape[-1]
            elif packet in (aten.addmm, aten.baddbmm):
                Counter.flops += 2 * out.numel() * args[1].shape[-1]
            return out

    with torch.no_grad(), Counter():
        model(x)
    return Counter.flops


def export(name, size, workdir, dtypes=("float32",)):
    """(calibrated model, {dtype: (.mlir path, the model in dtype)}, image
    size) of zoo model `name`."""
    import zoo
    from nnx.torch_export import write
    case = zoo.by_name(name)
    # The ViTs and MaxViT are built for exactly their size; inception_v3
    # needs at least 299.
    own = zoo.SIZES.get(name)
    if own and (own > size or name.startswith(("vit_", "maxvit"))):
        size = own
    # As the zoo test builds it: the weights torchvision zeroes (the ViTs'
    # heads) drawn, or every output would be 0 and the check vacuous.
    model = zoo.calibrate(zoo.draw_zero_weights(case.build_uncalibrated(0), 0),
                          zoo.images(3, size), batch=4)
    import copy
    import torch
    paths = {}
    for dtype in dtypes:
        path = os.path.join(workdir, f"{name}-{dtype}.mlir")
        cast = getattr(torch, dtype)
        typed = model if dtype == "float32" else copy.deepcopy(model).to(cast)
        write(typed, path, [((None, 3, size, size), cast)], name=name,
              weights=True)
        paths[dtype] = (path, typed)
    return model, paths, size


def bench_model(name, args, workdir, peak):
    """The rows of model `name` (dicts), or one row with its error."""
    import zoo
    try:
        model, paths, size = export(name, args.size, workdir, args.dtype_list)
    except Exception as e:  # noqa: BLE001 - a row says what failed
        return [dict(model=name, error=f"export: {first_line(e)}")]
    rows = []
    for dtype, (mlir, peer) in paths.items():
        cache = os.path.join(workdir, f"cache-{name}-{dtype}")
        shutil.rmtree(cache, ignore_errors=True)
        os.environ["NNX_CACHE_DIR"] = cache
        runs = [dict(model=name, family=zoo.family(name), size=size,
                     batch=batch, threads=threads, dtype=dtype)
                for threads in args.thread_counts
                for batch in args.batch_sizes]
        compile_s = None
        for row in runs:
            compile_s = bench_row(row, model, peer, mlir, args, workdir,
                                  peak, compile_s)
        rows += runs
    return rows


_FLOAT64 = {}


def judge_f32(got, want, model, x):
    """The zoo test's judge of nnx's float32 output `got` against
    PyTorch's `want`; PyTorch's float64 output of `x` (one per model and
    input, kept) only where the contract alone fails."""
    import copy

    import torch
    from zoo.check import judge
    ok, facts = judge(got, want, None)
    if ok:
        return ok, facts
    key = (id(model), tuple(x.shape))
    if key not in _FLOAT64:
        with torch.no_grad():
            _FLOAT64[key] = copy.deepcopy(model).double()(x.double()).numpy()
    return judge(got, want, _FLOAT64[key])


def bench_row(row, model, peer, mlir, args, workdir, peak, compile_s):
    """Fills `row` (one thread count, batch and dtype of `model`; `peer`:
    the model in that dtype, PyTorch's side): the compile seconds (the
    first row's), both times, the ratio, GFLOP/s and whether the outputs
    agree. Returns the compile seconds."""
    import numpy as np
    import torch
    set_torch_threads(row["threads"])
    x = torch.from_numpy(np.random.default_rng(row["batch"]).standard_normal(
        (row["batch"], 3, row["size"], row["size"])).astype(np.float32))
    bf16 = row["dtype"] == "bfloat16"
    try:
        with torch.no_grad():
            want = model(x).numpy()
        got_torch, t_min, _ = bench_torch(
            lambda v: peer(v).float(), x.to(torch.bfloat16) if bf16 else x,
            args.repeat)
        got, c_s, _, n_min, _, _ = bench_nnx(
            mlir, x.numpy(), args.repeat, workdir, row["threads"],
            ("--cast-inputs",) if bf16 else ())
    except Exception as e:  # noqa: BLE001
        row["error"] = f"run: {first_line(e)}"
        return compile_s
    compile_s = c_s if compile_s is None else compile_s
    got = got.astype(np.float32)
    diff = float(np.max(np.abs(got - want))) if got.size else 0.0
    if bf16:
        # As far from float32 as PyTorch's bf16, give or take half.
        own = float(np.max(np.abs(got_torch - want))) if got.size else 0.0
        agree = diff <= 1.5 * own + 1e-6
    else:
        agree, facts = judge_f32(got, want, model, x)
        if facts.get("criterion") == "f64":
            row["agree_f64"] = (facts["nnx_vs_f64"], facts["torch_vs_f64"])
    flops = count_flops(model, x)
    row.update(compile_s=compile_s, nnx_ms=n_min * 1e3,
               torch_ms=t_min * 1e3, ratio=n_min / t_min,
               gflops=flops / n_min * 1e-9, agree=agree, diff=diff)
    if peak:
        row["peak_pct"] = 100 * row["gflops"] / (peak * row["threads"])
    return compile_s


#: The table's dtype column.
SHORT = {"float32": "f32", "bfloat16": "bf16"}


def first_line(error):
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[-1][:160]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def print_table(rows, args, isa, peak):
    import torch
    load = os.getloadavg()
    print(f"nnx zoo benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"torch {torch.__version__} (oneDNN "
          f"{'on' if torch.backends.mkldnn.is_available() else 'off'}); "
          f"FMA peak {peak or 0:.1f} GFLOP/s per core ({isa or 'unknown'})")
    print(f"time per forward, minimum of {args.repeat} (compilation "
          "excluded); compile: the first row's, cold cache")
    print("  model                 dtype size batch thr  compile    nnx ms  "
          "torch ms   ratio  GFLOP/s  %peak  agree")
    for r in rows:
        if "error" in r:
            print(f"  {r['model']:<22} {r['error']}")
            continue
        agree = "yes" if r["agree"] else f"NO ({r['diff']:.1e})"
        if r["agree"] and "agree_f64" in r:
            agree = "yes (f64 {:.1f} <= 1.5 x {:.1f})".format(*r["agree_f64"])
        print(f"  {r['model']:<22} {SHORT[r['dtype']]:>5} {r['size']:4d} "
              f"{r['batch']:5d} "
              f"{r['threads']:3d} {r['compile_s']:7.1f} s {r['nnx_ms']:9.1f} "
              f"{r['torch_ms']:9.1f} {r['ratio']:6.2f}x {r['gflops']:8.1f} "
              f"{r.get('peak_pct', 0):5.1f}%  {agree}")
    done = [r for r in rows if "error" not in r]
    for dtype in sorted({r["dtype"] for r in done}, reverse=True):
        print_geomeans([r for r in done if r["dtype"] == dtype], dtype)
    print_speedups(done)
    failed = [r["model"] for r in rows if "error" in r]
    if failed:
        print(f"failed ({len(failed)}): {', '.join(sorted(set(failed)))}")


def print_geomeans(done, dtype):
    """The geometric mean of the ratio per family, thread count and batch,
    and per thread count, of the `dtype` rows `done`."""
    print(f"geometric mean of nnx / PyTorch per family, {dtype} "
          "(threads, batch):")
    keys = sorted({(r["threads"], r["batch"]) for r in done})
    for fam in sorted({r["family"] for r in done}):
        cells = []
        for t, b in keys:
            ratios = [r["ratio"] for r in done if r["family"] == fam
                      and r["threads"] == t and r["batch"] == b]
            if ratios:
                cells.append(f"{t}t b{b}: {geomean(ratios):.2f}x")
        print(f"  {fam:<16} " + "  ".join(cells))
    for t in sorted({r["threads"] for r in done}):
        ratios = [r["ratio"] for r in done if r["threads"] == t]
        print(f"all models, {dtype}, {t} thread(s): geomean "
              f"{geomean(ratios):.2f}x over {len(ratios)} rows")


def print_speedups(done):
    """nnx's float32 / bfloat16 time for each model, batch and thread count
    run in both."""
    f32 = {(r["model"], r["batch"], r["threads"]): r["nnx_ms"]
           for r in done if r["dtype"] == "float32"}
    pairs = [(r, f32[(r["model"], r["batch"], r["threads"])]) for r in done
             if r["dtype"] == "bfloat16"
             and (r["model"], r["batch"], r["threads"]) in f32]
    if pairs:
        print("nnx float32 / bfloat16 time (the bf16 speed-up):")
    for r, ms in pairs:
        print(f"  {r['model']:<22} batch {r['batch']:3d}, {r['threads']} "
              f"thread(s): {ms / r['nnx_ms']:.2f}x")


def main(argv=None):
    args = parse_args(argv)
    args.thread_counts = [int(t) for t in args.threads.split(",")]
    args.batch_sizes = [int(b) for b in args.batches.split(",")]
    args.dtype_list = args.dtypes.split(",")
    for dtype in args.dtype_list:
        if dtype not in ("float32", "bfloat16"):
            print(f"zoo_vs_torch.py: --dtypes: unknown dtype {dtype!r} "
                  "(float32, bfloat16)", file=sys.stderr)
            return 2
    configure_environment(args.build, max(args.thread_counts))
    names = (classifier_names() if args.models == "all"
             else args.models.split(","))
    isa, peak, _ = fma_peak()
    own = tempfile.TemporaryDirectory() if args.workdir is None else None
    workdir = own.name if own else args.workdir
    os.makedirs(workdir, exist_ok=True)
    rows = []
    try:
        for name in names:
            rows += bench_model(name, args, workdir, peak)
            print(f"[{len(rows)} rows] {name} done", file=sys.stderr,
                  flush=True)
    finally:
        if own:
            own.cleanup()
    print_table(rows, args, isa, peak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
