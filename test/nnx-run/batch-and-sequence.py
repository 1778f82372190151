# Probes and patches on a model whose batch AND sequence length are both
# dynamic (Inputs/llama_bs.mlir: ids tensor<?x?xi64>, read with the llama
# family), through nnx-run on CPU. One IR file runs at two (batch, sequence)
# pairs; at each, the logits, every standardized value read with --probe,
# and the results of right-size patches match the NumPy reference
# (Inputs/llama_bs.py) within 1e-5. A name read and written in one run reads
# the value before the write (docs/Tracing.md), and writing back a value read
# changes nothing.
# RUN: %python %s %nnx_bin/bin/nnx-run %S/Inputs %t | FileCheck %s
# CHECK: (2, 3): OK
# CHECK: (3, 5): OK
# CHECK: OK {{[0-9]+}} checks
import os
import subprocess
import sys

import numpy as np

NNX_RUN, INPUTS, TMP = sys.argv[1:4]
sys.path.insert(0, INPUTS)
import llama_bs  # noqa: E402

MODEL = os.path.join(INPUTS, "llama_bs.mlir")
os.makedirs(TMP, exist_ok=True)
CHECKS = 0
# Every standardized value of the model, in execution order.
NAMES = list(llama_bs.forward(np.zeros((1, 1), np.int64))[1])


def path(name):
    return os.path.join(TMP, name)


def run(ids, probes=(), patches=()):
    """Runs the model on `ids`; returns (logits, {probe: array})."""
    np.save(path("ids.npy"), ids)
    cmd = [NNX_RUN, MODEL, "--opt-level=0", "--input", path("ids.npy"),
           "--output", path("logits.npy")]
    if probes or patches:
        cmd += ["--family", "llama"]
    for p in probes:
        cmd += ["--probe", f"{p}={path('read-' + p + '.npy')}"]
    for name, array in patches:
        np.save(path("patch-" + name + ".npy"), array.astype(np.float32))
        cmd += ["--patch", f"{name}={path('patch-' + name + '.npy')}"]
    subprocess.run(cmd, check=True)
    return (np.load(path("logits.npy")),
            {p: np.load(path("read-" + p + ".npy")) for p in probes})


def check(cond, what):
    global CHECKS
    if not cond:
        sys.exit(f"FAIL: {what}")
    CHECKS += 1


def close(got, want, what):
    check(got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}")
    check(got.dtype == np.float32, f"{what}: dtype {got.dtype}")
    # -inf where the reference has -inf (the causal mask), close elsewhere.
    check(np.array_equal(np.isneginf(got), np.isneginf(want)), f"{what}: -inf differ")
    finite = np.isfinite(want)
    err = np.abs(got[finite] - want[finite]).max(initial=0)
    check(err <= 1e-5, f"{what}: max error {err}")


def pair(batch, seq, rng):
    ids = rng.integers(0, llama_bs.V, size=(batch, seq)).astype(np.int64)
    logits, _ = run(ids)
    ref_logits, ref = llama_bs.forward(ids)
    close(logits, ref_logits, "logits")

    # Every value read in one run, in execution order.
    reads = [n for n in NAMES if n != "logits"]
    logits, got = run(ids, reads)
    close(logits, ref_logits, "logits with probes")
    for n in reads:
        close(got[n], ref[n], f"probe {n}")

    # Right-size patches, each in its own run, at several ranks and shapes.
    for name in ("layers.0.attention_output", "layers.0.attention_scores",
                 "layers.0.attention_mask", "layers.0.layer_mid",
                 "layers.0.attention_queries"):
        patch = rng.standard_normal(ref[name].shape).astype(np.float32)
        later = ["layers.0.layer_output"]
        logits, got = run(ids, later, [(name, patch)])
        want_logits, want = llama_bs.forward(ids, {name: patch})
        close(logits, want_logits, f"logits with {name} written")
        close(got[later[0]], want[later[0]], f"layer_output with {name} written")
        check(np.abs(logits - ref_logits).max() > 1e-3, f"writing {name} changes nothing")

    # A name read and written in one run: the read sees the value before
    # the write, everything after it sees the write.
    for name in ("layers.0.attention_output", "layers.0.layer_mid",
                 "layers.0.attention_probabilities"):
        patch = rng.standard_normal(ref[name].shape).astype(np.float32)
        logits, got = run(ids, [name], [(name, patch)])
        close(got[name], ref[name], f"{name} read and written: the read")
        close(logits, llama_bs.forward(ids, {name: patch})[0],
              f"{name} read and written: the logits")

    # Writing back what was read changes nothing, bit for bit.
    _, got = run(ids, ["layers.0.mlp_output"])
    plain, _ = run(ids)
    back, _ = run(ids, (), [("layers.0.mlp_output", got["layers.0.mlp_output"])])
    check(np.array_equal(back, plain), "writing back mlp_output changes the logits")
    print(f"({batch}, {seq}): OK")


rng = np.random.default_rng(3)
for batch, seq in ((2, 3), (3, 5)):
    pair(batch, seq, rng)
print(f"OK {CHECKS} checks")
