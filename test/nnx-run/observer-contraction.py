# A read probe keeps its value as one more result of the forward, a write
# probe replaces it by an argument: either changes the uses of the value's
# producer, and upstream's elementwise fusion fuses a producer of one use
# into its consumer. Fused into a batched matmul (here a tanh, static
# shapes), the contraction was no longer `out + a * b`, ran as scalar
# multiply-then-add loops instead of vector FMAs, and gave other bits than
# the same matmul whose operand is also returned (what a probe read does).
# Now no producer fuses into a contraction: the outputs are bit-identical,
# and equal to the matmul of the returned operand as NumPy computes it.
# RUN: %python %s %nnx_bin/bin/nnx-run %t | FileCheck %s
# CHECK: operand returned too: bit-identical
# CHECK: operand as an argument: bit-identical
import os
import subprocess
import sys

import numpy as np

NNX_RUN, TMP = sys.argv[1:3]
os.makedirs(TMP, exist_ok=True)
Q, S = "tensor<4x2x37x64xf32>", "tensor<4x2x37x37xf32>"
MATMUL = (f"  %s = nnx.fn.matmul %n, %k {{transpose_b}} : {Q}, {Q} -> {S}\n")
MODELS = {
    "plain": (f"func.func @forward(%q: {Q}, %k: {Q}) -> {S} {{\n"
              f"  %n = math.tanh %q : {Q}\n" + MATMUL +
              f"  return %s : {S}\n}}\n"),
    "returned": (f"func.func @forward(%q: {Q}, %k: {Q}) -> ({S}, {Q}) {{\n"
                 f"  %n = math.tanh %q : {Q}\n" + MATMUL +
                 f"  return %s, %n : {S}, {Q}\n}}\n"),
    "argument": (f"func.func @forward(%n: {Q}, %k: {Q}) -> {S} {{\n" + MATMUL +
                 f"  return %s : {S}\n}}\n"),
}


def path(name):
    return os.path.join(TMP, name)


def run(name, inputs, outputs=1):
    with open(path(name + ".mlir"), "w") as f:
        f.write(MODELS[name])
    cmd = [NNX_RUN, path(name + ".mlir")]
    for i in inputs:
        cmd += ["--input", path(i + ".npy")]
    for o in range(outputs):
        cmd += ["--output", path(f"{name}{o}.npy")]
    subprocess.run(cmd, check=True)
    return [np.load(path(f"{name}{o}.npy")) for o in range(outputs)]


rng = np.random.default_rng(0)
np.save(path("q.npy"), rng.standard_normal((4, 2, 37, 64)).astype(np.float32))
np.save(path("k.npy"), rng.standard_normal((4, 2, 37, 64)).astype(np.float32))
plain, = run("plain", ["q", "k"])
returned, tanh = run("returned", ["q", "k"], outputs=2)
np.save(path("n.npy"), tanh)
argument, = run("argument", ["n", "k"])
k = np.load(path("k.npy"))
want = tanh.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64)
assert np.abs(plain - want).max() <= 1e-4, np.abs(plain - want).max()
for what, other in (("operand returned too", returned),
                    ("operand as an argument", argument)):
    diff = np.abs(other - plain).max()
    print(f"{what}: " + ("bit-identical" if np.array_equal(other, plain)
                         else f"DIFFERENT by up to {diff}"))
