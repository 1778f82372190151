"""One zoo model through nnx, in a process of its own:

    python3 -m zoo.check NAME RECORD.json      (python/tests on sys.path)

Stages, in order: ``build`` (the calibrated model), ``reference``
(PyTorch in float32 at batch 1 and 2, then float64: the model converted
in place, after the export), ``export`` (once, the batch dynamic, tensors
in a safetensors file), ``compile`` (``nnx.compile``, one thread),
``run`` (the compiled forward at batch 1 and 2) and ``compare``
(:func:`judge`). The record (JSON) is rewritten as each stage starts, so a
killed run still names the stage it was in: ``stage``, ``result``
("pass" or "fail"), ``error`` (the first line of the failure) and
``detail`` (its end), seconds per stage, and per output the distances
that :func:`judge` used.
"""

import dataclasses
import json
import os
import sys
import tempfile
import time
import traceback

import numpy as np
import torch

#: The contract: atol = rtol = 1e-5 (nnx.testing.CONTRACT).
ATOL = RTOL = 1e-5
#: Where PyTorch's float32 misses float64 by more than the contract, nnx's
#: distance from float64 may be at most this many times PyTorch's.
FACTOR = 1.5
BATCHES = (1, 2)
STAGES = ["build", "reference", "export", "compile", "run", "compare"]


def flatten(out):
    """The tensors (or arrays) of an output (or input) in order: tuples and
    lists in order, dicts by their values, dataclasses by their fields;
    None dropped."""
    if out is None:
        return []
    if isinstance(out, (torch.Tensor, np.ndarray)):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flatten(v)]
    if dataclasses.is_dataclass(out):
        return [t for f in dataclasses.fields(out)
                for t in flatten(getattr(out, f.name))]
    if isinstance(out, (tuple, list)):
        return [t for v in out for t in flatten(v)]
    raise TypeError(f"a model output of type {type(out).__name__}")


def output_names(out, prefix=""):
    """Names of :func:`flatten`'s tensors: dict keys, tuple indices."""
    if out is None:
        return []
    if isinstance(out, torch.Tensor):
        return [prefix or "0"]
    if isinstance(out, dict):
        items = out.items()
    elif dataclasses.is_dataclass(out):
        items = [(f.name, getattr(out, f.name)) for f in dataclasses.fields(out)]
    else:
        items = enumerate(out)
    return [n for k, v in items
            for n in output_names(v, f"{prefix}.{k}" if prefix else str(k))]


def distance(got, ref):
    """max |got - ref| / (atol + rtol |ref|): the contract holds iff <= 1
    (inf where either is not finite)."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    if got.size == 0:
        return 0.0
    err = np.abs(got - ref) / (ATOL + RTOL * np.abs(ref))
    if not np.isfinite(err).all():
        return float("inf")
    return float(err.max())


def judge(got, want32, want64):
    """The zoo's criterion for one output: within the 1e-5 contract of
    PyTorch's float32 output; where that output itself misses the float64
    one (``want64``) by more than the contract, nnx's distance from float64
    at most FACTOR times PyTorch's instead (never less accurate than the
    reference). Integer outputs: equal. An all-zero float reference fails
    (vacuous). Returns (ok, facts)."""
    facts = {"shape": list(want32.shape)}
    if got.shape != want32.shape or got.dtype != want32.dtype:
        facts["why"] = (f"shape {got.shape} {got.dtype}, want "
                        f"{want32.shape} {want32.dtype}")
        return False, facts
    if not np.issubdtype(want32.dtype, np.floating):
        ok = bool(np.array_equal(got, want32))
        facts["criterion"] = "equal"
        return ok, facts
    facts["max_abs"] = float(np.abs(want32).max()) if want32.size else 0.0
    if want32.size and facts["max_abs"] == 0:
        facts["why"] = ("vacuous: the reference's output is all zeros, so no "
                        "comparison with it can fail")
        return False, facts
    facts["nnx_vs_torch"] = distance(got, want32)
    if want64 is not None:
        facts["torch_vs_f64"] = distance(want32, want64)
        facts["nnx_vs_f64"] = distance(got, want64)
    if want64 is None or facts["torch_vs_f64"] <= 1:
        facts["criterion"] = "contract"
        ok = facts["nnx_vs_torch"] <= 1
    else:
        facts["criterion"] = "f64"
        ok = facts["nnx_vs_f64"] <= FACTOR * facts["torch_vs_f64"]
    return ok, facts


def first_line(e):
    """The failure in a line: the first MLIR diagnostic's message (without
    its file:line:col) when the message holds one (nnx.Error), else the
    message's first line."""
    text = f"{type(e).__name__}: {e}".strip()
    for line in text.splitlines():
        if "error: " in line:
            return line.split("error: ", 1)[1].strip()[:300]
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return text[:300]


