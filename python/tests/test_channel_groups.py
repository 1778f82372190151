"""Channel groups on torchvision's resnet18, from PyTorch (nnx-prune-channels,
nnx-widen-channels through ``nnx.prune_channels`` / ``nnx.widen_channels``).

The group of a convolution's output channels is what the forward's data flow
ties to them (``nnx-channel-groups``): the residual stream of a stage is
written by every block's last batch norm and by the downsample branch, and
read by every block's first conv, the next stage's downsample and the head.
Checked by execution, at the 1e-5 contract:
- pruning 25% of one group per stage equals the original with the pruned
  channels' producing weights zeroed (the same function), in PyTorch (the
  returned module, the user's own classes) and compiled by nnx;
- widening a residual stream and an inner conv of a BasicBlock by 25%
  preserves the output, in PyTorch and compiled;
- the widened-then-pruned model goes back to PyTorch through
  ``nnx.to_torch`` and trains (the loss decreases);
- an identity BasicBlock inserted after layer2.1 (``nnx.insert_block``: the
  copy's last batch norm zero) preserves the output."""

import copy
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import nnx  # noqa: E402
from nnx.tools import nnx_opt  # noqa: E402
from nnx.torch_export import export  # noqa: E402
from zoo.channels import zero_tensors  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
SIZE = 32
INPUTS = [((None, 3, SIZE, SIZE), torch.float32)]
# One group per stage: the stem's stream (layer1), the stream of layer2
# (written by its downsample and both blocks), an inner conv of layer3,
# the stream of layer4 (read by the head).
GROUPS = ["conv1", "layer2.0.conv2", "layer3.1.conv1", "layer4.0.downsample.0"]


def build(name):
    """torchvision's `name`, seeded, in eval mode, its batch norms with
    random statistics and affine entries (not the identity of a fresh
    one)."""
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    return model.eval()


@pytest.fixture(scope="module")
def resnet():
    return build("resnet18")


@pytest.fixture(scope="module")
def images():
    return torch.randn(2, 3, SIZE, SIZE,
                       generator=torch.Generator().manual_seed(1))


def run(model, x):
    with torch.no_grad():
        return model(x)


def compiled_run(model, x):
    """`model` exported, compiled by nnx and run on `x`."""
    out, _ = nnx.compile(model, INPUTS)(x)
    return out


def group(model, layer):
    """``nnx-channel-groups``' listing of `layer`: (channels, [(path, dim,
    offset, reads)]); the offset is where the channels start in the dim (a
    concatenation's part), else 0."""
    text = nnx_opt(export(model, INPUTS, weights=False),
                   [f"--nnx-channel-groups=layer={layer}", "-o", "/dev/null"])
    n = int(re.search(r": (\d+) channels", text).group(1))
    line = r"tensor (\S+) dim (\d+)(?: at (\d+))?( \(reads\))?"
    tensors = [(m.group(1), int(m.group(2)), int(m.group(3) or 0),
                bool(m.group(4))) for m in re.finditer(line, text)]
    return n, tensors


def test_stream_group_of_resnet18(resnet):
    """The stream of layer2: written by both blocks' bn2 and the downsample,
    read by layer2.1.conv1 and layer3.0's conv1 and downsample."""
    n, tensors = group(resnet, "layer2.0.conv2")
    assert n == 128
    writers = {p for p, d, _, reads in tensors if not reads and
               p.endswith(".weight") and d == 0}
    assert writers == {
        "layer2.0.conv2.weight", "layer2.0.bn2.weight",
        "layer2.0.downsample.0.weight", "layer2.0.downsample.1.weight",
        "layer2.1.conv2.weight", "layer2.1.bn2.weight"}
    readers = {p for p, _, _, reads in tensors if reads}
    assert readers == {"layer2.1.conv1.weight", "layer3.0.conv1.weight",
                       "layer3.0.downsample.0.weight"}


