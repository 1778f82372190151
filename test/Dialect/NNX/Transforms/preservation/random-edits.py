# Differential surgery: random nets (positional / named / nested
# sequentials, feed_fwd nets with per-layer overrides) and random edit
# sequences through nnx-opt: nnx-widen, nnx-deepen, nnx-low-rank (at full
# rank, or beyond it), nnx-drop-layer (of identities, or of a Linear).
# Every accepted sequence must preserve the executed forward within
# atol = rtol = 1e-5; every refused edit must fail cleanly, naming the pass,
# and leave the IR byte-identical (the IR printed after the failed pass,
# `--mlir-print-ir-after-failure`, equals the IR before it).
# The short version runs here; `make surgery-at-scale` runs 1,000 nets.
# RUN: %python %s --opt nnx-opt --run nnx-run --nets 40
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
import nnxcheck  # noqa: E402

# Passes whose accepted edits preserve the forward here: widen and deepen
# always; low-rank at full rank (SVD reconstructs the weight); drop-layer
# only of an identity (a dropped Linear is refused unless in == out, and the
# generator's are not square where it picks them).
PRESERVING = ("nnx-widen", "nnx-deepen", "nnx-low-rank", "nnx-drop-layer")


def sites(opt, path):
    """(dotted path, op, (out, in) of a Linear or None) of every module."""
    table = subprocess.run([opt, path, "--nnx-param-count", "-o", os.devnull],
                           check=True, stdout=subprocess.PIPE,
                           text=True).stdout
    rows = []
    for line in table.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[1].startswith("nnx."):
            rows.append((parts[0], parts[1]))
    with open(path) as f:
        shapes = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(
            r"nnx\.linear @[^\n]*weight = dense<[^>]*> : tensor<(\d+)x(\d+)x",
            f.read())]
    linears = [r for r in rows if r[1] == "nnx.linear"]
    assert len(linears) == len(shapes), (rows, shapes)
    shape_of = dict(zip((p for p, _ in linears), shapes))
    return [(p, op, shape_of.get(p)) for p, op in rows]


def choose_edit(rng, candidates):
    """A random edit of a random site; may be one the pass refuses."""
    path, op, shape = candidates[rng.integers(0, len(candidates))]
    r = int(rng.integers(0, 10))
    if op == "nnx.identity":
        return "nnx-drop-layer{layer=%s}" % path
    if op == "nnx.linear":
        out, inp = shape
        if r < 5:
            # Sometimes not wider: refused.
            return "nnx-widen{layer=%s width=%d seed=%d}" % (
                path, out + int(rng.integers(-1, 6)),
                int(rng.integers(0, 1000)))
        if r < 8:
            # Full rank preserves; one more is refused.
            return "nnx-low-rank{layer=%s rank=%d}" % (
                path, min(out, inp) + int(rng.integers(0, 4) == 0))
        if r < 9 and out != inp:
            return "nnx-drop-layer{layer=%s}" % path
    return "nnx-deepen{after=%s}" % path


def ir_dump_after_failure(stderr):
    """The module printed by --mlir-print-ir-after-failure, or None."""
    m = re.search(r"// -----// IR Dump After .* Failed .*//----- //\n", stderr)
    return stderr[m.end():].strip() if m else None


PRINTED = {}


def printed(opt, path):
    """The IR of `path` as nnx-opt prints it (each file is written once,
    so it is printed once)."""
    if path not in PRINTED:
        PRINTED[path] = subprocess.run(
            [opt, path], check=True, stdout=subprocess.PIPE,
            text=True).stdout.strip()
    return PRINTED[path]


def try_edit(a, current, edit, nxt):
    """Runs `edit`; True if accepted. A refusal is checked: the pass names
    itself, nothing crashed, and the IR after the failed pass is
    byte-identical to the IR before."""
    p = subprocess.run(
        [a.opt, current,
         "--pass-pipeline=builtin.module(nnx.model(%s))" % edit,
         "--mlir-print-ir-after-failure", "--mlir-print-ir-module-scope",
         "--mlir-disable-threading", "-o", nxt],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 0:
        return True
    pass_name = edit.split("{")[0]
    assert "error: %s: " % pass_name in p.stderr, p.stderr
    assert "Assertion" not in p.stderr and "Stack dump" not in p.stderr, \
        p.stderr
    before = printed(a.opt, current)
    after = ir_dump_after_failure(p.stderr)
    assert after is not None, "no IR dump after the failure:\n" + p.stderr
    assert after == before, "%s changed the IR before refusing:\n%s" % (
        edit, p.stderr)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--nets", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--quiet", action="store_true",
                    help="print the totals only")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    accepted, refused = {}, {}
    checked = mixed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(a.nets):
            src = os.path.join(tmp, "net%d.mlir" % n)
            with open(src, "w") as f:
                f.write(nnxcheck.random_net(rng))
            current, edits = src, []
            for step in range(int(rng.integers(2, 6))):
                candidates = [s for s in sites(a.opt, current) if s[1] in (
                    "nnx.linear", "nnx.relu", "nnx.identity")]
                edit = choose_edit(rng, candidates)
                kind = edit.split("{")[0]
                nxt = os.path.join(tmp, "net%d_%d.mlir" % (n, step))
                if not try_edit(a, current, edit, nxt):
                    refused[kind] = refused.get(kind, 0) + 1
                    continue
                assert kind in PRESERVING, edit
                accepted[kind] = accepted.get(kind, 0) + 1
                # Dropping an identity from a positional sequential leaves
                # an identity in its slot (the keys stay): nothing changed.
                if printed(a.opt, nxt) == printed(a.opt, current):
                    assert kind == "nnx-drop-layer", edit
                    continue
                edits.append(edit)
                current = nxt
            if not edits:
                continue
            err = nnxcheck.check_preserved(
                a.opt, a.run, src, edits, seed=n,
                workdir=os.path.join(tmp), what="net %d" % n)
            checked += 1
            mixed += len({e.split("{")[0] for e in edits}) >= 2
            if not a.quiet:
                print("net %3d: %-100s max |diff| %.2g" % (
                    n, " ; ".join(edits), err))
    print("nets %d (seed %d), checked %d (%d mixing passes)" % (
        a.nets, a.seed, checked, mixed))
    for kind in PRESERVING:
        print("  %-15s accepted %4d, refused %4d" % (
            kind, accepted.get(kind, 0), refused.get(kind, 0)))
    # The generator must exercise every pass, accepting and refusing.
    for kind in PRESERVING:
        assert accepted.get(kind, 0) >= a.nets // 20, (kind, accepted)
        assert refused.get(kind, 0) >= max(1, a.nets // 60), (kind, refused)
    assert checked >= a.nets * 2 // 3, checked
    assert mixed >= a.nets // 6, mixed


if __name__ == "__main__":
    main()
