"""Generation with the KV cache nnx-derive-kv-cache derives (docs/Generation.md).

At every step the cached logits equal a full recompute of the whole sequence
(nnx's own forward, and PyTorch's) within atol=rtol=1e-5, and greedy tokens
equal PyTorch's generated without a cache: for the six family files (Bloom:
ALiBi plus the causal mask), gpt2 and llama with room for 64 new tokens,
and a nanoGPT-style model (a registered causal-mask buffer) exported by
nnx.
"""
import importlib
import os

import numpy as np
import pytest
import torch

import nnx
from nnx.generate import along_sequence
from corpus import llama2c, nanogpt
from corpus import randomize
from models import build
from models.common import attention_interface, dropout_add
from models.hooks import locate

ROOT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir)
FAMILY_FILES = os.path.join(ROOT, "examples", "families")
TOL = dict(atol=1e-5, rtol=1e-5)
IDS = [((None, None), torch.int64)]


def torch_greedy(model, ids, steps, last=lambda out: out[:, -1]):
    """PyTorch without a cache: the whole sequence again for each token;
    the tokens and each step's last-position logits."""
    seq, logits = torch.as_tensor(ids), []
    with torch.no_grad():
        for _ in range(steps):
            out = model(seq)
            out = out[0] if isinstance(out, tuple) else out
            out = getattr(out, "logits", out)
            logits.append(last(out).numpy())
            token = logits[-1].argmax(-1)
            seq = torch.cat([seq, torch.as_tensor(token)[:, None]], 1)
    return seq.numpy(), np.stack(logits)


def check_generation(run, torch_model, prompt, steps):
    tokens, logits = run.generate(prompt, max_new_tokens=steps,
                                  return_logits=True)
    assert tokens.shape == (prompt.shape[0], prompt.shape[1] + steps)
    np.testing.assert_array_equal(tokens[:, :prompt.shape[1]], prompt)
    # Each step against nnx's forward on the whole sequence so far.
    for s in range(steps):
        full = run(tokens[:, :prompt.shape[1] + s])[0]
        full = full[0] if isinstance(full, tuple) else full
        np.testing.assert_allclose(logits[s], np.asarray(full)[:, -1], **TOL)
    # And against PyTorch without a cache.
    expected, torch_logits = torch_greedy(torch_model, prompt, steps)
    np.testing.assert_allclose(logits, torch_logits, **TOL)
    np.testing.assert_array_equal(tokens, expected)
    return tokens


def prompt_ids(batch, seq, vocab, seed=0):
    return np.random.default_rng(seed).integers(0, vocab, (batch, seq))


ALL_FAMILIES = ["gpt2", "llama", "gemma2", "bloom", "cohere", "falcon"]


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_family_file(family):
    """The bundled family file: 16 positions, a 4-token prompt (batch 2)
    and 12 new tokens."""
    model = nnx.load(os.path.join(FAMILY_FILES, family + ".mlir"))
    run = nnx.compile(model)
    check_generation(run, build(family, seed=0), prompt_ids(2, 4, 32), 12)


def family_with_positions(family, positions):
    mod = build.__globals__["FAMILIES"][family]
    config = mod.small_config()
    for name in ("n_positions", "max_position_embeddings"):
        if hasattr(config, name):
            setattr(config, name, positions)
    return build(family, config, seed=1)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_family_64_tokens(family):
    """The same families with 80 positions: 64 new tokens."""
    model = family_with_positions(family, 80)
    run = nnx.compile(model, inputs=IDS,
                      functions=[attention_interface, dropout_add])
    check_generation(run, model, prompt_ids(2, 8, 32, seed=1), 64)


def nanogpt_model(block_size=80):
    torch.manual_seed(0)
    model = nanogpt.GPT(nanogpt.GPTConfig(block_size=block_size))
    return nanogpt.randomize(model, 0).eval()


def test_nanogpt_64_tokens():
    """nanoGPT: a `bias[:, :, :T, :T]` causal buffer, learned positions,
    tied embeddings, logits of the last position only."""
    model = nanogpt_model()
    run = nnx.compile(model, inputs=IDS)
    check_generation(run, model, prompt_ids(2, 8, 96, seed=2), 64)


