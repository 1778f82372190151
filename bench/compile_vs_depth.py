#!/usr/bin/python3
"""Compile time of the CPU pipeline against model depth.

For each model family and depth, the model is built in PyTorch, written as
nnx IR, and compiled by

    nnx-opt MODEL --nnx-build-forward --nnx-cpu-pipeline --mlir-timing

(the min of --repeat runs). Prints per depth: the total, the two passes
that used to dominate (OneShotBufferizePass; NNXApplyCPUSchedulePass, both
stages summed), the time per layer, and the growth exponent between
consecutive depths: log(t2 / t1) / log(n2 / n1), ~1 where compile time is
linear in depth (2 quadratic, 3 cubic).

Families (depths are overridable, e.g. --relu 100,200):
  relu  nn.Sequential of N ReLUs on (batch?, 64)
  mlp   N x (Linear(64, 64) + ReLU) on (batch?, 64)
  gpt2  GPT-2 small (d 768, 12 heads, vocabulary 50257) with N blocks,
        token ids (batch?, seq?)

Then --resnets (default 50,152; empty to skip): torchvision's ResNet-N
(weights=None, eval, 224 x 224, the batch dynamic) compiled by a fresh
`nnx-run --threads 1` with an empty compile cache, pinned to one core:
the process's CPU seconds (user + sys: parsing, the pipeline, LLVM, binding
the weights; the input has batch 0, so the forward computes nothing), the
weights' time nnx-run prints (wall: mapping the file and permuting weights
into their bound layouts, not compiling), the CPU seconds less that, the
same over the first model's, and the compile time nnx-run prints (wall,
inflated on a loaded machine): the fastest of --repeat compiles, each with
an empty cache. --pipeline-options passes nnx-run's option through (e.g.
outline-layers=false for the compile without layer kernels).

Weights are not written for the families: nnx-opt never reads them (the
IR names a weights file that does not exist). A compile that runs past --timeout is shown as
'>T'. This is a measurement, not a test: nothing fails on a slow number.
"""

import argparse
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from mlp_vs_torch import cpu_model  # noqa: E402

FAMILIES = {"relu": "100,200,400,1000", "mlp": "12,24,48,96",
            "gpt2": "2,4,8,16"}
PASSES = [("bufferize", "OneShotBufferizePass"),
          ("schedule", "NNXApplyCPUSchedulePass")]
# A --mlir-timing line: "   12.3456 ( 45.6%)  Name".
TIMING_LINE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*?)\s*$")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="CMake build directory (default: $NNX_BUILD_DIR or build)")
    p.add_argument("--families", default="relu,mlp,gpt2",
                   help="comma-separated subset of " + ",".join(FAMILIES))
    for name, depths in FAMILIES.items():
        p.add_argument("--" + name, default=depths,
                       help=f"depths of the {name} family (default {depths})")
    p.add_argument("--resnets", default="50,152",
                   help="torchvision ResNet depths compiled by nnx-run "
                   "(empty: none)")
    p.add_argument("--pipeline-options", default="",
                   help="nnx-run --pipeline-options for the ResNets")
    p.add_argument("--repeat", type=int, default=1,
                   help="compiles per depth; the fastest is shown")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds one compile may take")
    return p.parse_args(argv)


def relu_model(n):
    from torch import nn
    return nn.Sequential(*[nn.ReLU() for _ in range(n)]), [(None, 64)], ()


def mlp_model(n):
    from torch import nn
    layers = []
    for _ in range(n):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    return nn.Sequential(*layers), [(None, 64)], ()


def gpt2_model(n):
    import torch
    from models import gpt2
    from models.common import attention_interface
    config = gpt2.gpt2_small_config()
    config.n_layer = n
    model = gpt2.GPT2LMHeadModel(config)
    return model, [((None, None), torch.int64)], [attention_interface]


BUILDERS = {"relu": relu_model, "mlp": mlp_model, "gpt2": gpt2_model}


def export_text(family, n):
    """The nnx IR of `family` at depth `n`, naming a weights file that is not
    written."""
    from nnx.torch_export import Exporter
    model, inputs, functions = BUILDERS[family](n)
    ex = Exporter(None, functions).add_model(model.eval(), inputs, family,
                                             "net")
    return ex.text(os.path.join(tempfile.gettempdir(),
                                "nnx-compile-vs-depth-unread.safetensors"))


def parse_timing(report):
    """{pass name: seconds} (top-level lines; repeated passes summed)."""
    times = {}
    for line in report.splitlines():
        m = TIMING_LINE.match(line)
        if m and not line.startswith("      "):
            times[m.group(2)] = times.get(m.group(2), 0.0) + float(m.group(1))
    return times


def compile_once(nnx_opt, path, timeout):
    """Pass timings of one compile, or None past the timeout."""
    cmd = [nnx_opt, path, "--nnx-build-forward", "--nnx-cpu-pipeline",
           "--mlir-timing", "-o", os.devnull]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return parse_timing(proc.stderr)


