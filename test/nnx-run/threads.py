# nnx-run --threads: a model whose Linear has several N cache tiles (300
# outputs: tiles of 128, the last partial) and whose attention-style batched
# products run as a parallel loop over (batch, heads), exported from PyTorch
# with batch and sequence dynamic, gives bit-identical outputs at 1, 2 and 0
# (one per hardware thread) threads, within 1e-5 of PyTorch; a bad count is
# a clear error.
# REQUIRES: torch
# RUN: %python %s %nnx_bin/bin/nnx-run %nnx_src/python %t | FileCheck %s
# CHECK: threads 1: matches PyTorch
# CHECK: threads 2: bit-identical to 1 thread
# CHECK: threads 0: bit-identical to 1 thread
# CHECK: --threads=x: exit 1: nnx-run: error: --threads: 'x' is not a thread count
# CHECK: --threads 5000: exit 1: nnx-run: error: --threads: '5000' is not a thread count
import os
import subprocess
import sys

import numpy as np

NNX_RUN, PYTHON_DIR, TMP = sys.argv[1:4]
sys.path.insert(0, PYTHON_DIR)
import torch  # noqa: E402
from torch import nn  # noqa: E402

from nnx.torch_export import export  # noqa: E402


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(40, 300)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(100, dim=2)
        q = q.view(b, t, 4, 25).transpose(1, 2)
        k = k.view(b, t, 4, 25).transpose(1, 2)
        v = v.view(b, t, 4, 25).transpose(1, 2)
        scores = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        return (scores @ v).transpose(1, 2).reshape(b, t, 100)


torch.manual_seed(0)
model = Attention().eval()
os.makedirs(TMP, exist_ok=True)
mlir = os.path.join(TMP, "model.mlir")
with open(mlir, "w") as f:
    f.write(export(model, [((None, None, 40), torch.float32)], name="attn"))
x = np.random.default_rng(0).standard_normal((3, 19, 40)).astype(np.float32)
xin = os.path.join(TMP, "x.npy")
np.save(xin, x)
with torch.no_grad():
    want = model(torch.from_numpy(x)).numpy()


def run(*threads_args):
    out = os.path.join(TMP, "out.npy")
    proc = subprocess.run([NNX_RUN, mlir, "--input", xin, "--output", out]
                          + list(threads_args), capture_output=True, text=True)
    return proc, out


proc, out = run("--threads", "1")
assert proc.returncode == 0, proc.stderr
one = np.load(out)
np.testing.assert_allclose(one, want, atol=1e-5, rtol=1e-5)
print("threads 1: matches PyTorch")
for threads in ("2", "0"):
    proc, out = run(f"--threads={threads}")
    assert proc.returncode == 0, proc.stderr
    same = np.array_equal(np.load(out), one)
    print(f"threads {threads}: " + ("bit-identical to 1 thread" if same
                                    else "DIFFERENT"))
for bad in (["--threads=x"], ["--threads", "5000"]):
    proc, _ = run(*bad)
    print(f"{' '.join(bad)}: exit {proc.returncode}: "
          + proc.stderr.strip().splitlines()[-1])
