"""Running nnx's command-line tools from Python (tests, benchmarks)."""

import os
import subprocess
import tempfile

import numpy as np

from . import build_dir


class ToolError(RuntimeError):
    """A tool exited non-zero; the message carries its stderr."""


def tool_path(name):
    """`<build>/bin/<name>`; raises FileNotFoundError if it is not built."""
    path = os.path.join(build_dir(), "bin", name)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{path} does not exist: build it (ninja -C {build_dir()} {name}) "
            "or point NNX_BUILD_DIR at a build directory")
    return path


def run_tool(name, args, input_text=None, check=True):
    """Runs a tool; returns the CompletedProcess (text mode)."""
    proc = subprocess.run([tool_path(name)] + list(args), input=input_text,
                          capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise ToolError(f"{name} {' '.join(map(str, args))} exited "
                        f"{proc.returncode}:\n{proc.stderr}")
    return proc


def nnx_opt(model_text, args=()):
    """Runs nnx-opt on `model_text`; returns its stdout."""
    return run_tool("nnx-opt", list(args) + ["-"], input_text=model_text).stdout


def nnx_run(model_text, inputs, extra_args=(), workdir=None):
    """Compiles and runs `model_text`'s forward on CPU through nnx-run.

    `inputs` is a list of numpy arrays; returns ``(output, stderr)``.
    """
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        model = os.path.join(tmp, "model.mlir")
        with open(model, "w") as f:
            f.write(model_text)
        args = [model]
        for i, x in enumerate(inputs):
            p = os.path.join(tmp, f"in{i}.npy")
            np.save(p, x)
            args += ["--input", p]
        out = os.path.join(tmp, "out.npy")
        args += ["--output", out] + list(extra_args)
        proc = run_tool("nnx-run", args)
        return np.load(out), proc.stderr


def nnx_run_traced(model_text, inputs, family, reads=(), patches=None,
                   extra_args=(), workdir=None):
    """Runs `model_text` through nnx-run with tracing: `reads` are
    standardized names of `family` to read (``--probe``), `patches` maps
    names to arrays written in (``--patch``). Returns ``(output, {name:
    array read})``."""
    patches = dict(patches or {})
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        model = os.path.join(tmp, "model.mlir")
        with open(model, "w") as f:
            f.write(model_text)
        args = [model, "--family", family]
        for i, x in enumerate(inputs):
            p = os.path.join(tmp, f"in{i}.npy")
            np.save(p, x)
            args += ["--input", p]
        for i, name in enumerate(reads):
            args += ["--probe", f"{name}={os.path.join(tmp, f'read{i}.npy')}"]
        for i, (name, x) in enumerate(patches.items()):
            p = os.path.join(tmp, f"patch{i}.npy")
            np.save(p, x)
            args += ["--patch", f"{name}={p}"]
        out = os.path.join(tmp, "out.npy")
        run_tool("nnx-run", args + ["--output", out] + list(extra_args))
        values = {name: np.load(os.path.join(tmp, f"read{i}.npy"))
                  for i, name in enumerate(reads)}
        return np.load(out), values
