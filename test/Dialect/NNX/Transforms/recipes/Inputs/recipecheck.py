"""Recipes and LoRA, measured by execution through nnx-run (the CPU JIT).

One subcommand per check (one lit RUN line each); every comparison is at
atol = rtol = 1e-5 (never relaxed) or bit for bit where the check says so.

  recipecheck.py --opt nnx-opt --run nnx-run zero MODEL
      record-base + materialize a LoRA recipe: B = 0, output == base output.
  recipecheck.py ... merge --dtype f32|f16 [--torch]
      an nnx.lora with non-zero adapters: merged vs unmerged outputs, the
      merged weight vs the once-rounded double result, and (--torch)
      PyTorch's base(x) + scaling * B(A(x)).
  recipecheck.py ... rebuild MODEL
      materialize, save (text and bytecode), nnx-rebuild: the rebuilt IR
      equals the saved IR and its outputs are bit-identical.
  recipecheck.py ... lowrank MODEL --target T --rank K
      low_rank through a recipe == nnx-low-rank's result, bit for bit.
"""
import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ATOL = 1e-5
RTOL = 1e-5


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (
            p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


class Tools:
    def __init__(self, opt, nnx_run, workdir):
        self.opt, self.nnx_run, self.workdir = opt, nnx_run, workdir
        self.count = 0

    def path(self, tag, ext="mlir"):
        self.count += 1
        return os.path.join(self.workdir, "%02d_%s.%s" % (self.count, tag, ext))

    def opt_to(self, src, args, tag, extra=()):
        out = self.path(tag)
        run([self.opt, src] + list(args) + ["-o", out] + list(extra))
        return out

    def forward(self, model, x, name=None):
        xin = self.path("x", "npy")
        np.save(xin, x)
        out = self.path("y", "npy")
        cmd = [self.nnx_run, model, "--input", xin, "--output", out]
        if name:
            cmd += ["--model", name]
        run(cmd)
        return np.load(out)


def read(path):
    with open(path) as f:
        return f.read()


def in_features(text):
    m = re.search(r"nnx\.model @\S+ inputs\(tensor<\?x(\d+)x(f\d+)>", text)
    return int(m.group(1)), m.group(2)


def check_zero(t, model, rng):
    n, _ = in_features(read(model))
    x = (2.0 * rng.standard_normal((7, n))).astype(np.float32)
    base = t.forward(model, x)
    lora = t.opt_to(model, ["--nnx-record-base", "--nnx-materialize-recipe"],
                    "lora")
    if "nnx.lora" not in read(lora):
        raise AssertionError("the recipe put no nnx.lora into the model")
    y = t.forward(lora, x)
    if not np.array_equal(y, base):
        raise AssertionError("B = 0 changed the output: max |diff| %g" %
                             np.abs(y - base).max())
    print("zero: LoRA with B = 0 equals the base output bit for bit "
          "(%d values)" % base.size)


def dense(a, elt):
    body = np.array2string(np.asarray(a, np.float64), separator=", ",
                           threshold=1 << 30, floatmode="unique",
                           max_line_width=1 << 30)
    shape = "x".join(str(d) for d in a.shape)
    return "dense<%s> : tensor<%sx%s>" % (body, shape, elt)


def lora_model(w, b, a, bb, alpha, elt):
    out, n = w.shape
    return """nnx.model @lora inputs(tensor<?x%dx%s>) {
  nnx.sequential @net keying = named {
    nnx.lora @fc {alpha = %r : f64, weight = %s, bias = %s, lora_A = %s, lora_B = %s}
  }
}
""" % (n, elt, float(alpha), dense(w, elt), dense(b, elt), dense(a, elt),
       dense(bb, elt))


def merge_values(rng, dtype, out, n, r, uniform):
    if dtype == "f32" or uniform:
        np_t = np.float32 if dtype == "f32" else np.float16
        draw = lambda *s: rng.uniform(-1, 1, s).astype(np_t)
        return draw(out, n), draw(out), draw(r, n), draw(out, r), 3.0
    if dtype == "f32":
        draw = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)
        return draw(out, n), draw(out), draw(r, n), draw(out, r), 3.0
    # f16: multiples of 1/16 below 1/4 in magnitude, so every product and sum
    # of both forwards is exact in f16 and merged == unmerged is decidable.
    draw = lambda *s: (rng.integers(-4, 5, s) / 16.0).astype(np.float16)
    return draw(out, n), draw(out), draw(r, n), draw(out, r), 2.0 * r


