"""nnx.compile(..., tensor_parallel=True) with ranks whose calls disagree
(tensor-parallel-mismatch.test), under mpirun -np 2: a small MLP split over
the ranks; rank 1's first calls give an input of a dtype nnx cannot pass
and a tensor off the CPU, then each rank gives its own input and every rank must run rank 0's. Each
rank prints what it saw, one line per event."""

import os
import sys

import numpy as np
import torch
from torch import nn

_repo = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "..", "..", "..")
sys.path.insert(0, os.path.join(_repo, "python"))
import nnx  # noqa: E402


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    run = nnx.compile(model, inputs=[(None, 4)], threads=1,
                      tensor_parallel=True)
    rank = run.rank
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    # Refused by the binding (a dtype nnx cannot pass), then by Python
    # (a tensor off the CPU).
    for bad in (x.astype(np.complex64), torch.zeros(3, 4, device="meta")):
        try:
            run(bad if rank == 1 else x)
            print(f"rank {rank}: the bad call ran", flush=True)
        except Exception as e:  # noqa: BLE001 - printed for FileCheck
            name = ("nnx.Error" if isinstance(e, nnx.Error)
                    else type(e).__name__)
            print(f"rank {rank}: {name}: {e}", flush=True)
    mine = x if rank == 0 else np.ones((5, 4), np.float32)
    y = run(mine)[0]
    expected = model(torch.from_numpy(x)).detach().numpy()
    same = y.shape == expected.shape and np.allclose(y, expected, atol=1e-5,
                                                     rtol=1e-5)
    print(f"rank {rank}: ran rank 0's input: {same}", flush=True)


if __name__ == "__main__":
    main()
