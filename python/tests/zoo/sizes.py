"""Finds each torchvision model's smallest accepted image size on
zoo.GRID (its calibration and its forward run), for zoo.SIZES:

    cd python/tests && python3 -m zoo.sizes [NAME ...]

Prints ``name size`` lines and the entries that differ from zoo.SIZES."""

import sys

import torch

from . import DEFAULT_SIZE, EXAMPLES, GRID, SIZES, cases


def smallest(case, model):
    """The first size of the grid at which calibration (train mode, batch
    2) and the eval-mode forward run."""
    for size in GRID:
        try:
            with torch.no_grad():
                model.train()
                model(torch.randn(2, 3, size, size))
                model.eval()
                model(torch.randn(1, 3, size, size))
            return size
        except Exception:  # noqa: BLE001 - any refusal means too small
            continue
    return None


def main(names):
    torch.set_num_threads(1)
    differ = []
    for case in cases():
        if case.family in EXAMPLES or (names and case.name not in names):
            continue
        size = smallest(case, case.build_uncalibrated(0))
        print(case.name, size, flush=True)
        if size != SIZES.get(case.name, DEFAULT_SIZE):
            differ.append((case.name, size))
    for name, size in differ:
        print(f"differs from zoo.SIZES: {name} {size}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
