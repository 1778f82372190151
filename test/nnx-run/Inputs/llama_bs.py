"""A one-layer Llama whose batch AND sequence length are both dynamic.

`llama_bs.py mlir` prints the model (test/nnx-run/Inputs/llama_bs.mlir is
that output): the native names of families/llama.json, an explicit forward
for each custom module (upstream linalg/tensor ops and nnx.call), ids of type
tensor<?x?xi64>, a causal mask built from the run-time sequence length (-inf
above the diagonal), 2 heads of 4, width 8, MLP 16, vocabulary 16.

Imported, `forward(ids, patches)` is its NumPy reference: the logits and
every standardized value of families/base.json, each as a read sees it (the
value before a write of the same name), with `patches` (name -> array)
substituted where they are written.
"""
import sys

import numpy as np

D, H, DH, F, V = 8, 2, 4, 16, 16
T3 = "tensor<?x?x8xf32>"
TIDS = "tensor<?x?xi64>"
THEADS = "tensor<?x2x?x4xf32>"  # (B, H, S, Dh)
TCTX = "tensor<?x?x2x4xf32>"  # (B, S, H, Dh)
TPROBS = "tensor<?x2x?x?xf32>"  # (B, H, S, S)
TMASK = "tensor<?x?xf32>"  # (S, S)
TWIDE = "tensor<?x?x16xf32>"
TLOGITS = "tensor<?x?x16xf32>"


def weights():
    """Seeded weights, multiples of 1/64 so that the printed IR is exact."""
    rng = np.random.default_rng(12)

    def w(*shape, scale=0.35, offset=0.0):
        v = offset + rng.standard_normal(shape) * scale
        return (np.round(v * 64) / 64).astype(np.float32)

    return {
        "embed_tokens": w(V, D, scale=0.5),
        "input_layernorm": w(D, scale=0.1, offset=1.0),
        "q_proj": w(D, D), "k_proj": w(D, D), "v_proj": w(D, D),
        "o_proj": w(D, D),
        "post_attention_layernorm": w(D, scale=0.1, offset=1.0),
        "gate_proj": w(F, D), "up_proj": w(F, D), "down_proj": w(D, F),
        "norm": w(D, scale=0.1, offset=1.0),
        "lm_head": w(V, D),
    }


# --- the IR -------------------------------------------------------------------


def dense(a):
    def rec(x):
        if x.ndim == 0:
            return repr(float(x))
        return "[" + ", ".join(rec(y) for y in x) + "]"
    shape = "x".join(str(d) for d in a.shape)
    return f"dense<{rec(a)}> : tensor<{shape}xf32>"


def call(var, callee, args, types_in, types_out, extra=""):
    outs = types_out if isinstance(types_out, str) else f"({', '.join(types_out)})"
    return (f"{var} = nnx.call {callee}({', '.join(args)}){extra} : "
            f"({', '.join(types_in)}) -> {outs}")


def generic(result, maps, iters, ins, in_types, out, out_type, label, body):
    it = ", ".join(f'"{i}"' for i in iters)
    head = (f"{result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
            f'iterator_types = [{it}], nnx.source = "{label}"}}')
    if ins:
        head += f" ins({', '.join(ins)} : {', '.join(in_types)})"
    return [f"{head} outs({out} : {out_type}) {{"] + body + [f"}} -> {out_type}"]


def product(result, ins, in_types, out, out_type, maps, label):
    """The sum over the last loop of ins[0] * ins[1], into `out` (zeros)."""
    return generic(result, maps, ["parallel"] * 4 + ["reduction"], ins, in_types,
                   out, out_type, label, [
                       "^bb0(%l: f32, %r0: f32, %acc: f32):",
                       "  %m = arith.mulf %l, %r0 : f32",
                       "  %r = arith.addf %acc, %m : f32",
                       "  linalg.yield %r : f32"])


