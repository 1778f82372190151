"""The seed's surgery API on nn.Modules (:mod:`nnx.surgery`), each primitive
run by the compiler's pass through ``nnx._nnx``.

Checked here, against the behaviour contract (the seed's §2, §3, §5, §7):

- the §2 workflow (train, widen / deepen, check parity, rebuild from the
  returned ``params``, refine, save and reload) and the §7 "freeze old, train
  new" workflow around ``expand_embedding``;
- the ``requires_grad`` and train / eval rules of §7;
- deepen's key rules in named and positional ``nn.Sequential``s and aliased
  modules (§3.2);
- the argument, its module identities and the global RNGs left untouched;
- the parameter-count tables of §3 and low-rank's Eckart-Young error;
- refusals: the exception class and a message equal to the ``error:`` (and
  ``note:``) text nnx-opt prints for the same pass on the same exported IR.

Function preservation is checked at atol=1e-5 (the §4 contract), never
relaxed.
"""

import collections
import random
import re

import numpy as np
import pytest

_nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")
torch = pytest.importorskip("torch")
nn = torch.nn

from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from nnx.nets import FeedFwdNN, FeedFwdParams  # noqa: E402
from nnx.surgery import (  # noqa: E402
    deepen, drop_layer, expand_embedding, low_rank_factorize, widen)
from nnx.tools import run_tool  # noqa: E402
from nnx.torch_export import export  # noqa: E402

OD = collections.OrderedDict
ATOL = 1e-5


def n_params(module):
    return sum(p.numel() for p in module.parameters())


def assert_same_function(a, b, x):
    """`a` and `b` agree on `x` within the 1e-5 contract (eval mode, no
    grad)."""
    a.eval()
    b.eval()
    with torch.no_grad():
        ya, yb = a(x), b(x)
    assert ya.shape == yb.shape
    assert torch.allclose(ya, yb, atol=ATOL), (ya - yb).abs().max().item()


