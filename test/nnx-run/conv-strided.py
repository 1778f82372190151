# Strided convolutions the CPU schedule computes as patches (one strided
# gather and one matmul: ConvToMatmuls.cpp) or as phases, exported from
# PyTorch with the batch (and the spatial sizes) dynamic, run at batch 1
# and 2 and checked against PyTorch at atol = rtol = 1e-5: a ViT patch
# embedding (kernel = stride = 16, the image not a multiple of 16 in the
# second run), conv1d with kernel = stride = 4, stride 3 kernel 7 padding
# 3, stride 2 kernel 3 (the phases), a dilated stride-4 conv, depthwise
# convs at stride 3 (patches) and 2 (phases), a grouped conv, a stride of
# 2^40, larger than the input: one output pixel, compiled at once; and
# grouped convs by the phases and the patches (those also under the AVX2
# cap, NNX_JIT_MAX_ISA=avx2, on two threads).
# REQUIRES: torch
# RUN: %python %s %nnx_bin/bin/nnx-run %nnx_src/python %t | FileCheck %s
# CHECK: patch16 (1, 3, 32, 48) -> (1, 16, 2, 3): matches PyTorch
# CHECK: patch16 (2, 3, 37, 50) -> (2, 16, 2, 3): matches PyTorch
# CHECK: conv1d_k4s4 (1, 4, 24) -> (1, 8, 6): matches PyTorch
# CHECK: conv1d_k4s4 (2, 4, 27) -> (2, 8, 6): matches PyTorch
# CHECK: s3k7p3 (1, 3, 20, 23) -> (1, 8, 7, 8): matches PyTorch
# CHECK: s3k7p3 (2, 3, 17, 16) -> (2, 8, 6, 6): matches PyTorch
# CHECK: s2k3p1 (1, 4, 15, 12) -> (1, 8, 8, 6): matches PyTorch
# CHECK: s2k3p1 (2, 4, 10, 17) -> (2, 8, 5, 9): matches PyTorch
# CHECK: s4k3d2 (1, 4, 15, 12) -> (1, 6, 3, 2): matches PyTorch
# CHECK: s4k3d2 (2, 4, 22, 19) -> (2, 6, 5, 4): matches PyTorch
# CHECK: dw_s3k3 (1, 6, 13, 11) -> (1, 6, 5, 4): matches PyTorch
# CHECK: dw_s3k3 (2, 6, 9, 14) -> (2, 6, 3, 5): matches PyTorch
# CHECK: dw_s2k3 (1, 6, 13, 11) -> (1, 6, 7, 6): matches PyTorch
# CHECK: dw_s2k3 (2, 6, 9, 14) -> (2, 6, 5, 7): matches PyTorch
# CHECK: grouped_s4k4 (1, 4, 16, 12) -> (1, 8, 4, 3): matches PyTorch
# CHECK: grouped_s4k4 (2, 4, 19, 13) -> (2, 8, 4, 3): matches PyTorch
# CHECK: stride2p40 (1, 3, 9, 7) -> (1, 5, 1, 1): matches PyTorch
# CHECK: stride2p40 (1, 3, 5, 6) -> (1, 5, 1, 1): matches PyTorch
# CHECK: gw8_s1 (1, 32, 13, 11) -> (1, 32, 13, 11): matches PyTorch (avx2 too)
# CHECK: gw8_s1 (2, 32, 9, 14) -> (2, 32, 9, 14): matches PyTorch (avx2 too)
# CHECK: gw16_s2 (1, 32, 13, 11) -> (1, 64, 7, 6): matches PyTorch (avx2 too)
# CHECK: gw16_s2 (2, 32, 9, 14) -> (2, 64, 5, 7): matches PyTorch (avx2 too)
# CHECK: gw24_s2 (1, 48, 13, 11) -> (1, 48, 7, 6): matches PyTorch (avx2 too)
# CHECK: gw24_s2 (2, 48, 9, 14) -> (2, 48, 5, 7): matches PyTorch (avx2 too)
# CHECK: resnext_s1 (1, 128, 13, 11) -> (1, 128, 13, 11): matches PyTorch (avx2 too)
# CHECK: resnext_s1 (2, 128, 9, 14) -> (2, 128, 9, 14): matches PyTorch (avx2 too)
# CHECK: resnext_s2 (1, 256, 13, 11) -> (1, 256, 7, 6): matches PyTorch (avx2 too)
# CHECK: resnext_s2 (2, 256, 9, 14) -> (2, 256, 5, 7): matches PyTorch (avx2 too)
# CHECK: grouped_d2 (1, 8, 13, 11) -> (1, 8, 13, 11): matches PyTorch (avx2 too)
# CHECK: grouped_d2 (2, 8, 9, 14) -> (2, 8, 9, 14): matches PyTorch (avx2 too)
# CHECK: grouped_cg1 (1, 4, 13, 11) -> (1, 8, 7, 6): matches PyTorch (avx2 too)
# CHECK: grouped_cg1 (2, 4, 9, 14) -> (2, 8, 5, 7): matches PyTorch (avx2 too)
# CHECK: grouped_1x1 (1, 12, 13, 11) -> (1, 24, 13, 11): matches PyTorch (avx2 too)
# CHECK: grouped_1x1 (2, 12, 9, 14) -> (2, 24, 9, 14): matches PyTorch (avx2 too)
import os
import subprocess
import sys
import time

