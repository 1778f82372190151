"""The PyTorch reference families (tests/models): they build and run at any
batch and sequence, are causal, keep the native module names of
examples/families/*.mlir, trace with torch.fx one module at a time, and the
standardized values read and written through models.hooks at the
families/*.json locations satisfy the contribution identities."""

import operator
import os
import re

import numpy as np
import pytest

from nnx import testing as tol

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import models  # noqa: E402
from models import common, fxtrace, gpt2, hooks  # noqa: E402

FAMILIES = list(models.FAMILIES)
SEQUENTIAL = ["gpt2", "llama", "gemma2", "bloom"]
PARALLEL = ["cohere", "falcon"]
SHAPES = [(1, 5), (3, 16)]
EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples", "families")


def keep(store, key, index=None):
    """A forward hook storing the module's output (element `index` of a
    tuple); returns None, so it changes nothing."""
    def hook(mod, args, out):
        store.setdefault(key, out if index is None else out[index])
    return hook


def ids_for(model, batch, seq, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.config.vocab_size, (batch, seq), generator=gen)


@pytest.fixture(scope="module", params=FAMILIES)
def family(request):
    return request.param


def make(family, seed=0):
    return models.build(family, seed=seed)


def forward(model, ids):
    with torch.no_grad():
        return model(ids)


def n_layers(model):
    return len([m for n, m in model.named_modules() if re.fullmatch(r"(model\.layers|transformer\.h)\.\d+", n)])


# --- building and running ------------------------------------------------------

@pytest.mark.parametrize("batch,seq", SHAPES + [(2, 1)])
def test_runs_at_any_batch_and_sequence(family, batch, seq):
    model = make(family)
    assert not model.training and not any(m.training for m in model.modules())
    logits = forward(model, ids_for(model, batch, seq))
    assert logits.shape == (batch, seq, model.config.vocab_size)
    assert logits.dtype == torch.float32
    assert torch.isfinite(logits).all()
    assert logits.std() > 0.1  # not a degenerate (all-equal) output


def test_seeded_initialization(family):
    a, b, c = make(family, 3), make(family, 3), make(family, 4)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert sa.keys() == sb.keys()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert any(not torch.equal(sa[k], sc[k]) for k in sa)
    ids = ids_for(a, 2, 6)
    assert torch.equal(forward(a, ids), forward(b, ids))


def test_weights_are_not_trivial(family):
    model = make(family)
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            assert (p != 0).all(), name
        elif p.dim() >= 2:
            assert 0.15 < p.std() < 0.25, name
        else:
            assert not torch.all(p == 1) and not torch.all(p == 0), name
    for mod in model.modules():
        norm_weight = getattr(mod, "weight", None)
        if isinstance(mod, (nn.LayerNorm,)) or type(mod).__name__.endswith("RMSNorm"):
            x = torch.randn(4, norm_weight.shape[0], generator=torch.Generator().manual_seed(1))
            y = mod(x)
            plain = (x - x.mean(-1, keepdim=True)) if isinstance(mod, nn.LayerNorm) else x
            plain = plain / plain.pow(2).mean(-1, keepdim=True).add(1e-5).sqrt()
            assert not torch.allclose(y, plain, atol=1e-3), type(mod).__name__