def mlp(seed=0):
    """Sequential(Linear(4, 8), ReLU(), Linear(8, 2)), the §3.1 / §3.2 net."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def trained_ffnn(steps=5):
    """FeedFwdNN(8, [32, 16], 3, dropout=0.1) after a few Adam steps on random
    data (fixed seeds), left in train mode."""
    torch.manual_seed(0)
    net = FeedFwdNN(8, [32, 16], 3, dropout=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    y = torch.randint(0, 3, (64,), generator=g)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    net.train()
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    return net


def all_parameters(model):
    """(path, id, requires_grad) of every parameter slot, aliases
    included."""
    return [(f"{k}.{n}" if k else n, id(p), p.requires_grad)
            for k, m in model.named_modules(remove_duplicate=False)
            for n, p in m._parameters.items() if p is not None]


class Snapshot:
    """What a primitive must not change: the source's tensors, flags, modes
    and module identities, and the global RNGs."""

    def __init__(self, model):
        self.model = model
        self.state = {k: v.detach().clone()
                      for k, v in model.state_dict().items()}
        self.ids = [(k, id(m)) for k, m in
                    model.named_modules(remove_duplicate=False)]
        self.params = all_parameters(model)
        self.modes = [(k, m.training) for k, m in
                      model.named_modules(remove_duplicate=False)]
        self.torch_rng = torch.get_rng_state()
        self.numpy_rng = np.random.get_state()
        self.python_rng = random.getstate()

    def check(self):
        m = self.model
        state = m.state_dict()
        assert list(state) == list(self.state)
        for k, v in self.state.items():
            assert torch.equal(state[k], v), k
        assert [(k, id(x)) for k, x in
                m.named_modules(remove_duplicate=False)] == self.ids
        assert all_parameters(m) == self.params
        assert [(k, x.training) for k, x in
                m.named_modules(remove_duplicate=False)] == self.modes
        assert torch.equal(torch.get_rng_state(), self.torch_rng)
        numpy_rng = np.random.get_state()
        assert numpy_rng[0] == self.numpy_rng[0]
        assert np.array_equal(numpy_rng[1], self.numpy_rng[1])
        assert numpy_rng[2:] == self.numpy_rng[2:]
        assert random.getstate() == self.python_rng

    def check_disjoint(self, result):
        """`result` shares no module or tensor with the source."""
        source_modules = {i for _, i in self.ids}
        assert not any(id(m) in source_modules for m in result.modules())
        source_tensors = {p.data_ptr() for p in self.model.parameters()} | {
            b.data_ptr() for b in self.model.buffers()}
        assert not any(p.data_ptr() in source_tensors
                       for p in result.parameters())


# -----------------------------------------------------------------------------
# §2: train, edit, rebuild from the returned params, refine, save, reload
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("primitive", ["widen", "deepen"])
def test_seed_workflow_edit_refine_save(primitive, tmp_path):
    net = trained_ffnn()
    if primitive == "widen":
        new_net = widen(net, layer_name="layers.0", new_width=64)
        expected = FeedFwdParams(8, (64, 16), 3, dropout=0.1)
        assert new_net.layers[0].weight.shape == (64, 8)
        assert new_net.layers[1].weight.shape == (16, 64)
    else:
        new_net = deepen(net, after_layer_name="layers.0")
        expected = FeedFwdParams(8, (32, 32, 16), 3, dropout=0.1,
                                 dropout_probs=(0.1, 0.0, 0.1))
        assert len(new_net.layers) == 4
        assert torch.equal(new_net.layers[1].weight, torch.eye(32))
        assert torch.equal(new_net.layers[1].bias, torch.zeros(32))
    assert isinstance(new_net, FeedFwdNN)
    assert new_net.params == expected
    assert net.params == FeedFwdParams(8, (32, 16), 3, dropout=0.1)

    # Parity in eval mode (dropout would break it in train mode).
    x = torch.randn(8, net.params.input_dim)
    assert_same_function(net, new_net, x)

    # Rebuild from the descriptor and adopt the edited tensors.
    refined = FeedFwdNN.from_params(new_net.params)
    refined.load_state_dict(new_net.state_dict())
    assert refined.params == new_net.params
    refined.eval()
    with torch.no_grad():
        assert torch.equal(refined(x), new_net(x))
    assert_same_function(net, refined, x)

    # Refine: 3 epochs of Adam.
    torch.manual_seed(3)
    data_x, data_y = torch.randn(256, 8), torch.randint(0, 3, (256,))
    loader = DataLoader(TensorDataset(data_x, data_y), batch_size=32,
                        shuffle=True)
    loss_fn = nn.CrossEntropyLoss()

    def full_loss():
        refined.eval()
        with torch.no_grad():
            return loss_fn(refined(data_x), data_y).item()

    before_loss = full_loss()
    before = {k: v.clone() for k, v in refined.state_dict().items()}
    opt = torch.optim.Adam(refined.parameters(), lr=1e-3, weight_decay=5e-5)
    refined.train()
    for _ in range(3):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(refined(xb), yb).backward()
            opt.step()
    after_loss = full_loss()
    assert all(not torch.equal(before[k], v)
               for k, v in refined.state_dict().items())
    assert after_loss < before_loss

    # Save and reload into a fresh net built from the same descriptor.
    path = tmp_path / "refined.pt"
    torch.save(refined.state_dict(), path)
    reloaded = FeedFwdNN.from_params(refined.params)
    reloaded.load_state_dict(torch.load(path))
    reloaded.eval()
    refined.eval()
    with torch.no_grad():
        assert torch.equal(reloaded(x), refined(x))


def test_feed_fwd_descriptor_keeps_overrides():
    """§5: the returned params keep every per-layer override aligned; the
    check reads activation_for(i), not the scalar default."""
    torch.manual_seed(0)
    net = FeedFwdNN(4, [8, 6], 2, activation="tanh",
                    activations=["relu", "tanh"], dropout_probs=[0.2, 0.3])
    x = torch.randn(6, 4)
    deeper = deepen(net, after_layer_name="layers.0")
    assert deeper.params == FeedFwdParams(
        4, (8, 8, 6), 2, activation="tanh",
        activations=("relu", "relu", "tanh"), dropout_probs=(0.2, 0.0, 0.3))
    assert_same_function(net, deeper, x)
    wide = widen(net, layer_name="layers.1", new_width=10)
    assert wide.params == FeedFwdParams(
        4, (8, 10), 2, activation="tanh", activations=("relu", "tanh"),
        dropout_probs=(0.2, 0.3))
    assert_same_function(net, wide, x)
    for new in (deeper, wide):
        fresh = FeedFwdNN.from_params(new.params)
        fresh.load_state_dict(new.state_dict())
        assert_same_function(new, fresh, x)
    # The override wins over the default the other way round too.
    relu_default = FeedFwdNN(4, [8, 6], 2, activations=["relu", "tanh"])
    with pytest.raises(ValueError, match=r"activation_for\(1\) = 'tanh'"):
        deepen(relu_default, after_layer_name="layers.1")


def test_drop_layer_on_feed_fwd_keeps_keys_and_params():
    torch.manual_seed(0)
    net = FeedFwdNN(4, [8, 8], 2)
    dropped = drop_layer(net, layer_name="layers.1")
    assert isinstance(dropped.layers[1], nn.Identity)
    assert dropped.params == net.params
    assert [k for k, _ in dropped.named_modules()] == [
        k for k, _ in net.named_modules()]
    x = torch.randn(3, 4)
    with torch.no_grad():
        h = torch.relu(torch.relu(net.layers[0](x)))
        assert torch.allclose(dropped(x), net.layers[2](h), atol=ATOL)


# -----------------------------------------------------------------------------
# §7: expand_embedding, freeze the old rows, train the new ones
# -----------------------------------------------------------------------------

class EmbedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.embed(x).mean(1))


def make_embed_net():
    torch.manual_seed(0)
    return EmbedNet()


def test_expand_embedding_rows_and_mask():
    net = make_embed_net()
    old = net.embed.weight.detach().clone()
    for init in ("copy_mean", "zeros"):
        new_emb, mask = expand_embedding(net.embed, new_num_embeddings=60,
                                         init=init)
        assert type(new_emb) is nn.Embedding
        assert new_emb is not net.embed
        assert (new_emb.num_embeddings, new_emb.embedding_dim) == (60, 8)
        assert mask.shape == (60,) and mask.dtype == torch.bool
        assert mask[:50].all() and not mask[50:].any()
        w = new_emb.weight.detach()
        assert torch.equal(w[:50], old)
        if init == "zeros":
            assert torch.equal(w[50:], torch.zeros(10, 8))
        else:
            # Both the pass and this reference take the mean in double and
            # round it to f32 once: they agree within one f32 ulp of it (the
            # two double sums may differ in their last bits).
            mean = old.double().mean(0)
            ulp = torch.finfo(torch.float32).eps * mean.abs()
            assert ((w[50:].double() - mean).abs() <= ulp).all()
            assert all(torch.equal(w[50], w[i]) for i in range(50, 60))
    assert torch.equal(net.embed.weight, old)


@pytest.mark.parametrize("embed_decay", [0.0, 5e-5],
                         ids=["decay-free-group", "decayed-embedding"])
def test_seed_freeze_old_rows_workflow(embed_decay):
    net = make_embed_net()
    ids = torch.randint(0, 50, (16, 5), generator=torch.Generator()
                        .manual_seed(4))
    net.eval()
    with torch.no_grad():
        y_before = net(ids)
    old = net.embed.weight.detach().clone()

    new_emb, frozen_mask = expand_embedding(net.embed, new_num_embeddings=60,
                                            init="copy_mean")
    net.embed = new_emb
    # Function preserved on original token ids.
    with torch.no_grad():
        assert torch.allclose(net(ids), y_before, atol=ATOL)
    start_new = new_emb.weight.detach()[50:].clone()

    keep = (~frozen_mask).unsqueeze(1)
    new_emb.weight.register_hook(lambda g: g * keep.to(g.dtype))
    embed_params = list(net.embed.parameters())
    rest = [p for n, p in net.named_parameters()
            if not n.startswith("embed.")]
    opt = torch.optim.Adam([
        {"params": embed_params, "weight_decay": embed_decay},
        {"params": rest, "weight_decay": 5e-5},
    ], lr=1e-2)
    g = torch.Generator().manual_seed(5)
    net.train()
    for _ in range(20):
        x = torch.randint(0, 60, (16, 5), generator=g)
        y = torch.randint(0, 3, (16,), generator=g)
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    w = new_emb.weight.detach()
    assert not torch.equal(w[50:], start_new)  # the new rows learn
    assert (w[50:] != start_new).any(1).all()
    if embed_decay == 0.0:
        assert torch.equal(w[:50], old)
    else:
        # The seed's trap: Adam adds the decay inside step(), after the
        # hook zeroed the gradient, so every frozen row drifts.
        assert (w[:50] != old).any(1).all()


# -----------------------------------------------------------------------------
# §7: requires_grad flags and train / eval modes
# -----------------------------------------------------------------------------

def flags(module):
    return {k: p.requires_grad for k, p in module.named_parameters()}


def modes(module):
    return {k: m.training for k, m in module.named_modules()}


@pytest.mark.parametrize("config", [
    dict(w=False, b=True, cw=True, cb=False, root=True, target=False,
         consumer=True),
    dict(w=True, b=False, cw=False, cb=True, root=False, target=True,
         consumer=False),
    dict(w=False, b=False, cw=True, cb=True, root=True, target=True,
         consumer=False),
], ids=["frozen-weight", "frozen-bias", "frozen-target"])
def test_widen_carries_flags_and_modes(config):
    net = mlp()
    net[0].weight.requires_grad_(config["w"])
    net[0].bias.requires_grad_(config["b"])
    net[2].weight.requires_grad_(config["cw"])
    net[2].bias.requires_grad_(config["cb"])
    net.train(config["root"])
    net[0].train(config["target"])
    net[2].train(config["consumer"])
    net[1].train(not config["root"])
    before_modes = modes(net)
    wide = widen(net, layer_name="0", new_width=16)
    assert wide[0].weight.shape == (16, 4) and wide[2].weight.shape == (2, 16)
    assert flags(wide) == {"0.weight": config["w"], "0.bias": config["b"],
                           "2.weight": config["cw"], "2.bias": config["cb"]}
    assert modes(wide) == before_modes


def test_widen_on_feed_fwd_carries_flags_and_modes():
    net = trained_ffnn()
    net.layers[0].weight.requires_grad_(False)
    net.layers[1].bias.requires_grad_(False)
    net.train()
    net.layers[0].eval()
    wide = widen(net, layer_name="layers.0", new_width=40)
    assert flags(wide) == {"layers.0.weight": False, "layers.0.bias": True,
                           "layers.1.weight": True, "layers.1.bias": False,
                           "layers.2.weight": True, "layers.2.bias": True}
    assert modes(wide) == modes(net)


def test_deepen_new_modules_trainable_in_the_container_mode():
    net = mlp()
    for p in net.parameters():
        p.requires_grad_(False)
    net.eval()
    net[0].train()
    deeper = deepen(net, after_layer_name="1")
    assert flags(deeper) == {"0.weight": False, "0.bias": False,
                             "2.weight": True, "2.bias": True,
                             "4.weight": False, "4.bias": False}
    # Existing layers keep their own modes; the new ones take the
    # container's (eval).
    assert modes(deeper) == {"": False, "0": True, "1": False, "2": False,
                             "3": False, "4": False}

    # Nested: the container is in train mode under an eval root.
    torch.manual_seed(0)
    net = nn.Sequential(OD(body=nn.Sequential(OD(
        fc=nn.Linear(4, 8), relu=nn.ReLU(), out=nn.Linear(8, 2)))))
    net.eval()
    net.body.train()
    net.body.fc.eval()
    deeper = deepen(net, after_layer_name="body.relu")
    assert modes(deeper) == {
        "": False, "body": True, "body.fc": False, "body.relu": True,
        "body._nnx_deepen_linear_0": True, "body._nnx_deepen_relu_0": True,
        "body.out": True}
    assert all(flags(deeper).values())


def test_deepen_on_feed_fwd_keeps_modes():
    net = trained_ffnn()
    net.eval()
    net.layers[1].train()
    deeper = deepen(net, after_layer_name="layers.0")
    assert modes(deeper) == {"": False, "layers": False, "layers.0": False,
                             "layers.1": False, "layers.2": True,
                             "layers.3": False}
    assert all(flags(deeper).values())


@pytest.mark.parametrize("weight, bias, bias_present, mode", [
    (False, True, True, True), (True, False, True, False),
    (False, None, False, False), (True, None, False, True)],
    ids=["frozen-weight", "frozen-bias", "frozen-no-bias",
         "trainable-no-bias"])
def test_low_rank_factor_flags_and_mode(weight, bias, bias_present, mode):
    torch.manual_seed(0)
    linear = nn.Linear(6, 4, bias=bias_present)
    linear.weight.requires_grad_(weight)
    if bias_present:
        linear.bias.requires_grad_(bias)
    linear.train(mode)
    f = low_rank_factorize(linear, rank=2)
    assert type(f) is nn.Sequential and len(f) == 2
    assert f[0].bias is None
    expected = {"0.weight": weight, "1.weight": weight}
    if bias_present:
        expected["1.bias"] = bias
    else:
        assert f[1].bias is None
    assert flags(f) == expected
    assert modes(f) == {"": mode, "0": mode, "1": mode}


@pytest.mark.parametrize("grad, mode", [(True, True), (False, False),
                                        (False, True), (True, False)])
def test_expand_embedding_flag_and_mode(grad, mode):
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4)
    emb.weight.requires_grad_(grad)
    emb.train(mode)
    new, _ = expand_embedding(emb, new_num_embeddings=12)
    assert new.weight.requires_grad is grad
    assert new.training is mode


# -----------------------------------------------------------------------------
# §3.2: deepen's keys in named and positional containers, aliases
# -----------------------------------------------------------------------------

def named_mlp():
    torch.manual_seed(0)
    return nn.Sequential(OD(fc=nn.Linear(4, 8), relu=nn.ReLU(),
                            out=nn.Linear(8, 2)))


def test_deepen_named_sequential_keys():
    net = named_mlp()
    x = torch.randn(5, 4)
    d1 = deepen(net, after_layer_name="relu")
    assert list(d1._modules) == ["fc", "relu", "_nnx_deepen_linear_0",
                                 "_nnx_deepen_relu_0", "out"]
    assert isinstance(d1._nnx_deepen_linear_0, nn.Linear)
    assert isinstance(d1._nnx_deepen_relu_0, nn.ReLU)
    assert torch.equal(d1._nnx_deepen_linear_0.weight, torch.eye(8))
    assert_same_function(net, d1, x)
    # Again at the same site: N increments, the new pair right after it.
    d2 = deepen(d1, after_layer_name="relu")
    assert list(d2._modules) == [
        "fc", "relu", "_nnx_deepen_linear_1", "_nnx_deepen_relu_1",
        "_nnx_deepen_linear_0", "_nnx_deepen_relu_0", "out"]
    # After an inserted ReLU: the next unused N.
    d3 = deepen(d2, after_layer_name="_nnx_deepen_relu_0")
    assert list(d3._modules) == [
        "fc", "relu", "_nnx_deepen_linear_1", "_nnx_deepen_relu_1",
        "_nnx_deepen_linear_0", "_nnx_deepen_relu_0", "_nnx_deepen_linear_2",
        "_nnx_deepen_relu_2", "out"]
    assert_same_function(net, d3, x)
    assert list(net._modules) == ["fc", "relu", "out"]


def test_deepen_named_sequential_nested_and_numeric_keys():
    torch.manual_seed(0)
    net = nn.Sequential(OD(body=nn.Sequential(OD([
        ("a", nn.Linear(4, 8)), ("1", nn.ReLU()), ("b", nn.Linear(8, 6)),
        ("2", nn.ReLU())])), head=nn.Linear(6, 2)))
    x = torch.randn(5, 4)
    deeper = deepen(net, after_layer_name="body.1")
    assert list(deeper._modules) == ["body", "head"]
    assert list(deeper.body._modules) == [
        "a", "1", "_nnx_deepen_linear_0", "_nnx_deepen_relu_0", "b", "2"]
    assert_same_function(net, deeper, x)
    # A retained numeric key is addressed exactly, not by position.
    deeper2 = deepen(deeper, after_layer_name="body.2")
    assert list(deeper2.body._modules) == [
        "a", "1", "_nnx_deepen_linear_0", "_nnx_deepen_relu_0", "b", "2",
        "_nnx_deepen_linear_1", "_nnx_deepen_relu_1"]
    assert deeper2.body._nnx_deepen_linear_1.weight.shape == (6, 6)
    assert_same_function(net, deeper2, x)


def test_deepen_positional_sequential_shifts_by_two():
    net = mlp()
    x = torch.randn(5, 4)
    deeper = deepen(net, after_layer_name="1")
    assert type(deeper) is nn.Sequential
    assert list(deeper._modules) == ["0", "1", "2", "3", "4"]
    assert isinstance(deeper[2], nn.Linear)
    assert deeper[2].weight.shape == (8, 8)
    assert torch.equal(deeper[2].weight, torch.eye(8))
    assert torch.equal(deeper[2].bias, torch.zeros(8))
    assert isinstance(deeper[3], nn.ReLU)
    assert torch.equal(deeper[4].weight, net[2].weight)
    assert deeper[4] is not net[2]
    assert_same_function(net, deeper, x)


def aliased_net():
    """A Linear(8, 8) registered under two keys, not the edit's target."""
    torch.manual_seed(0)
    shared = nn.Linear(8, 8)
    return nn.Sequential(OD(fc=nn.Linear(4, 8), relu=nn.ReLU(), mid=shared,
                            relu2=nn.ReLU(), mid2=shared, relu3=nn.ReLU(),
                            out=nn.Linear(8, 2)))


