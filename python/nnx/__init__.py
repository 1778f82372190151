"""nnx: Python side of the nnx MLIR dialect.

- :mod:`nnx.torch_export` writes PyTorch modules as nnx IR text (needs torch),
  with their tensors inline or in a safetensors weights file.
- :mod:`nnx.safetensors` reads and writes safetensors files (numpy only).
- :mod:`nnx.nets` holds the built-in nets nnx describes natively (FeedFwdNN,
  ConvNN).
- :mod:`nnx.tools` runs the command-line tools (nnx-opt, nnx-run).
- ``nnx._nnx`` (built by CMake into ``<build>/python/nnx``) binds the C++ API:
  parsing, dotted-path lookup, parameter counts and pass pipelines.

The package sources live in ``python/nnx``; the compiled ``_nnx`` module is
found in ``$NNX_BUILD_DIR/python/nnx`` (default: ``<repo>/build``).
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