class Record:
    """The record file, rewritten on every change."""

    def __init__(self, path, case):
        self.path = path
        self.data = {"name": case.name, "family": case.family,
                     "size": case.size, "subset": case.subset,
                     "stage": "build", "result": None, "error": None,
                     "seconds": {}, "outputs": []}
        self.save()

    def stage(self, name):
        self.data["stage"] = name
        self.save()
        return time.perf_counter()

    def timed(self, name, t0):
        self.data["seconds"][name] = round(time.perf_counter() - t0, 3)

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)


def _as_numpy(xs):
    return [x.detach().numpy() for x in flatten(xs)]


def _double(x):
    if isinstance(x, torch.Tensor):
        return x.double() if x.is_floating_point() else x
    if isinstance(x, (tuple, list)):
        return type(x)(_double(v) for v in x)
    return x


def _numpy(x):
    """The inputs as numpy arrays, nested as the call nests them."""
    if isinstance(x, torch.Tensor):
        return x.numpy()
    return type(x)(_numpy(v) for v in x)


def _run_stages(case, rec, tmp):
    import nnx
    from nnx.torch_export import export

    t = rec.stage("build")
    model = case.build(0)
    rec.data["parameters"] = sum(p.numel() for p in model.parameters())
    rec.timed("build", t)

    t = rec.stage("reference")
    inputs = {b: case.example(b, seed=b) for b in BATCHES}
    want32 = {}
    with torch.no_grad():
        for b in BATCHES:
            out = model(*inputs[b])
            want32[b] = _as_numpy(out)
            rec.data["output_names"] = output_names(out)
    rec.timed("torch", t)

    t = rec.stage("export")
    weights = os.path.join(tmp, "weights.safetensors")
    text = export(model, inputs=case.inputs, name=case.name, weights=weights)
    path = os.path.join(tmp, "model.mlir")
    with open(path, "w") as f:
        f.write(text)
    rec.timed("export", t)

    # float64: the model itself, converted in place after its export (a
    # deep copy would hold both in memory: 5 GB more for vit_h_14).
    t = rec.stage("reference")
    want64 = {}
    try:
        model.double()
        with torch.no_grad():
            for b in BATCHES:
                want64[b] = _as_numpy(model(*_double(inputs[b])))
    except Exception as e:  # the criterion falls back to the contract
        rec.data["f64_error"] = first_line(e)
        want64 = {}
    rec.timed("torch_f64", t)
    del model

    t = rec.stage("compile")
    cpu = time.process_time()
    run = nnx.compile(nnx.load(path), threads=1)
    rec.timed("compile", t)
    # The CPU seconds too (every thread of this process): on a loaded
    # machine the wall time also counts the waits for a core.
    rec.data["seconds"]["compile_cpu"] = round(time.process_time() - cpu, 3)
    rec.data["compile_seconds"] = round(run.compile_seconds, 3)
    rec.data["from_cache"] = bool(run.from_cache)

    t = rec.stage("run")
    got = {}
    for b in BATCHES:
        outs, _ = run(*_numpy(inputs[b]))
        got[b] = flatten(outs)
    rec.timed("run", t)

    rec.stage("compare")
    bad = []
    names = rec.data.get("output_names", [])
    for b in BATCHES:
        if len(got[b]) != len(want32[b]):
            raise AssertionError(f"batch {b}: {len(got[b])} outputs, want "
                                 f"{len(want32[b])}")
        for i, (g, w) in enumerate(zip(got[b], want32[b])):
            w64 = want64[b][i] if b in want64 else None
            ok, facts = judge(np.asarray(g), w, w64)
            facts.update(batch=b, output=names[i] if i < len(names) else str(i),
                         ok=ok)
            rec.data["outputs"].append(facts)
            if not ok:
                bad.append(facts)
    if bad:
        f = bad[0]
        if "why" in f:
            raise AssertionError(f"batch {f['batch']} output {f['output']}: "
                                 f"{f['why']}")
        if f["criterion"] == "f64":
            raise AssertionError(
                f"batch {f['batch']} output {f['output']}: nnx is "
                f"{f['nnx_vs_f64']:.3g} contracts from float64, PyTorch "
                f"{f['torch_vs_f64']:.3g} (allowed: {FACTOR}x)")
        raise AssertionError(
            f"batch {f['batch']} output {f['output']}: "
            f"{f.get('nnx_vs_torch', 0):.3g} contracts from PyTorch "
            f"({len(bad)} of {len(rec.data['outputs'])} outputs out)")


def check(case, record_path):
    """Runs `case` through the stages; the record goes to `record_path`
    (and is returned)."""
    rec = Record(record_path, case)
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory(prefix="nnx-zoo-") as tmp:
            _run_stages(case, rec, tmp)
        rec.data["result"] = "pass"
    except Exception as e:
        rec.data["result"] = "fail"
        rec.data["error"] = first_line(e)
        rec.data["detail"] = "".join(
            traceback.format_exception(type(e), e, e.__traceback__))[-4000:]
    rec.save()
    return rec.data


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    sys.path.insert(0, os.path.join(here, os.pardir, os.pardir))
    import zoo
    name, path = argv[1], argv[2]
    data = check(zoo.by_name(name), path)
    print(f"{name}: {data['result']} at {data['stage']}"
          + (f": {data['error']}" if data["error"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
