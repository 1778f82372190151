"""Shared set-up for nnx's Python tests.

Tools and the ``_nnx`` module come from ``$NNX_BUILD_DIR`` (CMake passes its
build directory through ctest); tests that need torch are skipped without it.
"""

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

try:
    import torch

    torch.set_num_threads(1)
    HAVE_TORCH = True
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_TORCH = False
