#!/usr/bin/python3
"""Writes the bundled tracing example models (one per family) as nnx IR.

Small decoder-only transformers with each family's native module names and
block quirk, seeded random weights (numpy), explicit forward regions:

  gpt2    transformer.h.N {ln_1, attn, ln_2, mlp}; pre-norm, residual adds
  llama   model.layers.N {input_layernorm, self_attn, post_attention_layernorm, mlp}
  gemma2  llama's names + pre/post_feedforward_layernorm: the sandwich block
  bloom   transformer.h.N {input_layernorm, self_attention, post_attention_layernorm,
          mlp}; each sublayer adds the residual inside (`dropout_add_0`)
  cohere  model.layers.N {input_layernorm, self_attn, mlp}: parallel block
  falcon  transformer.h.N {input_layernorm, self_attention, mlp}: parallel block,
          the attention added into the MLP's output in place (`iadd_0`)

Every attention module holds its own `attention_interface` (class
"attention_interface"): the shared attention function (scores, mask,
softmax, probabilities @ values), called as
`nnx.call @attention_interface(q, k, v, mask) {nnx.kwargs = ["attention_mask"]}`
and labeled `attention_interface_0`. Usage: gen.py [OUTDIR] (default: beside
this script).
"""
import os
import sys

import numpy as np

S, D, H, DH, F, V, L = 4, 8, 2, 4, 16, 16, 2  # seq, width, heads, head dim, ffn, vocab, layers
ELT = "f32"
T3 = f"tensor<?x{S}x{D}x{ELT}>"
THEADS = f"tensor<?x{H}x{S}x{DH}x{ELT}>"     # (B, H, S, Dh)
TCTX = f"tensor<?x{S}x{H}x{DH}x{ELT}>"       # (B, S, H, Dh)
TPROBS = f"tensor<?x{H}x{S}x{S}x{ELT}>"      # (B, H, S, S)
TMASK = f"tensor<{S}x{S}x{ELT}>"
TIDS = f"tensor<?x{S}xi64>"
TLOGITS = f"tensor<?x{S}x{V}x{ELT}>"
F32_MIN = "-3.40282347e+38"


def fmt(x):
    return "%.9e" % float(x)


def dense(a):
    a = np.asarray(a, dtype=np.float32)
    def rec(x):
        if x.ndim == 0:
            return fmt(x)
        return "[" + ", ".join(rec(y) for y in x) + "]"
    shape = "x".join(str(d) for d in a.shape)
    return f"dense<{rec(a)}> : tensor<{shape}x{ELT}>"


class Gen:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def w(self, *shape, scale=0.35):
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def linear(self, name, fin, fout, bias=True):
        attrs = [f"weight = {dense(self.w(fout, fin))}"]
        if bias:
            attrs.append(f"bias = {dense(self.w(fout, scale=0.1))}")
        return [f'nnx.linear @{name} {{{", ".join(attrs)}}}']

    def layer_norm(self, name, bias=True):
        attrs = [f"normalized_shape = array<i64: {D}>",
                 f"weight = {dense(1.0 + self.w(D, scale=0.1))}"]
        if bias:
            attrs.append(f"bias = {dense(self.w(D, scale=0.1))}")
        return [f'nnx.layer_norm @{name} {{{", ".join(attrs)}}}']

    def rms_norm(self, name):
        return [f"nnx.rms_norm @{name} {{normalized_shape = array<i64: {D}>, "
                f"weight = {dense(1.0 + self.w(D, scale=0.1))}}}"]

    def embedding(self, name, rows):
        return [f"nnx.embedding @{name} {{weight = {dense(self.w(rows, D, scale=0.5))}}}"]


def indent(lines, n=2):
    return [" " * n + l if l else l for l in lines]


def module(name, cls, children, forward, attrs=None):
    head = f'nnx.module @{name} class = "{cls}"'
    if attrs:
        head += f" attributes {{{attrs}}}"
    return [head + " {"] + indent(children) + indent(forward) + ["}"]


