"""LoRA layers: the PyTorch form of ``nnx.lora``.

:class:`LoraLinear` is what a ``lora`` recipe operation
(:mod:`nnx.transforms`) puts in a Linear's place, as ``nnx-materialize-recipe``
does in the IR: the base ``weight`` / ``bias`` (frozen by the recipe),
``lora_A`` (r x in), ``lora_B`` (out x r, zero when materialized, so the
function is unchanged) and ``alpha``; ``scaling = alpha / r``. Its tensors are
its own parameters, so its state_dict keys are the IR's (``layers.0.lora_A``).
The exporter writes it as ``nnx.lora``.
"""

import torch
from torch import nn
from torch.nn import functional as F


class LoraLinear(nn.Module):
    """``x W^T + b + (alpha / r) (x A^T) B^T``; with ``merged``, ``weight``
    already holds ``W + (alpha / r) B A`` and the forward is the Linear's."""

    def __init__(self, in_features, out_features, r, alpha, bias=True,
                 merged=False, dtype=None):
        super().__init__()
        if r < 1:
            raise ValueError(f"r must be positive, got {r}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.r, self.alpha, self.merged = int(r), float(alpha), bool(merged)
        kw = {"dtype": dtype}
        self.weight = nn.Parameter(torch.zeros(out_features, in_features, **kw),
                                   requires_grad=False)
        self.bias = (nn.Parameter(torch.zeros(out_features, **kw),
                                  requires_grad=False) if bias else None)
        self.lora_A = nn.Parameter(torch.zeros(self.r, in_features, **kw))
        self.lora_B = nn.Parameter(torch.zeros(out_features, self.r, **kw))

    @property
    def scaling(self):
        return self.alpha / self.r

    def forward(self, x):
        y = F.linear(x, self.weight, self.bias)
        if self.merged:
            return y
        return y + self.scaling * F.linear(F.linear(x, self.lora_A), self.lora_B)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features="
                f"{self.out_features}, r={self.r}, alpha={self.alpha}, "
                f"bias={self.bias is not None}, merged={self.merged}")
