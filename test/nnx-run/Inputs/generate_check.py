"""generate.test's helper: `make DIR` writes the prompts; `check FAMILY
TOKENS.npy PROMPT_LEN` checks nnx-run --generate's tokens against PyTorch's
family reference generating greedily without a cache."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, os.pardir,
                                "python", "tests"))


def main(argv):
    if argv[1] == "make":
        ids = np.random.default_rng(0).integers(0, 32, (2, 4))
        np.save(os.path.join(argv[2], "ids.npy"), ids.astype(np.int64))
        np.save(os.path.join(argv[2], "floats.npy"), ids.astype(np.float32))
        return 0
    import torch
    from models import build
    family, tokens, prompt = argv[2], np.load(argv[3]), int(argv[4])
    model = build(family, seed=0)
    seq = torch.as_tensor(tokens[:, :prompt])
    with torch.no_grad():
        while seq.shape[1] < tokens.shape[1]:
            token = model(seq)[:, -1].argmax(-1)
            seq = torch.cat([seq, token[:, None]], 1)
    if not np.array_equal(seq.numpy(), tokens):
        print(f"nnx-run: {tokens.tolist()}\ntorch: {seq.tolist()}")
        return 1
    print(f"{family}: {tokens.shape[1] - prompt} tokens equal PyTorch's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
