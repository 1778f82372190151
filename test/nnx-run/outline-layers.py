# Layer kernels (nnx-outline-layers) change where code lives, not what it
# computes: a ResNet stage (a stem conv and 4 torchvision Bottlenecks, the
# first with a downsampling conv, the batch dynamic) run by nnx-run with and
# without them gives bit-identical outputs, both within atol = rtol = 1e-5
# of PyTorch. With them, the 3 equal Bottlenecks share their kernels: the
# compiled module has fewer layer kernels than the forward makes calls of
# them, and at least 2 kernels (each a conv with its BatchNorm and ReLU as
# its epilogue) are called 3 times or more. (The last conv of the last
# block has a kernel of its own: its epilogue also writes the model's NCHW
# output, so it stays a kernel apart from its conv.)
# REQUIRES: torch
# RUN: %python %s %nnx_bin/bin/nnx-run %nnx_src/python %t | FileCheck %s
# CHECK: 14 convs, {{[0-9]+}} layer kernels; outputs bit-identical with and without, matching PyTorch
import collections
import os
import re
import subprocess
import sys

import numpy as np

NNX_RUN, PYTHON_DIR, TMP = sys.argv[1:4]
sys.path.insert(0, PYTHON_DIR)
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchvision.models.resnet import Bottleneck  # noqa: E402

from nnx import testing  # noqa: E402
from nnx.torch_export import write  # noqa: E402

os.makedirs(TMP, exist_ok=True)
torch.manual_seed(0)
down = nn.Sequential(nn.Conv2d(16, 64, 1, bias=False), nn.BatchNorm2d(64))
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1),
                      Bottleneck(64 // 4, 16, 1, down),
                      *[Bottleneck(64, 16) for _ in range(3)]).eval()
convs = sum(isinstance(m, nn.Conv2d) for m in model.modules())
mlir = os.path.join(TMP, "stage.mlir")
write(model, mlir, [(None, 3, 12, 12)], name="stage", weights=True)
x = np.random.default_rng(0).standard_normal((2, 3, 12, 12)).astype(
    np.float32)
xin = os.path.join(TMP, "x.npy")
np.save(xin, x)


def run(layers):
    out = os.path.join(TMP, f"y-{layers}.npy")
    dump = os.path.join(TMP, f"compiled-{layers}.mlir")
    proc = subprocess.run(
        [NNX_RUN, mlir, "--input", xin, "--output", out, "--dump-compiled",
         dump, "--pipeline-options", f"outline-layers={layers}"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with open(dump) as f:
        return np.load(out), f.read()


with_layers, ir = run("true")
without, ir_without = run("false")
kernels = set(re.findall(r"llvm\.func @(forward_layer_[0-9]+)\(", ir))
calls = collections.Counter(
    re.findall(r"llvm\.call @(forward_layer_[0-9]+)\(", ir))
assert "forward_layer_" not in ir_without
assert 0 < len(kernels) < sum(calls.values()), (len(kernels), calls)
assert sum(n >= 3 for n in calls.values()) >= 2, calls
assert np.array_equal(with_layers, without), np.abs(with_layers -
                                                    without).max()
with torch.no_grad():
    want = model(torch.from_numpy(x)).numpy()
np.testing.assert_allclose(with_layers, want, **testing.CONTRACT)
print(f"{convs} convs, {len(kernels)} layer kernels; outputs bit-identical "
      "with and without, matching PyTorch")
