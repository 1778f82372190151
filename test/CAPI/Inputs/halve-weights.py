"""Writes a safetensors file with every tensor of another one halved.

    halve-weights.py IN.safetensors OUT.safetensors

Loads nnx's pure-Python safetensors module by path: the nnx package itself
imports the compiled bindings, which this test does not need.
"""
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "nnx_safetensors",
    os.path.join(here, "..", "..", "..", "python", "nnx", "safetensors.py"))
safetensors = importlib.util.module_from_spec(spec)
spec.loader.exec_module(safetensors)

tensors = safetensors.read_safetensors(sys.argv[1])
safetensors.write_safetensors(
    sys.argv[2], {name: (t / 2).astype(t.dtype) for name, t in tensors.items()})
