"""nnx: Python side of the nnx MLIR dialect.

The public API:

- :func:`nnx.compile` compiles a model (an ``nn.Module``, a loaded nnx
  model or a path) once and returns a callable that runs it many times in
  this process, with probes and patches (:mod:`nnx.runtime`);
- :func:`nnx.load` / :func:`nnx.save` read and write nnx IR (text or
  bytecode; tensors inline or in a safetensors file);
- :func:`nnx.export` writes a PyTorch module as nnx IR text
  (:mod:`nnx.torch_export`); :func:`nnx.to_torch` builds a PyTorch module
  back from nnx IR (:mod:`nnx.torch_import`);
- :mod:`nnx.surgery`: the seed's primitives on ``nn.Module``s (``widen``,
  ``deepen``, ``drop_layer``, ``low_rank_factorize``, ``expand_embedding``)
  and, for transformers, ``prune``, ``insert_block``, ``remove_block``,
  ``grow_attention``, ``prune_heads``, ``widen_residual``,
  each run by the compiler's pass, also importable from ``nnx``;
- :mod:`nnx.transforms`: the seed's recorded recipes (``TransformRecipe``,
  ``lora``, ``low_rank``, ``check_optimizer``), on :mod:`nnx.peft`'s
  ``LoraLinear``;
- :mod:`nnx.nets`: the built-in nets nnx describes natively (FeedFwdNN,
  ConvNN) and their immutable ``params`` descriptors;
- :func:`nnx.tracing.support` lists a model's standardized tracing names
  and whether each is available (``nnx-support``);
- :mod:`nnx.safetensors` reads and writes safetensors files (numpy only);
- :mod:`nnx.tools` runs the command-line tools (nnx-opt, nnx-run).

``nnx._nnx`` (pybind11, built by CMake into ``<build>/python/nnx``) is the
implementation of the compiled parts; it is found in
``$NNX_BUILD_DIR/python/nnx`` (default: ``<repo>/build``). The names that
need it (compile, load, save, the surgery primitives) are imported on first
use, so that the exporter works without a build.
"""

import os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))
_repo = _os.path.dirname(_os.path.dirname(_here))


def build_dir():
    """The CMake build directory whose tools and ``_nnx`` module are used."""
    return _os.environ.get("NNX_BUILD_DIR") or _os.path.join(_repo, "build")


_ext = _os.path.join(build_dir(), "python", "nnx")
if _os.path.isdir(_ext) and _ext not in __path__:
    __path__.append(_ext)

_LAZY = {
    "compile": "runtime", "load": "runtime", "save": "runtime",
    "CompiledModel": "runtime", "Model": "runtime", "Error": "runtime",
    "export": "torch_export", "to_torch": "torch_import",
    "TransformRecipe": "transforms", "lora": "transforms",
    "low_rank": "transforms", "check_optimizer": "transforms",
    "widen": "surgery", "deepen": "surgery", "drop_layer": "surgery",
    "low_rank_factorize": "surgery", "expand_embedding": "surgery",
    "prune": "surgery", "insert_block": "surgery", "remove_block": "surgery",
    "grow_attention": "surgery", "prune_heads": "surgery",
    "widen_residual": "surgery", "prune_channels": "surgery",
    "widen_channels": "surgery",
    "FeedFwdNN": "nets", "ConvNN": "nets",
}

__all__ = sorted(_LAZY)


#: Submodules reachable as attributes (``nnx.tracing.support``).
_SUBMODULES = {"runtime", "surgery", "transforms", "tracing", "peft", "nets",
               "torch_export", "torch_import", "safetensors", "tools"}


def __getattr__(name):
    import importlib
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nnx' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