def attention_interface():
    m5 = "affine_map<(b, h, i, j, d) -> "
    m4 = "affine_map<(b, h, i, j) -> "
    n5 = "affine_map<(b, h, i, d, j) -> "
    body = [
        "%c0 = arith.constant 0 : index",
        "%c2 = arith.constant 2 : index",
        f"%b = tensor.dim %q, %c0 : {THEADS}",
        f"%s = tensor.dim %q, %c2 : {THEADS}",
        "%zero = arith.constant 0.0 : f32",
        f"%e = tensor.empty(%b, %s, %s) : {TPROBS}",
        f"%z = linalg.fill ins(%zero : f32) outs(%e : {TPROBS}) -> {TPROBS}",
    ]
    body += product("%qk", ["%q", "%k"], [THEADS, THEADS], "%z", TPROBS,
                    [m5 + "(b, h, i, d)>", m5 + "(b, h, j, d)>", m5 + "(b, h, i, j)>"], "matmul_0")
    body += generic("%scaled", [m4 + "(b, h, i, j)>"] * 2, ["parallel"] * 4, ["%qk"], [TPROBS],
                    "%e", TPROBS, "mul_0", [
                        "^bb0(%a: f32, %o: f32):",
                        "  %scale = arith.constant 0.5 : f32",
                        "  %r = arith.mulf %a, %scale : f32",
                        "  linalg.yield %r : f32"])
    body += generic("%masked", [m4 + "(b, h, i, j)>", m4 + "(i, j)>", m4 + "(b, h, i, j)>"],
                    ["parallel"] * 4, ["%scaled", "%mask"], [TPROBS, TMASK], "%e", TPROBS, "add_0", [
                        "^bb0(%a: f32, %mk: f32, %o: f32):",
                        "  %r = arith.addf %a, %mk : f32",
                        "  linalg.yield %r : f32"])
    body += [
        call("%probs", "@softmax", ["%masked"], [TPROBS], TPROBS, ' {nnx.source = "softmax_0"}'),
        f"%e2 = tensor.empty(%b, %s) : {TCTX}",
        f"%z2 = linalg.fill ins(%zero : f32) outs(%e2 : {TCTX}) -> {TCTX}",
    ]
    body += product("%ctx", ["%probs", "%v"], [TPROBS, THEADS], "%z2", TCTX,
                    [n5 + "(b, h, i, j)>", n5 + "(b, h, j, d)>", n5 + "(b, i, h, d)>"], "matmul_1")
    body += [f"nnx.return %ctx, %probs : {TCTX}, {TPROBS}"]
    fwd = ([f"nnx.forward @forward(%q: {THEADS}, %k: {THEADS}, %v: {THEADS}, %mask: {TMASK}) "
            f"-> ({TCTX}, {TPROBS}) {{"] + indent(body) + ["}"])
    return module("attention_interface", "attention_interface",
                  ["nnx.softmax @softmax {dim = -1 : i64}"], fwd)


def causal_mask():
    """0 on and below the diagonal, -inf above, for the run's length."""
    return [f"%em = tensor.empty(%s, %s) : {TMASK}"] + generic(
        "%mask", ["affine_map<(i, j) -> (i, j)>"], ["parallel"] * 2, [], [], "%em", TMASK,
        "causal_mask_0", [
            "^bb0(%o: f32):",
            "  %i = linalg.index 0 : index",
            "  %j = linalg.index 1 : index",
            "  %future = arith.cmpi ugt, %j, %i : index",
            "  %ninf = arith.constant 0xFF800000 : f32",
            "  %zero = arith.constant 0.0 : f32",
            "  %m = arith.select %future, %ninf, %zero : f32",
            "  linalg.yield %m : f32"])


def attention(w):
    children = [f"nnx.linear @{p} {{weight = {dense(w[p])}}}"
                for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    body = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            f"%b = tensor.dim %x, %c0 : {T3}", f"%s = tensor.dim %x, %c1 : {T3}",
            f"%e = tensor.empty(%b, %s) : {THEADS}"]
    for n, p in enumerate("qkv"):
        body += [call(f"%{p}", f"@{p}_proj", ["%x"], [T3], T3),
                 f"%{p}4 = tensor.expand_shape %{p} [[0], [1], [2, 3]] output_shape [%b, %s, 2, 4] "
                 f'{{nnx.source = "view_{n}"}} : {T3} into {TCTX}',
                 f"%{p}h = linalg.transpose ins(%{p}4 : {TCTX}) outs(%e : {THEADS}) "
                 f'permutation = [0, 2, 1, 3] {{nnx.source = "transpose_{n}"}}']
    body += causal_mask()
    body += [call("%ctx, %probs", "@attention_interface", ["%qh", "%kh", "%vh", "%mask"],
                  [THEADS] * 3 + [TMASK], [TCTX, TPROBS],
                  ' {nnx.source = "attention_interface_0", nnx.kwargs = ["attention_mask"]}'),
             f'%c = tensor.collapse_shape %ctx [[0], [1], [2, 3]] {{nnx.source = "view_3"}} '
             f": {TCTX} into {T3}",
             call("%out", "@o_proj", ["%c"], [T3], T3),
             f"nnx.return %out, %probs : {T3}, {TPROBS}"]
    fwd = [f"nnx.forward @forward(%x: {T3}) -> ({T3}, {TPROBS}) {{"] + indent(body) + ["}"]
    return module("self_attn", "LlamaAttention", children + attention_interface(), fwd)


def mlp(w):
    children = [f"nnx.linear @{p} {{weight = {dense(w[p])}}}"
                for p in ("gate_proj", "up_proj", "down_proj")] + ["nnx.silu @act_fn"]
    body = [call("%g", "@gate_proj", ["%x"], [T3], TWIDE),
            call("%a", "@act_fn", ["%g"], [TWIDE], TWIDE),
            call("%u", "@up_proj", ["%x"], [T3], TWIDE),
            f'%m = arith.mulf %a, %u {{nnx.source = "mul_0"}} : {TWIDE}',
            call("%d", "@down_proj", ["%m"], [TWIDE], T3),
            f"nnx.return %d : {T3}"]
    fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{"] + indent(body) + ["}"]
    return module("mlp", "LlamaMLP", children, fwd)


