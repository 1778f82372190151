"""Inputs and NumPy references for the nnx.fn execution tests.

  fn_ops.py make DIR B T        writes DIR/x_B_T.npy (float32, B x T x 8)
  fn_ops.py check DIR B T       compares DIR/<output>_B_T.npy with NumPy
  fn_ops.py check-reshape DIR B T   the same for fn-reshape-dynamic.mlir

The weights of the models are W(shape, seed) below, written out in the .mlir
files. Every output must match at rtol = atol = 1e-5, masks exactly, and the
-inf entries of the masked scores must be exactly -inf.
"""
import os
import sys

import numpy as np


def W(shape, seed):
    """Small multiples of 1/16, exact in float32."""
    v = seed
    for k, i in enumerate(np.indices(shape)):
        v = v + i * (5 + 2 * k)
    return ((v % 13) - 6) / 16.0


def path(d, name, b, t):
    return os.path.join(d, "%s_%d_%d.npy" % (name, b, t))


def make(d, b, t):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(1000 * b + t)
    np.save(path(d, "x", b, t), rng.standard_normal((b, t, 8)).astype(np.float32))


def softmax(s, axis):
    m = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def reference(x):
    """The forward of fn-ops.mlir in float64."""
    b, t, _ = x.shape
    q = x @ W((8, 8), 1).T + W((8,), 2)
    k = x @ W((4, 8), 3).T
    v = x @ W((4, 8), 4).T
    qp = q.reshape(b, t, 2, 4).transpose(0, 2, 1, 3)
    kr = np.broadcast_to(k.reshape(b, 1, 1, t, 4), (b, 1, 2, t, 4)).reshape(b, 2, t, 4)
    vp = v.reshape(b, t, 1, 4).transpose(0, 2, 1, 3)
    s = (qp @ kr.transpose(0, 1, 3, 2)) * 0.5
    ar = np.arange(t)
    allowed = ar[None, :] <= ar[:, None]
    masked = np.where(allowed[None, None], s, -np.inf)
    triu = np.triu(np.full((t, t), -np.inf), 1)
    p = softmax(masked, -1)
    p1 = softmax(masked.transpose(0, 3, 2, 1), 1)
    ctx = p @ vp
    cm = ctx.transpose(0, 2, 1, 3).reshape(b, t, 8)
    h = x + cm @ W((8, 8), 5).T
    dc = h - h.mean(-1, keepdims=True)
    n = dc / np.sqrt((dc ** 2).mean(2, keepdims=True) + 1e-5)
    g = 0.5 * n * (1 + np.tanh(np.sqrt(2 / np.pi) * (n + 0.044715 * n ** 3)))
    si = n / (1 + np.exp(-n))
    gs = np.maximum(g, si)
    cat = np.concatenate([x, gs], axis=2)
    return {
        "same": np.ones((t, t), bool),
        "masked": masked,
        "masked2": s + triu,
        "p": p,
        "p1": p1,
        "tail": cat[:, 1:, :],
        "last": cat[:, t - 1, :],
        "tot": cat[:, 1:, :].sum(1),
        "proj": ctx @ W((1, 2, 4, 3), 6),
        "pos": x > 0,
    }


def reference_reshape(x):
    """The forward of fn-reshape-dynamic.mlir in float64."""
    b, t, _ = x.shape
    w = W((8, 8), 1)
    y = (x.reshape(b * t, 8) @ w.T).reshape(b, t, 8)
    y = y.reshape(b, t, 2, 4).transpose(0, 2, 1, 3).reshape(b, 2, t * 4)
    y = y.reshape(b, 2, t, 4).transpose(0, 2, 1, 3).reshape(b, t, 8)
    return {"y": y @ W((8, 8), 5).T, "flat": x.reshape(b * t * 8)}


def compare(name, got, want):
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if want.dtype == bool:
        assert got.dtype == np.bool_ and (got == want).all(), (name, got, want)
        return
    assert got.dtype == np.float32, (name, got.dtype)
    ninf = np.isneginf(want)
    assert (np.isneginf(got) == ninf).all(), (name, "-inf entries differ", got)
    ok = np.isclose(got[~ninf], want[~ninf], rtol=1e-5, atol=1e-5)
    assert ok.all(), (name, np.abs(got[~ninf] - want[~ninf]).max())


def check(d, b, t, ref):
    x = np.load(path(d, "x", b, t)).astype(np.float64)
    for name, want in ref(x).items():
        compare(name, np.load(path(d, name, b, t)), want)
    print("ok", b, t)


if __name__ == "__main__":
    cmd, d, b, t = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if cmd == "make":
        make(d, b, t)
    else:
        check(d, b, t, reference if cmd == "check" else reference_reshape)