@pytest.mark.parametrize("edit", ["deepen", "widen", "drop"])
def test_alias_stays_one_copied_object(edit):
    net = aliased_net()
    x = torch.randn(5, 4)
    if edit == "deepen":
        new = deepen(net, after_layer_name="relu")
    elif edit == "widen":
        torch.manual_seed(0)
        net = nn.Sequential(OD(mid=nn.Linear(4, 4), relu=nn.ReLU()))
        net.add_module("mid2", net.mid)
        net.add_module("fc", nn.Linear(4, 8))
        net.add_module("relu2", nn.ReLU())
        net.add_module("out", nn.Linear(8, 2))
        new = widen(net, layer_name="fc", new_width=12)
        assert new.fc.weight.shape == (12, 4)
    else:
        new = drop_layer(net, layer_name="relu2")
        assert isinstance(new.relu2, nn.Identity)
    assert new.mid is new.mid2
    assert new.mid is not net.mid
    assert torch.equal(new.mid.weight, net.mid.weight)
    assert sum(1 for _ in new.named_modules(remove_duplicate=False)
               if _[1] is new.mid) == 2
    if edit != "drop":
        assert_same_function(net, new, x)


# -----------------------------------------------------------------------------
# The argument and the global RNGs are untouched
# -----------------------------------------------------------------------------

