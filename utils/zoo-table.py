#!/usr/bin/env python3
"""The zoo's table (docs/Python.md, "The model zoo") from a zoo run's
records: one JSON per model, as python/tests/test_zoo.py writes them to
$NNX_ZOO_RESULTS (``make test-zoo``: <build>/zoo).

    utils/zoo-table.py RESULTS_DIR                 # the table on stdout
    utils/zoo-table.py RESULTS_DIR --update docs/Python.md
    utils/zoo-table.py RESULTS_DIR --json all.json # the records, together
    utils/zoo-table.py RESULTS_DIR --note "..."    # a paragraph first

--update replaces the text between the markers BEGIN and END of the file.
A model's result: ``pass`` (``pass, f64`` where PyTorch's float32 missed
float64 by more than the contract and the 1.5x rule decided), ``xfail``
(a failure listed in python/tests/zoo/expected.py, at its stage) or
``FAIL``, with the stage and the first line of the error."""

import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))
from zoo.expected import EXPECTED  # noqa: E402

BEGIN = "<!-- zoo-table: begin (utils/zoo-table.py) -->"
END = "<!-- zoo-table: end -->"
COMPILE_LIMIT = 60


def load(results):
    recs = []
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        with open(path) as f:
            recs.append(json.load(f))
    return recs


def message(rec):
    """The error's line: the first MLIR diagnostic of the detail where the
    error itself is only "cannot parse <file>"."""
    error = rec.get("error") or "did not finish"
    if "cannot parse" in error:
        for line in rec.get("detail", "").splitlines():
            if "error: " in line:
                return line.split("error: ", 1)[1].strip()
    return error


def failure(rec):
    """(stage, message) or None, as test_zoo.verdict decides."""
    if rec.get("result") != "pass":
        return rec.get("stage", "?"), message(rec)
    secs = rec.get("seconds", {})
    secs = secs.get("compile_cpu", secs.get("compile", 0))
    if not rec.get("from_cache") and secs > COMPILE_LIMIT:
        return "compile-time", f"compiling took {secs:.0f} CPU s"
    return None


def result(rec):
    fail = failure(rec)
    if fail is None:
        if any(o.get("criterion") == "f64" for o in rec.get("outputs", [])):
            return "pass, f64"
        return "pass"
    exp = EXPECTED.get(rec["name"])
    tag = "xfail" if exp and exp.stage == fail[0] else "FAIL"
    return f"{tag}: {fail[0]}"


def note(rec):
    fail = failure(rec)
    if fail is not None:
        return fail[1].replace("|", "\\|")[:160]
    outs = rec.get("outputs", [])
    f64 = [o for o in outs if o.get("criterion") == "f64"]
    if f64:
        worst = max(f64, key=lambda o: o["nnx_vs_f64"] / o["torch_vs_f64"])
        return (f"from float64: nnx {worst['nnx_vs_f64']:.3g}, PyTorch "
                f"{worst['torch_vs_f64']:.3g} contracts")
    worst = max((o.get("nnx_vs_torch", 0) for o in outs), default=0)
    return f"{worst:.2g} of the contract from PyTorch"


def seconds(rec, key):
    v = rec.get("seconds", {}).get(key)
    return "" if v is None else f"{v:.1f}"


def compile_seconds(rec):
    """Wall seconds, and the CPU seconds where they differ by 10% (a
    loaded machine)."""
    wall = seconds(rec, "compile")
    cpu = rec.get("seconds", {}).get("compile_cpu")
    if wall and cpu is not None and abs(float(wall) - cpu) > 0.1 * cpu:
        return f"{wall} ({cpu:.1f} CPU)"
    return wall


def table(recs):
    lines = ["| Model | Input | Params (M) | Result | Export s | Compile s "
             "| Run s | Notes |",
             "|---|---|---:|---|---:|---:|---:|---|"]
    for rec in sorted(recs, key=lambda r: (not r.get("subset"), r["name"])):
        name = rec["name"] + (" *" if rec.get("subset") else "")
        params = rec.get("parameters")
        lines.append("| " + " | ".join([
            name, str(rec.get("size") or ""),
            "" if params is None else f"{params / 1e6:.1f}", result(rec),
            seconds(rec, "export"), compile_seconds(rec),
            seconds(rec, "run"), note(rec)]) + " |")
    counts = {}
    for rec in recs:
        key = result(rec).split(":")[0].split(",")[0]
        counts[key] = counts.get(key, 0) + 1
    stages = {}
    for rec in recs:
        fail = failure(rec)
        if fail:
            stages[fail[0]] = stages.get(fail[0], 0) + 1
    summary = (f"{len(recs)} models: " + ", ".join(
        f"{n} {k}" for k, n in sorted(counts.items())))
    if stages:
        summary += "; failing at " + ", ".join(
            f"{k} {n}" for k, n in sorted(stages.items()))
    def cpu(r):
        secs = r.get("seconds", {})
        return secs.get("compile_cpu", secs.get("compile", 0))
    slowest = max(recs, key=cpu, default=None)
    if slowest and cpu(slowest):
        summary += (f"; the slowest compile: {slowest['name']}, "
                    f"{cpu(slowest):.1f} CPU s")
    return summary + ".\n\n" + "\n".join(lines) + "\n"


def update(doc, text):
    with open(doc) as f:
        old = f.read()
    if BEGIN not in old or END not in old:
        raise SystemExit(f"{doc}: no '{BEGIN}' ... '{END}' markers")
    head, rest = old.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(doc, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="the directory of the run's records")
    ap.add_argument("--update", metavar="DOC",
                    help="rewrite the table between the markers of DOC")
    ap.add_argument("--note", default="",
                    help="a paragraph to put before the table (the run's "
                         "circumstances)")
    ap.add_argument("--json", metavar="PATH",
                    help="also write every record to PATH (one JSON list)")
    args = ap.parse_args()
    recs = load(args.results)
    if not recs:
        raise SystemExit(f"{args.results}: no records")
    text = table(recs)
    if args.note:
        text = args.note.strip() + "\n\n" + text
    if args.json:
        with open(args.json, "w") as f:
            json.dump(recs, f, indent=1)
    if args.update:
        update(args.update, text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
