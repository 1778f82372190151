"""Inputs and float64 references for math-ops.mlir.

  math_ops.py make DIR     writes DIR/x.npy (float32) and DIR/i.npy (int32)
  math_ops.py check DIR    compares DIR/<op>.npy with the references

x covers [-10, 10] densely (the whole range where erf is not +-1 in f32, and
where log1p / expm1 are defined and finite) plus the special values: +-0,
halves (the rounding ties), tiny values, the overflow of expm1, +-inf, NaN.
floor, ceil, round (ties away from zero), roundeven and absi must be exact;
erf, log1p and expm1 within 2 ulp of the float64 value (the f32 spacing at
the reference), and for erf also within 1.2e-7 absolute; non-finite values
exactly where the reference rounded to f32 has them.
"""
import math
import os
import sys

import numpy as np

OPS = ["erf", "floor", "ceil", "log1p", "expm1", "round", "roundeven", "absi"]


def inputs():
    special = [-0.0, 0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-8, -1e-8, 1e-30,
               -1e-30, 3.0, 3.9, 4.0, -0.9999999, -1.0, 80.0, 88.0, 89.0,
               -89.0, np.inf, -np.inf, np.nan]
    x = np.concatenate([np.linspace(-10, 10, 400001), special])
    i = np.array([0, -1, 1, 5, -77, -2147483647, 2147483647, -2147483648],
                 np.int32)
    return x.astype(np.float32), i


def scalar(fn):
    def apply(v):
        try:
            return fn(v)
        except (OverflowError, ValueError):
            return math.inf if v > 0 else math.nan
    return np.vectorize(apply, otypes=[np.float64])


def references(x, i):
    d = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return {
            "erf": scalar(math.erf)(d),
            "floor": np.floor(d), "ceil": np.ceil(d),
            "log1p": np.where(d >= -1, np.log1p(np.maximum(d, -1)), np.nan),
            "expm1": scalar(math.expm1)(d),
            "round": np.copysign(np.floor(np.abs(d) + 0.5), d),
            "roundeven": np.round(d),
            "absi": np.abs(i.astype(np.int64)).astype(np.int32),
        }


def check(name, got, want):
    if name == "absi" or name in ("floor", "ceil", "round", "roundeven"):
        w = want.astype(got.dtype)
        ok = np.array_equal(got, w, equal_nan=got.dtype.kind == "f")
        if got.dtype.kind == "f":
            # -0.0 where the reference has it.
            ok = ok and np.array_equal(np.signbit(got), np.signbit(w))
        return "" if ok else "not exact"
    with np.errstate(over="ignore"):
        w32 = want.astype(np.float32)
    finite = np.isfinite(w32)
    if not np.array_equal(finite, np.isfinite(got)) or not np.array_equal(
            np.isnan(w32), np.isnan(got)) or not np.array_equal(
            got[np.isinf(w32)], w32[np.isinf(w32)]):
        return "non-finite values differ"
    err = np.abs(got[finite].astype(np.float64) - want[finite])
    ulp = np.spacing(np.abs(w32[finite])).astype(np.float64)
    if np.any(err > 2 * ulp):
        return "error %.3g ulp" % np.max(err / ulp)
    if name == "erf" and err.max() > 1.2e-7:
        return "error %.3g absolute" % err.max()
    return ""


def main():
    mode, d = sys.argv[1], sys.argv[2]
    x, i = inputs()
    if mode == "make":
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "i.npy"), i)
        return
    bad = []
    for name, want in references(x, i).items():
        why = check(name, np.load(os.path.join(d, name + ".npy")), want)
        if why:
            bad.append("%s: %s" % (name, why))
    print("\n".join(bad) if bad else "ok")


if __name__ == "__main__":
    main()