def _primitive_calls():
    def ffnn_widen():
        net = trained_ffnn()
        return net, lambda: widen(net, layer_name="layers.1", new_width=20,
                                  rng_seed=3)

    def seq_widen():
        net = mlp()
        return net, lambda: widen(net, layer_name="0", new_width=16)

    def ffnn_deepen():
        net = trained_ffnn()
        return net, lambda: deepen(net, after_layer_name="layers.1")

    def named_deepen():
        net = named_mlp()
        return net, lambda: deepen(net, after_layer_name="relu")

    def drop():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8),
                            nn.ReLU(), nn.Linear(8, 2))
        return net, lambda: drop_layer(net, layer_name="2", importance=0.5)

    def low_rank():
        torch.manual_seed(0)
        linear = nn.Linear(12, 6)
        return linear, lambda: low_rank_factorize(linear, rank=3)

    def expand(init):
        def make():
            torch.manual_seed(0)
            emb = nn.Embedding(10, 4)
            return emb, lambda: expand_embedding(
                emb, new_num_embeddings=13, init=init)[0]
        return make

    return {"widen-ffnn": ffnn_widen, "widen-seq": seq_widen,
            "deepen-ffnn": ffnn_deepen, "deepen-named": named_deepen,
            "drop": drop, "low-rank": low_rank,
            "expand-zeros": expand("zeros"),
            "expand-mean": expand("copy_mean")}


