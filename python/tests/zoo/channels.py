"""Channel-group surgery on one zoo model, in a process of its own:

    python3 -m zoo.channels NAME RECORD.json      (python/tests on sys.path)

The model (calibrated, eval mode) is exported once and
``nnx-channel-groups`` lists every group of it from one analysis: per
convolution and Linear, the group of its output channels (every tensor dim
the forward ties to them) or the refusal that names the op breaking the
proof. Distinct groups (by their members) are taken in the module tree's
order; a group that reaches the model's output, that a norm reduces over,
or that has fewer than 4 channels is not a candidate.

- prune: the groups listed are cut into 4 stages (quarters of the list, in
  order) and the first candidate of each stage loses 25% of its channels
  (``nnx.prune_channels``, random importance): the result must equal the
  original with the pruned channels' producing parameters zeroed, within
  1e-5 in PyTorch (the user's own classes).
- widen: one candidate (the middle stage's first) grows by 25%
  (``nnx.widen_channels``): the output is preserved within 1e-5.

Each comparison is the zoo's criterion (zoo.check.judge: the 1e-5 contract
against the reference model in float32, or, where that float32 output
itself misses float64 by more than the contract - a deep random net - at
most 1.5 times its distance from float64), and the edit must be exact: the
edited model and the reference, both run in float64, agree within the
contract.

A refused edit is tried on the next candidate of its stage (at most
:data:`TRIES`); an edit with no candidate left is a refusal, and its
message must name the op that breaks the proof (``'nnx.…'`` or the op's
path). The record (JSON) holds, per edit, ``result`` (``covered``,
``refused`` or ``fail``), the groups edited, the refusals met and the
distance to the reference (max |got - want| / (atol + rtol |want|))."""

import copy
import ctypes
import gc
import json
import os
import re
import sys
import tempfile
import time
import traceback

import numpy as np
import torch

# The nnx package (python/), for a worker started from python/tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir))
import nnx  # noqa: E402
from nnx.tools import nnx_opt  # noqa: E402
from nnx.torch_export import export  # noqa: E402

from . import by_name  # noqa: E402
from .check import judge  # noqa: E402

#: The contract (nnx.testing.CONTRACT).
ATOL = RTOL = 1e-5
#: Stages the listing is cut into; groups pruned per model at most.
STAGES = 4
#: Candidates tried per stage before the stage counts as refused.
TRIES = 3
#: A refusal names the op that breaks the proof: an op's name ('nnx.…',
#: 'tensor.…', 'arith.…') or a module's path in quotes.
NAMES_OP = re.compile(r"'[a-z_]+\.[a-z_.]+'|'[\w.]+' \(nnx\.\w+\)")

_HEAD = re.compile(r"channel group of '([^']+)' \(([\w.]+)\): "
                   r"(?:(\d+) channels|refused: (.*))$")
_TENSOR = re.compile(r"  tensor (\S+) dim (\d+)(?: at (\d+))?( \(reads\))?"
                     r"(?: \(outer (\d+) inner (\d+)\))?$")


def parse_groups(text):
    """``nnx-channel-groups``' listing of every group: dicts with
    ``target``, ``kind``, ``n`` (None when refused), ``refused`` (the
    message and its notes), ``tensors`` [(path, dim, offset, reads, outer,
    inner)]: channel c is index ``(o * n + c) * inner + i + offset`` of the
    dim, for every o < outer and i < inner (a grouped conv's parts),
    ``reduced`` (the reductions' lines), ``output`` (reaches the
    model's output)."""
    groups = []
    for line in text.splitlines():
        m = _HEAD.match(line)
        if m:
            groups.append(dict(target=m.group(1), kind=m.group(2),
                               n=int(m.group(3)) if m.group(3) else None,
                               refused=m.group(4), tensors=[], reduced=[],
                               output=False))
            continue
        if not groups:
            continue
        g = groups[-1]
        t = _TENSOR.match(line)
        if t:
            g["tensors"].append((t.group(1), int(t.group(2)),
                                 int(t.group(3) or 0), bool(t.group(4)),
                                 int(t.group(5) or 1), int(t.group(6) or 1)))
        elif line.startswith("  reduced by "):
            g["reduced"].append(line.strip())
        elif line.startswith("  output #"):
            g["output"] = True
        elif line.startswith("  note: ") and g["refused"]:
            g["refused"] += " | " + line.strip()
    return groups


def distinct(groups):
    """The groups once each (the first layer naming one), in order: a
    residual stream is named by every layer that writes it."""
    seen, out = set(), []
    for g in groups:
        key = (frozenset(t for t in g["tensors"] if not t[3])
               if g["n"] is not None else ("refused", g["target"]))
        if key not in seen:
            seen.add(key)
            out.append(g)
    return out


def candidate(g):
    return (g["n"] is not None and g["n"] >= 4 and not g["output"]
            and not g["reduced"])