def test_rms_norm_formulas():
    """Llama scales by w, Gemma by (1 + w): with w = 1 and w = 0 both are the
    plain RMS normalization; the float32 computation returns the input dtype."""
    from models import gemma2, llama
    x = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(2))
    # The float64 formula; a float32 one is within: the mean of 8 squares
    # plus eps (gamma(10) relative), halved by the square root, and at most
    # 5 roundings more (sqrt, the reciprocal, the product by x, the weight).
    x64 = x.double().numpy()
    plain = x64 / np.sqrt(tol.sum(x64 ** 2, axis=-1, keepdims=True) / 8 + 1e-6)
    bound = (tol.gamma(10) / 2 + 5 * tol.U32) * np.abs(plain)
    ln, gn = llama.LlamaRMSNorm(8), gemma2.Gemma2RMSNorm(8)
    assert torch.equal(ln.weight, torch.ones(8)) and torch.equal(gn.weight, torch.zeros(8))
    tol.assert_within(ln(x).detach().numpy(), plain, bound, "llama w = 1")
    tol.assert_within(gn(x).detach().numpy(), plain, bound, "gemma w = 0")
    with torch.no_grad():
        ln.weight.fill_(0.5)
        gn.weight.fill_(0.5)
    tol.assert_within(ln(x).detach().numpy(), 0.5 * plain, 0.5 * bound, "llama w = 0.5")
    tol.assert_within(gn(x).detach().numpy(), 1.5 * plain, 1.5 * bound, "gemma w = 0.5")
    assert ln(x.double()).dtype == torch.float64 and gn(x.half()).dtype == torch.float16


def test_gelu_tanh_and_soft_capping():
    model = make("gemma2")
    cap = model.config.final_logit_softcapping
    seen = {}
    h = model.lm_head.register_forward_hook(keep(seen, "raw"))
    try:
        logits = forward(model, ids_for(model, 2, 6))
    finally:
        h.remove()
    assert torch.equal(logits, torch.tanh(seen["raw"] / cap) * cap)
    assert seen["raw"].abs().max() > cap / 2  # the cap bends the small model's logits
    assert logits.abs().max() < cap
    cohere = make("cohere")
    seen = {}
    h = cohere.lm_head.register_forward_hook(keep(seen, "raw"))
    try:
        logits = forward(cohere, ids_for(cohere, 1, 4))
    finally:
        h.remove()
    assert torch.equal(logits, seen["raw"] * cohere.config.logit_scale)


def test_gpt2_small_config():
    c = gpt2.gpt2_small_config()
    assert (c.n_layer, c.n_embd, c.n_head, c.vocab_size, c.n_positions) == (12, 768, 12, 50257, 1024)
    assert not c.reorder_and_upcast_attn and c.attn_implementation == "eager"


def test_gpt2_positions_are_bounded():
    model = make("gpt2")
    with pytest.raises(IndexError):
        forward(model, ids_for(model, 1, model.config.n_positions + 1))


def test_causal(family):
    model = make(family)
    ids = ids_for(model, 2, 10)
    base = forward(model, ids)
    for k in (3, 9):
        changed = ids.clone()
        changed[:, k] = (changed[:, k] + 1) % model.config.vocab_size
        out = forward(model, changed)
        assert torch.equal(out[:, :k], base[:, :k]), f"position {k} changed earlier logits"
        assert not torch.allclose(out[:, k], base[:, k]), f"position {k} changed nothing"


def test_positions_matter(family):
    """Swapping two earlier tokens changes the last position's logits: causal
    attention alone sees a set, each family's positions (learned, rotary,
    alibi) make it a sequence."""
    model = make(family)
    ids = torch.tensor([[4, 9, 1, 7, 2]])
    swapped = torch.tensor([[9, 4, 1, 7, 2]])
    assert not torch.allclose(forward(model, ids)[0, -1], forward(model, swapped)[0, -1], atol=1e-4)


# --- the module tree against examples/families -----------------------------------

IR_KIND = {"linear": nn.Linear, "layer_norm": nn.LayerNorm, "embedding": nn.Embedding, "silu": nn.SiLU,
           "gelu": nn.GELU, "dropout": nn.Dropout, "sequential": nn.Sequential, "module_list": nn.ModuleList}

# The examples are these references exported (examples/families/export.py):
# the same module tree, plus one parameterless module per kept function call
# (attention_interface, dropout_add) under the module that calls it.
KEPT_FUNCTIONS = ("attention_interface", "dropout_add")