def test_llama2c_64_tokens():
    """llama2.c: positions from `freqs_cos[:T]` (decode reads
    `[position:position + 1]`), a registered `triu(full(-inf), 1)` mask
    buffer added to the scores, GQA with `repeat_kv` on `B x T x kv_heads
    x D` before the transpose (the caches hold the 2 kv heads of 6),
    logits of the last position only."""
    torch.manual_seed(0)
    args = llama2c.ModelArgs(max_seq_len=80)
    model = randomize(llama2c.Transformer(args), 0).eval()
    run = nnx.compile(model, inputs=IDS)
    _, decode = run.generation(80)
    head_dim = args.dim // args.n_heads
    assert ([i["shape"] for i in decode.inputs[2:]] ==
            [(None, args.n_kv_heads, 80, head_dim)] * 2 * args.n_layers)
    check_generation(run, model, prompt_ids(2, 8, 100, seed=3), 64)


def corpus_model(name, positions=80):
    """A corpus model (python/tests/corpus) with room for 64 new tokens."""
    mod = importlib.import_module("corpus." + name)
    config_class = next(v for k, v in vars(mod).items()
                        if k.endswith("Config") and isinstance(v, type))
    causal_lm = next(v for k, v in vars(mod).items()
                     if k.endswith("ForCausalLM"))
    config = config_class()
    config.max_position_embeddings = max(config.max_position_embeddings,
                                         positions)
    torch.manual_seed(0)
    return randomize(causal_lm(config), 0).eval(), mod.INPUTS


@pytest.mark.parametrize("name", ["hf_llama", "qwen2", "gpt_neox", "phi"])
def test_corpus_64_tokens(name):
    """The HF styles of the corpus, each derived from its own forward:
    HF-Llama (a `finfo.min` mask from `arange > cache_position`, a sliding
    window of 6, `cos`/`sin` computed from position ids), Qwen2 and Phi
    (`masked_fill` of `arange < arange + 1`, rotary tables sliced to T and
    indexed by position ids, Phi's partial rotary), GPT-NeoX (`baddbmm`
    scores over batch x heads, a boolean `bias` buffer with `where`, a
    Python branch on the key length that the decode guards for all
    positions)."""
    model, inputs = corpus_model(name)
    vocab = next(m for m in model.modules()
                 if isinstance(m, torch.nn.Embedding)).num_embeddings
    run = nnx.compile(model, inputs=inputs)
    prompt = prompt_ids(2, 8, vocab, seed=4)
    tokens, logits = run.generate(prompt, max_new_tokens=64,
                                  return_logits=True)
    for s in range(64):
        full = run(tokens[:, :8 + s])[0]
        full = full[0] if isinstance(full, tuple) else full
        np.testing.assert_allclose(logits[s], np.asarray(full)[:, -1], **TOL)
    expected, torch_logits = torch_greedy(model, prompt, 64)
    np.testing.assert_allclose(logits, torch_logits, **TOL)
    np.testing.assert_array_equal(tokens, expected)


def test_eos_stops_and_pads():
    model = nnx.load(os.path.join(FAMILY_FILES, "gpt2.mlir"))
    run = nnx.compile(model)
    prompt = prompt_ids(1, 4, 32)
    greedy = run.generate(prompt, max_new_tokens=6)
    eos = int(greedy[0, 6])  # the third new token
    tokens = run.generate(prompt, max_new_tokens=6, eos_token_id=eos)
    np.testing.assert_array_equal(tokens, greedy[:, :7])


def test_sampling_is_seeded():
    model = nnx.load(os.path.join(FAMILY_FILES, "llama.mlir"))
    run = nnx.compile(model)
    prompt = prompt_ids(2, 3, 32, seed=3)
    a = run.generate(prompt, 10, do_sample=True, temperature=0.8, top_k=5,
                     seed=7)
    b = run.generate(prompt, 10, do_sample=True, temperature=0.8, top_k=5,
                     seed=7)
    np.testing.assert_array_equal(a, b)
    c = run.generate(prompt, 10, do_sample=True, temperature=0.8, top_k=5,
                     seed=8)
    assert not np.array_equal(a, c)
    # top_k=1 is greedy.
    np.testing.assert_array_equal(
        run.generate(prompt, 10, do_sample=True, top_k=1, seed=0),
        run.generate(prompt, 10))