def stages(groups):
    """`groups` cut into :data:`STAGES` consecutive parts."""
    k = min(STAGES, len(groups))
    bounds = [round(i * len(groups) / k) for i in range(k + 1)]
    return [groups[bounds[i]:bounds[i + 1]] for i in range(k)]


def zero_producers(model, g, channels):
    """`model` with `channels` of group `g` zeroed where they are written:
    every per-channel parameter (weight rows, biases, norms' affine
    entries, depthwise filters; running statistics stay)."""
    return zero_tensors(model, g["tensors"], channels, g["n"])


def zero_tensors(model, tensors, channels, n=None):
    """zero_producers on a listing's tensor lines [(path, dim, offset,
    reads[, outer, inner])] of a group of `n` channels."""
    params = dict(model.named_parameters())
    with torch.no_grad():
        for path, dim, offset, reads, *layout in tensors:
            path = path.replace(".state.", ".")
            if reads or path not in params:
                continue
            outer, inner = layout or (1, 1)
            index = torch.tensor([(o * (n or 0) + c) * inner + i + offset
                                  for o in range(outer) for c in channels
                                  for i in range(inner)])
            params[path].index_fill_(dim, index, 0.0)
    return model


def distance(got, want):
    got, want = got.double(), want.double()
    return float(((got - want).abs() / (ATOL + RTOL * want.abs())).max())


def run(model, x):
    with torch.no_grad():
        out = model(*x)
    return out if isinstance(out, torch.Tensor) else out[0]


def run_double(model, x64):
    """`model` run in float64 on `x64`: converted in place and back (exact
    both ways), so that a large model (vit_h_14: 2.5 GB of float32) is not
    held in float32 and float64 at once; the freed float64 memory goes
    back to the system (:func:`release`) before the next stage."""
    try:
        return run(model.double(), x64)
    finally:
        model.float()
        release()


def outputs(model, x):
    """`model`'s output on `x` in float32 and in float64."""
    return run(model, x), run_double(model, tuple(t.double() for t in x))


def compare(edited, reference, rec):
    """Whether the edited model computes what the reference does
    (zoo.check.judge in float32, and within the contract in float64), from
    their :func:`outputs` (so that the two models need not be held at
    once); the distances go to `rec`."""
    (e32, e64), (r32, r64) = edited, reference
    ok, facts = judge(e32.numpy(), r32.numpy(), r64.numpy())
    rec["distance"] = distance(e32, r32)
    rec["distance_f64"] = distance(e64, r64)
    rec["criterion"] = facts.get("criterion")
    return ok and rec["distance_f64"] <= 1


def names_op(message):
    return bool(NAMES_OP.search(message or ""))


