"""Surgery on an exported Sequential convnet, checked against PyTorch.

The net is written the way an ``nn.Sequential`` convnet usually is (conv,
BatchNorm2d, ReLU(inplace=True), max pool, a global pool, ``nn.Flatten``,
dropout, a Linear head), exported by nnx.torch_export with the batch
dynamic, edited by nnx-opt (nnx-widen, nnx-deepen, nnx-low-rank), and run by
nnx-run: where Net2Net says the edit preserves the function, the edited model
agrees with the ORIGINAL PyTorch model within the 1e-5 contract at two batch
sizes. Refusals are errors that name the pass, the module and the reason."""

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from nnx.testing import CONTRACT  # noqa: E402
from nnx.tools import ToolError, nnx_opt, nnx_run  # noqa: E402
from nnx.torch_export import export  # noqa: E402


def make_net():
    """A small CIFAR-style net in eval mode, with non-trivial BatchNorm
    statistics (random running mean/var, weight and bias)."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 12, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(12),
        nn.ReLU(inplace=True),
        nn.Conv2d(12, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d((2, 2)),
        nn.Flatten(),
        nn.Dropout(0.5),
        nn.Linear(16 * 2 * 2, 10),
    )
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    return net.eval()


@pytest.fixture(scope="module")
def exported():
    net = make_net()
    text = export(net, inputs=[(None, 3, 16, 16)], name="cnn")
    return net, text


def inputs_for(batch):
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 3, 16, 16, generator=g)


def assert_preserves(net, text, passes):
    """The model `passes` make of `text` computes what `net` computes."""
    edited = text
    if passes:
        edited = nnx_opt(text, ["--pass-pipeline=builtin.module(nnx.model(%s))"
                                % ",".join(passes)])
        assert edited != text
    for batch in (1, 3):
        x = inputs_for(batch)
        with torch.no_grad():
            want = net(x).numpy()
        got, _ = nnx_run(edited, [x.numpy()])
        np.testing.assert_allclose(got, want, **CONTRACT,
                                   err_msg=" then ".join(passes))
    return edited


def test_the_export_is_one_sequential(exported):
    """The Sequential with its Flatten and Linear head exports as one
    nnx.sequential (its chain verifies across the flatten), and runs."""
    net, text = exported
    assert len(re.findall(r"nnx\.sequential", text)) == 1
    assert "nnx.flatten" in text
    assert_preserves(net, text, [])


@pytest.mark.parametrize("passes", [
    # Through the batch norm (the option) and ReLU, max pool to conv 4.
    ["nnx-widen{layer=0 width=13 seed=1 through-batchnorm=true}"],
    # Through a batch norm, a ReLU to the strided conv 7.
    ["nnx-widen{layer=4 width=20 seed=2 through-batchnorm=true}"],
    # Through ReLU, the global pool, flatten and dropout to the Linear: each
    # channel owns 2 x 2 columns.
    ["nnx-widen{layer=7 width=23 seed=3}"],
    ["nnx-deepen{after=2}"],
    ["nnx-deepen{after=8 kernel-size=1}"],
    # At the maximum rank (min(12, 8 * 9) = 12; min(16, 12 * 9) = 16).
    ["nnx-low-rank{layer=4 rank=12}"],
    ["nnx-low-rank{layer=7 rank=16}"],
    # A sequence: an identity conv after the first block, widened, then the
    # first conv widened into it.
    ["nnx-deepen{after=2}", "nnx-widen{layer=3 width=11 seed=4}",
     "nnx-widen{layer=0 width=10 seed=5 through-batchnorm=true}"],
], ids=["widen-bn", "widen-bn-strided", "widen-flatten", "deepen",
        "deepen-1x1", "low-rank-4", "low-rank-7", "sequence"])
def test_edits_preserve_the_pytorch_outputs(exported, passes):
    net, text = exported
    assert_preserves(net, text, passes)


def test_low_rank_below_the_maximum_changes_the_output(exported):
    """A rank-2 factorization is not exact: the check above can fail."""
    net, text = exported
    with pytest.raises(AssertionError):
        assert_preserves(net, text, ["nnx-low-rank{layer=7 rank=2}"])


@pytest.mark.parametrize("passes, message", [
    ("nnx-widen{layer=0 width=13}",
     "nnx-widen: module on the path '1' (nnx.batch_norm) is width-dependent: "
     "duplicating units through it changes the output (option "
     "through-batchnorm=true"),
    ("nnx-widen{layer=12 width=13}",
     "nnx-widen: target '12' (nnx.linear) has no consumer"),
    ("nnx-deepen{after=6 kernel-size=4}", "must be odd and positive"),
    ("nnx-drop-layer{layer=3}",
     "nnx-drop-layer: layer '3' (nnx.max_pool2d) changes the size of spatial "
     "dim 2"),
], ids=["widen-batchnorm", "widen-last", "deepen-even", "drop-pool"])
def test_refusals_name_the_module_and_reason(exported, passes, message):
    _, text = exported
    with pytest.raises(ToolError) as info:
        nnx_opt(text, ["--pass-pipeline=builtin.module(nnx.model(%s))"
                       % passes])
    assert message in str(info.value)
