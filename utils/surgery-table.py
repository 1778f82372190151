#!/usr/bin/python3
"""Parameters and FLOPs of channel-group surgery on torchvision models
(docs/Surgery.md, "Channel surgery on whole models").

    utils/surgery-table.py                       # resnet50 mobilenet_v2 densenet121
    utils/surgery-table.py resnet18 --update docs/Surgery.md

For each model (built as the zoo builds it: ``weights=None``, calibrated
batch norms, eval mode) ``nnx-channel-groups`` lists the distinct channel
groups, and two edits are applied to every editable group (not the
model's output, no norm reducing over it, at least 4 channels; the zoo
run's rule, python/tests/zoo/channels.py):

- prune: each group keeps 75% of its channels (``nnx-prune-channels``,
  one pass per group on the one exported IR, seeded random importance so
  that the removed channels are known). The result must compute what the
  original computes with those channels' producing parameters zeroed;
- widen: each group grows by 25% (``nnx-widen-channels``): the output must
  be preserved.

Both are checked in float64 at the zoo's image size within the 1e-5
contract (max |got - want| / (atol + rtol |want|) <= 1; the column shows
it); a group whose pass refuses is counted and skipped. Parameters are
counted in PyTorch (the edited model is the user's own classes), FLOPs are
2 x the multiply-adds of convolutions and matrix products for one 224 x 224
image (bench/zoo_vs_torch.py's counter). --update replaces the text between
the markers of the file."""

import argparse
import copy
import os
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, os.pardir)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from nnx.surgery import _Edit  # noqa: E402
from nnx.tools import nnx_opt  # noqa: E402
from nnx.torch_export import export  # noqa: E402
from zoo import by_name  # noqa: E402
from zoo.channels import (candidate, distance, distinct,  # noqa: E402
                          parse_groups, run_double,
                          zero_producers)
from zoo_vs_torch import count_flops  # noqa: E402

BEGIN = "<!-- surgery-table: begin (utils/surgery-table.py) -->"
END = "<!-- surgery-table: end -->"
MODELS = ("resnet50", "mobilenet_v2", "densenet121")


def listing(model, inputs):
    with tempfile.TemporaryDirectory() as tmp:
        text = export(model, inputs, weights=os.path.join(tmp, "w.safetensors"))
        return distinct(parse_groups(
            nnx_opt(text, ["--nnx-channel-groups", "-o", "/dev/null"])))


def edit_groups(model, inputs, groups, option):
    """`model` with `option(g, tmp)` (a pass) run on every group `g` of
    `groups` in turn, on one export; the groups edited and the refusals."""
    edit, done, refused = _Edit(model, inputs), [], []
    with tempfile.TemporaryDirectory() as tmp:
        for g in groups:
            try:
                edit.run(option(g, tmp), ValueError)
                done.append(g)
            except ValueError as e:
                refused.append(f"{g['target']}: {str(e).splitlines()[0]}")
    return edit.result(), done, refused


def prune_all(model, inputs, groups):
    """Every group of `groups` keeps 75%; the pruned model and the
    original with the removed channels zeroed."""
    rng = np.random.RandomState(0)
    drops = {}

    def option(g, tmp):
        n = g["n"]
        scores = rng.permutation(n).astype(np.float64)
        path = os.path.join(tmp, f"importance{len(drops)}.npy")
        np.save(path, scores)
        drops[g["target"]] = sorted(np.argsort(scores)[: n // 4].tolist())
        return (f"nnx-prune-channels{{layer={g['target']} "
                f"keep={n - n // 4} importance={path}}}")

    pruned, done, refused = edit_groups(model, inputs, groups, option)
    zeroed = copy.deepcopy(model)
    for g in done:
        zeroed = zero_producers(zeroed, g, drops[g["target"]])
    return pruned, zeroed, done, refused


def widen_all(model, inputs, groups):
    def option(g, tmp):
        return (f"nnx-widen-channels{{layer={g['target']} "
                f"width={g['n'] + g['n'] // 4} seed=1}}")

    return edit_groups(model, inputs, groups, option)


def measure(model, want_model, x):
    """Parameters, FLOPs per 224 x 224 image, and the float64 distance of
    `model` to `want_model` at `x`."""
    x64 = tuple(t.double() for t in x)
    got, want = run_double(model, x64), run_double(want_model, x64)
    return dict(params=sum(p.numel() for p in model.parameters()),
                flops=count_flops(model, torch.randn(1, 3, 224, 224)),
                distance=distance(got, want))


def table_rows(name):
    start = time.time()
    case = by_name(name)
    torch.manual_seed(0)
    model = case.build(0)
    x = case.example(2, seed=1)
    groups = listing(model, case.inputs)
    editable = [g for g in groups if candidate(g)]
    rows = [dict(edit="none", **measure(model, model, x),
                 groups=f"{len(groups)} listed")]
    pruned, zeroed, done, refused = prune_all(model, case.inputs, editable)
    rows.append(dict(edit="prune 25% of every editable group",
                     **measure(pruned, zeroed, x),
                     groups=f"{len(done)} of {len(editable)}",
                     refused=refused))
    wide, done, refused = widen_all(model, case.inputs, editable)
    rows.append(dict(edit="widen every editable group by 25%",
                     **measure(wide, model, x),
                     groups=f"{len(done)} of {len(editable)}",
                     refused=refused))
    print(f"{name}: {time.time() - start:.0f} s", file=sys.stderr)
    return rows


def markdown(tables):
    out = ["| model | edit | groups | parameters | GFLOPs (224², 1 image) "
           "| distance (f64) |", "|---|---|---|---|---|---|"]
    notes = []
    for name, rows in tables:
        base = rows[0]
        for r in rows:
            change = ("" if r is base else
                      f" ({100 * (r['params'] / base['params'] - 1):+.1f}%)")
            fchange = ("" if r is base else
                       f" ({100 * (r['flops'] / base['flops'] - 1):+.1f}%)")
            dist = "" if r is base else f"{r['distance']:.1e}"
            out.append(f"| {name} | {r['edit']} | {r['groups']} "
                       f"| {r['params'] / 1e6:.2f} M{change} "
                       f"| {r['flops'] / 1e9:.2f}{fchange} | {dist} |")
            for why in r.get("refused", []):
                notes.append(f"- {name}, {r['edit']}: refused {why}")
    return "\n".join(out + ([""] + notes if notes else [])) + "\n"


def update(path, text):
    with open(path) as f:
        doc = f.read()
    head, found, rest = doc.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not found or not found_end:
        sys.exit(f"{path}: no '{BEGIN}' ... '{END}' markers")
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{text}{END}{tail}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", default=list(MODELS))
    p.add_argument("--update", metavar="FILE",
                   help="replace the table between the markers of FILE")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    tables = [(name, table_rows(name)) for name in args.models]
    text = markdown(tables)
    print(text, end="")
    broken = [f"{name}: {r['edit']}" for name, rows in tables
              for r in rows[1:] if not r["distance"] <= 1]
    if broken:
        sys.exit("function not preserved within 1e-5: " + "; ".join(broken))
    if args.update:
        update(args.update, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
