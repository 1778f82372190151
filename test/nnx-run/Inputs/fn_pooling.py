"""Inputs and the float64 reference of nnx-run/fn-pooling.mlir.

  fn_pooling.py make DIR N H W    writes DIR/x_N_H_W.npy (float32, C = 3)
  fn_pooling.py check DIR N H W   compares DIR/<output>_N_H_W.npy

The reference is torch.nn.functional's own pools in float64, called with
the attributes of the test's ops. Max pooling is exact. An average of k
terms in float32 errs by at most ~k * eps32 * the mean of their
magnitudes, which the same pool of |x| computes.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_layers import check_within  # noqa: E402

#: output name -> (the pool as torch calls it, its reduction length)
POOLS = {
    "max": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1,
                                   ceil_mode=True), 1),
    "maxd": (lambda x: F.max_pool2d(x, 2, stride=1, dilation=2), 1),
    "avg": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                   count_include_pad=False), 9),
    "avg2": (lambda x: F.avg_pool2d(x, 2), 4),
    "global": (lambda x: F.adaptive_avg_pool2d(x, 1), 0),
    "grid": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), 0),
}


def path(d, what, shape):
    return os.path.join(d, "%s_%s.npy" % (what, "_".join(map(str, shape))))


def main():
    cmd, d, shape = sys.argv[1], sys.argv[2], [int(v) for v in sys.argv[3:]]
    n, h, w = shape
    if cmd == "make":
        rng = np.random.default_rng(n * 100 + h * 10 + w)
        x = rng.standard_normal((n, 3, h, w)).astype(np.float32)
        np.save(path(d, "x", shape), x)
        return
    x = torch.from_numpy(np.load(path(d, "x", shape))).double()
    for name, (pool, terms) in POOLS.items():
        y = np.load(path(d, name, shape))
        # The adaptive pools average a whole window of the input.
        terms = terms or (h * w if name == "global" else h * w // 6)
        with torch.no_grad():
            ref, mag = pool(x).numpy(), pool(x.abs()).numpy()
        check_within(y, ref, np.maximum(mag, 1e-30), terms)
    print("ok", *shape)


if __name__ == "__main__":
    main()