def attention_interface():
    """The shared attention function: (q, k, v, mask) -> (context, probs)."""
    p5 = '"parallel", "parallel", "parallel", "parallel"'
    m = "affine_map<(b, h, i, j, d) -> "
    m4 = "affine_map<(b, h, i, j) -> "
    fwd = [
        f"nnx.forward @forward(%q: {THEADS}, %k: {THEADS}, %v: {THEADS}, %mask: {TMASK}) -> ({TCTX}, {TPROBS}) {{",
        "  %c0 = arith.constant 0 : index",
        f"  %b = tensor.dim %q, %c0 : {THEADS}",
        "  %zero = arith.constant 0.0 : f32",
        f"  %e = tensor.empty(%b) : {TPROBS}",
        f"  %z = linalg.fill ins(%zero : f32) outs(%e : {TPROBS}) -> {TPROBS}",
        f'  %qk = linalg.generic {{indexing_maps = [{m}(b, h, i, d)>, {m}(b, h, j, d)>, {m}(b, h, i, j)>], '
        f'iterator_types = [{p5}, "reduction"], nnx.source = "matmul_0"}} '
        f"ins(%q, %k : {THEADS}, {THEADS}) outs(%z : {TPROBS}) {{",
        "  ^bb0(%a: f32, %bk: f32, %acc: f32):",
        "    %m = arith.mulf %a, %bk : f32",
        "    %r = arith.addf %acc, %m : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {TPROBS}",
        f'  %scaled = linalg.generic {{indexing_maps = [{m4}(b, h, i, j)>, {m4}(b, h, i, j)>], '
        f'iterator_types = [{p5}], nnx.source = "mul_0"}} ins(%qk : {TPROBS}) outs(%e : {TPROBS}) {{',
        "  ^bb0(%a: f32, %o: f32):",
        f"    %scale = arith.constant {fmt(1.0 / np.sqrt(DH))} : f32",
        "    %r = arith.mulf %a, %scale : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {TPROBS}",
        f'  %masked = linalg.generic {{indexing_maps = [{m4}(b, h, i, j)>, {m4}(i, j)>, {m4}(b, h, i, j)>], '
        f'iterator_types = [{p5}], nnx.source = "add_0"}} ins(%scaled, %mask : {TPROBS}, {TMASK}) outs(%e : {TPROBS}) {{',
        "  ^bb0(%a: f32, %mk: f32, %o: f32):",
        "    %r = arith.addf %a, %mk : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {TPROBS}",
        f'  %probs = nnx.call @softmax(%masked) {{nnx.source = "softmax_0"}} : ({TPROBS}) -> {TPROBS}',
        f"  %e2 = tensor.empty(%b) : {TCTX}",
        f"  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : {TCTX}) -> {TCTX}",
        f'  %ctx = linalg.generic {{indexing_maps = [{m}(b, h, i, j)>, {m}(b, h, j, d)>, {m}(b, i, h, d)>], '
        f'iterator_types = [{p5}, "reduction"], nnx.source = "matmul_1"}} '
        f"ins(%probs, %v : {TPROBS}, {THEADS}) outs(%z2 : {TCTX}) {{",
        "  ^bb0(%p: f32, %vv: f32, %acc: f32):",
        "    %m = arith.mulf %p, %vv : f32",
        "    %r = arith.addf %acc, %m : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {TCTX}",
        f"  nnx.return %ctx, %probs : {TCTX}, {TPROBS}",
        "}",
    ]
    # The loop order of the context product is (b, h, i, j, d) -> rename the
    # reduction: iterate (b, h, i, d) parallel, j reduction.
    fwd = [l.replace(f'{m}(b, h, i, j)>, {m}(b, h, j, d)>, {m}(b, i, h, d)>',
                     "affine_map<(b, h, i, d, j) -> (b, h, i, j)>, "
                     "affine_map<(b, h, i, d, j) -> (b, h, j, d)>, "
                     "affine_map<(b, h, i, d, j) -> (b, i, h, d)>") for l in fwd]
    return module("attention_interface", "attention_interface",
                  ["nnx.softmax @softmax {dim = -1 : i64}"], fwd)


def causal_mask():
    rows = []
    for i in range(S):
        rows.append("[" + ", ".join("0.0" if j <= i else F32_MIN for j in range(S)) + "]")
    return f"dense<[{', '.join(rows)}]> : {TMASK}"


