"""The models and the float64 reference of nnx-run/pool-layers.test.

  pool_layers.py model DIR             writes DIR/{pools,adaptive,conv1d}.mlir
  pool_layers.py make DIR NET SHAPE..  writes DIR/x_NET_SHAPE.npy (float32)
  pool_layers.py check DIR NET SHAPE.. compares DIR/y_NET_SHAPE.npy

The nets, on dynamic batch and spatial sizes:
  pools:    conv2d 4->6 (3x3, padding 1, groups 2, bias), max_pool2d (3x3,
            stride 2, padding 1, ceil_mode), conv2d 6->12 (3x3, padding 1,
            groups 6: a depthwise multiplier of 2), avg_pool2d (3x3, stride
            2, padding 1, ceil_mode, count_include_pad false), avg_pool2d
            (2x2, stride 1, padding 1, count_include_pad), adaptive
            average pool to 1x1, flatten;
  adaptive: adaptive_avg_pool2d to (2, 3), flatten(start_dim=2);
  conv1d:   conv1d 3->4 (k 3, stride 2, padding 1, bias), conv1d 4->6
            (k 2, dilation 2, groups 2).
The reference is PyTorch's own layers in float64 (their semantics: ceil
mode's last window, the avg divisors). Tolerance: each output is a chain of
sums of at most L terms (the layers' reduction lengths added up); float32
rounding errs by at most ~L * eps32 times the sum of the terms' magnitudes,
which the same net on |x| with |weights| computes (max pooling is exact and
monotone, so it keeps the bound).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_layers import check_within, dense  # noqa: E402


def arr(v):
    return "array<i64: %s>" % ", ".join(str(int(x)) for x in v)


def nets():
    torch.manual_seed(3)
    pools = nn.Sequential(
        nn.Conv2d(4, 6, 3, padding=1, groups=2),
        nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        nn.Conv2d(6, 12, 3, padding=1, groups=6, bias=False),
        nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                     count_include_pad=False),
        nn.AvgPool2d(2, stride=1, padding=1),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten())
    adaptive = nn.Sequential(nn.AdaptiveAvgPool2d((2, 3)), nn.Flatten(2))
    conv1d = nn.Sequential(nn.Conv1d(3, 4, 3, stride=2, padding=1),
                           nn.Conv1d(4, 6, 2, dilation=2, groups=2, bias=False))
    return {"pools": (pools, "tensor<?x4x?x?xf32>", 9 * 2 + 9 + 9 + 4 + 1),
            "adaptive": (adaptive, "tensor<?x2x?x?xf32>", 1),
            "conv1d": (conv1d, "tensor<?x3x?xf32>", 9 + 4)}


def layer(i, m):
    def t(x):
        return dense(x.detach().numpy())
    if isinstance(m, (nn.Conv2d, nn.Conv1d)):
        kind = "conv2d" if isinstance(m, nn.Conv2d) else "conv1d"
        bias = ", bias = " + t(m.bias) if m.bias is not None else ""
        return ("nnx.%s @\"%d\" {in_channels = %d : i64, out_channels = %d : i64, "
                "kernel_size = %s, stride = %s, padding = %s, dilation = %s, "
                "groups = %d : i64, weight = %s%s}"
                % (kind, i, m.in_channels, m.out_channels, arr(m.kernel_size),
                   arr(m.stride), arr(m.padding), arr(m.dilation), m.groups,
                   t(m.weight), bias))
    pair = nn.modules.utils._pair
    if isinstance(m, nn.MaxPool2d):
        return ("nnx.max_pool2d @\"%d\" {kernel_size = %s, stride = %s, padding = "
                "%s, dilation = %s%s}" % (i, arr(pair(m.kernel_size)),
                                          arr(pair(m.stride)),
                                          arr(pair(m.padding)),
                                          arr(pair(m.dilation)),
                                          ", ceil_mode" if m.ceil_mode else ""))
    if isinstance(m, nn.AvgPool2d):
        flags = (", ceil_mode" if m.ceil_mode else "") + (
            ", count_include_pad" if m.count_include_pad else "")
        return ("nnx.avg_pool2d @\"%d\" {kernel_size = %s, stride = %s, padding = "
                "%s%s}" % (i, arr(pair(m.kernel_size)), arr(pair(m.stride)),
                           arr(pair(m.padding)), flags))
    if isinstance(m, nn.AdaptiveAvgPool2d):
        return "nnx.adaptive_avg_pool2d @\"%d\" {output_size = %s}" % (
            i, arr(pair(m.output_size)))
    assert isinstance(m, nn.Flatten)
    return "nnx.flatten @\"%d\" {start_dim = %d : i64, end_dim = %d : i64}" % (
        i, m.start_dim, m.end_dim)


def model(d):
    os.makedirs(d, exist_ok=True)
    for name, (net, type, _) in nets().items():
        lines = ["nnx.model @%s inputs(%s) {" % (name, type),
                 "  nnx.sequential @net keying = positional {"]
        lines += ["    " + layer(i, m) for i, m in enumerate(net)]
        lines += ["  }", "}"]
        with open(os.path.join(d, name + ".mlir"), "w") as f:
            f.write("\n".join(lines) + "\n")


def absolute(net):
    """`net` in float64 with every weight replaced by its magnitude."""
    net = net.double()
    with torch.no_grad():
        for p in net.parameters():
            p.abs_()
    return net


def path(d, what, name, shape):
    return os.path.join(d, "%s_%s_%s.npy" % (what, name,
                                             "_".join(map(str, shape))))


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    if cmd == "model":
        return model(d)
    name, shape = sys.argv[3], [int(v) for v in sys.argv[4:]]
    if cmd == "make":
        rng = np.random.default_rng(sum(shape))
        np.save(path(d, "x", name, shape),
                rng.standard_normal(shape).astype(np.float32))
        return
    x = np.load(path(d, "x", name, shape))
    y = np.load(path(d, "y", name, shape))
    net, _, terms = nets()[name]
    with torch.no_grad():
        ref = net.double()(torch.from_numpy(x).double()).numpy()
        mag = absolute(nets()[name][0])(
            torch.from_numpy(np.abs(x)).double()).numpy()
    check_within(y, ref, mag, terms)

if __name__ == "__main__":
    main()
