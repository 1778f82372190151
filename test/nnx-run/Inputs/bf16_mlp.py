"""A bf16 MLP (64 -> 72 -> GELU -> 10) for test/nnx-run/bf16*.mlir.

`bf16_mlp.py make DIR` writes DIR/mlp.mlir (the weights inline, bf16; numpy
only: the IR is written here, not exported from PyTorch) and DIR/x.npy (5 x
64 float32 values that are not all bf16). `bf16_mlp.py check DIR Y.npy
[Y.safetensors]` checks nnx-run's output: an .npy of float32 holding bf16
values (exact widening), the same bits as the safetensors file's BF16
tensor "output", and within nnx.testing.mlp_bound of the float64 function
of the rounded input (f32 accumulation, one rounding per op).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir, os.pardir, "python"))
from nnx import testing  # noqa: E402
from nnx.safetensors import read_safetensors  # noqa: E402

K, H, N = 64, 72, 10


def params():
    rng = np.random.default_rng(0)
    r = lambda *shape: testing.round_to(rng.standard_normal(shape) / 8, "bf16")  # noqa: E731
    return r(H, K), r(H), r(N, H), r(N)


def bf16_hex(a):
    bits = (np.asarray(a, np.float32).view(np.uint32) >> 16).astype("<u2")
    return "0x02000000" + bits.tobytes().hex().upper()


def make(out):
    w1, b1, w2, b2 = params()
    blobs = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
    text = f"""nnx.model @mlp inputs(tensor<?x{K}xbf16>) {{
  nnx.sequential @net keying = positional {{
    nnx.linear @"0" {{weight = dense_resource<w1> : tensor<{H}x{K}xbf16>, bias = dense_resource<b1> : tensor<{H}xbf16>}}
    nnx.gelu @"1" {{approximate = #nnx.gelu_approximation<none>}}
    nnx.linear @"2" {{weight = dense_resource<w2> : tensor<{N}x{H}xbf16>, bias = dense_resource<b2> : tensor<{N}xbf16>}}
  }}
}}
{{-#
  dialect_resources: {{
    builtin: {{
""" + ",\n".join(f'      {k}: "{bf16_hex(v)}"' for k, v in blobs.items()) + """
    }
  }
#-}
"""
    with open(os.path.join(out, "mlp.mlir"), "w") as f:
        f.write(text)
    x = np.random.default_rng(1).standard_normal((5, K)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)


def check(out, npy, st=None):
    y = np.load(npy)
    assert y.dtype == np.float32 and y.shape == (5, N), (y.dtype, y.shape)
    assert np.array_equal(testing.round_to(y, "bf16"), y), "not bf16 values"
    if st:
        tensors = read_safetensors(st)
        assert list(tensors) == ["output"], list(tensors)
        bits = tensors["output"]
        assert bits.dtype == np.uint16 and bits.shape == y.shape
        assert np.array_equal(bits, (y.view(np.uint32) >> 16).astype(np.uint16))
    w1, b1, w2, b2 = params()
    x = testing.round_to(np.load(os.path.join(out, "x.npy")), "bf16")
    ref, bound = testing.mlp_bound(
        x, [("linear", w1, b1), ("gelu",), ("linear", w2, b2)])
    testing.assert_within(y, ref, bound, "bf16 MLP")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(*sys.argv[2:])