def measure(nnx_opt, family, n, args, workdir):
    path = os.path.join(workdir, f"{family}{n}.mlir")
    with open(path, "w") as f:
        f.write(export_text(family, n))
    best = None
    for _ in range(args.repeat):
        t = compile_once(nnx_opt, path, args.timeout)
        if t is None:
            return None
        if best is None or t["Total"] < best["Total"]:
            best = t
    return best


def report_family(nnx_opt, family, depths, args, workdir):
    print(f"\n{family}: depth, seconds (min of {args.repeat}), growth "
          "exponent vs the previous depth (1 = linear)")
    print(f"  {'depth':>6} {'total':>8} {'bufferize':>10} {'schedule':>9} "
          f"{'ms/layer':>9} {'exponent':>9}")
    prev = None
    for n in depths:
        t = measure(nnx_opt, family, n, args, workdir)
        if t is None:
            print(f"  {n:>6} {'>' + format(args.timeout, '.0f'):>8} "
                  f"{'-':>10} {'-':>9} {'-':>9}", flush=True)
            break  # deeper models only take longer
        total = t["Total"]
        cols = [t.get(name, 0.0) for _, name in PASSES]
        exp = ""
        if prev:
            exp = f"{math.log(total / prev[1]) / math.log(n / prev[0]):9.2f}"
        print(f"  {n:>6} {total:8.2f} {cols[0]:10.2f} {cols[1]:9.2f} "
              f"{1e3 * total / n:9.1f} {exp}".rstrip(), flush=True)
        prev = (n, total)


def resnet_compile(nnx_run, n, args, workdir):
    """(process CPU s, nnx-run's compile s, its weights s) of a cold-cache
    nnx-run of torchvision's ResNet-`n` on one core."""
    import numpy as np
    import torch
    import torchvision
    from nnx.torch_export import write
    torch.manual_seed(0)
    model = getattr(torchvision.models, f"resnet{n}")(weights=None).eval()
    mlir = os.path.join(workdir, f"resnet{n}.mlir")
    write(model, mlir, [(None, 3, 224, 224)], name=f"resnet{n}", weights=True)
    x = os.path.join(workdir, "x.npy")
    np.save(x, np.zeros((0, 3, 224, 224), np.float32))
    cache = os.path.join(workdir, f"cache{n}")
    shutil.rmtree(cache, ignore_errors=True)  # cold: nothing to reuse
    cmd = [nnx_run, mlir, "--threads", "1", "--input", x, "--output",
           os.path.join(workdir, "y.npy"), "--repeat", "2", "--cache-dir",
           cache]
    if args.pipeline_options:
        cmd += ["--pipeline-options", args.pipeline_options]
    core = min(os.sched_getaffinity(0))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=args.timeout,
                          preexec_fn=lambda: os.sched_setaffinity(0, {core}))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                before.ru_stime)
    m = re.search(r"compile ([0-9.]+) ms, weights ([0-9.]+) ms", proc.stderr)
    return cpu, float(m.group(1)) * 1e-3, float(m.group(2)) * 1e-3


def report_resnets(depths, args, workdir):
    from nnx import tools
    nnx_run = tools.tool_path("nnx-run")
    print("\nresnet: torchvision ResNet-N, cold-cache nnx-run --threads 1 on "
          "one core (batch 0)" + (f", --pipeline-options='"
                                  f"{args.pipeline_options}'"
                                  if args.pipeline_options else ""))
    print(f"  {'depth':>6} {'cpu s':>8} {'weights s':>10} {'cpu-weights':>12} "
          f"{'/ first':>8} {'compile s':>10}")
    first = None
    for n in depths:
        # The fastest of --repeat cold compiles, by CPU seconds less the
        # weights' (a VM's neighbours move single runs by 10%).
        runs = [resnet_compile(nnx_run, n, args, workdir)
                for _ in range(max(args.repeat, 1))]
        cpu, wall, weights = min(runs, key=lambda r: r[0] - r[2])
        first = first or cpu - weights
        print(f"  {n:>6} {cpu:8.2f} {weights:10.2f} {cpu - weights:12.2f} "
              f"{(cpu - weights) / first:8.2f} {wall:10.2f}", flush=True)


def main(argv=None):
    args = parse_args(argv)
    if args.build:
        os.environ["NNX_BUILD_DIR"] = os.path.abspath(args.build)
    from nnx import tools
    nnx_opt = tools.tool_path("nnx-opt")
    load = os.getloadavg()
    print(f"nnx compile time vs depth  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("command: nnx-opt MODEL --nnx-build-forward --nnx-cpu-pipeline "
          "--mlir-timing")
    with tempfile.TemporaryDirectory() as workdir:
        for family in filter(None, args.families.split(",")):
            if family not in FAMILIES:
                raise SystemExit(f"unknown family '{family}' (expected one of "
                                 f"{', '.join(FAMILIES)})")
            depths = [int(d) for d in getattr(args, family).split(",")]
            report_family(nnx_opt, family, depths, args, workdir)
        if args.resnets:
            report_resnets([int(d) for d in args.resnets.split(",")], args,
                           workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
