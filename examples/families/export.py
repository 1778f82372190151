#!/usr/bin/python3
"""Writes the bundled tracing example models (one per family) as nnx IR, by
exporting the PyTorch reference implementations of the test tree
(python/tests/models) through `nnx.torch_export` (the forward recorded as Python runs it).

Small decoder-only transformers (vocabulary 32, width 32, 2 layers, 4 heads,
up to 16 positions), seeded random weights, batch and sequence length both
dynamic, each family's native module names and block quirk:

  gpt2    transformer.h.N {ln_1, attn, ln_2, mlp}: pre-norm, residual adds
  llama   model.layers.N {input_layernorm, self_attn, post_attention_layernorm,
          mlp}: RMSNorm, rotary, grouped-query attention, SwiGLU
  gemma2  llama's names + pre/post_feedforward_layernorm: the sandwich block
  bloom   transformer.h.N {input_layernorm, self_attention,
          post_attention_layernorm, mlp}: alibi; each sublayer adds the
          residual inside (`dropout_add_0`)
  cohere  model.layers.N {input_layernorm, self_attn, mlp}: parallel block
  falcon  transformer.h.N {input_layernorm, self_attention, mlp}: parallel
          block, the attention added into the MLP's output in place (`iadd_0`)

The shared `attention_interface` and `dropout_add` functions are kept as
calls (`functions=`), so every attention holds its own parameterless
`attention_interface` module. Usage: export.py [OUTDIR] (default: beside
this script).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, os.pardir, os.pardir)
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "python", "tests")]

import torch  # noqa: E402

from models import FAMILIES, build  # noqa: E402
from models.common import attention_interface, dropout_add  # noqa: E402
from nnx.torch_export import write  # noqa: E402


def main(argv):
    out = argv[1] if len(argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    for family in FAMILIES:
        model = build(family, seed=0)
        write(model, os.path.join(out, family + ".mlir"),
              [((None, None), torch.int64)], name=family, weights=False,
              functions=[attention_interface, dropout_add])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
