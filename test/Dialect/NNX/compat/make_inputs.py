"""The inputs compat.test runs the files on: python3 make_inputs.py DIR."""
import sys

import numpy as np

out = sys.argv[1]
# Token ids of batch 2 and sequence 5 (the families' vocabulary is 16), and
# of the older GPT-2 file's fixed sequence of 4.
np.save(out + "/ids.npy", (np.arange(10, dtype=np.int64).reshape(2, 5) * 7) % 16)
np.save(out + "/ids4.npy", (np.arange(12, dtype=np.int64).reshape(3, 4) * 5) % 16)
# An image batch for the convnet (2 channels, 6 x 6) and rows for the FeedFwd.
np.save(out + "/image.npy",
        np.linspace(-1.0, 1.0, 2 * 2 * 6 * 6, dtype=np.float32).reshape(2, 2, 6, 6))
np.save(out + "/rows.npy", np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
