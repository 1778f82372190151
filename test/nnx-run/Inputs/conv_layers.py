"""The model and the float64 NumPy reference of nnx-run/conv-layers.test.

  conv_layers.py model DIR [NET]        writes DIR/NET.mlir (seeded weights)
  conv_layers.py make DIR N H W         writes DIR/x_N_H_W.npy (float32)
  conv_layers.py check DIR N H W [NET]  compares DIR/y_N_H_W.npy (NET
                                        "conv"), DIR/NET_N_H_W.npy else

NET "conv" (the default): conv2d 3->4 (3x3, padding 1, bias), batch_norm in eval mode with
non-trivial statistics, relu, a depthwise conv2d (groups 4, 3x3, stride 2,
padding 1), conv2d 4->2 (3x2, stride (2, 1), padding (0, 1), dilation
(2, 1), no bias). NETs "stem", "down", "dil", "row" and "even": one
groups-1 conv each, of the geometries the CPU schedule's tap matmuls must
get right (nnx-run/conv-geometry.test). The reference computes each convolution directly in
float64. Tolerance: each output is a chain of sums of at most L terms
(L = the reduction lengths k*k*C of the layers added up, plus the few
roundings of the norm); float32 rounding errs by at most ~L * eps32 times the
sum of the terms' magnitudes, which the same net on |x| with |weights|
(relu as identity, the norm's affine map as |alpha| x + |beta|) computes.
"""
import os
import sys

import numpy as np

EPS_BN = 1e-5
NETS = {
    "conv": [
        # name, in, out, kernel, stride, padding, dilation, groups, bias
        ("c1", 3, 4, (3, 3), (1, 1), (1, 1), (1, 1), 1, True),
        ("dw", 4, 4, (3, 3), (2, 2), (1, 1), (1, 1), 4, True),
        ("c2", 4, 2, (3, 2), (2, 1), (0, 1), (2, 1), 1, False),
    ],
    # One conv each (a chain would make the bound below meaningless).
    "stem": [("stem", 3, 8, (7, 7), (2, 2), (3, 3), (1, 1), 1, True)],
    "down": [("down", 3, 8, (1, 1), (2, 2), (0, 0), (1, 1), 1, False)],
    "dil": [("dil", 3, 6, (3, 3), (1, 1), (2, 2), (2, 2), 1, True)],
    "row": [("row", 3, 5, (1, 5), (1, 3), (0, 2), (1, 1), 1, True)],
    "even": [("even", 3, 4, (4, 4), (3, 3), (1, 1), (1, 2), 1, False)],
}
LAYERS = NETS["conv"]


def weights(net="conv"):
    rng = np.random.default_rng(7)
    w = {}
    for name, cin, cout, k, _, _, _, g, bias in NETS[net]:
        w[name] = rng.standard_normal((cout, cin // g) + k).astype(np.float32)
        if bias:
            w[name + ".b"] = rng.standard_normal(cout).astype(np.float32)
    w["bn.mean"] = rng.standard_normal(4).astype(np.float32)
    w["bn.var"] = (rng.random(4) + 0.5).astype(np.float32)
    w["bn.w"] = rng.standard_normal(4).astype(np.float32)
    w["bn.b"] = rng.standard_normal(4).astype(np.float32)
    return w


def dense(a):
    """An exact MLIR literal of float32 array `a`."""
    def rec(x):
        if x.ndim == 0:
            return repr(float(x))
        return "[" + ", ".join(rec(y) for y in x) + "]"
    shape = "x".join(str(d) for d in a.shape)
    return "dense<%s> : tensor<%sxf32>" % (rec(a), shape)


def arr(v):
    return "array<i64: %d, %d>" % v


def model(d, net_name):
    os.makedirs(d, exist_ok=True)
    w = weights(net_name)
    lines = ["nnx.model @convnet inputs(tensor<?x3x?x?xf32>) {",
             "  nnx.sequential @net keying = named {"]

    def conv(spec):
        name, cin, cout, k, s, p, dl, g, bias = spec
        b = ", bias = " + dense(w[name + ".b"]) if bias else ""
        return ("    nnx.conv2d @%s {in_channels = %d : i64, out_channels = %d "
                ": i64, kernel_size = %s, stride = %s, padding = %s, dilation "
                "= %s, groups = %d : i64, weight = %s%s}"
                % (name, cin, cout, arr(k), arr(s), arr(p), arr(dl), g,
                   dense(w[name]), b))
    if net_name == "conv":
        lines.append(conv(LAYERS[0]))
        lines.append("    nnx.batch_norm @bn {running_mean = %s, running_var = "
                     "%s, weight = %s, bias = %s}"
                     % (dense(w["bn.mean"]), dense(w["bn.var"]),
                        dense(w["bn.w"]), dense(w["bn.b"])))
        lines.append("    nnx.relu @act")
        lines += [conv(spec) for spec in LAYERS[1:]]
    else:
        lines += [conv(spec) for spec in NETS[net_name]]
    lines += ["  }", "}"]
    with open(os.path.join(d, net_name + ".mlir"), "w") as f:
        f.write("\n".join(lines) + "\n")


def conv2d(x, w, b, s, p, dl, g):
    """Direct convolution in float64 (PyTorch's Conv2d, zero padding)."""
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * p[0], wd + 2 * p[1]))
    xp[:, :, p[0]:p[0] + h, p[1]:p[1] + wd] = x
    ho = (h + 2 * p[0] - dl[0] * (kh - 1) - 1) // s[0] + 1
    wo = (wd + 2 * p[1] - dl[1] * (kw - 1) - 1) // s[1] + 1
    y = np.zeros((n, cout, ho, wo))
    per = cout // g
    for o in range(cout):
        grp = o // per
        for i in range(cg):
            for a in range(kh):
                for bb in range(kw):
                    r0, c0 = a * dl[0], bb * dl[1]
                    patch = xp[:, grp * cg + i,
                               r0:r0 + s[0] * (ho - 1) + 1:s[0],
                               c0:c0 + s[1] * (wo - 1) + 1:s[1]]
                    y[:, o] += w[o, i, a, bb] * patch
        if b is not None:
            y[:, o] += b[o]
    return y