import numpy as np

NNX_RUN, PYTHON_DIR, TMP = sys.argv[1:4]
sys.path.insert(0, PYTHON_DIR)
import torch  # noqa: E402
from torch import nn  # noqa: E402

from nnx import testing  # noqa: E402
from nnx.torch_export import export  # noqa: E402

HUGE = 1 << 40
# name: (layer, channels, spatial sizes of the two runs)
NETS = {
    "patch16": (lambda: nn.Conv2d(3, 16, 16, stride=16), 3,
                [(32, 48), (37, 50)]),
    "conv1d_k4s4": (lambda: nn.Conv1d(4, 8, 4, stride=4), 4, [(24,), (27,)]),
    "s3k7p3": (lambda: nn.Conv2d(3, 8, 7, stride=3, padding=3), 3,
               [(20, 23), (17, 16)]),
    "s2k3p1": (lambda: nn.Conv2d(4, 8, 3, stride=2, padding=1), 4,
               [(15, 12), (10, 17)]),
    "s4k3d2": (lambda: nn.Conv2d(4, 6, 3, stride=4, dilation=2), 4,
               [(15, 12), (22, 19)]),
    "dw_s3k3": (lambda: nn.Conv2d(6, 6, 3, stride=3, padding=1, groups=6),
                6, [(13, 11), (9, 14)]),
    "dw_s2k3": (lambda: nn.Conv2d(6, 6, 3, stride=2, padding=1, groups=6),
                6, [(13, 11), (9, 14)]),
    "grouped_s4k4": (lambda: nn.Conv2d(4, 8, 4, stride=4, groups=2), 4,
                     [(16, 12), (19, 13)]),
    "stride2p40": (lambda: nn.Conv2d(3, 5, 3, stride=HUGE), 3,
                   [(9, 7), (5, 6)]),
    # Grouped convs by the phases (one matmul per group and tap): RegNet's
    # group widths 8, 16 (Fg = 32: outputs a multiple of the inputs) and
    # 24, ResNeXt 32x4d's 3x3 at stride 2 (at stride 1, Fg = 4: upstream's
    # loops), a dilated one, and groups = in_channels with 2 outputs each
    # (Cg = 1); a 1x1 grouped conv takes the patches (one matmul per group).
    "gw8_s1": (lambda: nn.Conv2d(32, 32, 3, padding=1, groups=4), 32,
               [(13, 11), (9, 14)]),
    "gw16_s2": (lambda: nn.Conv2d(32, 64, 3, stride=2, padding=1, groups=2),
                32, [(13, 11), (9, 14)]),
    "gw24_s2": (lambda: nn.Conv2d(48, 48, 3, stride=2, padding=1, groups=2),
                48, [(13, 11), (9, 14)]),
    "resnext_s1": (lambda: nn.Conv2d(128, 128, 3, padding=1, groups=32),
                   128, [(13, 11), (9, 14)]),
    "resnext_s2": (lambda: nn.Conv2d(256, 256, 3, stride=2, padding=1,
                                     groups=32), 256, [(13, 11), (9, 14)]),
    "grouped_d2": (lambda: nn.Conv2d(8, 8, 3, padding=2, dilation=2,
                                     groups=2), 8, [(13, 11), (9, 14)]),
    "grouped_cg1": (lambda: nn.Conv2d(4, 8, 3, stride=2, padding=1,
                                      groups=4), 4, [(13, 11), (9, 14)]),
    "grouped_1x1": (lambda: nn.Conv2d(12, 24, 1, groups=3), 12,
                    [(13, 11), (9, 14)]),
}

