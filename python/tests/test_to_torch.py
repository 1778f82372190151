"""nnx.to_torch: a model that came from IR as a PyTorch module, computing
what the compiled forward computes (1e-5), with the IR's keys, tensors,
flags and modes, and trainable in PyTorch."""

import collections
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

_nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")
import nnx  # noqa: E402

from nnx.torch_import import ToTorchError, to_torch  # noqa: E402
from nnx.torch_export import export  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
FAMILIES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                        "examples", "families")


def first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("family", ["gpt2", "llama", "bloom", "cohere",
                                    "falcon", "gemma2"])
def test_a_family_file_runs_in_pytorch_as_compiled(family):
    model = nnx.load(os.path.join(FAMILIES, f"{family}.mlir"))
    net = to_torch(model)
    run = nnx.compile(model, threads=1)
    for batch, seq in ((1, 5), (3, 9)):
        ids = torch.from_numpy(np.random.default_rng(batch).integers(
            0, 32, size=(batch, seq)))
        with torch.no_grad():
            got = first(net(ids))
        torch.testing.assert_close(got, first(run(ids)[0]), **TOL)
    # The IR's keys, in its order, with its values.
    state = model.state_dict()
    assert list(net.state_dict()) == list(state)
    for key, (array, _) in state.items():
        assert np.array_equal(net.state_dict()[key].numpy(), array), key


def test_an_exported_module_comes_back_with_flags_and_modes():
    torch.manual_seed(0)
    src = nn.Sequential(collections.OrderedDict(
        fc=nn.Linear(4, 8), norm=nn.LayerNorm(8), act=nn.GELU(approximate="tanh"),
        drop=nn.Dropout(0.2), head=nn.Linear(8, 3)))
    src.fc.bias.requires_grad_(False)
    src.eval()
    src.head.train()
    net = to_torch(_nnx.Model.parse(export(src, inputs=[(None, 4)])))
    assert [type(m) for m in net.children()] == [type(m) for m in src.children()]
    assert net.fc.bias.requires_grad is False and net.fc.weight.requires_grad
    assert [m.training for m in net.modules()] == [m.training for m in src.modules()]
    assert net.act.approximate == "tanh" and net.drop.p == 0.2
    x = torch.randn(5, 4)
    src.head.eval()
    net.head.eval()
    torch.testing.assert_close(net(x), src(x), **TOL)


def test_a_model_edited_in_nnx_trains_in_pytorch():
    torch.manual_seed(1)
    src = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    model = _nnx.Model.parse(export(src, inputs=[(None, 6)]))
    model.run_pipeline("nnx-widen{layer=0 width=20 seed=3}")
    net = to_torch(model)
    assert net[0].out_features == 20 and net[2].in_features == 20
    x = torch.randn(16, 6)
    torch.testing.assert_close(net(x), nnx.compile(model, threads=1)(x)[0], **TOL)
    torch.testing.assert_close(net(x), src(x), **TOL)  # Net2Net preserved it
    y = torch.randint(0, 3, (16,))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_a_custom_forward_is_a_graph_module_that_trains():
    model = nnx.load(os.path.join(FAMILIES, "llama.mlir"))
    net = to_torch(model)
    attn = net.model.layers[0].self_attn
    assert isinstance(attn, torch.fx.GraphModule)
    assert type(attn).__name__ == "LlamaAttention"
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, 32, (2, 6)))
    first(net(ids)).sum().backward()
    assert net.model.layers[0].self_attn.q_proj.weight.grad is not None
    assert net.model.layers[0].input_layernorm.weight.grad is not None


def test_a_convnet_with_batch_norm_and_pools():
    torch.manual_seed(2)
    src = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(8, 4, 3, stride=2, groups=4),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    with torch.no_grad():
        src[1].running_mean.uniform_(-1, 1)
        src[1].running_var.uniform_(0.5, 2)
    src.eval()
    model = _nnx.Model.parse(export(src, inputs=[(None, 3, 12, 10)]))
    net = to_torch(model).eval()
    x = torch.randn(2, 3, 12, 10)
    torch.testing.assert_close(net(x), src(x), **TOL)
    torch.testing.assert_close(net(x), nnx.compile(model, threads=1)(x)[0],
                               **TOL)


def test_batch_norm_calibrated_with_momentum_none():
    """momentum=None (a cumulative average: how statistics are calibrated)
    is recorded, not refused: the eval forward never reads it, and the
    module comes back with it."""
    torch.manual_seed(3)
    src = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6, momentum=None),
                        nn.ReLU())
    src.train()
    with torch.no_grad():
        for _ in range(3):
            src(torch.randn(4, 3, 9, 9) * 2 + 1)
    src.eval()
    assert src[1].num_batches_tracked == 3
    text = export(src, inputs=[(None, 3, 9, 9)])
    assert "cumulative_average" in text and "momentum" not in text
    model = _nnx.Model.parse(text)
    net = to_torch(model).eval()
    assert net[1].momentum is None
    x = torch.randn(2, 3, 9, 9)
    torch.testing.assert_close(nnx.compile(model, threads=1)(x)[0], src(x),
                               **TOL)


def test_the_usual_feature_extractor_verifies():
    """nn.Sequential(*resnet.children()[:-1]): BasicBlocks (custom forwards
    on N x C x H x W) after a conv, a BatchNorm and a pool. The chain check
    compares channels with channels, never with the image width."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(4)
    resnet = torchvision.models.resnet18(weights=None, num_classes=7)
    src = nn.Sequential(*list(resnet.children())[:-1]).eval()
    model = _nnx.Model.parse(export(src, inputs=[(None, 3, 40, 40)],
                                    weights=False))
    x = torch.randn(2, 3, 40, 40)
    got = nnx.compile(model, threads=1)(x)[0]
    assert got.shape == (2, 512, 1, 1)
    torch.testing.assert_close(got, src(x), **TOL)
    torch.testing.assert_close(to_torch(model).eval()(x), src(x), **TOL)


@pytest.mark.parametrize("size,out", [((1, 1), (6, 6)), ((7, 5), (3, 2)),
                                      ((5, 6), (7, 4)), ((8, 8), (2, 4))])
def test_adaptive_pool_of_any_static_size(size, out):
    """nn.AdaptiveAvgPool2d by PyTorch's windows where the static input is
    not a multiple of the output (AlexNet and VGG at small images pool 1x1
    up to 6x6 / 7x7), within the contract, batch dynamic."""
    torch.manual_seed(5)
    src = nn.Sequential(nn.Conv2d(3, 4, 1), nn.AdaptiveAvgPool2d(out),
                        nn.Flatten(), nn.Linear(4 * out[0] * out[1], 3)).eval()
    model = _nnx.Model.parse(export(src, inputs=[(None, 3) + size]))
    run = nnx.compile(model, threads=1)
    for batch in (1, 2):
        x = torch.randn(batch, 3, *size)
        torch.testing.assert_close(run(x)[0], src(x), **TOL)
    torch.testing.assert_close(to_torch(model).eval()(x), src(x), **TOL)


def test_unsupported_ir_is_named():
    text = """
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Odd" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %y = math.cbrt %x {nnx.source = "cbrt_0"} : tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}
"""
    with pytest.raises(ToTorchError, match="'math.cbrt' \\(cbrt_0\\) in the "
                       "forward of '<root>' has no PyTorch form"):
        to_torch(_nnx.Model.parse(text))
