"""nnx.compile(..., tensor_parallel=True) from Python, on every rank of an
MPI job: the reference Llama (python/tests/models, GQA and SwiGLU) exported
from PyTorch, compiled whole and split over the ranks in the same process,
both run on the same ids; each rank checks the split logits against the
whole model's and PyTorch's (atol = rtol = 1e-5) and rank 0 prints one line.

  --mode tp      the check above (under mpirun -np N, N >= 2)
  --mode single  compile with tensor_parallel=True in a single process
                 (prints the ValueError)
  --mode type    tensor_parallel="yes" (prints the TypeError)
"""

import argparse
import os
import sys

import numpy as np
import torch

_repo = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "..", "..", "..")
sys.path.insert(0, os.path.join(_repo, "python", "tests"))
import nnx  # noqa: E402
from models import llama  # noqa: E402
from models.common import attention_interface  # noqa: E402

INPUTS = [((None, None), torch.int64)]
TOL = dict(atol=1e-5, rtol=1e-5)


def compile_llama(model, tensor_parallel):
    return nnx.compile(model, inputs=INPUTS, functions=[attention_interface],
                       threads=1, tensor_parallel=tensor_parallel)


def check(model):
    whole = compile_llama(model, False)
    split = compile_llama(model, True)
    assert (whole.ranks, whole.rank) == (1, 0)
    assert split.ranks >= 2 and 0 <= split.rank < split.ranks
    vocab = model.lm_head.out_features
    for batch, seq in [(2, 5), (3, 9)]:
        ids = torch.from_numpy(np.random.default_rng(seq).integers(
            0, vocab, size=(batch, seq)))
        logits, _ = split(ids)
        expected, _ = whole(ids)
        with torch.no_grad():
            reference = model(ids)
        reference = reference[0] if isinstance(reference, tuple) else reference
        torch.testing.assert_close(logits, expected, **TOL)
        torch.testing.assert_close(logits, reference, **TOL)
    if split.rank == 0:
        print(f"rank 0 of {split.ranks}: llama logits {tuple(logits.shape)} "
              f"match the whole model and PyTorch")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["tp", "single", "type"],
                        default="tp")
    args = parser.parse_args()
    model = llama.build(llama.small_config(), seed=0)
    if args.mode == "tp":
        check(model)
        return
    try:
        compile_llama(model, True if args.mode == "single" else "yes")
    except (ValueError, TypeError) as e:
        print(f"{type(e).__name__}: {e}")
        return
    sys.exit("compile(..., tensor_parallel=...) did not raise")


if __name__ == "__main__":
    main()