def attention(g, name, cls, q, k, v, o, residual=False, bias=True):
    """q/k/v/o projections, heads, the interface call; returns (out, probs).
    With `residual`, takes the residual and adds it inside (`dropout_add_0`)."""
    children = (g.linear(q, D, D, bias) + g.linear(k, D, D, bias) +
                g.linear(v, D, D, bias) + g.linear(o, D, D, bias) +
                attention_interface())
    args = f"%x: {T3}" + (f", %residual: {T3}" if residual else "")
    fwd = [f"nnx.forward @forward({args}) -> ({T3}, {TPROBS}) {{",
           "  %c0 = arith.constant 0 : index",
           f"  %b = tensor.dim %x, %c0 : {T3}",
           f"  %e = tensor.empty(%b) : {THEADS}"]
    for i, (var, proj) in enumerate((("q", q), ("k", k), ("v", v))):
        fwd += [
            f"  %{var} = nnx.call @{proj}(%x) : ({T3}) -> {T3}",
            f"  %{var}4 = tensor.expand_shape %{var} [[0], [1], [2, 3]] output_shape [%b, {S}, {H}, {DH}] "
            f'{{nnx.source = "view_{i}"}} : {T3} into {TCTX}',
            f"  %{var}h = linalg.transpose ins(%{var}4 : {TCTX}) outs(%e : {THEADS}) "
            f'permutation = [0, 2, 1, 3] {{nnx.source = "transpose_{i}"}}',
        ]
    fwd += [
        f"  %mask = arith.constant {{nnx.source = \"causal_mask_0\"}} {causal_mask()}",
        "  %ctx, %probs = nnx.call @attention_interface(%qh, %kh, %vh, %mask) "
        '{nnx.source = "attention_interface_0", nnx.kwargs = ["attention_mask"]} : '
        f"({THEADS}, {THEADS}, {THEADS}, {TMASK}) -> ({TCTX}, {TPROBS})",
        f'  %c = tensor.collapse_shape %ctx [[0], [1], [2, 3]] {{nnx.source = "view_3"}} : {TCTX} into {T3}',
        f"  %out = nnx.call @{o}(%c) : ({T3}) -> {T3}",
    ]
    if residual:
        fwd += [f'  %y = arith.addf %out, %residual {{nnx.source = "dropout_add_0"}} : {T3}',
                f"  nnx.return %y, %probs : {T3}, {TPROBS}", "}"]
    else:
        fwd += [f"  nnx.return %out, %probs : {T3}, {TPROBS}", "}"]
    return module(name, cls, children, fwd)


def gated_mlp(g, name, cls):
    children = (g.linear("gate_proj", D, F, False) + g.linear("up_proj", D, F, False) +
                g.linear("down_proj", F, D, False) + ["nnx.silu @act_fn"])
    TF = f"tensor<?x{S}x{F}x{ELT}>"
    fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
           f"  %g = nnx.call @gate_proj(%x) : ({T3}) -> {TF}",
           f"  %a = nnx.call @act_fn(%g) : ({TF}) -> {TF}",
           f"  %u = nnx.call @up_proj(%x) : ({T3}) -> {TF}",
           f'  %m = arith.mulf %a, %u {{nnx.source = "mul_0"}} : {TF}',
           f"  %d = nnx.call @down_proj(%m) : ({TF}) -> {T3}",
           f"  nnx.return %d : {T3}", "}"]
    return module(name, cls, children, fwd)


def plain_mlp(g, name, cls, up, act, down, residual=False):
    TF = f"tensor<?x{S}x{F}x{ELT}>"
    children = g.linear(up, D, F) + [f'nnx.gelu @{act} {{approximate = #nnx.gelu_approximation<tanh>}}'] + g.linear(down, F, D)
    args = f"%x: {T3}" + (f", %residual: {T3}" if residual else "")
    fwd = [f"nnx.forward @forward({args}) -> {T3} {{",
           f"  %h = nnx.call @{up}(%x) : ({T3}) -> {TF}",
           f"  %a = nnx.call @{act}(%h) : ({TF}) -> {TF}",
           f"  %d = nnx.call @{down}(%a) : ({TF}) -> {T3}"]
    if residual:
        fwd += [f'  %y = arith.addf %d, %residual {{nnx.source = "dropout_add_0"}} : {T3}',
                f"  nnx.return %y : {T3}", "}"]
    else:
        fwd += [f"  nnx.return %d : {T3}", "}"]
    return module(name, cls, children, fwd)