def zero_producers(model, layer, channels):
    """`model` with `channels` of `layer`'s group zeroed where they are
    written: every per-channel parameter of the group (writers' weight rows
    and biases, norms' affine entries, depthwise filters, per-channel
    scales; running statistics stay), so that no consumer sees them."""
    _, tensors = group(model, layer)
    return zero_tensors(model, tensors, channels)


def test_prune_one_group_per_stage_equals_zeroed(resnet, images):
    pruned, zeroed = resnet, copy.deepcopy(resnet)
    rng = np.random.RandomState(2)
    for layer in GROUPS:
        n, _ = group(pruned, layer)
        scores = rng.permutation(n).astype(np.float64)
        drop = sorted(np.argsort(scores)[: n // 4].tolist())
        # The channel indices of the zeroed model are the original ones:
        # each group is pruned once, so they coincide.
        zeroed = zero_producers(zeroed, layer, drop)
        pruned = nnx.prune_channels(pruned, layer_name=layer, keep=n - n // 4,
                                    importance=scores, inputs=INPUTS)
    params = sum(p.numel() for p in pruned.parameters())
    assert params < sum(p.numel() for p in resnet.parameters())
    assert pruned.layer2[0].downsample[0].out_channels == 96
    assert pruned.layer3[1].conv2.in_channels == 192
    assert pruned.fc.in_features == 384
    want = run(zeroed, images)
    assert not torch.allclose(want, run(resnet, images), **TOL)
    torch.testing.assert_close(run(pruned, images), want, **TOL)
    torch.testing.assert_close(compiled_run(pruned, images), want, **TOL)


@pytest.mark.parametrize("layer,width", [("layer2.0.conv2", 160),
                                         ("layer1.1.conv1", 80)])
def test_widen_preserves_output(resnet, images, layer, width):
    wide = nnx.widen_channels(resnet, layer_name=layer, new_width=width,
                              rng_seed=3, inputs=INPUTS)
    n, tensors = group(wide, layer)
    assert n == width
    want = run(resnet, images)
    torch.testing.assert_close(run(wide, images), want, **TOL)
    torch.testing.assert_close(compiled_run(wide, images), want, **TOL)


def test_widened_then_pruned_to_torch_trains(resnet, images, tmp_path):
    text = export(resnet, INPUTS, weights=False)
    text = nnx_opt(text, ["--nnx-widen-channels=layer=layer3.0.conv2 "
                          "width=320 seed=4",
                          "--nnx-prune-channels=layer=layer1.0.conv1 keep=48"])
    path = tmp_path / "edited.mlir"
    path.write_text(text)
    model = nnx.to_torch(str(path))
    assert model.layer3[1].conv1.in_channels == 320
    assert model.layer1[0].conv2.in_channels == 48
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    target = torch.randint(0, 1000, (2,),
                           generator=torch.Generator().manual_seed(5))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_insert_identity_block_after_basic_block(resnet, images):
    """nnx.insert_block after layer2.1 (a BasicBlock in a Sequential): the
    copy's last batch norm is zero, so its branch vanishes at the residual
    add, and its final ReLU keeps the non-negative output of layer2.1: the
    output is unchanged, in PyTorch and compiled."""
    deep = nnx.insert_block(resnet, after="layer2.1", inputs=INPUTS)
    assert len(deep.layer2) == 3 and len(resnet.layer2) == 2
    block = deep.layer2[2]
    assert type(block) is type(resnet.layer2[1])
    assert not block.bn2.weight.any() and not block.bn2.bias.any()
    torch.testing.assert_close(block.conv1.weight, resnet.layer2[1].conv1.weight)
    want = run(resnet, images)
    torch.testing.assert_close(run(deep, images), want, **TOL)
    torch.testing.assert_close(compiled_run(deep, images), want, **TOL)


def test_insert_block_refuses_a_downsampling_block(resnet):
    """layer2.0 changes the shape (its downsample): a copy cannot follow
    it."""
    with pytest.raises(ValueError, match="a copy cannot follow it"):
        nnx.insert_block(resnet, after="layer2.0", inputs=INPUTS)
