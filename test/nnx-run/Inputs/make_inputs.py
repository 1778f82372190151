"""Writes the .npy files the nnx-run tests use into the directory argv[1]."""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, array):
    np.save(os.path.join(out, name), array)


x = np.array([[1, 2], [-1, 0.5], [0, 0]], dtype=np.float32)
save("x3.npy", x)
save("x1.npy", np.array([[2, -3]], dtype=np.float32))
save("x8.npy", np.linspace(-2, 2, 24, dtype=np.float32).reshape(3, 8))
save("x5.npy", np.arange(10, dtype=np.float32).reshape(5, 2) / 4 - 1)
save("x3_f64.npy", x.astype(np.float64))
save("x3_i64.npy", x.astype(np.int64))
save("wrong_dim.npy", np.zeros((3, 5), dtype=np.float32))
save("rank3.npy", np.zeros((3, 2, 1), dtype=np.float32))
save("fortran.npy", np.asfortranarray(np.ones((3, 2), dtype=np.float32)))
save("big_endian.npy", x.astype(">f4"))
save("complex.npy", x.astype(np.complex64))
with open(os.path.join(out, "not_npy.npy"), "w") as f:
    f.write("this is not an npy file\n")
with open(os.path.join(out, "x3.npy"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "truncated.npy"), "wb") as f:
    f.write(data[:-4])