def call(var, callee, args, types_in, types_out, extra=""):
    outs = types_out if isinstance(types_out, str) else f"({', '.join(types_out)})"
    return f"  {var} = nnx.call {callee}({', '.join(args)}){extra} : ({', '.join(types_in)}) -> {outs}"


def decoder(g, name, cls, embed, layers_key, norm_fn, norm_name, block_fn, position=None):
    """The base model: embedding(s), the layer list, the final norm."""
    children = g.embedding(embed, V)
    if position:
        children += g.embedding(position, S)
    children += [f"nnx.module_list @{layers_key} {{"]
    for i in range(L):
        children += indent(block_fn(g, i))
    children += ["}"] + norm_fn(norm_name)
    fwd = [f"nnx.forward @forward(%ids: {TIDS}) -> {T3} {{",
           call("%h_in", f"@{embed}", ["%ids"], [TIDS], T3)]
    cur = "%h_in"
    if position:
        fwd += [f"  %pos = arith.constant dense<[{', '.join(str(i) for i in range(S))}]> : tensor<{S}xi64>",
                call("%pe", f"@{position}", ["%pos"], [f"tensor<{S}xi64>"], f"tensor<{S}x{D}x{ELT}>"),
                "  %c0 = arith.constant 0 : index",
                f"  %b = tensor.dim %h_in, %c0 : {T3}",
                f"  %e = tensor.empty(%b) : {T3}",
                "  %h_pos = linalg.generic {indexing_maps = [affine_map<(b, s, d) -> (b, s, d)>, "
                "affine_map<(b, s, d) -> (s, d)>, affine_map<(b, s, d) -> (b, s, d)>], "
                '"iterator_types" = ["parallel", "parallel", "parallel"], nnx.source = "add_0"} '
                f"ins(%h_in, %pe : {T3}, tensor<{S}x{D}x{ELT}>) outs(%e : {T3}) {{",
                "  ^bb0(%a: f32, %p: f32, %o: f32):",
                "    %r = arith.addf %a, %p : f32",
                "    linalg.yield %r : f32",
                f"  }} -> {T3}"]
        cur = "%h_pos"
    for i in range(L):
        fwd.append(call(f"%h{i}", f'@{layers_key}::@"{i}"', [cur], [T3], T3))
        cur = f"%h{i}"
    fwd += [call("%out", f"@{norm_name}", [cur], [T3], T3), f"  nnx.return %out : {T3}", "}"]
    return module(name, cls, children, fwd)


def causal_lm(g, model_name, cls, base_key, base_fn, config):
    children = base_fn() + g.linear("lm_head", D, V, bias=False)
    fwd = [f"nnx.forward @forward(%ids: {TIDS}) -> {TLOGITS} {{",
           call("%h", f"@{base_key}", ["%ids"], [TIDS], T3),
           call("%logits", "@lm_head", ["%h"], [T3], TLOGITS),
           f"  nnx.return %logits : {TLOGITS}", "}"]
    root = module("net", cls, children, fwd, attrs=f"config = {{{config}}}")
    return [f"// Generated by examples/families/gen.py: do not edit.",
            f"nnx.model @{model_name} inputs({TIDS}) {{"] + indent(root) + ["}"]


# --- families ---------------------------------------------------------------

