"""Numerical reference: random PyTorch models (seeded), written as nnx IR,
compiled and run on CPU through nnx-run, compared with PyTorch's own forward
at atol = rtol = 1e-5."""

import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from nnx import tools  # noqa: E402
from nnx.nets import FeedFwdNN, Residual  # noqa: E402
from nnx.torch_export import export  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)


def reference(model, *xs):
    with torch.no_grad():
        return model(*[torch.from_numpy(x) for x in xs]).numpy()


def check(model, xs, **kw):
    """Exports `model` (before running it: a train-mode BatchNorm updates its
    running statistics), runs both, compares."""
    xs = list(xs)
    specs = [((None,) + x.shape[1:], torch.from_numpy(x).dtype) for x in xs]
    text = export(model, specs, **kw)
    got, _ = tools.nnx_run(text, xs)
    want = reference(model, *xs)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL)
    return text


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("dims", [
    [4, 2],
    [4, 8, 2],
    [16, 32, 32, 8],
    [3, 64, 1],
    [32, 128, 64, 32, 16, 10],
    [256, 512, 10],
])
def test_mlp(dims):
    torch.manual_seed(len(dims) * 100 + dims[1])
    layers = []
    for i in range(len(dims) - 1):
        layers.append(nn.Linear(dims[i], dims[i + 1], bias=(i % 2 == 0)))
        if i < len(dims) - 2:
            layers.append(nn.ReLU())
    check(nn.Sequential(*layers).eval(), [randn(5, dims[0], seed=len(dims))])


ACTIVATIONS = {
    "relu": nn.ReLU(),
    "gelu": nn.GELU(),
    "gelu_tanh": nn.GELU(approximate="tanh"),
    "tanh": nn.Tanh(),
    "sigmoid": nn.Sigmoid(),
    "silu": nn.SiLU(),
    "leaky_relu": nn.LeakyReLU(0.07),
    "softmax": nn.Softmax(dim=-1),
    "softmax_dim1": nn.Softmax(dim=1),
    "identity": nn.Identity(),
    "hardswish": nn.Hardswish(),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name):
    torch.manual_seed(7)
    model = nn.Sequential(nn.Linear(6, 12), ACTIVATIONS[name],
                          nn.Linear(12, 5)).eval()
    # Scale the inputs so that every activation sees both signs and its
    # saturated regions.
    check(model, [3.0 * randn(9, 6, seed=3)])


def test_layer_norm():
    torch.manual_seed(11)
    ln = nn.LayerNorm(16, eps=1e-4)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    model = nn.Sequential(nn.Linear(8, 16), ln, nn.Linear(16, 4)).eval()
    check(model, [randn(7, 8, seed=4)])
    plain = nn.Sequential(nn.LayerNorm(8, elementwise_affine=False)).eval()
    check(plain, [randn(3, 8, seed=5) * 4 + 1])


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_batch_norm(mode):
    torch.manual_seed(13)
    bn = nn.BatchNorm1d(10, eps=1e-3)
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    model = nn.Sequential(nn.Linear(6, 10), bn, nn.ReLU(), nn.Linear(10, 3))
    model.eval()
    if mode == "train":
        bn.train()  # batch statistics; everything else stays in eval mode
    text = check(model, [randn(8, 6, seed=6) * 2 + 0.5])
    assert ("train" in text.split("nnx.batch_norm")[1].split("}")[0]) == (mode == "train")


def test_embedding():
    torch.manual_seed(17)
    model = nn.Sequential(nn.Embedding(20, 8, padding_idx=3), nn.Linear(8, 4),
                          nn.Tanh()).eval()
    ids = np.random.default_rng(8).integers(0, 20, size=(5, 3)).astype(np.int64)
    check(model, [ids])


def test_dropout_eval_is_identity():
    torch.manual_seed(19)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5),
                          nn.Linear(16, 4), nn.Dropout(0.9)).eval()
    check(model, [randn(6, 8, seed=9)])