def prune_chain(case, model, listing, rec):
    """The prune edits, one group per stage, each on the last one's result:
    (the pruned model, [(group, channels dropped)]); the groups and the
    refusals go to `rec`."""
    rng = np.random.RandomState(2)
    pruned, drops = model, []
    for part in stages(listing):
        for g in [g for g in part if candidate(g)][:TRIES]:
            n = g["n"]
            scores = rng.permutation(n).astype(np.float64)
            drop = sorted(np.argsort(scores)[: n // 4].tolist())
            try:
                edited = nnx.prune_channels(
                    pruned, layer_name=g["target"], keep=n - n // 4,
                    importance=scores, inputs=case.inputs)
            except ValueError as e:
                rec["refusals"].append(f"{g['target']}: {e}")
                continue
            pruned = edited
            release()
            drops.append((g, drop))
            rec["groups"].append(dict(layer=g["target"], channels=n))
            break
    return pruned, drops


def prune_stages(case, model, listing, x):
    """The prune edit: one group per stage, chained; the record part. The
    pruned model is run and dropped before the reference (the original
    with the pruned channels zeroed, zeroing commutes) is made: the
    exports and the runs hold at most the model and one edited copy."""
    rec = dict(result="refused", groups=[], refusals=[], stages=0)
    pruned, drops = prune_chain(case, model, listing, rec)
    if not rec["groups"]:
        return rec
    rec["stages"] = len(rec["groups"])
    before = sum(p.numel() for p in model.parameters())
    rec["params"] = [before, sum(p.numel() for p in pruned.parameters())]
    got = outputs(pruned, x)
    pruned = None
    release()
    zeroed = copy.deepcopy(model)
    for g, drop in drops:
        zero_producers(zeroed, g, drop)
    want = outputs(zeroed, x)
    zeroed = None
    rec["zeroed_differs"] = distance(want[0], run(model, x)) > 1
    ok = compare(got, want, rec) and rec["params"][1] < before
    rec["result"] = "covered" if ok else "fail"
    return rec


def widen_one(case, model, listing, x):
    """The widen edit: the middle stage's candidates first."""
    rec = dict(result="refused", groups=[], refusals=[])
    parts = stages(listing)
    order = parts[len(parts) // 2:] + parts[:len(parts) // 2]
    tries = [g for part in order for g in part if candidate(g)][:TRIES]
    for g in tries:
        n = g["n"]
        try:
            wide = nnx.widen_channels(model, layer_name=g["target"],
                                      new_width=n + n // 4, rng_seed=1,
                                      inputs=case.inputs)
        except ValueError as e:
            rec["refusals"].append(f"{g['target']}: {e}")
            continue
        rec["groups"].append(dict(layer=g["target"], channels=n))
        got = outputs(wide, x)
        wide = None
        release()
        ok = compare(got, outputs(model, x), rec)
        rec["result"] = "covered" if ok else "fail"
        return rec
    return rec


def no_candidate_refusal(case, model, listing):
    """Why no group can be edited: the refusal of the first group that is
    not the model's output (the listing's, or the prune pass's own for a
    group a norm reduces over)."""
    for g in listing:
        if g["output"] or (g["n"] is not None and g["n"] < 4):
            continue
        if g["refused"]:
            return f"{g['target']}: {g['refused']}"
        try:
            nnx.prune_channels(model, layer_name=g["target"],
                               keep=g["n"] - g["n"] // 4, inputs=case.inputs)
        except ValueError as e:
            return f"{g['target']}: {e}"
    return "no channel group other than the model's output"


#: Peak memory of the edits, in multiples of the model's parameter bytes:
#: an export's recording (both example runs' values, about 2.5 x) while
#: the model and one edited copy are held, or a float64 run (the process's
#: VmHWM, its 0.4 GiB of libraries included: vit_l_16 4.8 x, vit_h_14
#: 4.7 x measured), with a margin.
MEMORY_FACTOR = 6


def release():
    """Frees what the last stage left: its garbage (reference cycles) now,
    and the C heap's free memory back to the system (glibc), so that the
    next stage's peak does not stack on it."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass  # not glibc


def _proc_field(path, name):
    """Field `name` (in kB) of /proc's file `path`, in bytes (None if
    unreadable)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory():
    """MemAvailable of /proc/meminfo, in bytes (None if unreadable)."""
    return _proc_field("/proc/meminfo", "MemAvailable")


def peak_memory():
    """This process's peak resident memory (VmHWM), in bytes (None if
    unreadable)."""
    return _proc_field("/proc/self/status", "VmHWM")


def too_big(model):
    """Why `model`'s edits cannot run in this machine's memory, or None."""
    weights = sum(t.numel() * t.element_size()
                  for t in list(model.parameters()) + list(model.buffers()))
    free = available_memory()
    if free is None or MEMORY_FACTOR * weights <= free:
        return None
    return (f"needs about {MEMORY_FACTOR * weights / 2**30:.0f} GiB "
            f"({MEMORY_FACTOR} x its {weights / 2**30:.1f} GiB of weights: "
            f"the model, an edited copy and an export's recording), "
            f"{free / 2**30:.0f} GiB available")


def check(name, path):
    rec = dict(name=name, stage="build", seconds={})

    def save():
        with open(path, "w") as f:
            json.dump(rec, f, indent=1)

    start = time.time()
    try:
        case = by_name(name)
        torch.manual_seed(0)
        model = case.build(0)
        rec["skipped"] = too_big(model)
        if rec["skipped"]:
            rec["stage"] = "skipped"
            save()
            return
        x = case.example(2, seed=1)
        rec["stage"] = "list"
        save()
        with tempfile.TemporaryDirectory() as tmp:
            text = export(model, case.inputs,
                          weights=os.path.join(tmp, "w.safetensors"))
            listing = distinct(parse_groups(
                nnx_opt(text, ["--nnx-channel-groups", "-o", "/dev/null"])))
        rec["groups"] = len(listing)
        rec["candidates"] = sum(candidate(g) for g in listing)
        rec["listing_refusals"] = [f"{g['target']}: {g['refused']}"
                                   for g in listing if g["refused"]][:5]
        for edit, fn in (("prune", prune_stages), ("widen", widen_one)):
            rec["stage"] = edit
            save()
            release()
            rec[edit] = fn(case, model, listing, x)
            if rec[edit]["result"] == "refused":
                why = (rec[edit]["refusals"][0] if rec[edit]["refusals"]
                       else no_candidate_refusal(case, model, listing))
                rec[edit]["why"] = why
                rec[edit]["names_op"] = names_op(why)
        rec["stage"] = "done"
    except Exception as e:  # noqa: BLE001 - recorded, the test fails
        rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:500]}"
        rec["detail"] = traceback.format_exc()[-3000:]
    rec["seconds"]["total"] = round(time.time() - start, 1)
    rec["peak_memory"] = peak_memory()
    save()


if __name__ == "__main__":
    check(sys.argv[1], sys.argv[2])