def gpt2(g):
    def block(g, i):
        children = (g.layer_norm("ln_1") +
                    attention(g, "attn", "GPT2Attention", "q_proj", "k_proj", "v_proj", "c_proj") +
                    g.layer_norm("ln_2") +
                    # GPT2MLP has no custom data flow: a named sequential.
                    ["nnx.sequential @mlp keying = named {"] +
                    indent(g.linear("c_fc", D, F) + ['nnx.gelu @act {approximate = #nnx.gelu_approximation<tanh>}'] +
                           g.linear("c_proj", F, D) + ["nnx.dropout @dropout {p = 0.1 : f64}"]) + ["}"])
        fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
               call("%h", "@ln_1", ["%x"], [T3], T3),
               call("%a, %probs", "@attn", ["%h"], [T3], [T3, TPROBS]),
               f'  %x1 = arith.addf %x, %a {{nnx.source = "add_0"}} : {T3}',
               call("%h2", "@ln_2", ["%x1"], [T3], T3),
               call("%m", "@mlp", ["%h2"], [T3], T3),
               f'  %y = arith.addf %x1, %m {{nnx.source = "add_1"}} : {T3}',
               f"  nnx.return %y : {T3}", "}"]
        return module(f'"{i}"', "GPT2Block", children, fwd)
    return causal_lm(g, "gpt2", "GPT2LMHeadModel", "transformer",
                     lambda: decoder(g, "transformer", "GPT2Model", "wte", "h",
                                     g.layer_norm, "ln_f", block, position="wpe"),
                     'attn_implementation = "eager", reorder_and_upcast_attn = false, n_layer = 2 : i64')


def llama_block(g, i, cls="LlamaDecoderLayer", attn_cls="LlamaAttention", mlp_cls="LlamaMLP"):
    children = (g.rms_norm("input_layernorm") +
                attention(g, "self_attn", attn_cls, "q_proj", "k_proj", "v_proj", "o_proj", bias=False) +
                g.rms_norm("post_attention_layernorm") + gated_mlp(g, "mlp", mlp_cls))
    fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
           call("%h", "@input_layernorm", ["%x"], [T3], T3),
           call("%a, %probs", "@self_attn", ["%h"], [T3], [T3, TPROBS]),
           f'  %x1 = arith.addf %x, %a {{nnx.source = "add_0"}} : {T3}',
           call("%h2", "@post_attention_layernorm", ["%x1"], [T3], T3),
           call("%m", "@mlp", ["%h2"], [T3], T3),
           f'  %y = arith.addf %x1, %m {{nnx.source = "add_1"}} : {T3}',
           f"  nnx.return %y : {T3}", "}"]
    return module(f'"{i}"', cls, children, fwd)


def llama(g):
    return causal_lm(g, "llama", "LlamaForCausalLM", "model",
                     lambda: decoder(g, "model", "LlamaModel", "embed_tokens", "layers",
                                     g.rms_norm, "norm", llama_block),
                     'attn_implementation = "eager"')


def gemma2(g):
    def block(g, i):
        children = (g.rms_norm("input_layernorm") +
                    attention(g, "self_attn", "Gemma2Attention", "q_proj", "k_proj", "v_proj", "o_proj", bias=False) +
                    g.rms_norm("post_attention_layernorm") + g.rms_norm("pre_feedforward_layernorm") +
                    gated_mlp(g, "mlp", "Gemma2MLP") + g.rms_norm("post_feedforward_layernorm"))
        fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
               call("%h", "@input_layernorm", ["%x"], [T3], T3),
               call("%a, %probs", "@self_attn", ["%h"], [T3], [T3, TPROBS]),
               call("%a2", "@post_attention_layernorm", ["%a"], [T3], T3),
               f'  %x1 = arith.addf %x, %a2 {{nnx.source = "add_0"}} : {T3}',
               call("%h2", "@pre_feedforward_layernorm", ["%x1"], [T3], T3),
               call("%m", "@mlp", ["%h2"], [T3], T3),
               call("%m2", "@post_feedforward_layernorm", ["%m"], [T3], T3),
               f'  %y = arith.addf %x1, %m2 {{nnx.source = "add_1"}} : {T3}',
               f"  nnx.return %y : {T3}", "}"]
        return module(f'"{i}"', "Gemma2DecoderLayer", children, fwd)
    return causal_lm(g, "gemma2", "Gemma2ForCausalLM", "model",
                     lambda: decoder(g, "model", "Gemma2Model", "embed_tokens", "layers",
                                     g.rms_norm, "norm", block),
                     'attn_implementation = "eager"')


