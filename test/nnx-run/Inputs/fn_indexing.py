"""Inputs and NumPy references for fn-indexing.mlir.

  fn_indexing.py make DIR B T     writes DIR/<input>_B_T.npy
  fn_indexing.py check DIR B T    compares DIR/<output>_B_T.npy with NumPy
  fn_indexing.py bad DIR B T      writes the out-of-range variants

Exact comparisons for everything but the float cumsum: the logical ops,
max/min (NaN where the slice has one), gather / index_select (copies), topk
(values bit for bit, positions exactly: torch's order, NaN largest, equal
values by ascending position) and the integer cumsum. The float cumsum is
accumulated in float32 in ascending order: against a float64 reference its
error is at most gamma(n) * cumsum(|y|) with gamma(n) = n u / (1 - n u),
u = 2^-24, n the number of terms.
"""
import os
import sys

import numpy as np

INPUTS = ["a", "b", "x", "idx", "sel", "y", "m"]
OUTPUTS = ["and", "or", "not", "amax", "amin", "imax", "gather", "rows",
           "cols", "topv", "topi", "lowv", "lowi", "csum", "icsum"]


def path(d, name, b, t):
    return os.path.join(d, "%s_%d_%d.npy" % (name, b, t))


def inputs(b, t):
    rng = np.random.default_rng(100 * b + t)
    x = rng.standard_normal((b, 8)).astype(np.float32)
    # Ties (equal values at several positions), NaN, +-inf, -0.0.
    x[0, :] = 1.0
    x[0, 5] = 2.0
    x[1, 2] = np.nan
    x[1, 6] = np.inf
    x[2, 3] = -np.inf
    x[2, 4] = -0.0
    x[2, 7] = x[2, 1]
    y = rng.standard_normal((t, b)).astype(np.float32) * 100
    y[1, 0] = np.nan
    y[:, 1] = 3.0
    return {
        "a": rng.random((b, 4)) < 0.5,
        "b": np.array([True, False, True, False]),
        "x": x,
        "idx": rng.integers(0, 8, (b, 3)).astype(np.int64),
        "sel": rng.integers(0, b, (t,)).astype(np.int32),
        "y": y,
        "m": rng.integers(-50, 50, (b, t)).astype(np.int64),
    }


def topk(v, k, axis, largest):
    """torch's order: NaN largest, then by value, equal values by position."""
    v = np.moveaxis(v, axis, -1)
    nan = np.isnan(v)
    key = np.where(nan, 0, v).astype(np.float64)
    out_v, out_i = [], []
    for row, row_key, row_nan in zip(v.reshape(-1, v.shape[-1]),
                                     key.reshape(-1, v.shape[-1]),
                                     nan.reshape(-1, v.shape[-1])):
        if largest:
            order = np.lexsort((-row_key, ~row_nan))
        else:
            order = np.lexsort((row_key, row_nan))
        out_v.append(row[order[:k]])
        out_i.append(order[:k])
    shape = v.shape[:-1] + (k,)
    return (np.moveaxis(np.array(out_v).reshape(shape), -1, axis),
            np.moveaxis(np.array(out_i, np.int64).reshape(shape), -1, axis))


def reference(i):
    a, b, x, y, m = i["a"], i["b"], i["x"], i["y"], i["m"]
    topv, topi = topk(x, 3, -1, True)
    lowv, lowi = topk(y, 2, 0, False)
    return {
        "and": a & b, "or": (a & b) | b, "not": ~a,
        "amax": np.max(x, axis=-1, keepdims=True),
        "amin": np.min(x, axis=0),
        "imax": np.array(np.max(m), np.int64),
        "gather": np.take_along_axis(x, i["idx"], axis=1),
        "rows": x[i["sel"]],
        "cols": x[:, i["idx"][0]],
        "topv": topv, "topi": topi, "lowv": lowv, "lowi": lowi,
        "icsum": np.cumsum(m, axis=-1),
    }


def same(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        sys.exit("%s: got %s %s, want %s %s" % (name, got.dtype, got.shape,
                                                 want.dtype, want.shape))
    if want.dtype.kind == "f":
        # Bit for bit, NaN where NaN (and -0.0 as -0.0).
        ok = np.array_equal(got.view(np.uint32), want.view(np.uint32)) or (
            np.array_equal(np.isnan(got), np.isnan(want)) and
            np.array_equal(got[~np.isnan(got)].view(np.uint32),
                           want[~np.isnan(want)].view(np.uint32)))
    else:
        ok = np.array_equal(got, want)
    if not ok:
        sys.exit("%s differs:\n%s\nwant\n%s" % (name, got, want))


def check_cumsum(got, y):
    want = np.cumsum(y.astype(np.float64), axis=1)
    u = 2.0 ** -24
    n = np.arange(1, y.shape[1] + 1)
    gamma = n * u / (1 - n * u)
    bound = gamma * np.cumsum(np.abs(y.astype(np.float64)), axis=1)
    nan = np.isnan(want)
    if not np.array_equal(np.isnan(got), nan):
        sys.exit("csum: NaN at other places")
    err = np.abs(got.astype(np.float64) - want)
    if np.any(err[~nan] > bound[~nan]):
        sys.exit("csum: error %g over the bound" % np.max(err - bound))


def main():
    mode, d, b, t = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    i = inputs(b, t)
    if mode == "make":
        os.makedirs(d, exist_ok=True)
        for name in INPUTS:
            np.save(path(d, name, b, t), i[name])
        return
    if mode == "bad":
        idx = i["idx"].copy()
        idx[b - 1, 2] = 8
        np.save(path(d, "idx8", b, t), idx)
        sel = i["sel"].copy()
        sel[t - 1] = -1
        np.save(path(d, "selneg", b, t), sel)
        return
    want = reference(i)
    for name in OUTPUTS:
        got = np.load(path(d, name, b, t))
        if name == "csum":
            check_cumsum(got, i["y"])
        else:
            same(name, got, want[name])
    print("ok %d %d" % (b, t))


if __name__ == "__main__":
    main()