#: The grouped nets by the matmuls, also run under NNX_JIT_MAX_ISA=avx2.
GROUPED = {"gw8_s1", "gw16_s2", "gw24_s2", "resnext_s1", "resnext_s2",
           "grouped_d2", "grouped_cg1", "grouped_1x1"}


def reference(layer, x):
    """PyTorch's output; for the 2^40 stride (which oneDNN refuses for some
    shapes) the same layer on the first window alone, all that a stride
    larger than the input reads."""
    with torch.no_grad():
        if max(layer.stride) < HUGE:
            return layer(x).numpy()
        window = x[:, :, :layer.kernel_size[0], :layer.kernel_size[1]]
        return nn.functional.conv2d(window, layer.weight, layer.bias).numpy()


os.makedirs(TMP, exist_ok=True)
rng = np.random.default_rng(0)
for name, (make, channels, sizes) in NETS.items():
    torch.manual_seed(1)
    layer = make().eval()
    model = nn.Sequential(layer)
    # oneDNN refuses the 2^40 stride at batch 2 and at some image sizes,
    # and the exporter runs the model on its examples: that net keeps batch
    # 1, its image dynamic, with two examples PyTorch accepts.
    batches, examples = (1, 2), None
    if name == "stride2p40":
        batches = (1, 1)
        examples = ((torch.randn(1, 3, 9, 7),), (torch.randn(1, 3, 3, 3),))
    dims = (None if batches[1] > 1 else 1, channels) + (None,) * len(sizes[0])
    mlir = os.path.join(TMP, name + ".mlir")
    with open(mlir, "w") as f:
        f.write(export(model, [dims], name=name, weights=False,
                       examples=examples))
    for batch, spatial in zip(batches, sizes):
        shape = (batch, channels) + spatial
        x = rng.standard_normal(shape).astype(np.float32)
        xin, out = (os.path.join(TMP, f"{name}_{batch}_{s}.npy")
                    for s in ("x", "y"))
        np.save(xin, x)
        start = time.monotonic()
        want = reference(layer, torch.from_numpy(x))
        # The grouped nets also under the AVX2 cap (other register tiles,
        # other column blocks), on two threads (images and groups split).
        caps = [None] + (["avx2"] if name in GROUPED else [])
        for cap in caps:
            env = dict(os.environ, **({"NNX_JIT_MAX_ISA": cap} if cap else {}))
            threads = ["--threads", "2"] if cap else []
            proc = subprocess.run(
                [NNX_RUN, mlir, "--input", xin, "--output", out] + threads,
                capture_output=True, text=True, timeout=120, env=env)
            assert proc.returncode == 0, proc.stderr
            got = np.load(out)
            assert got.shape == want.shape, (got.shape, want.shape)
            np.testing.assert_allclose(got, want, **testing.CONTRACT,
                                       err_msg=f"{name} under {cap}")
        print(f"{name} {shape} -> {got.shape}: matches PyTorch"
              f"{' (avx2 too)' if len(caps) > 1 else ''} "
              f"({time.monotonic() - start:.1f} s)")
