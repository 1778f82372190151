#!/usr/bin/python3
"""CUDA vs CPU: runs the MLP and custom-module examples through
`nnx-run --target=cuda` and `--target=cpu` on the same random input,
compares the outputs (atol 1e-4 for f32) and prints the time per forward.

    /usr/bin/python3 bench/cuda_vs_cpu.py [--build build] [--batch 4096]
                                          [--repeat 50] [--no-record]

Without a CUDA driver or device it prints "skipped: no CUDA device" and
exits 0. Otherwise the results also go to
bench/results/cuda_vs_cpu-<date>-<device>.txt. Exits 1 when an output
disagrees or a run fails.
"""

import argparse
import ctypes
import datetime
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ["examples/mlp.mlir", "examples/residual.mlir"]
ATOL = {"float32": 1e-4}


def cuda_device():
    """The name of CUDA device 0, or None (no driver, no device)."""
    try:
        cuda = ctypes.CDLL(os.environ.get("NNX_CUDA_DRIVER", "libcuda.so.1"))
    except OSError:
        return None
    if cuda.cuInit(0) != 0:
        return None
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return None
    name = ctypes.create_string_buffer(256)
    dev = ctypes.c_int(0)
    cuda.cuDeviceGet(ctypes.byref(dev), 0)
    cuda.cuDeviceGetName(name, 255, dev)
    return name.value.decode() or "unknown CUDA device"


def input_shape(model, batch):
    with open(model, encoding="utf-8") as f:
        m = re.search(r"inputs\(tensor<([^>]*)>\)", f.read())
    dims = m.group(1).split("x")
    dtype = {"f32": np.float32, "f64": np.float64}[dims[-1]]
    return [batch if d == "?" else int(d) for d in dims[:-1]], dtype


def run(nnx_run, model, target, x_path, y_path, repeat):
    cmd = [nnx_run, model, f"--target={target}", "--input", x_path,
           "--output", y_path, f"--repeat={repeat}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
    m = re.search(r"compile ([\d.]+) ms; forward x\d+ .*: mean ([\d.]+) ms, "
                  r"min ([\d.]+) ms", r.stderr)
    if not m:
        raise RuntimeError(f"no timing in nnx-run's output:\n{r.stderr}")
    return np.load(y_path), [float(v) for v in m.groups()]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("NNX_BUILD_DIR", "build"))
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-record", action="store_true",
                   help="do not write bench/results/")
    args = p.parse_args(argv)
    device = cuda_device()
    if device is None:
        print("skipped: no CUDA device")
        return 0
    nnx_run = os.path.join(args.build, "bin", "nnx-run")
    rng = np.random.default_rng(args.seed)
    lines = [f"cuda_vs_cpu {datetime.datetime.now().isoformat(timespec='seconds')}"
             f" device: {device}; batch {args.batch}, {args.repeat} timed "
             f"forwards each (compilation excluded)",
             f"{'model':<28} {'max |cuda-cpu|':>15} {'cpu mean ms':>12} "
             f"{'cuda mean ms':>13} {'cuda min ms':>12} {'speedup':>8}"]
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rel in MODELS:
            model = os.path.join(ROOT, rel)
            shape, dtype = input_shape(model, args.batch)
            x = rng.uniform(-1, 1, shape).astype(dtype)
            x_path = os.path.join(tmp, "x.npy")
            np.save(x_path, x)
            try:
                y_cpu, t_cpu = run(nnx_run, model, "cpu", x_path,
                                   os.path.join(tmp, "cpu.npy"), args.repeat)
                y_gpu, t_gpu = run(nnx_run, model, "cuda", x_path,
                                   os.path.join(tmp, "cuda.npy"), args.repeat)
            except RuntimeError as e:
                lines.append(f"{rel:<28} FAILED: {e}")
                status = 1
                continue
            atol = ATOL.get(str(y_cpu.dtype), 0.0)
            err = float(np.max(np.abs(y_gpu.astype(np.float64) -
                                      y_cpu.astype(np.float64))))
            ok = y_gpu.shape == y_cpu.shape and err <= atol
            status |= 0 if ok else 1
            lines.append(f"{rel:<28} {err:>15.3g} {t_cpu[1]:>12.4f} "
                         f"{t_gpu[1]:>13.4f} {t_gpu[2]:>12.4f} "
                         f"{t_cpu[1] / t_gpu[1]:>7.2f}x"
                         + ("" if ok else f"  MISMATCH (atol {atol})"))
    text = "\n".join(lines)
    print(text)
    if not args.no_record:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-")
        path = os.path.join(
            HERE, "results",
            f"cuda_vs_cpu-{datetime.date.today().isoformat()}-{slug}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        print(f"recorded in {os.path.relpath(path, ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
