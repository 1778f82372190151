# Property test: many random nets (positional / named / nested sequentials,
# feed_fwd nets with per-layer overrides) and random widen/deepen sequences.
# Every accepted edit sequence must preserve the executed forward within
# atol = rtol = 1e-5; every refused edit must fail cleanly, naming the pass,
# and leave the model unchanged.
# RUN: %python %s --opt nnx-opt --run nnx-run --nets 60
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


def sites(opt, path):
    """(dotted path, op, out_features or None) of every module, in order."""
    table = subprocess.run([opt, path, "--nnx-param-count", "-o", os.devnull],
                           check=True, stdout=subprocess.PIPE,
                           text=True).stdout
    rows = []
    for line in table.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[1].startswith("nnx."):
            rows.append((parts[0], parts[1]))
    with open(path) as f:
        outs = [int(m.group(1)) for m in re.finditer(
            r"nnx\.linear @[^\n]*weight = dense<[^>]*> : tensor<(\d+)x\d+x",
            f.read())]
    linears = [r for r in rows if r[1] == "nnx.linear"]
    assert len(linears) == len(outs), (rows, outs)
    out_of = dict(zip((p for p, _ in linears), outs))
    return [(p, op, out_of.get(p)) for p, op in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--nets", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    accepted = refused = checked = mixed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(a.nets):
            src = os.path.join(tmp, "net%d.mlir" % n)
            with open(src, "w") as f:
                f.write(nnxcheck.random_net(rng))
            current, edits = src, []
            for step in range(int(rng.integers(2, 6))):
                candidates = [s for s in sites(a.opt, current)
                              if s[1] in ("nnx.linear", "nnx.relu")]
                path, op, out = candidates[rng.integers(0, len(candidates))]
                if op == "nnx.linear" and rng.integers(0, 4) != 0:
                    edit = "nnx-widen{layer=%s width=%d seed=%d}" % (
                        path, out + int(rng.integers(1, 6)),
                        int(rng.integers(0, 1000)))
                else:
                    edit = "nnx-deepen{after=%s}" % path
                nxt = os.path.join(tmp, "net%d_%d.mlir" % (n, step))
                p = subprocess.run(
                    [a.opt, current,
                     "--pass-pipeline=builtin.module(nnx.model(%s))" % edit,
                     "-o", nxt], stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    refused += 1
                    pass_name = edit.split("{")[0]
                    assert "error: %s: " % pass_name in p.stderr, p.stderr
                    assert "Assertion" not in p.stderr and \
                        "Stack dump" not in p.stderr, p.stderr
                    continue
                accepted += 1
                edits.append(edit)
                current = nxt
            if not edits:
                continue
            err = nnxcheck.check_preserved(
                a.opt, a.run, src, edits, seed=n,
                workdir=os.path.join(tmp), what="net %d" % n)
            checked += 1
            kinds = {e.split("{")[0] for e in edits}
            mixed += len(kinds) == 2
            print("net %2d: %-90s max |diff| %.2g" % (n, " ; ".join(edits),
                                                      err))
    print("accepted %d, refused %d, nets checked %d (%d mixing widen and "
          "deepen)" % (accepted, refused, checked, mixed))
    # The generator must exercise the edits for real.
    assert accepted >= 80, accepted
    assert refused >= 10, refused
    assert checked >= 40, checked
    assert mixed >= 10, mixed


if __name__ == "__main__":
    main()