def test_decode_past_max_length_fails():
    """The cache's bound is checked at run time."""
    model = nnx.load(os.path.join(FAMILY_FILES, "llama.mlir"))
    run = nnx.compile(model)
    prefill, decode = run.generation(8)
    outs, _ = prefill(prompt_ids(1, 8, 32))
    with pytest.raises(nnx.Error, match="the cache holds 8 positions"):
        decode(np.zeros((1, 1), np.int64), np.array(8, np.int64), *outs[1:])
    with pytest.raises(ValueError, match="max_length 8 is less"):
        run.generate(prompt_ids(1, 8, 32), 2, max_length=8)


def test_prefill_and_decode_signatures():
    """GQA: the caches hold the kv heads (llama: 2 of 4 heads)."""
    model = nnx.load(os.path.join(FAMILY_FILES, "llama.mlir"))
    prefill, decode = nnx.compile(model).generation(16)
    caches = [i["shape"] for i in decode.inputs[2:]]
    assert caches == [(None, 2, 16, 8)] * 4
    assert [o["shape"] for o in prefill.outputs[1:]] == caches


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_bf16_cached_equals_recompute(family):
    """A bf16 model (llama: softmax in float32, cast back): every step's
    cached logits are bit for bit nnx's forward on the whole sequence, so
    within any bound of it, and greedy tokens follow them."""
    model = build(family, seed=0).to(torch.bfloat16)
    run = nnx.compile(model, inputs=IDS,
                      functions=[attention_interface, dropout_add])
    prompt = prompt_ids(2, 4, 32)
    tokens, logits = run.generate(prompt, 12, return_logits=True)
    assert logits.dtype == np.uint16  # bf16 bits
    for s in range(12):
        full = np.asarray(run(tokens[:, :4 + s])[0])[:, -1]
        np.testing.assert_array_equal(logits[s], full)
        as_f32 = (full.astype(np.uint32) << 16).view(np.float32)
        np.testing.assert_array_equal(tokens[:, 4 + s], as_f32.argmax(-1))


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_probes_on_every_token(family):
    """Read probes on every step: joined along the sequence they equal the
    forward's probes on the whole sequence (within 1e-5), the last step's
    being the last position's."""
    names = ["layers.0.attention_output", "layers.1.mlp_output"]
    model = nnx.load(os.path.join(FAMILY_FILES, family + ".mlir"))
    run = nnx.compile(model, probes=names, family=family)
    tokens, probes = run.generate(prompt_ids(2, 4, 32), 8)
    assert sorted(probes) == sorted(names)
    _, full = run(tokens[:, :-1])
    for name in names:
        steps = probes[name]
        assert len(steps) == 8
        assert steps[0].shape[1] == 4 and steps[-1].shape[1] == 1
        np.testing.assert_allclose(
            along_sequence(steps), full[name], **TOL)


def output_hook(model, family, name, layer, fn):
    """A PyTorch forward hook applying `fn` to the family's `name` at
    `layer` (a module's output, the first item of a tuple)."""
    loc = locate(model, family, name, layer)
    assert loc.point == "output" and not loc.calls, loc
    module = dict(model.named_modules())[loc.module]

    def hook(mod, args, out):
        if isinstance(out, tuple):
            return (fn(out[0]),) + tuple(out[1:])
        return fn(out)
    return module.register_forward_hook(hook)


def steering(width, scale, seed):
    return np.random.default_rng(seed).normal(size=width).astype(
        np.float32) * scale


