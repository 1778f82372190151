# End to end through nnx-run on every bundled family: probes read the
# residual stream and the sublayer contributions, patches substitute values.
#   layer_input + attention_output + mlp_output == layer_output
# holds exactly in each block's own order of additions (for Falcon, whose
# block adds x + (mlp + attention), within 1e-5 in the standard order); a
# write to attention_output moves layer_output by the written difference.
# RUN: %python %s %nnx_bin/bin/nnx-run %nnx_src %t | FileCheck %s
# CHECK: OK {{[0-9]+}} checks
import os
import subprocess
import sys

import numpy as np

NNX_RUN, SRC, TMP = sys.argv[1:4]
os.makedirs(TMP, exist_ok=True)
FAMILIES = ["gpt2", "llama", "gemma2", "bloom", "cohere", "falcon"]
PARALLEL = {"cohere", "falcon"}  # the MLP does not see the attention
CHECKS = 0


def path(name):
    return os.path.join(TMP, name)


def run(family, probes=(), patches=(), fam_arg=None):
    """Runs the family's example; returns (logits, {probe: array})."""
    model = os.path.join(SRC, "examples", "families", family + ".mlir")
    cmd = [NNX_RUN, model, "--opt-level=0", "--input", path("ids.npy"), "--output", path("logits.npy")]
    if probes or patches:
        cmd += ["--family", fam_arg or family]
    for p in probes:
        cmd += ["--probe", f"{p}={path(p + '.npy')}"]
    for name, array in patches:
        np.save(path("patch-" + name + ".npy"), array)
        cmd += ["--patch", f"{name}={path('patch-' + name + '.npy')}"]
    subprocess.run(cmd, check=True)
    return np.load(path("logits.npy")), {p: np.load(path(p + ".npy")) for p in probes}


def check(cond, what):
    global CHECKS
    if not cond:
        sys.exit(f"FAIL: {what}")
    CHECKS += 1


rng = np.random.default_rng(7)
np.save(path("ids.npy"), rng.integers(0, 16, size=(3, 4)).astype(np.int64))

def stream(layer):
    return [f"layers.{layer}.{v}" for v in ("layer_input", "attention_scores",
            "attention_probabilities", "attention_output", "mlp_output", "layer_output")]


for fam in FAMILIES:
    # One run reads both layers, in execution order.
    logits, ref = run(fam, stream(0) + stream(1))
    for layer in (0, 1):
        x, s, p, a, m, y = (ref[n] for n in stream(layer))
        check(x.shape == (3, 4, 32) and x.dtype == np.float32, f"{fam}: probe shape {x.shape}")
        check(not np.array_equal(a, 0 * a) and not np.array_equal(m, 0 * m),
              f"{fam} layer {layer}: empty contribution")
        if fam == "falcon":
            check(np.array_equal(x + (m + a), y), f"falcon layer {layer}: x + (mlp + attn) != out")
            check(np.abs((x + a + m) - y).max() <= 1e-5, f"falcon layer {layer}: identity beyond 1e-5")
        else:
            check(np.array_equal(x + a + m, y),
                  f"{fam} layer {layer}: x + attn + mlp != out, max diff {np.abs(x + a + m - y).max()}")
        # Inside the shared attention call: causal probabilities that sum to
        # one over the keys, the softmax of the scores.
        check(p.shape == (3, 4, 4, 4), f"{fam}: probabilities shape {p.shape}")
        check(np.abs(p.sum(-1) - 1).max() <= 1e-5, f"{fam}: probabilities do not sum to 1")
        check(np.all(np.triu(p, 1) == 0), f"{fam}: probabilities are not causal")
        e = np.exp(s - s.max(-1, keepdims=True))
        check(np.abs(e / e.sum(-1, keepdims=True) - p).max() <= 1e-5,
              f"{fam}: softmax(scores) != probabilities")

    # Writes: substituting the read value changes nothing, bit for bit;
    # another value moves layer_output by the written difference.
    x, a, m, y = (ref["layers.0." + v] for v in
                  ("layer_input", "attention_output", "mlp_output", "layer_output"))
    same, got = run(fam, ["layers.0.layer_output"], [("layers.0.attention_output", a)])
    check(np.array_equal(got["layers.0.layer_output"], y),
          f"{fam}: writing back the read attention_output changed layer_output")
    check(np.array_equal(same, logits), f"{fam}: writing back the read value changed the logits")

    w = (a + rng.standard_normal(a.shape).astype(np.float32)).astype(np.float32)
    patched, got = run(fam, ["layers.0.layer_input", "layers.0.mlp_output", "layers.0.layer_output"],
                       [("layers.0.attention_output", w)])
    x2, m2, y2 = (got["layers.0." + v] for v in ("layer_input", "mlp_output", "layer_output"))
    check(np.array_equal(x2, x), f"{fam}: a later write changed layer_input")
    if fam == "falcon":
        check(np.array_equal(x2 + (m2 + w), y2), "falcon: patched identity")
    else:
        check(np.array_equal(x2 + w + m2, y2), f"{fam}: patched identity x + w + mlp' != out'")
    check(not np.array_equal(y2, y) and not np.array_equal(patched, logits),
          f"{fam}: the write had no effect")
    if fam in PARALLEL:
        check(np.array_equal(m2, m), f"{fam}: the parallel MLP saw the attention write")
        check(np.abs((y2 - y) - (w - a)).max() <= 1e-5,
              f"{fam}: layer_output moved by {np.abs((y2 - y) - (w - a)).max()} more than the written difference")

# Falcon's in-place add: the family reads a copy of the MLP output taken
# before `mlp_output += attention_output`; without the copy a read sees the
# updated tensor. A write lands before the in-place add.
fam_nocopy = os.path.join(SRC, "test", "Dialect", "NNX", "Tracing", "Inputs", "falcon-no-copy.json")
_, got = run("falcon", ["layers.0.attention_output", "layers.0.mlp_output"])
a, m = got["layers.0.attention_output"], got["layers.0.mlp_output"]
_, got = run("falcon", ["layers.0.mlp_output"], fam_arg=fam_nocopy)
check(np.array_equal(got["layers.0.mlp_output"], m + a), "falcon without copy: read is not mlp + attn")
w = rng.standard_normal(m.shape).astype(np.float32)
_, got = run("falcon", ["layers.0.layer_input", "layers.0.layer_output"], [("layers.0.mlp_output", w)])
check(np.array_equal(got["layers.0.layer_input"] + (w + a), got["layers.0.layer_output"]),
      "falcon: a write to mlp_output is not what the in-place add sees")

# Gemma-2's sandwich (the seed's example): attention_output is the sibling
# post-attention norm's output, not the attention's own return, and only the
# redefined value makes the identity hold.
fam_raw = os.path.join(SRC, "test", "Dialect", "NNX", "Tracing", "Inputs", "gemma2-raw.json")
names = ["layers.0.layer_input", "layers.0.attention_returned", "layers.0.attention_output",
         "layers.0.mlp_output", "layers.0.layer_output"]
_, got = run("gemma2", names, fam_arg=fam_raw)
x, r, a, m, y = (got[n] for n in names)
check(not np.array_equal(a, r), "gemma2: attention_output equals the attention's own return")
check(np.array_equal(x + a + m, y), "gemma2: identity with the redefined attention_output")
check(not np.allclose(x + r + m, y, atol=1e-5), "gemma2: identity holds with the raw return")

print(f"OK {CHECKS} checks")