PRIMITIVE_CALLS = _primitive_calls()


@pytest.mark.parametrize("case", list(PRIMITIVE_CALLS))
def test_source_and_rng_untouched(case):
    source, call = PRIMITIVE_CALLS[case]()
    torch.manual_seed(123)
    np.random.seed(7)
    random.seed(11)
    snap = Snapshot(source)
    result = call()
    snap.check()
    snap.check_disjoint(result)
    # The result does not depend on the global RNG (widen draws from
    # rng_seed only; fresh leaves' default init is overwritten).
    torch.manual_seed(999)
    again = call()
    a, b = result.state_dict(), again.state_dict()
    assert list(a) == list(b)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_edited_copy_takes_the_ir_tensors_it_keeps(monkeypatch):
    """The copy a primitive returns gets the IR's values of the tensors
    the edit keeps (same shape) directly: only those it resizes are deep
    copied from the source (then replaced), so a large model's weights are
    not held a third time; the kept ones equal the source's, in memory of
    their own."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8),
                        nn.ReLU(), nn.Linear(8, 2))
    copied = []
    deepcopy = nn.Parameter.__deepcopy__

    def spy(self, memo):
        copied.append(id(self))
        return deepcopy(self, memo)
    monkeypatch.setattr(nn.Parameter, "__deepcopy__", spy)
    wide = widen(net, layer_name="0", new_width=12)
    resized = {id(net[0].weight), id(net[0].bias), id(net[2].weight)}
    assert set(copied) == resized
    for k in ("2.bias", "4.weight", "4.bias"):
        got, was = wide.get_parameter(k), net.get_parameter(k)
        assert torch.equal(got, was) and got.data_ptr() != was.data_ptr()
    assert_same_function(net, wide, torch.randn(5, 4))


def test_widen_seed_picks_the_replicated_units():
    net = mlp()
    x = torch.randn(5, 4)
    a = widen(net, layer_name="0", new_width=16, rng_seed=0)
    b = widen(net, layer_name="0", new_width=16, rng_seed=0)
    assert torch.equal(a[0].weight, b[0].weight)
    # Every new unit replicates an old one; the old ones are kept as they
    # are.
    w_old, w_new = net[0].weight, a[0].weight
    assert torch.equal(w_new[:8], w_old)
    for row in w_new[8:]:
        assert any(torch.equal(row, r) for r in w_old)
    others = [widen(net, layer_name="0", new_width=16, rng_seed=s)
              for s in range(1, 6)]
    assert any(not torch.equal(o[0].weight, a[0].weight) for o in others)
    for o in others:
        assert_same_function(net, o, x)


# -----------------------------------------------------------------------------
# §3: parameter counts
# -----------------------------------------------------------------------------

def test_param_count_widen():
    net = mlp()
    assert (n_params(net[0]), n_params(net[2]), n_params(net)) == (40, 18, 58)
    wide = widen(net, layer_name="0", new_width=16)
    assert (n_params(wide[0]), n_params(wide[2]), n_params(wide)) == \
        (80, 34, 114)
    assert torch.equal(wide[2].bias, net[2].bias)  # downstream bias untouched
    assert_same_function(net, wide, torch.randn(7, 4))


def test_param_count_deepen():
    net = mlp()
    deeper = deepen(net, after_layer_name="1")
    assert n_params(deeper) == 130
    assert n_params(deeper[2]) == 72
    assert (n_params(deeper[0]), n_params(deeper[4])) == (40, 18)


@pytest.mark.parametrize("rank, count", [(8, 800), (16, 1568), (32, 3104)])
def test_param_count_low_rank(rank, count):
    torch.manual_seed(0)
    linear = nn.Linear(64, 32)
    assert n_params(linear) == 2080
    f = low_rank_factorize(linear, rank=rank)
    assert n_params(f) == count
    assert (f[0].in_features, f[0].out_features) == (64, rank)
    assert (f[1].in_features, f[1].out_features) == (rank, 32)


@pytest.mark.parametrize("old, new, dim", [(50, 60, 8), (10, 11, 3),
                                           (7, 7, 5)])
def test_param_count_expand_embedding(old, new, dim):
    torch.manual_seed(0)
    emb = nn.Embedding(old, dim)
    for init in ("zeros", "copy_mean"):
        grown, mask = expand_embedding(emb, new_num_embeddings=new, init=init)
        assert n_params(grown) - n_params(emb) == (new - old) * dim
        assert int(mask.sum()) == old and mask.shape == (new,)


@pytest.mark.parametrize("d", [8, 16])
def test_param_count_drop_layer(d):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, d), nn.ReLU(), nn.Linear(d, d),
                        nn.ReLU(), nn.Linear(d, 2))
    dropped = drop_layer(net, layer_name="2")
    assert isinstance(dropped[2], nn.Identity)
    assert list(dropped._modules) == list(net._modules)
    assert n_params(net) - n_params(dropped) == d * d + d
    # Chain-preserving: the forward still runs, and equals the net without
    # the layer.
    x = torch.randn(3, 4)
    with torch.no_grad():
        expected = net[4](net[3](net[1](net[0](x))))
        assert torch.allclose(dropped(x), expected, atol=ATOL)


# -----------------------------------------------------------------------------
# low_rank_factorize: exact at max rank, Eckart-Young below
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("in_f, out_f, bias", [(64, 32, True), (32, 64, True),
                                               (20, 20, False)])
def test_low_rank_exact_at_max_rank(in_f, out_f, bias):
    torch.manual_seed(0)
    linear = nn.Linear(in_f, out_f, bias=bias)
    f = low_rank_factorize(linear, rank=min(in_f, out_f))
    x = torch.randn(16, in_f)
    assert_same_function(linear, f, x)
    if bias:
        assert torch.equal(f[1].bias, linear.bias)


@pytest.mark.parametrize("rank", [1, 4, 8, 16, 31])
def test_low_rank_eckart_young(rank):
    torch.manual_seed(0)
    linear = nn.Linear(64, 32)
    w = linear.weight.detach().double().numpy()
    s = np.linalg.svd(w, compute_uv=False)
    bound = float(np.sqrt(np.sum(s[rank:] ** 2)))
    f = low_rank_factorize(linear, rank=rank)
    approx = (f[1].weight.detach().double() @ f[0].weight.detach().double())
    err = float(np.linalg.norm(approx.numpy() - w))
    norm = float(np.linalg.norm(w))
    assert abs(err - bound) <= 1e-5 * norm, (err, bound)
    # The factored module computes x W_r^T + b.
    x = torch.randn(9, 64)
    with torch.no_grad():
        expected = x.double() @ approx.T + linear.bias.double()
        assert torch.allclose(f(x).double(), expected, atol=ATOL)
    assert torch.equal(f[1].bias, linear.bias)


# -----------------------------------------------------------------------------
# Refusals: the exception class and nnx-opt's text for the same pass and IR
# -----------------------------------------------------------------------------

_DIAGNOSTIC = re.compile(r"^<stdin>:\d+:\d+: (error|note): (.*)$")


def nnx_opt_message(model, spec, flag):
    """The error (and note) text nnx-opt prints for `flag` on `model`
    exported with input `spec`: the ``error:`` text, then ``note: ...`` per
    note (the source lines and carets it echoes left out; the op printout
    note switched off, which the bindings never attach)."""
    text = export(model, inputs=[spec], weights=False)
    proc = run_tool("nnx-opt", ["--mlir-print-op-on-diagnostic=false", flag,
                                "-"], text, check=False)
    assert proc.returncode != 0, "nnx-opt accepted the edit"
    lines = []
    for line in proc.stderr.splitlines():
        m = _DIAGNOSTIC.match(line)
        if m:
            lines.append(m.group(2) if m.group(1) == "error"
                         else "note: " + m.group(2))
    assert lines and not lines[0].startswith("note: "), proc.stderr
    return "\n".join(lines)


class LoopNet(nn.Module):
    """A ModuleList run by a custom forward: registration order is not
    data flow."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 8), nn.ReLU(),
                                     nn.Linear(8, 2)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