def check_merge(t, dtype, use_torch, uniform, rng):
    out, n, r = 5, 4, 2
    np_t = np.float32 if dtype == "f32" else np.float16
    w, b, a, bb, alpha = merge_values(rng, dtype, out, n, r, uniform)
    model = t.path("lora_" + dtype)
    with open(model, "w") as f:
        f.write(lora_model(w, b, a, bb, alpha, dtype))
    if dtype == "f32" or uniform:
        x = rng.uniform(-2, 2, (6, n)).astype(np_t)
    else:
        x = (rng.integers(-2, 3, (6, n)) / 4.0).astype(np_t)
    unmerged = t.forward(model, x)
    merged_model = t.opt_to(model, ["--nnx-lora-merge"], "merged")
    merged = t.forward(merged_model, x)
    diff = np.abs(merged.astype(np.float64) - unmerged.astype(np.float64))
    print("merge %s%s: merged vs unmerged max |diff| %.3g" % (
        dtype, " (uniform values)" if uniform else "", diff.max()))
    if not (dtype == "f16" and uniform):
        # f16 outputs of arbitrary values are themselves rounded to ~1e-3:
        # there only the once-rounded merged weight is asserted.
        np.testing.assert_allclose(merged, unmerged, atol=ATOL, rtol=RTOL)
    # The merged weight is W + s B A in double, rounded once.
    s = alpha / r
    exact = (w.astype(np.float64) + s * bb.astype(np.float64) @
             a.astype(np.float64)).astype(np_t)
    got = np.array(tensor_literal(read(merged_model), "weight"), np_t)
    if not np.array_equal(got, exact):
        raise AssertionError("merged weight is not W + sBA rounded once:\n%s\n%s"
                             % (got, exact))
    print("merge %s: merged weight == double W + s*B@A rounded once" % dtype)
    back = t.forward(t.opt_to(merged_model, ["--nnx-lora-unmerge"],
                              "unmerged"), x)
    if not (dtype == "f16" and uniform):
        np.testing.assert_allclose(back, unmerged, atol=ATOL, rtol=RTOL)
    if use_torch:
        check_torch(w, b, a, bb, s, x, unmerged)


def tensor_literal(text, name):
    """The values of the dense literal `name = dense<[...]>` in `text`."""
    m = re.search(r"\b%s = dense<(\[.*?\]\])>" % name, text)
    if not m:
        raise AssertionError("no dense literal '%s' in:\n%s" % (name, text))
    return ast.literal_eval(m.group(1))


def check_torch(w, b, a, bb, s, x, y):
    import torch
    base = torch.nn.Linear(w.shape[1], w.shape[0])
    lin_a = torch.nn.Linear(w.shape[1], a.shape[0], bias=False)
    lin_b = torch.nn.Linear(a.shape[0], w.shape[0], bias=False)
    with torch.no_grad():
        base.weight.copy_(torch.from_numpy(w))
        base.bias.copy_(torch.from_numpy(b))
        lin_a.weight.copy_(torch.from_numpy(a))
        lin_b.weight.copy_(torch.from_numpy(bb))
        xt = torch.from_numpy(x)
        ref = (base(xt) + s * lin_b(lin_a(xt))).numpy()
    np.testing.assert_allclose(y, ref, atol=ATOL, rtol=RTOL)
    print("torch: base(x) + scaling * B(A(x)) agrees, max |diff| %.3g" %
          np.abs(y.astype(np.float64) - ref).max())


def check_rebuild(t, model, rng):
    n, _ = in_features(read(model))
    x = (2.0 * rng.standard_normal((7, n))).astype(np.float32)
    saved = t.opt_to(model, ["--nnx-record-base", "--nnx-materialize-recipe"],
                     "saved")
    for form, flags in (("text", []), ("bytecode", ["--emit-bytecode"])):
        stored = t.opt_to(saved, flags, "stored_" + form)
        rebuilt = t.opt_to(stored, ["--nnx-rebuild"], "rebuilt_" + form)
        if read(rebuilt) != read(saved):
            raise AssertionError("%s: the rebuilt IR differs from the saved "
                                 "IR (%s vs %s)" % (form, rebuilt, saved))
        y0, y1 = t.forward(saved, x), t.forward(rebuilt, x)
        if not np.array_equal(y0, y1):
            raise AssertionError("%s: rebuilt outputs differ" % form)
        print("rebuild %s: IR identical, outputs bit-identical (%d values)" %
              (form, y0.size))


def check_lowrank(t, model, target, rank, rng):
    text = read(model)
    n, _ = in_features(text)
    x = (2.0 * rng.standard_normal((7, n))).astype(np.float32)
    direct = t.opt_to(model, ["--nnx-low-rank=layer=%s rank=%d" %
                              (target, rank)], "direct")
    recipe = ('#nnx.recipe<materialization = in_place, materialized = 0, '
              'operations = [#nnx.recipe_op<id = "low_rank", version = 1, '
              'targets = ["%s"], config = {rank = %d : i64}>]>' %
              (target, rank))
    with_recipe = t.path("with_recipe")
    with open(with_recipe, "w") as f:
        f.write(re.sub(r"(nnx\.model @\S+ inputs\([^)]*\))",
                       r"\1 attributes {nnx.recipe = %s}" % recipe, text,
                       count=1))
    via = t.opt_to(with_recipe,
                   ["--nnx-record-base", "--nnx-materialize-recipe"], "via")
    y0, y1 = t.forward(direct, x), t.forward(via, x)
    if not np.array_equal(y0, y1):
        raise AssertionError("low_rank via a recipe differs from nnx-low-rank:"
                             " max |diff| %g" % np.abs(y0 - y1).max())
    print("lowrank: recipe == nnx-low-rank bit for bit (%d values)" % y0.size)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--opt", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("check", choices=["zero", "merge", "rebuild", "lowrank"])
    p.add_argument("model", nargs="?")
    p.add_argument("--dtype", default="f32")
    p.add_argument("--torch", action="store_true")
    p.add_argument("--uniform", action="store_true",
                   help="merge: arbitrary values (f16: the weight is checked)")
    p.add_argument("--target")
    p.add_argument("--rank", type=int)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        t = Tools(args.opt, args.run, d)
        if args.check == "zero":
            check_zero(t, args.model, rng)
        elif args.check == "merge":
            check_merge(t, args.dtype, args.torch, args.uniform, rng)
        elif args.check == "rebuild":
            check_rebuild(t, args.model, rng)
        else:
            check_lowrank(t, args.model, args.target, args.rank, rng)


if __name__ == "__main__":
    sys.exit(main())
