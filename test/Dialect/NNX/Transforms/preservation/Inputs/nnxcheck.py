"""Function preservation of surgery passes, measured by execution.

Runs a model and its edited form through `nnx-run` (the CPU JIT) on the same
random inputs and compares every output within atol = rtol = 1e-5, the seed's
tolerance (never relaxed). Also generates random nets for the property test.

CLI (one lit RUN line per check):
  nnxcheck.py --opt nnx-opt --run nnx-run MODEL.mlir \
      --edit "nnx-widen{layer=0 width=16 seed=3}" [--edit ...] \
      [--ids-below N] [--seed S] [--batch B] [--seq L]
Every --edit is a textual pass pipeline on nnx.model (one or more passes,
comma-separated), run as one nnx-opt invocation; edits apply in order.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np

ATOL = 1e-5
RTOL = 1e-5


def model_inputs(text):
    """The input types of the (first) nnx.model: [(shape tail, dtype)]."""
    m = re.search(r"nnx\.model @\S+ inputs\(([^)]*)\)", text)
    if not m:
        raise SystemExit("no nnx.model with inputs(...) found")
    types = re.findall(r"tensor<([^>]*)>", m.group(1))
    out = []
    for t in types:
        parts = t.split("x")
        dims, elt = parts[:-1], parts[-1]
        if not dims or dims[0] != "?":
            raise SystemExit("expected a dynamic batch dimension in " + t)
        out.append(([None if d == "?" else int(d) for d in dims[1:]], elt))
    return out


def make_inputs(text, rng, batch, ids_below, seq=None):
    """Random inputs; a dynamic dim after the batch (a sequence) is `seq`."""
    arrays = []
    for tail, elt in model_inputs(text):
        if None in tail and seq is None:
            raise SystemExit("a dynamic dim after the batch: pass --seq L")
        shape = [batch] + [seq if d is None else d for d in tail]
        if elt.startswith("i"):
            if ids_below is None:
                raise SystemExit("integer input: pass --ids-below N")
            arrays.append(rng.integers(0, ids_below, size=shape).astype(
                np.int64 if elt == "i64" else np.int32))
        elif elt in ("f32", "f64"):
            arrays.append((2.0 * rng.standard_normal(shape)).astype(
                np.float32 if elt == "f32" else np.float64))
        else:
            raise SystemExit("unsupported input element type " + elt)
    return arrays


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (
            p.returncode, " ".join(shlex.quote(c) for c in cmd), p.stdout,
            p.stderr))
    return p.stdout


def forward(nnx_run, model_path, inputs, workdir, tag):
    cmd = [nnx_run, model_path]
    for i, a in enumerate(inputs):
        path = os.path.join(workdir, "%s_in%d.npy" % (tag, i))
        np.save(path, a)
        cmd += ["--input", path]
    out = os.path.join(workdir, "%s_out.npy" % tag)
    cmd += ["--output", out]
    run(cmd)
    return np.load(out)


def apply_edits(nnx_opt, model_path, edits, workdir, tag="edited"):
    current = model_path
    for i, edit in enumerate(edits):
        nxt = os.path.join(workdir, "%s_%d.mlir" % (tag, i))
        run([nnx_opt, current,
             "--pass-pipeline=builtin.module(nnx.model(%s))" % edit, "-o",
             nxt])
        current = nxt
    return current


def check_preserved(nnx_opt, nnx_run, model_path, edits, seed=0, batch=7,
                    ids_below=None, workdir=None, what=None, seq=None):
    """Asserts that `edits` preserve the forward of `model_path`."""
    own = workdir is None
    if own:
        tmp = tempfile.TemporaryDirectory()
        workdir = tmp.name
    with open(model_path) as f:
        text = f.read()
    rng = np.random.default_rng(seed)
    inputs = make_inputs(text, rng, batch, ids_below, seq)
    before = forward(nnx_run, model_path, inputs, workdir, "before")
    edited = apply_edits(nnx_opt, model_path, edits, workdir)
    with open(edited) as f:
        edited_text = f.read()
    canonical = os.path.join(workdir, "canonical.mlir")
    run([nnx_opt, model_path, "-o", canonical])
    with open(canonical) as f:
        if f.read() == edited_text:
            raise AssertionError("the edits changed nothing: %s" % edits)
    after = forward(nnx_run, edited, inputs, workdir, "after")
    if before.shape != after.shape or before.dtype != after.dtype:
        raise AssertionError("output %s %s became %s %s" % (
            before.shape, before.dtype, after.shape, after.dtype))
    np.testing.assert_allclose(
        after, before, atol=ATOL, rtol=RTOL,
        err_msg="%s: %s changed the forward" % (what or model_path, edits))
    if own:
        tmp.cleanup()
    return np.abs(after - before).max()


#===----------------------------------------------------------------------===#
# Random nets for the property test
#===----------------------------------------------------------------------===#

ELEMENTWISE = ["relu", "relu", "relu", "tanh", "gelu", "sigmoid", "silu",
               "leaky_relu", "identity"]


def dense(rng, shape):
    """A dense literal of uniform(-1, 1) f32 values, on one line."""
    vals = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    def fmt(v):
        if v.ndim == 0:
            return "%.9g" % v
        return "[" + ", ".join(fmt(x) for x in v) + "]"

    return "dense<%s> : tensor<%sxf32>" % (fmt(vals),
                                          "x".join(map(str, shape)))


def linear(rng, key, n_in, n_out):
    s = "nnx.linear @%s {weight = %s" % (key, dense(rng, (n_out, n_in)))
    if rng.integers(0, 4) != 0:
        s += ", bias = %s" % dense(rng, (n_out,))
    return s + "}\n"


def chain(rng, positional, n_in, n_out, depth, prefix=""):
    body, cur, index = "", n_in, [0]

    def key(name):
        k = ('"%d"' % index[0]) if positional else "%s%s%d" % (prefix, name,
                                                               index[0])
        index[0] += 1
        return k

    for d in range(depth):
        nxt = n_out if d + 1 == depth else int(rng.integers(2, 7))
        body += linear(rng, key("fc"), cur, nxt)
        cur = nxt
        if d + 1 < depth:
            act = ELEMENTWISE[rng.integers(0, len(ELEMENTWISE))]
            body += "nnx.%s @%s\n" % (act, key("act"))
            if rng.integers(0, 4) == 0:
                body += "nnx.dropout @%s {p = 0.2 : f64}\n" % key("drop")
    return body


def random_net(rng):
    """A random nnx.model (positional / named / nested sequential, feed_fwd
    with per-layer overrides), eval mode throughout."""
    n_in, n_out = int(rng.integers(2, 6)), int(rng.integers(1, 5))
    head = "nnx.model @m inputs(tensor<?x%dxf32>) {\n" % n_in
    kind = int(rng.integers(0, 4))
    if kind == 0:
        return head + ("nnx.sequential @net keying = positional {\n" +
                       chain(rng, True, n_in, n_out, int(rng.integers(2, 5))) +
                       "}\n}\n")
    if kind == 1:
        return head + ("nnx.sequential @net keying = named {\n" +
                       chain(rng, False, n_in, n_out, int(rng.integers(2, 5))) +
                       "}\n}\n")
    if kind == 2:
        mid = int(rng.integers(2, 7))
        return head + (
            "nnx.sequential @net keying = named {\n"
            "nnx.sequential @body keying = positional {\n" +
            chain(rng, True, n_in, mid, int(rng.integers(2, 4))) + "}\n"
            "nnx.relu @act\n"
            "nnx.sequential @head keying = named {\n" +
            chain(rng, False, mid, n_out, int(rng.integers(1, 4)), "h") +
            "}\n}\n}\n")
    n = int(rng.integers(1, 4))
    hidden = [int(rng.integers(2, 7)) for _ in range(n)]
    acts = ["relu", "tanh", "gelu", "sigmoid"]
    attrs = "input_dim = %d, output_dim = %d, hidden_dims = array<i64: %s>" % (
        n_in, n_out, ", ".join(map(str, hidden)))
    attrs += ', activation = #nnx.activation<%s>' % acts[rng.integers(0, 2)]
    if rng.integers(0, 2):
        attrs += ", activations = [%s]" % ", ".join(
            '#nnx.activation<%s>' % acts[rng.integers(0, 4)] for _ in range(n))
    if rng.integers(0, 2):
        attrs += ", dropout = 0.3 : f64"
    if rng.integers(0, 2):
        attrs += ", dropout_probs = [%s]" % ", ".join(
            rng.choice(["0.1", "0.0"]) for _ in range(n))
    layers, cur = "", n_in
    for i in range(n + 1):
        nxt = n_out if i == n else hidden[i]
        layers += linear(rng, '"%d"' % i, cur, nxt)
        cur = nxt
    return head + ("nnx.feed_fwd @net attributes {%s} {\n"
                   "nnx.module_list @layers {\n%s}\n}\n}\n" % (attrs, layers))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("model")
    ap.add_argument("--opt", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--edit", action="append", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=7)
    ap.add_argument("--ids-below", type=int)
    ap.add_argument("--seq", type=int,
                    help="size of the dynamic dims after the batch")
    a = ap.parse_args(argv)
    err = check_preserved(a.opt, a.run, a.model, a.edit, seed=a.seed,
                          batch=a.batch, ids_below=a.ids_below, seq=a.seq)
    print("preserved: max |difference| = %.3g" % err)


if __name__ == "__main__":
    main(sys.argv[1:])