def net(x, w, absolute, net_name="conv"):
    f = np.abs if absolute else (lambda v: v)
    x = f(x.astype(np.float64))

    def c(spec, x):
        name, _, _, _, s, p, dl, g, bias = spec
        wt = f(w[name].astype(np.float64))
        b = f(w[name + ".b"].astype(np.float64)) if bias else None
        return conv2d(x, wt, b, s, p, dl, g)
    if net_name != "conv":
        for spec in NETS[net_name]:
            x = c(spec, x)
        return x
    x = c(LAYERS[0], x)
    alpha = w["bn.w"] / np.sqrt(w["bn.var"].astype(np.float64) + EPS_BN)
    beta = w["bn.b"] - w["bn.mean"] * alpha
    x = x * f(alpha)[None, :, None, None] + f(beta)[None, :, None, None]
    if not absolute:
        x = np.maximum(x, 0)
    x = c(LAYERS[1], x)
    return c(LAYERS[2], x)


def check_within(y, ref, mag, terms):
    """Asserts float32 `y` is within terms * eps32 * `mag` of the float64
    `ref` (mag: the same computation on magnitudes) and prints the result."""
    tol = terms * np.finfo(np.float32).eps * mag
    assert y.dtype == np.float32 and y.shape == ref.shape, (y.shape, ref.shape)
    err = np.abs(y - ref)
    assert np.all(err <= tol), (err.max(), tol[err > tol])
    # The bound is meaningful: not looser than a few percent of the output.
    assert np.max(tol) < 0.05 * np.max(np.abs(ref)) + 1e-3, np.max(tol)
    print("ok %s, max error %.3g within %d * eps32 * sum|terms|"
          % (str(y.shape), err.max(), terms))


def name(d, what, n, h, wd):
    return os.path.join(d, "%s_%d_%d_%d.npy" % (what, n, h, wd))


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    if cmd == "model":
        return model(d, sys.argv[3] if len(sys.argv) > 3 else "conv")
    n, h, wd = (int(v) for v in sys.argv[3:6])
    if cmd == "make":
        rng = np.random.default_rng(100 * n + h + wd)
        x = rng.standard_normal((n, 3, h, wd)).astype(np.float32)
        np.save(name(d, "x", n, h, wd), x)
        return
    net_name = sys.argv[6] if len(sys.argv) > 6 else "conv"
    x = np.load(name(d, "x", n, h, wd))
    y = np.load(name(d, "y" if net_name == "conv" else net_name, n, h, wd))
    w = weights(net_name)
    ref = net(x, w, False, net_name)
    mag = net(x, w, True, net_name)
    terms = sum(k[0] * k[1] * (cin // g) for _, cin, _, k, _, _, _, g, _ in
                NETS[net_name]) + 8
    check_within(y, ref, mag, terms)


if __name__ == "__main__":
    main()
