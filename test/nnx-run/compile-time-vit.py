# Compile time of a ViT-B/16-style model: torchvision's patch embedding
# (Conv2d(3, 768, kernel_size=16, stride=16), which the CPU schedule
# computes as one strided gather and one matmul, not as 256 stride phases),
# the class token and position embedding, then one torchvision EncoderBlock
# (12 heads, MLP 3072), exported with the batch dynamic. nnx-run compiles it
# from scratch (an empty compile cache) on one core and runs a 224 x 224
# image, which must match PyTorch at atol = rtol = 1e-5. Measured on the
# 2-core dev machine (an otherwise busy one): about 5 s; with one matmul per
# stride phase it had not finished after 120 s. The bound is generous, so
# that a loaded machine does not fail it; a return of the stride-squared
# growth would.
# REQUIRES: torch
# RUN: %python %s %nnx_bin/bin/nnx-run %nnx_src/python %t | FileCheck %s
# CHECK: vit-b16 patch embedding + 1 block: matches PyTorch, compiled within 60 s on one core
import os
import shutil
import subprocess
import sys
import time

import numpy as np

NNX_RUN, PYTHON_DIR, TMP = sys.argv[1:4]
sys.path.insert(0, PYTHON_DIR)
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchvision.models.vision_transformer import EncoderBlock  # noqa: E402

from nnx import testing  # noqa: E402
from nnx.torch_export import write  # noqa: E402

BOUND_S = 60


class PatchBlock(nn.Module):
    """vit_b_16's forward up to its first encoder block."""

    def __init__(self):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, 768, kernel_size=16, stride=16)
        self.class_token = nn.Parameter(torch.randn(1, 1, 768) * 0.02)
        self.pos_embedding = nn.Parameter(torch.randn(1, 197, 768) * 0.02)
        self.block = EncoderBlock(12, 768, 3072, 0.0, 0.0)

    def forward(self, x):
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        token = self.class_token.expand(x.shape[0], -1, -1)
        x = torch.cat([token, x], dim=1) + self.pos_embedding
        return self.block(x)


torch.manual_seed(0)
model = PatchBlock().eval()
os.makedirs(TMP, exist_ok=True)
mlir = os.path.join(TMP, "vit.mlir")
write(model, mlir, [(None, 3, 224, 224)], name="vit", weights=True)
x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(
    np.float32)
xin, out = os.path.join(TMP, "x.npy"), os.path.join(TMP, "y.npy")
np.save(xin, x)
with torch.no_grad():
    want = model(torch.from_numpy(x)).numpy()

# A fresh compile cache: the time is the compiler's, not a cache hit's.
cache = os.path.join(TMP, "cache")
shutil.rmtree(cache, ignore_errors=True)
env = dict(os.environ, NNX_CACHE_DIR=cache)
cpu = min(os.sched_getaffinity(0))
start = time.monotonic()
proc = subprocess.run(
    [NNX_RUN, mlir, "--threads", "1", "--input", xin, "--output", out],
    capture_output=True, text=True, env=env, timeout=10 * BOUND_S,
    preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
seconds = time.monotonic() - start
assert proc.returncode == 0, proc.stderr
np.testing.assert_allclose(np.load(out), want, **testing.CONTRACT)
print(f"compiled and ran in {seconds:.1f} s", file=sys.stderr)
assert seconds < BOUND_S, f"{seconds:.1f} s, more than {BOUND_S} s"
print("vit-b16 patch embedding + 1 block: matches PyTorch, compiled within "
      f"{BOUND_S} s on one core")
