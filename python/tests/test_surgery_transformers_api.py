"""nnx.surgery on the reference transformers (python/tests/models), from
PyTorch: the edited module is the user's own tree (their classes, their
forward code) with the changed leaves replaced or a block added / removed,
and it runs, trains and agrees with the compiler's claim in PyTorch itself:
widen and insert_block preserve the logits within 1e-5, prune and
remove_block keep the chain."""

import copy
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import build  # noqa: E402

from nnx import surgery  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
INPUTS = [((None, None), torch.int64)]


def logits(model, ids):
    with torch.no_grad():
        out = model(ids)
    return out[0] if isinstance(out, tuple) else out


@pytest.fixture(scope="module")
def llama():
    return build("llama")


@pytest.fixture
def ids():
    return torch.randint(0, 32, (3, 9), generator=torch.Generator().manual_seed(0))


def params(model):
    return sum(p.numel() for p in model.parameters())


def test_widen_swiglu_in_pytorch(llama, ids):
    before = copy.deepcopy(llama.state_dict())
    wide = surgery.widen(llama, layer_name="model.layers.0.mlp.gate_proj",
                         new_width=96, rng_seed=1, inputs=INPUTS)
    mlp = wide.model.layers[0].mlp
    assert type(mlp) is type(llama.model.layers[0].mlp)
    assert (mlp.gate_proj.out_features, mlp.up_proj.out_features,
            mlp.down_proj.in_features) == (96, 96, 96)
    torch.testing.assert_close(logits(wide, ids), logits(llama, ids), **TOL)
    # The source is untouched, and the result trains.
    for k, v in llama.state_dict().items():
        assert torch.equal(v, before[k]), k
    wide.train()
    out = wide(ids)
    (out[0] if isinstance(out, tuple) else out).square().mean().backward()
    assert mlp.up_proj.weight.grad is not None


def test_widen_zero_init_keeps_old_columns(llama, ids):
    wide = surgery.widen(llama, layer_name="model.layers.1.mlp.up_proj",
                         new_width=80, init="zero", inputs=INPUTS)
    down = wide.model.layers[1].mlp.down_proj.weight
    old = llama.model.layers[1].mlp.down_proj.weight
    assert torch.equal(down[:, :64], old)
    assert torch.count_nonzero(down[:, 64:]) == 0
    torch.testing.assert_close(logits(wide, ids), logits(llama, ids), **TOL)


def test_insert_block_is_an_identity_in_pytorch(llama, ids):
    deeper = surgery.insert_block(llama, after="model.layers.0", inputs=INPUTS)
    layers = deeper.model.layers
    assert len(layers) == len(llama.model.layers) + 1
    new = layers[1]
    assert type(new) is type(llama.model.layers[0])
    assert torch.count_nonzero(new.self_attn.o_proj.weight) == 0
    assert torch.count_nonzero(new.mlp.down_proj.weight) == 0
    assert torch.equal(new.self_attn.q_proj.weight,
                       llama.model.layers[0].self_attn.q_proj.weight)
    assert all(p.requires_grad for p in new.parameters())
    assert torch.equal(layers[2].mlp.up_proj.weight,
                       llama.model.layers[1].mlp.up_proj.weight)
    torch.testing.assert_close(logits(deeper, ids), logits(llama, ids),
                               atol=0, rtol=0)
    assert params(deeper) - params(llama) == params(llama.model.layers[0])


def test_remove_block_matches_the_list_without_it(llama, ids):
    shallow = surgery.remove_block(llama, layer_name="model.layers.0",
                                   inputs=INPUTS)
    assert len(shallow.model.layers) == len(llama.model.layers) - 1
    by_hand = copy.deepcopy(llama)
    del by_hand.model.layers[0]
    torch.testing.assert_close(logits(shallow, ids), logits(by_hand, ids),
                               **TOL)
    assert params(llama) - params(shallow) == params(llama.model.layers[0])


def test_prune_swiglu_counts(llama, ids):
    pruned = surgery.prune(llama, layer_name="model.layers.0.mlp.gate_proj",
                           keep=40, inputs=INPUTS)
    mlp = pruned.model.layers[0].mlp
    assert (mlp.gate_proj.out_features, mlp.up_proj.out_features,
            mlp.down_proj.in_features) == (40, 40, 40)
    d = llama.config.hidden_size if hasattr(llama, "config") else 32
    assert params(llama) - params(pruned) == 3 * (64 - 40) * d
    assert logits(pruned, ids).shape == logits(llama, ids).shape