class DoubledSequential(nn.Sequential):
    def forward(self, x):
        return 2 * super().forward(x)


class OwnReLU(nn.ReLU):
    def forward(self, x):
        return super().forward(x)


class DoubledLinear(nn.Linear):
    def forward(self, x):
        return 2 * super().forward(x)


class PlainLinear(nn.Linear):
    """A subclass without its own forward: still exactly a Linear."""


class DoubledEmbedding(nn.Embedding):
    def forward(self, x):
        return 2 * super().forward(x)


def _hook(module, args, output):
    return output


def _refusal_cases():
    """id -> () -> (source, call, exception class, exported model, input
    spec, nnx-opt flag)."""
    ints = ((None, None), torch.int64)

    def seq(*mods):
        torch.manual_seed(0)
        return nn.Sequential(*mods)

    def case(source, call, cls, flag, spec=(None, 4), exported=None):
        return (source, call, cls, exported if exported is not None
                else source, spec, flag)

    def widen_non_linear():
        m = seq(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        return case(m, lambda: widen(m, layer_name="1", new_width=16),
                    ValueError, "--nnx-widen=layer=1 width=16 seed=0")

    def widen_across(boundary):
        def make():
            m = seq(nn.Linear(4, 8), boundary(), nn.Linear(8, 2))
            return case(m, lambda: widen(m, layer_name="0", new_width=16),
                        ValueError, "--nnx-widen=layer=0 width=16 seed=0")
        return make

    def widen_last():
        m = seq(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        return case(m, lambda: widen(m, layer_name="2", new_width=16),
                    ValueError, "--nnx-widen=layer=2 width=16 seed=0")

    def widen_last_ffnn():
        m = trained_ffnn()
        return case(m, lambda: widen(m, layer_name="layers.2", new_width=5),
                    ValueError, "--nnx-widen=layer=layers.2 width=5 seed=0",
                    spec=(None, 8))

    def widen_aliased():
        torch.manual_seed(0)
        shared = nn.Linear(8, 8)
        m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), shared, nn.ReLU(),
                          shared, nn.Linear(8, 2))
        return case(m, lambda: widen(m, layer_name="2", new_width=12),
                    ValueError, "--nnx-widen=layer=2 width=12 seed=0")

    def deepen_non_relu():
        m = seq(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        return case(m, lambda: deepen(m, after_layer_name="1"), TypeError,
                    "--nnx-deepen=after=1")

    def deepen_tanh_ffnn():
        torch.manual_seed(0)
        m = FeedFwdNN(4, [8, 6], 2, activation="tanh")
        return case(m, lambda: deepen(m, after_layer_name="layers.0"),
                    ValueError, "--nnx-deepen=after=layers.0")

    def deepen_tanh_override():
        torch.manual_seed(0)
        m = FeedFwdNN(4, [8, 6], 2, activations=["relu", "tanh"])
        return case(m, lambda: deepen(m, after_layer_name="layers.1"),
                    ValueError, "--nnx-deepen=after=layers.1")

    def drop_changes_features():
        m = seq(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6), nn.ReLU(),
                nn.Linear(6, 2))
        return case(m, lambda: drop_layer(m, layer_name="2"), ValueError,
                    "--nnx-drop-layer=layer=2")

    def low_rank_too_high():
        torch.manual_seed(0)
        lin = nn.Linear(6, 4)
        return case(lin, lambda: low_rank_factorize(lin, rank=5), ValueError,
                    "--nnx-low-rank=layer=target rank=5", spec=(None, 6),
                    exported=nn.Sequential(OD(target=lin)))

    def low_rank_embedding():
        torch.manual_seed(0)
        emb = nn.Embedding(10, 4)
        return case(emb, lambda: low_rank_factorize(emb, rank=2), TypeError,
                    "--nnx-low-rank=layer=target rank=2", spec=ints,
                    exported=nn.Sequential(OD(target=emb)))

    def expand_smaller():
        torch.manual_seed(0)
        emb = nn.Embedding(10, 4)
        return case(emb, lambda: expand_embedding(emb, new_num_embeddings=5),
                    ValueError,
                    "--nnx-expand-embedding=layer=target num=5 init=zeros",
                    spec=ints, exported=nn.Sequential(OD(target=emb)))

    def expand_linear():
        torch.manual_seed(0)
        lin = nn.Linear(6, 4)
        return case(lin, lambda: expand_embedding(
            lin, new_num_embeddings=20, init="copy_mean"), TypeError,
            "--nnx-expand-embedding=layer=target num=20 init=copy_mean",
            spec=(None, 6), exported=nn.Sequential(OD(target=lin)))

    def widen_softmax_ffnn():
        torch.manual_seed(0)
        m = FeedFwdNN(4, [8, 6], 2, activations=["softmax", "relu"])
        return case(m, lambda: widen(m, layer_name="layers.0", new_width=10),
                    ValueError, "--nnx-widen=layer=layers.0 width=10 seed=0")

    def widen_other_container():
        torch.manual_seed(0)
        m = LoopNet()
        return case(m, lambda: widen(m, layer_name="blocks.0", new_width=12,
                                     inputs=[(None, 4)]),
                    ValueError, "--nnx-widen=layer=blocks.0 width=12 seed=0")

    def widen_hooked_container():
        m = seq(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        m.register_forward_hook(_hook)
        return case(m, lambda: widen(m, layer_name="0", new_width=12),
                    ValueError, "--nnx-widen=layer=0 width=12 seed=0")

    def subclass_container(primitive):
        def make():
            torch.manual_seed(0)
            m = DoubledSequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            if primitive == "widen":
                return case(m, lambda: widen(m, layer_name="0", new_width=12),
                            ValueError, "--nnx-widen=layer=0 width=12 seed=0")
            return case(m, lambda: deepen(m, after_layer_name="1"),
                        ValueError, "--nnx-deepen=after=1")
        return make

    def deepen_relu_subclass():
        m = seq(nn.Linear(4, 8), OwnReLU(), nn.Linear(8, 2))
        return case(m, lambda: deepen(m, after_layer_name="1"), TypeError,
                    "--nnx-deepen=after=1")

    def low_rank_of(make_linear, cls, rank=2):
        def make():
            torch.manual_seed(0)
            lin = make_linear()
            return case(lin, lambda: low_rank_factorize(lin, rank=rank), cls,
                        f"--nnx-low-rank=layer=target rank={rank}",
                        spec=(None, 6),
                        exported=nn.Sequential(OD(target=lin)))
        return make

    def expand_of(make_emb, cls):
        def make():
            torch.manual_seed(0)
            emb = make_emb()
            return case(emb, lambda: expand_embedding(
                emb, new_num_embeddings=12), cls,
                "--nnx-expand-embedding=layer=target num=12 init=zeros",
                spec=ints, exported=nn.Sequential(OD(target=emb)))
        return make

    def weight_norm(module):
        torch.nn.utils.weight_norm(module)
        return module

    def spectral_norm(module):
        torch.nn.utils.parametrizations.spectral_norm(module)
        return module

    def pruned(module):
        torch.nn.utils.prune.random_unstructured(module, "weight", 0.5)
        return module

    def missing(primitive, name, flag):
        def make():
            m = seq(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            calls = {"widen": lambda: widen(m, layer_name=name, new_width=16),
                     "deepen": lambda: deepen(m, after_layer_name=name),
                     "drop": lambda: drop_layer(m, layer_name=name)}
            return case(m, calls[primitive], ValueError, flag)
        return make

    return {
        "widen-relu": widen_non_linear,
        "widen-softmax": widen_across(lambda: nn.Softmax(dim=-1)),
        "widen-layernorm": widen_across(lambda: nn.LayerNorm(8)),
        "widen-batchnorm": widen_across(lambda: nn.BatchNorm1d(8)),
        "widen-last": widen_last,
        "widen-last-ffnn": widen_last_ffnn,
        "widen-aliased": widen_aliased,
        "deepen-tanh-seq": deepen_non_relu,
        "deepen-tanh-ffnn": deepen_tanh_ffnn,
        "deepen-tanh-override": deepen_tanh_override,
        "drop-changes-features": drop_changes_features,
        "low-rank-too-high": low_rank_too_high,
        "low-rank-embedding": low_rank_embedding,
        "expand-smaller": expand_smaller,
        "expand-linear": expand_linear,
        "widen-softmax-ffnn": widen_softmax_ffnn,
        "widen-module-list": widen_other_container,
        "widen-hooked-container": widen_hooked_container,
        "deepen-sequential-subclass": subclass_container("deepen"),
        "deepen-relu-subclass": deepen_relu_subclass,
        "low-rank-linear-own-forward": low_rank_of(
            lambda: DoubledLinear(6, 4), TypeError),
        "low-rank-plain-subclass-rank": low_rank_of(
            lambda: PlainLinear(6, 4), ValueError, rank=5),
        "low-rank-weight-norm": low_rank_of(
            lambda: weight_norm(nn.Linear(6, 4)), ValueError),
        "low-rank-spectral-norm": low_rank_of(
            lambda: spectral_norm(nn.Linear(6, 4)), ValueError),
        "low-rank-prune-mask": low_rank_of(
            lambda: pruned(nn.Linear(6, 4)), ValueError),
        "expand-embedding-own-forward": expand_of(
            lambda: DoubledEmbedding(10, 4), TypeError),
        "expand-weight-norm": expand_of(
            lambda: weight_norm(nn.Embedding(10, 4)), ValueError),
        "missing-widen": missing("widen", "nope",
                                 "--nnx-widen=layer=nope width=16 seed=0"),
        "missing-deepen": missing("deepen", "5", "--nnx-deepen=after=5"),
        "missing-drop": missing("drop", "0.weight",
                                "--nnx-drop-layer=layer=0.weight"),
    }


REFUSALS = _refusal_cases()


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusal_matches_nnx_opt(case):
    source, call, cls, exported, spec, flag = REFUSALS[case]()
    expected = nnx_opt_message(exported, spec, flag)
    snap = Snapshot(source)
    with pytest.raises(Exception) as info:
        call()
    assert type(info.value) is cls, (type(info.value), str(info.value))
    assert str(info.value) == expected
    snap.check()


@pytest.mark.parametrize("primitive, expected", [
    (lambda m: low_rank_factorize(m, rank=1),
     "low_rank_factorize takes an nn.Linear, got ReLU"),
    (lambda m: expand_embedding(m, new_num_embeddings=3),
     "expand_embedding takes an nn.Embedding, got ReLU"),
], ids=["low-rank", "expand"])
def test_leaf_primitives_refuse_other_modules_with_type_error(primitive,
                                                              expected):
    relu = nn.ReLU()
    snap = Snapshot(relu)
    with pytest.raises(TypeError) as info:
        primitive(relu)
    assert str(info.value) == expected
    snap.check()


def test_sequential_subclass_with_a_forward_is_widened_through_it():
    """A Sequential subclass with its own forward is a custom module over
    the Sequential's children: widen follows its forward (here `2 * ...`
    after the consumer), preserving the function and the class."""
    torch.manual_seed(0)
    m = DoubledSequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    x = torch.randn(3, 4)
    with torch.no_grad():
        want = m(x)
    wide = widen(m, layer_name="0", new_width=12)
    assert type(wide) is DoubledSequential
    assert wide[0].out_features == 12 and wide[2].in_features == 12
    with torch.no_grad():
        torch.testing.assert_close(wide(x), want, atol=1e-5, rtol=1e-5)


def test_plain_linear_subclass_is_factorized():
    torch.manual_seed(0)
    linear = PlainLinear(6, 4)
    f = low_rank_factorize(linear, rank=4)
    assert [type(m) for m in f] == [nn.Linear, nn.Linear]
    assert_same_function(linear, f, torch.randn(3, 6))


def test_low_rank_factorize_of_a_conv_is_exact_at_max_rank():
    """Beyond the seed: a groups=1 Conv2d becomes a k x k conv to `rank`
    channels then a 1 x 1 conv; at rank min(C_out, C_in k k) it computes
    the same function."""
    torch.manual_seed(4)
    conv = nn.Conv2d(3, 8, 3, padding=1, stride=2).eval()
    seq = low_rank_factorize(conv, rank=8)
    assert isinstance(seq, nn.Sequential) and len(seq) == 2
    first, second = seq[0], seq[1]
    assert isinstance(first, nn.Conv2d) and isinstance(second, nn.Conv2d)
    assert (first.in_channels, first.out_channels, first.kernel_size,
            first.stride, first.padding, first.bias) == (3, 8, (3, 3), (2, 2),
                                                         (1, 1), None)
    assert (second.in_channels, second.out_channels, second.kernel_size) == (
        8, 8, (1, 1))
    x = torch.randn(2, 3, 9, 11)
    with torch.no_grad():
        torch.testing.assert_close(seq(x), conv(x), atol=1e-5, rtol=1e-5)
    low = low_rank_factorize(conv, rank=2)
    assert low[0].out_channels == 2 and low[1].in_channels == 2


def test_a_layer_name_cannot_carry_pass_options():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    with pytest.raises(ValueError, match="is not a dotted module path"):
        widen(net, layer_name="0} nnx-drop-layer{layer=2", new_width=16)
    with pytest.raises(ValueError, match="is not a dotted module path"):
        deepen(net, after_layer_name="1 ")


def conv_bn_net():
    """Net2Net's conv-BN-ReLU-conv, as a VGG-style Sequential writes it, in
    eval mode with non-trivial BatchNorm statistics."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
        nn.Conv2d(6, 4, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(4, 3))
    bn = net[1]
    with torch.no_grad():
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.3, 0.3)
    return net.eval()


def test_widen_conv_through_batchnorm():
    """Issue 49: ``through_batchnorm=True`` widens a conv through the
    eval-mode BatchNorm after it: the new channels' statistics and affine
    parameters are copies of the replicated ones, the function is the
    same, and the user's module classes come back at the new sizes."""
    net = conv_bn_net()
    wide = widen(net, layer_name="0", new_width=9, rng_seed=3,
                 through_batchnorm=True)
    conv, bn, nxt = wide[0], wide[1], wide[3]
    assert type(bn) is nn.BatchNorm2d and not bn.training
    assert (conv.out_channels, bn.num_features, nxt.in_channels) == (9, 9, 9)
    assert bn.running_mean.shape == bn.running_var.shape == (9,)
    # Each new channel copies one old channel's weights and statistics.
    old_bn = net[1]
    for c in range(6, 9):
        src = [k for k in range(6)
               if torch.equal(conv.weight[c], net[0].weight[k])]
        assert len(src) == 1, c
        k = src[0]
        for name in ("running_mean", "running_var", "weight", "bias"):
            assert getattr(bn, name)[c] == getattr(old_bn, name)[k], name
    x = torch.randn(2, 3, 8, 8)
    assert_same_function(net, wide, x)
    assert_same_function(net, wide, torch.randn(5, 3, 8, 8))


def test_widen_conv_before_batchnorm_refused_without_the_flag():
    """Without the flag, the BatchNorm on the path is refused, and the
    message names the Python argument, not the pass option."""
    with pytest.raises(ValueError) as e:
        widen(conv_bn_net(), layer_name="0", new_width=9)
    message = str(e.value)
    assert "'1'" in message and "through_batchnorm=True" in message, message
    assert "through-batchnorm" not in message, message
    with pytest.raises(TypeError, match="through_batchnorm must be a bool"):
        widen(conv_bn_net(), layer_name="0", new_width=9,
              through_batchnorm="yes")


def test_widen_conv_through_train_mode_batchnorm_refused():
    """A BatchNorm in train mode normalizes by the batch: refused."""
    net = conv_bn_net().train()
    with pytest.raises(ValueError, match="train mode"):
        widen(net, layer_name="0", new_width=9, through_batchnorm=True)