@pytest.mark.parametrize("family", ["gpt2"])
def test_steering_patch_as_pytorch_hook(family):
    """A callable patch adding a steering vector to attention_output (layers
    0 and 1; llama passes too, left out for the suite's time) on every step changes the greedy tokens exactly as the same
    forward hooks do in PyTorch recomputing the whole sequence; each step's
    logits agree within 1e-5, and the probes read on every step, joined
    along the sequence, equal PyTorch's hooks on the whole sequence (the
    last step's being its last position)."""
    patched = ["layers.0.attention_output", "layers.1.attention_output"]
    reads = ["layers.0.mlp_output", "layers.1.attention_output"]
    model = nnx.load(os.path.join(FAMILY_FILES, family + ".mlir"))
    run = nnx.compile(model, probes=reads, patches=patched, family=family)
    reference = build(family, seed=0)
    prompt, steps = prompt_ids(2, 4, 32, seed=4), 10
    width = reference.config.hidden_size if hasattr(
        reference.config, "hidden_size") else reference.config.n_embd
    vectors = [steering(width, 3.0, seed) for seed in (5, 6)]
    seen = []

    def steer(layer):
        def patch(step, value):
            seen.append((layer, step, value.shape))
            return value + vectors[layer]
        return patch
    tokens, logits, probes = run.generate(
        prompt, steps, return_logits=True,
        patches={name: steer(i) for i, name in enumerate(patched)})
    # Each callable once per step, layer 0 first, on the step's positions.
    assert seen[:4] == [(0, 0, (2, 4, width)), (1, 0, (2, 4, width)),
                        (0, 1, (2, 1, width)), (1, 1, (2, 1, width))]
    assert len(seen) == 2 * steps
    plain = run.generate(prompt, steps, patches={
        name: (lambda step, value: value) for name in patched})[0]
    assert not np.array_equal(tokens, plain)  # the steering changes tokens

    # The reads first: a read of a patched value sees it before the patch,
    # as in nnx.
    values, handles = {}, []
    for name in reads:
        layer, _, bare = name.partition(".")[2].partition(".")
        handles.append(output_hook(
            reference, family, bare, int(layer),
            lambda out, name=name: values.__setitem__(name, out) or out))
    handles += [output_hook(reference, family, "attention_output", i,
                            lambda out, v=torch.from_numpy(v): out + v)
                for i, v in enumerate(vectors)]
    try:
        expected, torch_logits = torch_greedy(reference, prompt, steps)
        with torch.no_grad():
            reference(torch.as_tensor(tokens[:, :-1]))
    finally:
        for h in handles:
            h.remove()
    np.testing.assert_array_equal(tokens, expected)
    np.testing.assert_allclose(logits, torch_logits, **TOL)
    for name in reads:
        full = values[name].numpy()
        assert len(probes[name]) == steps
        np.testing.assert_allclose(probes[name][-1], full[:, -1:], **TOL)
        np.testing.assert_allclose(along_sequence(probes[name]), full, **TOL)


def test_patch_arrays_per_step():
    """A patch given as one array per step writes them: the values a
    callable wrote, given as arrays, generate the same tokens; a patch
    missing, unknown, or with too few steps is refused."""
    name = "layers.0.mlp_output"
    model = nnx.load(os.path.join(FAMILY_FILES, "gpt2.mlir"))
    run = nnx.compile(model, patches=[name], family="gpt2")
    prompt = prompt_ids(1, 3, 32, seed=7)
    written = []

    def ablate(step, value):
        written.append(np.zeros_like(value) if step % 2 else value * 0.5)
        return written[-1]
    tokens = run.generate(prompt, 6, patches={name: ablate})
    assert len(written) == 6
    np.testing.assert_array_equal(
        run.generate(prompt, 6, patches={name: written}), tokens)
    with pytest.raises(ValueError, match="gives no value for the patch"):
        run.generate(prompt, 6)
    with pytest.raises(ValueError, match="no patch named 'x'"):
        run.generate(prompt, 6, patches={name: written, "x": written})
    with pytest.raises(ValueError, match="one array per step"):
        run.generate(prompt, 6, patches={name: written[:5]})


def test_decode_updates_caches_in_place():
    """Decode takes the caches by reference: the arrays prefill returned are
    bound without a copy and the new rows written into them (same data
    pointer, the row at the position filled, nothing copied in and back);
    decode returns only the logits. A cache array nnx did not return is
    copied in and back (counted), with the same values."""
    model = nnx.load(os.path.join(FAMILY_FILES, "llama.mlir"))
    prefill, decode = nnx.compile(model).generation(8)
    assert len(decode.outputs) == 1
    outs, _ = prefill(prompt_ids(2, 4, 32))
    caches = list(outs[1:])
    pointers = [c.__array_interface__["data"][0] for c in caches]
    assert not any(c[:, :, 4].any() for c in caches)
    token = np.array([[3], [5]], np.int64)
    position = np.array(4, np.int64)
    foreign = [c.copy() for c in caches]
    logits, _ = decode(token, position, *caches)
    assert logits.shape == (2, 1, 32)
    assert decode._c.in_place_copies == 0
    assert [c.__array_interface__["data"][0] for c in caches] == pointers
    assert all(c[:, :, 4].any() for c in caches)
    assert not any(c[:, :, 5:].any() for c in caches)
    again, _ = decode(token, position, *foreign)
    assert decode._c.in_place_copies == len(caches)
    np.testing.assert_array_equal(again, logits)
    for mine, theirs in zip(caches, foreign):
        np.testing.assert_array_equal(mine, theirs)