def test_prune_by_given_importance(llama):
    """The user's scores decide: the 40 units with the highest given score
    stay, in order (here the last 40)."""
    scores = torch.arange(64, dtype=torch.float32)
    pruned = surgery.prune(llama, layer_name="model.layers.1.mlp.gate_proj",
                           keep=40, importance=scores, inputs=INPUTS)
    kept = pruned.model.layers[1].mlp.up_proj.weight
    assert torch.equal(kept, llama.model.layers[1].mlp.up_proj.weight[24:])
    with pytest.raises(ValueError, match="not a float array of shape"):
        surgery.prune(llama, layer_name="model.layers.1.mlp.gate_proj",
                      keep=40, importance=[1.0, 2.0], inputs=INPUTS)


def test_widen_refuses_attention_reshape(llama):
    with pytest.raises(ValueError, match="reaches a reshape"):
        surgery.widen(llama, layer_name="model.layers.0.self_attn.q_proj",
                      new_width=40, inputs=INPUTS)


@pytest.mark.parametrize("family", ["gpt2", "llama", "gemma2", "bloom",
                                    "cohere", "falcon"])
def test_param_count_is_pytorchs(family):
    """The compiler's count (which the surgery tables use) is PyTorch's
    parameters(): a custom module's own parameters (RMSNorm gains) counted,
    its buffers (rotary inv_freq, named by nnx.buffers) not, tied weights
    once."""
    from models.common import attention_interface, dropout_add
    from nnx import _nnx
    from nnx.torch_export import export
    model = build(family)
    text = export(model, INPUTS, name=family,
                  functions=[attention_interface, dropout_add])
    assert _nnx.Model.parse(text).param_count() == params(model)


# -----------------------------------------------------------------------------
# Edits of sizes the forward code hard-codes: a module generated from the IR
# -----------------------------------------------------------------------------

def trains(model, ids, param):
    """One backward pass reaches `param` (a named parameter)."""
    model.train()
    out = model(ids)
    (out[0] if isinstance(out, tuple) else out).square().mean().backward()
    return dict(model.named_parameters())[param].grad is not None


def test_grow_attention_in_pytorch(llama, ids):
    before = copy.deepcopy(llama.state_dict())
    grown = surgery.grow_attention(llama, layer_name="model.layers.0.self_attn",
                                   heads=8, kv_heads=4, head_dim=12,
                                   rng_seed=2, inputs=INPUTS)
    grown.eval()
    torch.testing.assert_close(logits(grown, ids), logits(llama, ids), **TOL)
    attn = grown.model.layers[0].self_attn
    assert tuple(attn.q_proj.weight.shape) == (96, 32)
    assert tuple(attn.k_proj.weight.shape) == (48, 32)
    assert tuple(attn.o_proj.weight.shape) == (32, 96)
    for k, v in llama.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert trains(grown, ids, "model.layers.0.self_attn.k_proj.weight")


def test_grow_attention_refuses_the_gqa_ratio(llama):
    with pytest.raises(ValueError, match="must stay an integer"):
        surgery.grow_attention(llama, layer_name="model.layers.0.self_attn",
                               heads=5, inputs=INPUTS)


def test_widen_residual_in_pytorch(llama, ids):
    wide = surgery.widen_residual(llama, new_width=48, rng_seed=3,
                                  inputs=INPUTS)
    wide.eval()
    torch.testing.assert_close(logits(wide, ids), logits(llama, ids), **TOL)
    assert tuple(wide.model.embed_tokens.weight.shape) == (32, 48)
    assert trains(wide, ids, "model.layers.1.mlp.down_proj.weight")


def test_widen_residual_refuses_layer_norms(ids):
    with pytest.raises(ValueError, match="is not an RMSNorm"):
        surgery.widen_residual(build("gpt2"), new_width=48, inputs=INPUTS)


def test_prune_heads_keeps_kv_groups(llama, ids):
    pruned = surgery.prune_heads(llama, layer_name="model.layers.1.self_attn",
                                 heads=2, inputs=INPUTS)
    attn = pruned.model.layers[1].self_attn
    assert tuple(attn.q_proj.weight.shape) == (16, 32)
    assert tuple(attn.k_proj.weight.shape) == (8, 32)
    assert params(llama) - params(pruned) == 16 * 32 * 2 + 8 * 32 * 2
    assert logits(pruned, ids).shape == logits(llama, ids).shape
