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


#: Seconds a tool may run before it is killed and the call fails
#: (``NNX_TOOL_TIMEOUT``): a hung tool fails its test instead of stalling
#: the suite.
TIMEOUT = float(os.environ.get("NNX_TOOL_TIMEOUT", "1200"))


def run_tool(name, args, input_text=None, check=True):
    """Runs a tool; returns the CompletedProcess (text mode). Raises
    ToolError when it runs longer than TIMEOUT seconds."""
    try:
        proc = subprocess.run([tool_path(name)] + list(args),
                              input=input_text, capture_output=True,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        err = e.stderr or ""
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
        raise ToolError(f"{name} {' '.join(map(str, args))} did not finish "
                        f"within {TIMEOUT:g} s (NNX_TOOL_TIMEOUT); its "
                        f"stderr so far:\n{err}") from None
    if check and proc.returncode != 0:
        raise ToolError(f"{name} {' '.join(map(str, args))} exited "
                        f"{proc.returncode}:\n{proc.stderr}")
    return proc


def nnx_opt(model_text, args=()):
    """Runs nnx-opt on `model_text`; returns its stdout."""
    return run_tool("nnx-opt", list(args) + ["-"], input_text=model_text).stdout


def nnx_run_outputs(model_text, inputs, n_outputs, extra_args=(),
                    workdir=None):
    """Compiles and runs `model_text`'s forward on CPU through nnx-run;
    returns ``([output, ...], stderr)`` (`n_outputs` of them: nnx-run
    refuses another count).

    `inputs` is a list of numpy arrays. The model goes to nnx-run on its
    standard input (its messages name it ``<stdin>``), so the compiled code
    of one model text is the same from call to call and its compile cache
    (``NNX_CACHE_DIR``) serves the repeats."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        args = ["-"]
        for i, x in enumerate(inputs):
            p = os.path.join(tmp, f"in{i}.npy")
            np.save(p, x)
            args += ["--input", p]
        outs = [os.path.join(tmp, f"out{i}.npy") for i in range(n_outputs)]
        for p in outs:
            args += ["--output", p]
        proc = run_tool("nnx-run", args + list(extra_args),
                        input_text=model_text)
        return [np.load(p) for p in outs], proc.stderr


def nnx_run(model_text, inputs, extra_args=(), workdir=None):
    """Compiles and runs `model_text`'s forward (one output) on CPU through
    nnx-run (as :func:`nnx_run_outputs`); returns ``(output, stderr)``."""
    outs, stderr = nnx_run_outputs(model_text, inputs, 1, extra_args, workdir)
    return outs[0], stderr


def nnx_run_traced(model_text, inputs, family, reads=(), patches=None,
                   extra_args=(), workdir=None):
    """Runs `model_text` through nnx-run with tracing: `reads` are
    standardized names of `family` to read (``--probe``), `patches` maps
    names to arrays written in (``--patch``). Returns ``(output, {name:
    array read})``. The model goes on standard input (:func:`nnx_run_outputs`)."""
    patches = dict(patches or {})
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        args = ["-", "--family", family]
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
        run_tool("nnx-run", args + ["--output", out] + list(extra_args),
                 input_text=model_text)
        values = {name: np.load(os.path.join(tmp, f"read{i}.npy"))
                  for i, name in enumerate(reads)}
        return np.load(out), values
