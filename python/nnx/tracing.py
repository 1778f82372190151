"""Tracing from Python: which standardized names a model has.

    >>> nnx.tracing.support(nnx.load("cohere.mlir"), "cohere")["layers.0.layer_mid"]
    Support(name='layers.0.layer_mid', available=False, where=None,
            reason='the block is parallel: ...')

Names are the family's (families/*.json, docs/Tracing.md); read them with
``nnx.compile(model, family=..., probes=[...])`` and overwrite them with
``patches=[...]``. The answers are the compiler's (``nnx-support``).
"""

import collections
import os

from . import _nnx

__all__ = ["support", "Support"]

#: One standardized name: where it resolves, or why it is unavailable.
Support = collections.namedtuple("Support",
                                 ["name", "available", "where", "reason"])


def support(model, family, families_dir=None):
    """``{name: Support}`` for every standardized name of `family` on
    `model` (an ``nnx.Model``, a path, or an ``nn.Module`` with the
    exporter's ``inputs`` given as ``(module, inputs)``), in report order.
    A name the model's structure breaks (an error, not an absence) has
    ``available=False`` and the error as its reason."""
    if isinstance(model, tuple):
        from .runtime import parse_module
        model, _ = parse_module(model[0], model[1], "<nnx.tracing>")
    elif isinstance(model, (str, os.PathLike)):
        model = _nnx.Model.parse_file(os.fspath(model))
    rows = model.tracing_support(family, families_dir or "")
    return collections.OrderedDict(
        (name, Support(name, status == "available",
                       text if status == "available" else None,
                       None if status == "available" else text))
        for name, status, text in rows)