def ir_modules(path):
    """{native path: (class or op kind, attribute text)} of an example's modules."""
    out, stack = {}, []
    op = re.compile(r'^\s*nnx\.(\w+) @("[^"]*"|[\w$]+)(.*)$')
    for line in open(path):
        s = line.strip()
        if s.startswith("}"):
            stack.pop()
            if s.endswith("{"):
                stack.append(None)
            continue
        m = op.match(line)
        if m and m.group(1) not in ("forward", "model"):
            kind, name, rest = m.groups()
            name = name.strip('"')
            cls = re.search(r'class = "([^"]+)"', rest)
            parents = [p for p in stack if p is not None]
            full = "" if not parents else (name if parents[-1] == "" else parents[-1] + "." + name)
            out[full] = (cls.group(1) if cls else kind, rest)
            if s.endswith("{"):
                stack.append(full)
            continue
        if s.endswith("{"):
            stack.append(None)
    return out


def generic(path):
    return re.sub(r"^(model|transformer)\.", "", re.sub(r"\.\d+(\.|$)", r".N\1", path))


def test_module_tree_matches_the_example(family):
    model = make(family)
    ir = ir_modules(os.path.join(EXAMPLES, family + ".mlir"))
    kept = {k for k in ir if k.split(".")[-1] in KEPT_FUNCTIONS}
    assert kept and all(ir[k][0] == k.split(".")[-1] for k in kept)
    ir = {k: v for k, v in ir.items() if k not in kept}
    assert len(ir) > 10
    torch_modules = dict(model.named_modules())
    assert set(ir) == set(torch_modules)
    for path, (kind, attrs) in ir.items():
        mod = torch_modules[path]
        if kind in IR_KIND:
            assert isinstance(mod, IR_KIND[kind]), (path, kind, type(mod))
        elif kind == "rms_norm":
            assert type(mod).__name__.endswith("RMSNorm"), path
        else:
            assert type(mod).__name__ == kind, (path, kind, type(mod).__name__)
        if kind in ("linear", "layer_norm"):
            assert (mod.bias is not None) == ("bias =" in attrs), (path, "bias")
        if kind == "gelu":
            assert mod.approximate == ("tanh" if "tanh" in attrs else "none"), path
    # The named sequential of GPT-2's MLP, in the example's order.
    if family == "gpt2":
        assert list(model.transformer.h[0].mlp._modules) == ["c_fc", "act", "c_proj", "dropout"]


# --- attention --------------------------------------------------------------------

def attention_modules(model):
    return [m for m in model.modules() if type(m).__name__.endswith("Attention")]


@pytest.mark.parametrize("layer", [0, 1])
def test_probabilities(family, layer):
    model = make(family)
    ids = ids_for(model, 2, 9)
    returned = {}
    attn = attention_modules(model)[layer]
    h = attn.register_forward_hook(keep(returned, "out"))
    try:
        _, v = hooks.run(model, family, ids, layer,
                         reads=["attention_queries", "attention_keys", "attention_values", "attention_mask",
                                "attention_scores", "attention_probabilities"])
    finally:
        h.remove()
    probs, scores = v["attention_probabilities"], v["attention_scores"]
    t = ids.shape[1]
    assert isinstance(returned["out"], tuple) and len(returned["out"]) == 2
    assert torch.equal(returned["out"][1], probs)  # this layer's, not another's
    assert probs.shape == (2, attn.num_heads, t, t)
    # Each probability is within 2 ulp (exp) + gamma(t) (the row's sum) + 1
    # rounding (the division) of exact; their float32 sum adds gamma(t).
    tol.assert_within(probs.sum(-1).detach().numpy(), np.ones((2, attn.num_heads, t)),
                      2 * tol.gamma(t) + 4 * tol.U32, "probabilities' sums")
    above = torch.ones(t, t, dtype=torch.bool).triu(1)
    assert (probs[..., above] == 0).all()
    assert (probs[..., ~above] > 0).all()
    assert torch.isneginf(scores[..., above]).all() and torch.isfinite(scores[..., ~above]).all()
    assert torch.equal(torch.softmax(scores, dim=-1), probs)
    # The scores are the scaled products plus the mask, from the call's inputs.
    q, k, val = v["attention_queries"], v["attention_keys"], v["attention_values"]
    assert q.shape == k.shape == val.shape == (2, attn.num_heads, t, attn.head_dim)
    scaling = getattr(attn, "scaling", getattr(attn, "inv_norm_factor", None))
    assert torch.equal(torch.matmul(q, k.transpose(2, 3)) * scaling + v["attention_mask"], scores)
    ctx, _ = common.attention_interface(q, k, val, attention_mask=v["attention_mask"], scaling=scaling)
    assert ctx.shape == (2, t, attn.num_heads, attn.head_dim)


