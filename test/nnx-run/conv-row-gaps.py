# Convolutions by the phases at unit column stride, whose phase rows share
# their zero columns (ConvToMatmuls.cpp, phaseGeometry: one row's right
# padding is the next row's left padding, Wq = max(W + max(low, high), OW,
# (kw - 1) d)). Forward-level modules (a zero tensor.pad, then
# linalg.conv_2d_nchw_fchw; the weight an input) at the geometry's edges,
# checked against a float64 NumPy conv at atol = rtol = 1e-5:
# - padding on the left only, on the right only (more than the left);
# - a 5 x 5 kernel on images 1 and 2 pixels wide, where the last tap's
#   window reach, (kw - 1) d = 4, is more than W + max(low, high);
# - padding larger than the kernel's reach (OW > W + max(low, high));
# - a dilated kernel, and a row stride of 2 with a column stride of 1;
# - a 1 x 3 kernel (column taps only) and a 3 x 1 one (row taps only).
# RUN: %python %s %nnx_bin/bin/nnx-run %nnx_src/python %t | FileCheck %s
# CHECK: left_only: (2, 5, 6, 7) matches
# CHECK: right_only: (2, 5, 6, 7) matches
# CHECK: k5_w1: (2, 4, 6, 1) matches
# CHECK: k5_w2: (1, 4, 4, 2) matches
# CHECK: pad3_k3: (2, 4, 9, 8) matches
# CHECK: dilated: (1, 4, 9, 8) matches
# CHECK: rows_s2: (2, 4, 5, 8) matches
# CHECK: k1x3: (1, 4, 4, 6) matches
# CHECK: k3x1: (1, 4, 4, 6) matches
import os
import subprocess
import sys

import numpy as np

NNX_RUN, PYTHON_DIR, TMP = sys.argv[1:4]
sys.path.insert(0, PYTHON_DIR)
from nnx import testing  # noqa: E402

# name: (N, C, H, W), (F, kh, kw), low (rows, cols), high, strides, dilations
CASES = {
    "left_only": ((2, 3, 6, 7), (5, 3, 3), (1, 2), (1, 0), (1, 1), (1, 1)),
    "right_only": ((2, 3, 6, 7), (5, 3, 3), (1, 0), (1, 2), (1, 1), (1, 1)),
    "k5_w1": ((2, 3, 6, 1), (4, 5, 5), (2, 2), (2, 2), (1, 1), (1, 1)),
    "k5_w2": ((1, 3, 4, 2), (4, 5, 5), (2, 2), (2, 2), (1, 1), (1, 1)),
    "pad3_k3": ((2, 3, 5, 4), (4, 3, 3), (3, 3), (3, 3), (1, 1), (1, 1)),
    "dilated": ((1, 3, 9, 8), (4, 3, 3), (2, 2), (2, 2), (1, 1), (2, 2)),
    "rows_s2": ((2, 3, 9, 8), (4, 3, 3), (1, 1), (1, 1), (2, 1), (1, 1)),
    "k1x3": ((1, 3, 4, 6), (4, 1, 3), (0, 1), (0, 1), (1, 1), (1, 1)),
    "k3x1": ((1, 3, 4, 6), (4, 3, 1), (1, 0), (1, 0), (1, 1), (1, 1)),
}


def tensor(shape):
    return "tensor<%sxf32>" % "x".join(map(str, shape))


def out_size(size, low, high, k, s, d):
    return (size + low + high - d * (k - 1) - 1) // s + 1


def module(x_shape, w_shape, out_shape, low, high, strides, dilations):
    n, c, h, w = x_shape
    padded = (n, c, h + low[0] + high[0], w + low[1] + high[1])
    x, wt, p, o = (tensor(s) for s in (x_shape, w_shape, padded, out_shape))
    return f"""func.func @forward(%x: {x}, %w: {wt}) -> {o} {{
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, {low[0]}, {low[1]}] high[0, 0, {high[0]}, {high[1]}] {{
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  }} : {x} to {p}
  %e = tensor.empty() : {o}
  %z = linalg.fill ins(%zero : f32) outs(%e : {o}) -> {o}
  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}}
         ins(%p, %w : {p}, {wt}) outs(%z : {o}) -> {o}
  return %r : {o}
}}
"""


def reference(x, w, out_shape, low, high, strides, dilations):
    """The conv in float64, tap by tap."""
    xp = np.pad(x.astype(np.float64),
                ((0, 0), (0, 0), (low[0], high[0]), (low[1], high[1])))
    out = np.zeros(out_shape)
    oh, ow = out_shape[2:]
    for a in range(w.shape[2]):
        for b in range(w.shape[3]):
            r0, c0 = a * dilations[0], b * dilations[1]
            window = xp[:, :, r0:r0 + strides[0] * (oh - 1) + 1:strides[0],
                        c0:c0 + strides[1] * (ow - 1) + 1:strides[1]]
            out += np.einsum("ncij,fc->nfij", window, w[:, :, a, b])
    return out


os.makedirs(TMP, exist_ok=True)
rng = np.random.default_rng(0)
for name, (xs, (f, kh, kw), low, high, strides, dils) in CASES.items():
    ws = (f, xs[1], kh, kw)
    out_shape = (xs[0], f,
                 out_size(xs[2], low[0], high[0], kh, strides[0], dils[0]),
                 out_size(xs[3], low[1], high[1], kw, strides[1], dils[1]))
    path = os.path.join(TMP, name + ".mlir")
    with open(path, "w") as fh:
        fh.write(module(xs, ws, out_shape, low, high, strides, dils))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    files = [os.path.join(TMP, f"{name}_{s}.npy") for s in ("x", "w", "y")]
    np.save(files[0], x)
    np.save(files[1], w)
    proc = subprocess.run([NNX_RUN, path, "--input", files[0], "--input",
                           files[1], "--output", files[2]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = np.load(files[2])
    want = reference(x, w, out_shape, low, high, strides, dils)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, **testing.CONTRACT, err_msg=name)
    print(f"{name}: {got.shape} matches")