def bloom(g):
    def block(g, i):
        children = (g.layer_norm("input_layernorm") +
                    attention(g, "self_attention", "BloomAttention", "query", "key", "value", "dense",
                              residual=True) +
                    g.layer_norm("post_attention_layernorm") +
                    plain_mlp(g, "mlp", "BloomMLP", "dense_h_to_4h", "gelu_impl", "dense_4h_to_h",
                              residual=True))
        fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
               call("%h", "@input_layernorm", ["%x"], [T3], T3),
               # The sublayers add the residual themselves (dropout_add).
               call("%a, %probs", "@self_attention", ["%h", "%x"], [T3, T3], [T3, TPROBS]),
               call("%h2", "@post_attention_layernorm", ["%a"], [T3], T3),
               call("%y", "@mlp", ["%h2", "%a"], [T3, T3], T3),
               f"  nnx.return %y : {T3}", "}"]
        return module(f'"{i}"', "BloomBlock", children, fwd)
    return causal_lm(g, "bloom", "BloomForCausalLM", "transformer",
                     lambda: decoder(g, "transformer", "BloomModel", "word_embeddings", "h",
                                     g.layer_norm, "ln_f", block),
                     'attn_implementation = "eager"')


def cohere(g):
    def block(g, i):
        children = (g.layer_norm("input_layernorm", bias=False) +
                    attention(g, "self_attn", "CohereAttention", "q_proj", "k_proj", "v_proj", "o_proj", bias=False) +
                    gated_mlp(g, "mlp", "CohereMLP"))
        fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
               call("%h", "@input_layernorm", ["%x"], [T3], T3),
               call("%a, %probs", "@self_attn", ["%h"], [T3], [T3, TPROBS]),
               call("%m", "@mlp", ["%h"], [T3], T3),
               f'  %s = arith.addf %x, %a {{nnx.source = "add_0"}} : {T3}',
               f'  %y = arith.addf %s, %m {{nnx.source = "add_1"}} : {T3}',
               f"  nnx.return %y : {T3}", "}"]
        return module(f'"{i}"', "CohereDecoderLayer", children, fwd)
    return causal_lm(g, "cohere", "CohereForCausalLM", "model",
                     lambda: decoder(g, "model", "CohereModel", "embed_tokens", "layers",
                                     lambda n: g.layer_norm(n, bias=False), "norm", block),
                     'attn_implementation = "eager"')


def falcon(g):
    def block(g, i):
        children = (g.layer_norm("input_layernorm") +
                    attention(g, "self_attention", "FalconAttention", "query", "key", "value", "dense",
                              bias=False) +
                    plain_mlp(g, "mlp", "FalconMLP", "dense_h_to_4h", "act", "dense_4h_to_h"))
        fwd = [f"nnx.forward @forward(%x: {T3}) -> {T3} {{",
               call("%h", "@input_layernorm", ["%x"], [T3], T3),
               call("%a, %probs", "@self_attention", ["%h"], [T3], [T3, TPROBS]),
               call("%m", "@mlp", ["%h"], [T3], T3),
               # mlp_output += attention_output: overwrites the MLP's output.
               f'  %m2 = arith.addf %m, %a {{nnx.source = "iadd_0", nnx.in_place = 0 : i64}} : {T3}',
               f'  %y = arith.addf %m2, %x {{nnx.source = "dropout_add_0"}} : {T3}',
               f"  nnx.return %y : {T3}", "}"]
        return module(f'"{i}"', "FalconDecoderLayer", children, fwd)
    return causal_lm(g, "falcon", "FalconForCausalLM", "transformer",
                     lambda: decoder(g, "transformer", "FalconModel", "word_embeddings", "h",
                                     g.layer_norm, "ln_f", block),
                     'attn_implementation = "eager"')


FAMILIES = {"gpt2": gpt2, "llama": llama, "gemma2": gemma2, "bloom": bloom,
            "cohere": cohere, "falcon": falcon}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    for seed, (name, fn) in enumerate(FAMILIES.items()):
        text = "\n".join(fn(Gen(1000 + seed))) + "\n"
        with open(os.path.join(out, f"{name}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