def test_named_sequential_and_feed_fwd():
    torch.manual_seed(23)
    named = nn.Sequential(collections.OrderedDict(
        fc=nn.Linear(5, 9), act=nn.SiLU(), drop=nn.Dropout(0.2), head=nn.Linear(9, 2)))
    check(named.eval(), [randn(4, 5, seed=10)], name="cls", root="body")
    ff = FeedFwdNN(5, [9, 7], 3, activation="relu", activations=["gelu", "tanh"],
                   dropout=0.1)
    check(ff.eval(), [randn(4, 5, seed=11)], name="ff")


def test_custom_module_residual():
    torch.manual_seed(29)
    block = Residual(12).eval()
    check(block, [randn(5, 12, seed=12)], root="block")
    # Inside a sequential, between Linears, with an explicit spec.
    model = nn.Sequential(nn.Linear(6, 12), Residual(12), nn.GELU(),
                          nn.Linear(12, 3)).eval()

    def spec(F, x):
        return F.add(x, F.call("proj", F.call("norm", x)), source="add_0")
    check(model, [randn(5, 6, seed=13)], forward_specs={Residual: spec})


def test_custom_module_nested_calls_and_alias():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.ModuleList([nn.Linear(6, 6), nn.Linear(6, 6)])
            self.act = nn.Tanh()
            self.tied = self.h[0]  # one module, two keys: nnx.alias

        def forward(self, x):
            return self.act(self.h[1](x)) * self.tied(x) - x

    torch.manual_seed(37)
    text = check(Tied().eval(), [randn(4, 6, seed=14)], root="tied")
    assert 'nnx.alias @tied = @h::@"0"' in text


def test_f64_model():
    torch.manual_seed(41)
    model = nn.Sequential(nn.Linear(5, 9), nn.SiLU(), nn.LayerNorm(9),
                          nn.Linear(9, 2)).double().eval()
    x = np.random.default_rng(15).standard_normal((4, 5))
    text = check(model, [x])
    assert "tensor<9x5xf64>" in text


def test_dynamic_batch_one_model():
    torch.manual_seed(31)
    model = nn.Sequential(nn.Linear(7, 16), nn.Tanh(), nn.LayerNorm(16),
                          nn.Linear(16, 3)).eval()
    text = export(model, [(None, 7)], name="dyn")
    assert "inputs(tensor<?x7xf32>)" in text
    for batch in (1, 3, 17):
        x = randn(batch, 7, seed=batch)
        got, _ = tools.nnx_run(text, [x])
        assert got.shape == (batch, 3)
        np.testing.assert_allclose(got, reference(model, x), **TOL)


def test_dynamic_batch_and_sequence_one_model():
    """Batch and sequence both dynamic: the Linears lower without reshapes
    (collapsing two dynamic dims crashes MLIR 22.1's expand-strided-metadata)."""
    torch.manual_seed(37)
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.LayerNorm(12),
                          nn.Linear(12, 4, bias=False)).eval()
    text = export(model, [(None, None, 6)], name="seq")
    assert "inputs(tensor<?x?x6xf32>)" in text
    for batch, seq in ((1, 1), (2, 5), (3, 17)):
        x = randn(batch, seq, 6, seed=batch * seq)
        got, _ = tools.nnx_run(text, [x])
        assert got.shape == (batch, seq, 4)
        np.testing.assert_allclose(got, reference(model, x), **TOL)


try:
    from hypothesis import given, settings, strategies as st
except ImportError:  # pragma: no cover - hypothesis is in scripts/setup.sh
    given = None

if given is None:
    @pytest.mark.skip(reason="hypothesis is not installed")
    def test_random_mlp_shapes():
        pass
else:
    from nnx.nets import ACTIVATIONS as ACTIVATION_NAMES

    @settings(max_examples=12, deadline=None, derandomize=True, database=None)
    @given(dims=st.lists(st.integers(1, 48), min_size=2, max_size=5),
           batch=st.integers(1, 9),
           act=st.sampled_from(sorted(ACTIVATION_NAMES)),
           dropout=st.sampled_from([0.0, 0.3]),
           seed=st.integers(0, 2**16))
    def test_random_mlp_shapes(dims, batch, act, dropout, seed):
        """Random FeedFwdNN shapes, activations and (eval-mode) dropout."""
        torch.manual_seed(seed)
        ff = FeedFwdNN(dims[0], dims[1:-1], dims[-1], activation=act,
                       dropout=dropout).eval()
        check(ff, [randn(batch, dims[0], seed=seed)])
