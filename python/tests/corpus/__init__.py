"""A corpus of models written the way their authors write them, for judging
nnx.torch_export against real-world model code (python/tests/test_corpus.py;
README.md names the style each file follows).

Each module defines a ``Config``, the model classes, ``build(seed=0)`` (an
eval-mode model with deterministic, non-trivial random weights), ``INPUTS``
(the export's input spec), ``example(batch, n, seed=0)`` (concrete inputs:
``n`` is the sequence length, or the image size / number of frames) and
``SHAPES`` (two ``(batch, n)`` pairs to run at). A module with several models
lists them as ``CASES`` (:class:`Case` objects) instead.
"""

import dataclasses
import importlib
import math
from typing import Callable, Sequence, Tuple

import torch
from torch import nn

#: The corpus modules, in the order of the README.
MODULES = [
    "nanogpt", "llama2c", "hf_llama", "qwen2", "gpt_neox", "phi", "bert",
    "t5_encoder", "moe", "torch_transformer", "vit", "resnet",
    "whisper_encoder",
]


@dataclasses.dataclass
class Case:
    """One model of the corpus."""

    name: str
    build: Callable
    inputs: Sequence
    example: Callable
    shapes: Sequence[Tuple[int, int]]


def cases():
    """Every model of the corpus, as :class:`Case` objects."""
    out = []
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        if hasattr(mod, "CASES"):
            out.extend(mod.CASES)
        else:
            out.append(Case(name, mod.build, mod.INPUTS, mod.example,
                            mod.SHAPES))
    return out


def randomize(model, seed):
    """Deterministic, non-trivial weights: every matrix (and conv kernel)
    normal with std 1/sqrt(fan in), embeddings and other tables likewise over
    their last dim, norm weights around 1, every other vector (biases, norm
    biases, layer scales) around 0 but nonzero, BatchNorm running statistics
    random. Tied parameters are drawn once (the last module to hold one
    wins, in a fixed order)."""
    g = torch.Generator().manual_seed(seed)

    def normal(shape, std):
        return torch.randn(shape, generator=g) * std

    with torch.no_grad():
        for module in model.modules():
            is_norm = "norm" in type(module).__name__.lower()
            is_conv = isinstance(module, nn.modules.conv._ConvNd)
            for pname, p in module.named_parameters(recurse=False):
                if p.dim() >= 2:
                    fan_in = p[0].numel() if is_conv else p.shape[-1]
                    p.copy_(normal(p.shape, 1.0 / math.sqrt(fan_in)))
                elif is_norm and pname == "weight":
                    p.copy_(1.0 + normal(p.shape, 0.1))
                else:
                    p.copy_(normal(p.shape, 0.1))
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.running_mean.copy_(normal(module.running_mean.shape, 0.1))
                module.running_var.copy_(
                    0.5 + torch.rand(module.running_var.shape, generator=g))
    return model


def token_ids(batch, seq, vocab, seed):
    """(batch, seq) int64 ids in [0, vocab)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (batch, seq), generator=g, dtype=torch.int64)


def normal_inputs(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g)
