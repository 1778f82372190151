"""Writes a safetensors file with every tensor of another one halved.

    halve-weights.py IN.safetensors OUT.safetensors
"""
import os
import sys

# nnx's package imports its compiled bindings only when they are used: its
# pure-Python safetensors module needs none (lit puts python/ on PYTHONPATH).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "python"))
from nnx import safetensors  # noqa: E402

tensors = safetensors.read_safetensors(sys.argv[1])
safetensors.write_safetensors(
    sys.argv[2], {name: (t / 2).astype(t.dtype) for name, t in tensors.items()})