def rms_norm(w, name):
    return [f"nnx.rms_norm @{name} {{normalized_shape = array<i64: {D}>, weight = {dense(w[name])}}}"]


def block(w):
    children = (rms_norm(w, "input_layernorm") + attention(w) +
                rms_norm(w, "post_attention_layernorm") + mlp(w))
    body = [call("%h", "@input_layernorm", ["%x"], [T3], T3),
            call("%a, %probs", "@self_attn", ["%h"], [T3], [T3, TPROBS]),
            f'%x1 = arith.addf %x, %a {{nnx.source = "add_0"}} : {T3}',
            call("%h2", "@post_attention_layernorm", ["%x1"], [T3], T3),
            call("%m", "@mlp", ["%h2"], [T3], T3),
            f'%y = arith.addf %x1, %m {{nnx.source = "add_1"}} : {T3}',
            f"nnx.return %y : {T3}"]
    fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{"] + indent(body) + ["}"]
    return module('"0"', "LlamaDecoderLayer", children, fwd)


def indent(lines, n=2):
    return [" " * n + l if l else l for l in lines]


def module(name, cls, children, forward, attrs=None):
    head = f'nnx.module @{name} class = "{cls}"'
    if attrs:
        head += f" attributes {{{attrs}}}"
    return [head + " {"] + indent(children) + indent(forward) + ["}"]


def model_ir():
    w = weights()
    base = module("model", "LlamaModel",
                  [f"nnx.embedding @embed_tokens {{weight = {dense(w['embed_tokens'])}}}",
                   "nnx.module_list @layers {"] + indent(block(w)) + ["}"] + rms_norm(w, "norm"),
                  [f"nnx.forward @forward(%ids: {TIDS}) -> {T3} {{"] + indent([
                      call("%e", "@embed_tokens", ["%ids"], [TIDS], T3),
                      call("%h", '@layers::@"0"', ["%e"], [T3], T3),
                      call("%n", "@norm", ["%h"], [T3], T3),
                      f"nnx.return %n : {T3}"]) + ["}"])
    root = module("net", "LlamaForCausalLM",
                  base + [f"nnx.linear @lm_head {{weight = {dense(w['lm_head'])}}}"],
                  [f"nnx.forward @forward(%ids: {TIDS}) -> {TLOGITS} {{"] + indent([
                      call("%h", "@model", ["%ids"], [TIDS], T3),
                      call("%logits", "@lm_head", ["%h"], [T3], TLOGITS),
                      f"nnx.return %logits : {TLOGITS}"]) + ["}"],
                  attrs='config = {attn_implementation = "eager"}')
    lines = ["// Generated by test/nnx-run/Inputs/llama_bs.py: do not edit.",
             f"nnx.model @llama_bs inputs({TIDS}) {{"] + indent(root) + ["}"]
    return "\n".join(lines) + "\n"


# --- the NumPy reference ------------------------------------------------------


def forward(ids, patches=None):
    """(logits, {standardized name: value as read}) with `patches` written."""
    w = {k: v.astype(np.float64) for k, v in weights().items()}
    patches = patches or {}
    values = {}

    def at(name, value):
        values[name] = value
        return patches[name].astype(np.float64) if name in patches else value

    def rms(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g

    def heads(x):
        b, s, _ = x.shape
        return x.reshape(b, s, H, DH).transpose(0, 2, 1, 3)

    b, s = ids.shape
    x = at("embeddings", w["embed_tokens"][ids])
    x = at("layers.0.layer_input", x)
    h = at("layers.0.attention_norm_output", rms(x, w["input_layernorm"]))
    q = at("layers.0.attention_queries", heads(h @ w["q_proj"].T))
    k = at("layers.0.attention_keys", heads(h @ w["k_proj"].T))
    v = at("layers.0.attention_values", heads(h @ w["v_proj"].T))
    mask = at("layers.0.attention_mask", np.triu(np.full((s, s), -np.inf), 1))
    scores = at("layers.0.attention_scores", q @ k.transpose(0, 1, 3, 2) * 0.5 + mask)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    probs = at("layers.0.attention_probabilities", e / e.sum(-1, keepdims=True))
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, D)
    a = at("layers.0.attention_output", ctx @ w["o_proj"].T)
    x1 = x + a
    # The input of post_attention_layernorm: a write feeds the norm alone.
    h2 = rms(at("layers.0.layer_mid", x1), w["post_attention_layernorm"])
    h2 = at("layers.0.mlp_norm_output", h2)
    g = h2 @ w["gate_proj"].T
    m = at("layers.0.mlp_output", (g / (1 + np.exp(-g)) * (h2 @ w["up_proj"].T)) @ w["down_proj"].T)
    y = at("layers.0.layer_output", x1 + m)
    n = at("final_norm_output", rms(y, w["norm"]))
    logits = at("logits", n @ w["lm_head"].T)
    return logits, values


if __name__ == "__main__":
    if sys.argv[1:] != ["mlir"]:
        sys.exit("usage: llama_bs.py mlir")
    sys.stdout.write(model_ir())