def test_masks(family):
    model = make(family)
    t = 6
    _, v = hooks.run(model, family, ids_for(model, 1, t), 0, reads=["attention_mask"])
    mask = v["attention_mask"]
    above = torch.ones(t, t, dtype=torch.bool).triu(1)
    assert torch.isneginf(mask[..., above]).all()
    if family == "bloom":
        # alibi: each head's slope times the key position, below the diagonal.
        slopes = model.transformer.h[0].self_attention.slopes
        assert mask.shape == (len(slopes), t, t)
        expected = slopes[:, None, None] * torch.arange(t, dtype=torch.float32)[None, None, :]
        assert torch.equal(mask[:, ~above], expected.expand(-1, t, t)[:, ~above])
        assert slopes.tolist() == [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8]
    else:
        assert mask.shape == (t, t) and (mask[~above] == 0).all()


def test_grouped_query_keys_are_repeated():
    for family, kv in (("llama", 2), ("gemma2", 2), ("cohere", 2), ("falcon", 1)):
        model = make(family)
        _, v = hooks.run(model, family, ids_for(model, 1, 5), 0, reads=["attention_keys", "attention_values"])
        heads = v["attention_keys"].shape[1]
        group = heads // kv
        for name in ("attention_keys", "attention_values"):
            x = v[name]
            for h in range(heads):
                assert torch.equal(x[:, h], x[:, (h // group) * group]), (family, name, h)
            assert not torch.equal(x[:, 0], x[:, heads - 1]) or kv == 1


# --- the standardized values --------------------------------------------------------

def test_availability_follows_the_family_files(family):
    model = make(family)
    av = hooks.available(model, family)
    expected = set(hooks.load_family("base")["values"])
    assert set(av) == expected
    unavailable = {n for n, r in av.items() if r}
    assert unavailable == ({"layer_mid"} if family in PARALLEL else set())
    if family in PARALLEL:
        assert av["layer_mid"].startswith("the block is parallel")
        with pytest.raises(hooks.Unavailable, match="parallel"):
            hooks.run(model, family, ids_for(model, 1, 4), 0, reads=["layer_mid"])


def test_conditions_read_the_config():
    model = make("gpt2")
    model.config.reorder_and_upcast_attn = True
    av = hooks.available(model, "gpt2")
    assert av["attention_scores"].startswith("this checkpoint sets reorder_and_upcast_attn")
    assert av["attention_output"] is None
    model = make("llama")
    model.config.attn_implementation = "sdpa"
    assert hooks.available(model, "llama")["attention_probabilities"].startswith("needs_eager")


def test_unknown_value():
    model = make("llama")
    with pytest.raises(ValueError, match="unknown value"):
        hooks.locate(model, "llama", "residual")


def test_probes_restore_everything(family):
    model = make(family)
    mod = models.FAMILIES[family]
    softmax = torch.nn.functional.softmax
    ids = ids_for(model, 1, 5)
    base = forward(model, ids)
    hooks.run(model, family, ids, 1)
    assert mod.attention_interface is common.attention_interface
    assert getattr(mod, "dropout_add", common.dropout_add) is common.dropout_add
    assert torch.nn.functional.softmax is softmax
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
    assert torch.equal(forward(model, ids), base)


@pytest.mark.parametrize("layer", [0, 1])
def test_contribution_identity(family, layer):
    model = make(family)
    ids = ids_for(model, 2, 7)
    logits, v = hooks.run(model, family, ids, layer)
    assert torch.equal(logits, forward(model, ids))
    assert torch.equal(v["logits"], logits)
    assert torch.equal(v["input_ids"], ids)
    x, a, m, y = v["layer_input"], v["attention_output"], v["mlp_output"], v["layer_output"]
    assert not torch.allclose(a, torch.zeros_like(a)) and not torch.allclose(m, torch.zeros_like(m))
    torch.testing.assert_close(x + a + m, y, atol=1e-5, rtol=0)
    if family == "falcon":
        assert torch.equal(x + (m + a), y)  # its own order: (mlp += attn) + residual
    else:
        assert torch.equal(x + a + m, y)
    if family in SEQUENTIAL:
        assert torch.equal(v["layer_mid"], x + a)
    # Consecutive layers chain; the ends of the model.
    if layer == 0:
        emb = v["embeddings"]
        if family == "gpt2":
            emb = emb + model.transformer.wpe(torch.arange(ids.shape[1]))
        elif family == "gemma2":
            emb = emb * model.config.hidden_size ** 0.5
        elif family == "bloom":
            emb = model.transformer.word_embeddings_layernorm(emb)
        assert torch.equal(emb, x)
        _, v1 = hooks.run(model, family, ids, 1, reads=["layer_input"])
        assert torch.equal(v1["layer_input"], y)
    else:
        norm = model.transformer.ln_f if hasattr(model, "transformer") else model.model.norm
        assert torch.equal(norm(y), v["final_norm_output"])


def test_family_specific_locations():
    ids = torch.tensor([[1, 5, 2, 7, 3]])
    # Gemma-2: attention_output is the post-attention norm's output, not the
    # attention module's own.
    model = make("gemma2")
    block = model.model.layers[0]
    seen = {}
    h = block.self_attn.register_forward_hook(keep(seen, "attn", 0))
    try:
        _, v = hooks.run(model, "gemma2", ids, 0)
    finally:
        h.remove()
    assert torch.equal(v["attention_output"], block.post_attention_layernorm(seen["attn"]))
    assert not torch.allclose(v["attention_output"], seen["attn"])
    assert torch.equal(v["mlp_norm_output"], block.pre_feedforward_layernorm(v["layer_mid"]))
    # BLOOM: the sublayers return the residual stream; the contribution is
    # what enters dropout_add (the dense projection's output).
    model = make("bloom")
    block = model.transformer.h[0]
    seen = {}
    hs = [block.self_attention.register_forward_hook(keep(seen, "attn", 0)),
          block.self_attention.dense.register_forward_hook(keep(seen, "dense")),
          block.mlp.dense_4h_to_h.register_forward_hook(keep(seen, "down"))]
    try:
        _, v = hooks.run(model, "bloom", ids, 0)
    finally:
        for h in hs:
            h.remove()
    assert torch.equal(seen["attn"], v["layer_input"] + v["attention_output"])
    assert torch.equal(v["attention_output"], seen["dense"])
    assert torch.equal(v["mlp_output"], seen["down"])
    # Falcon: mlp_output is a copy; the MLP's live output tensor ends up
    # holding mlp + attention (the in-place add).
    model = make("falcon")
    block = model.transformer.h[0]
    seen = {}
    h = block.mlp.register_forward_hook(keep(seen, "live"))
    try:
        _, v = hooks.run(model, "falcon", ids, 0)
    finally:
        h.remove()
    assert torch.equal(seen["live"], v["mlp_output"] + v["attention_output"])
    assert not torch.allclose(seen["live"], v["mlp_output"])
    # The parallel families: the MLP reads the attention's normed input.
    for family in PARALLEL:
        model = make(family)
        _, v = hooks.run(model, family, ids, 1)
        assert torch.equal(v["mlp_norm_output"], v["attention_norm_output"])


# --- patching -----------------------------------------------------------------------

def test_writing_back_changes_nothing(family):
    model = make(family)
    ids = ids_for(model, 2, 6)
    base, v = hooks.run(model, family, ids, 0)
    for name in ("attention_output", "mlp_output"):
        out, _ = hooks.run(model, family, ids, 0, reads=[], writes={name: v[name]})
        assert torch.equal(out, base), name


@pytest.mark.parametrize("layer", [0, 1])
def test_patch_attention_output(family, layer):
    model = make(family)
    ids = ids_for(model, 2, 6)
    base, v = hooks.run(model, family, ids, layer)
    patch = torch.randn(v["attention_output"].shape, generator=torch.Generator().manual_seed(7))
    keep = patch.clone()
    reads = ["layer_input", "attention_output", "mlp_output", "layer_output"]
    out, w = hooks.run(model, family, ids, layer, reads=reads, writes={"attention_output": patch})
    assert torch.equal(patch, keep)  # the caller's tensor is not updated in place
    assert not torch.allclose(out, base)
    assert torch.equal(w["layer_input"], v["layer_input"])
    assert torch.equal(w["attention_output"], v["attention_output"])  # a read sees the original
    x, m, y = w["layer_input"], w["mlp_output"], w["layer_output"]
    torch.testing.assert_close(x + patch + m, y, atol=1e-5, rtol=0)
    assert not torch.allclose(y, v["layer_output"])
    if family in PARALLEL:
        # The MLP does not see the attention: the output moves by the difference.
        assert torch.equal(m, v["mlp_output"])
        torch.testing.assert_close(y - v["layer_output"], patch - v["attention_output"], atol=1e-5, rtol=0)
    else:
        _, w2 = hooks.run(model, family, ids, layer, reads=["layer_mid"], writes={"attention_output": patch})
        assert torch.equal(w2["layer_mid"], x + patch)
        assert not torch.allclose(m, v["mlp_output"])


def test_zero_attention_output(family):
    model = make(family)
    ids = ids_for(model, 1, 5)
    zero = torch.zeros(1, 5, model.config.hidden_size if hasattr(model.config, "hidden_size") else model.config.n_embd)
    reads = ["layer_input", "mlp_output", "layer_output"] + (["layer_mid"] if family in SEQUENTIAL else [])
    _, w = hooks.run(model, family, ids, 0, reads=reads, writes={"attention_output": zero})
    if family in SEQUENTIAL:
        assert torch.equal(w["layer_mid"], w["layer_input"])
    torch.testing.assert_close(w["layer_input"] + w["mlp_output"], w["layer_output"], atol=1e-5, rtol=0)


@pytest.mark.parametrize("layer", [0, 1])
def test_patch_mlp_output(family, layer):
    model = make(family)
    ids = ids_for(model, 2, 6)
    base, v = hooks.run(model, family, ids, layer)
    patch = torch.randn(v["mlp_output"].shape, generator=torch.Generator().manual_seed(8))
    keep = patch.clone()
    reads = ["layer_input", "attention_output", "mlp_output", "layer_output", "final_norm_output"]
    out, w = hooks.run(model, family, ids, layer, reads=reads, writes={"mlp_output": patch})
    assert torch.equal(patch, keep)  # Falcon adds the attention into a copy
    assert not torch.allclose(out, base)
    assert torch.equal(w["layer_input"], v["layer_input"])
    assert torch.equal(w["attention_output"], v["attention_output"])
    assert torch.equal(w["mlp_output"], v["mlp_output"])
    torch.testing.assert_close(w["layer_input"] + w["attention_output"] + patch, w["layer_output"],
                               atol=1e-5, rtol=0)
    torch.testing.assert_close(w["layer_output"] - v["layer_output"], patch - v["mlp_output"], atol=1e-5, rtol=0)
    if family in SEQUENTIAL:
        _, w2 = hooks.run(model, family, ids, layer, reads=["layer_mid", "layer_output"],
                          writes={"mlp_output": patch})
        assert torch.equal(w2["layer_output"], w2["layer_mid"] + patch)


def test_patch_only_its_layer(family):
    """A write at layer 1 leaves layer 0 alone."""
    model = make(family)
    ids = ids_for(model, 1, 6)
    _, v0 = hooks.run(model, family, ids, 0, reads=["layer_output"])
    zero = torch.zeros_like(v0["layer_output"])
    with torch.no_grad(), hooks.Probes(model, family, 0, reads=["layer_output", "attention_probabilities"]) as p0:
        with hooks.Probes(model, family, 1, reads=["layer_input"], writes={"attention_output": zero}) as p1:
            model(ids)
    assert torch.equal(p0.values["layer_output"], v0["layer_output"])
    assert torch.equal(p1.values["layer_input"], v0["layer_output"])


# --- torch.fx ---------------------------------------------------------------------------

def captured_inputs(model, ids):
    inputs = {}

    def pre_hook(mod, args):
        inputs.setdefault(mod, args)
    handles = [m.register_forward_pre_hook(pre_hook) for m in model.modules()]
    try:
        forward(model, ids)
    finally:
        for h in handles:
            h.remove()
    return inputs


def calls(gm, fn_name):
    return [n for n in gm.graph.nodes
            if n.op == "call_function" and getattr(n.target, "__name__", None) == fn_name]


def test_every_forward_traces_with_fx(family):
    model = make(family)
    ids = ids_for(model, 2, 7)
    inputs = captured_inputs(model, ids)
    custom = [(n, m) for n, m in model.named_modules() if type(m).__module__.startswith(models.__name__ + ".")]
    assert len(custom) >= 2 + 2 * n_layers(model)
    for name, mod in custom:
        gm = fxtrace.trace_module(mod)
        with torch.no_grad():
            want, got = mod(*inputs[mod]), gm(*inputs[mod])
        if isinstance(want, tuple):
            assert all(torch.equal(a, b) for a, b in zip(want, got)), name
        else:
            assert torch.equal(want, got), name
        interface = calls(gm, "attention_interface")
        if type(mod).__name__.endswith("Attention"):
            assert len(interface) == 1, name
            assert len(interface[0].args) == 3 and set(interface[0].kwargs) == {"attention_mask", "scaling"}
            assert isinstance(interface[0].kwargs["scaling"], float)
            # The module returns (output, probabilities): the call's element 1.
            out = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
            assert isinstance(out, tuple) and len(out) == 2
            assert out[1].op == "call_function" and out[1].target is operator.getitem
            assert out[1].args == (interface[0], 1)
        else:
            assert not interface, name
    if family == "bloom":
        for block in model.transformer.h:
            for sub in (block.self_attention, block.mlp):
                da = calls(fxtrace.trace_module(sub), "dropout_add")
                assert len(da) == 1 and len(da[0].args) == 4
        assert any(n.op == "get_attr" and n.target == "slopes"
                   for n in fxtrace.trace_module(model.transformer.h[0].self_attention).graph.nodes)
    if family == "falcon":
        gm = fxtrace.trace_module(model.transformer.h[0])
        order = [n for n in gm.graph.nodes if n.op == "call_function"]
        iadd = [n for n in order if n.target is operator.iadd]
        da = calls(gm, "dropout_add")
        assert len(iadd) == 1 and len(da) == 1 and order.index(iadd[0]) < order.index(da[0])
        assert da[0].args[0] is iadd[0]
        assert iadd[0].args[0].op == "call_module" and iadd[0].args[0].target == "mlp"


def test_attention_interface_traces_with_fx():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=gen) for _ in range(3))
    mask = torch.zeros(5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))
    gm = fxtrace.trace_attention_interface(0.5)
    ops = [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    assert torch.nn.functional.softmax in ops and ops.count(torch.matmul) == 2
    want = common.attention_interface(q, k, v, attention_mask=mask, scaling=0.5)
    got = gm(q, k, v, mask, 0.5)
    assert all(torch.equal(a, b) for a, b in zip(want, got))
