# Recurrent layers end to end through nnx-run (CPU): a 2-layer bidirectional
# batch-first LSTM with (h_0, c_0) in and (output, h_n, c_n) out, and a
# 2-layer relu RNN without biases, written in IR with their tensors, each
# run at two (batch, sequence) pairs from one IR file (batch and sequence
# dynamic: the forward loops over the run-time length) and compared with a
# NumPy reference within 1e-5; probes read the LSTM's output and h_n. A sequence
# of length 0 is refused at run time (PyTorch raises too).
# RUN: %python %s %nnx_bin/bin/nnx-run %t | FileCheck %s
# CHECK: lstm (2, 3): OK
# CHECK: lstm (1, 7): OK
# CHECK: rnn (3, 4): OK
# CHECK: rnn (1, 9): OK
# CHECK: empty: nnx-run: error: 'nnx.rnn' at {{.*}}rnn.mlir:2:3: the sequence length is 0, it must be at least 1
import os
import subprocess
import sys

import numpy as np

NNX_RUN, TMP = sys.argv[1:3]
os.makedirs(TMP, exist_ok=True)
RNG = np.random.default_rng(0)
I, H, L = 3, 4, 2


def dense(a):
    return "dense<" + np.array2string(
        a, separator=", ", threshold=1 << 20, floatmode="unique").replace(
        "\n", "") + f"> : tensor<{'x'.join(map(str, a.shape))}xf32>"


def tensors(gates, dirs, bias):
    t = {}
    for l in range(L):
        for d in range(dirs):
            sfx = f"_l{l}" + ("_reverse" if d else "")
            width = I if l == 0 else H * dirs
            t["weight_ih" + sfx] = RNG.uniform(-.5, .5, (gates * H, width))
            t["weight_hh" + sfx] = RNG.uniform(-.5, .5, (gates * H, H))
            if bias:
                t["bias_ih" + sfx] = RNG.uniform(-.5, .5, gates * H)
                t["bias_hh" + sfx] = RNG.uniform(-.5, .5, gates * H)
    return {k: v.astype(np.float32) for k, v in t.items()}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference(kind, t, x, h0, c0, dirs):
    """Time-major x (T, B, I); returns output, h_n, c_n (float64)."""
    x = x.astype(np.float64)
    hn, cn = [], []
    for l in range(L):
        outs = []
        for d in range(dirs):
            sfx = f"_l{l}" + ("_reverse" if d else "")
            w_ih, w_hh = t["weight_ih" + sfx], t["weight_hh" + sfx]
            b = t.get("bias_ih" + sfx, 0) + t.get("bias_hh" + sfx, 0)
            h, c = h0[l * dirs + d].astype(np.float64), None
            if kind == "lstm":
                c = c0[l * dirs + d].astype(np.float64)
            out = np.zeros(x.shape[:2] + (H,))
            steps = range(x.shape[0])
            for s in (reversed(steps) if d else steps):
                g = x[s] @ w_ih.T + h @ w_hh.T + b
                if kind == "lstm":
                    i, f, gg, o = np.split(g, 4, axis=-1)
                    c = sigmoid(f) * c + sigmoid(i) * np.tanh(gg)
                    h = sigmoid(o) * np.tanh(c)
                else:
                    h = np.maximum(g, 0)
                out[s] = h
            outs.append(out)
            hn.append(h)
            cn.append(c)
        x = np.concatenate(outs, axis=-1)
    return x, np.stack(hn), (np.stack(cn) if kind == "lstm" else None)


def model(kind, t, attrs, inputs):
    body = ", ".join([f"input_size = {I}", f"hidden_size = {H}",
                      f"num_layers = {L}"] + attrs +
                     [f"{k} = {dense(v)}" for k, v in t.items()])
    text = (f"nnx.model @{kind} inputs({', '.join(inputs)}) {{\n"
            f"  nnx.{kind} @net {{{body}}}\n}}\n")
    path = os.path.join(TMP, kind + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    return path


# Probes on the layer's results: `output` selects among them.
FAMILY = os.path.join(TMP, "rnn.json")
with open(FAMILY, "w") as f:
    f.write('{"name": "rnn", "hosts": {"model": ""}, "values": {'
            '"rnn_output": {"host": "model", "path": "output", "select": 0},'
            '"rnn_h_n": {"host": "model", "path": "output", "select": 1}}}')


def run(path, inputs, n_out, probes=()):
    cmd = [NNX_RUN, path, "--opt-level=0"]
    for i, a in enumerate(inputs):
        np.save(os.path.join(TMP, f"in{i}.npy"), a)
        cmd += ["--input", os.path.join(TMP, f"in{i}.npy")]
    for i in range(n_out):
        cmd += ["--output", os.path.join(TMP, f"out{i}.npy")]
    if probes:
        cmd += ["--family", FAMILY]
    for p in probes:
        cmd += ["--probe", f"{p}={os.path.join(TMP, p + '.npy')}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return r.stderr
    outs = [np.load(os.path.join(TMP, f"out{i}.npy")) for i in range(n_out)]
    outs += [np.load(os.path.join(TMP, p + ".npy")) for p in probes]
    return outs


def close(got, want, what):
    if got.shape != want.shape or not np.allclose(got, want, atol=1e-5,
                                                  rtol=1e-5):
        sys.exit(f"FAIL {what}: {got.shape} vs {want.shape}, max error "
                 f"{np.abs(got - want).max() if got.shape == want.shape else '-'}")


# LSTM: batch first, bidirectional, states in and out, probe on the output.
t = tensors(4, 2, True)
lstm = model("lstm", t, ["batch_first", "bidirectional"],
             ["tensor<?x?x3xf32>", "tensor<4x?x4xf32>", "tensor<4x?x4xf32>"])
for batch, seq in [(2, 3), (1, 7)]:
    x = RNG.standard_normal((batch, seq, I)).astype(np.float32)
    h0, c0 = (RNG.standard_normal((L * 2, batch, H)).astype(np.float32)
              for _ in range(2))
    out, hn, cn, p_out, p_hn = run(lstm, [x, h0, c0], 3,
                                   probes=("rnn_output", "rnn_h_n"))
    ref = reference("lstm", t, x.transpose(1, 0, 2), h0, c0, 2)
    close(out, ref[0].transpose(1, 0, 2), "lstm output")
    close(hn, ref[1], "lstm h_n")
    close(cn, ref[2], "lstm c_n")
    close(p_out, out, "lstm probe of the output")
    close(p_hn, hn, "lstm probe of h_n")
    print(f"lstm {(batch, seq)}: OK")

# RNN: relu, time major, no biases, no state given (zeros).
t = tensors(1, 1, False)
rnn = model("rnn", t, ["bias = false", "nonlinearity = #nnx.activation<relu>"],
            ["tensor<?x?x3xf32>"])
for batch, seq in [(3, 4), (1, 9)]:
    x = RNG.standard_normal((seq, batch, I)).astype(np.float32)
    out, hn = run(rnn, [x], 2)
    ref = reference("rnn", t, x, np.zeros((L, batch, H)), None, 1)
    close(out, ref[0], "rnn output")
    close(hn, ref[1], "rnn h_n")
    print(f"rnn {(batch, seq)}: OK")

err = run(rnn, [np.zeros((0, 2, I), np.float32)], 2)
print("empty:", err.strip().splitlines()[-1] if isinstance(err, str) else err)
