"""Channel groups beyond ResNet, on torchvision models: mobilenet_v2
(depthwise convolutions), densenet121 (concatenation offsets),
efficientnet_b0 (squeeze-excitation gates) and convnext_tiny (LayerNorm2d,
which refuses its stream; its MLPs are groups of their own). For each:
widening a group by 25% preserves the output, and pruning 25% of it equals
the original with the group's per-channel parameters zeroed, within 1e-5
in PyTorch (the user's own classes come back)."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import nnx  # noqa: E402

from test_channel_groups import (INPUTS, TOL, build, group,  # noqa: E402
                                 run, zero_producers)

# (model, layer naming the group, what the group goes through)
CASES = [
    # expand conv -> BN -> ReLU6 -> depthwise conv -> BN -> ReLU6 -> project
    ("mobilenet_v2", "features.2.conv.0.0"),
    # a dense layer's 32 channels, at their offset in every later concat
    # (the later layers' norm1 and conv1, the transition)
    ("densenet121", "features.denseblock1.denselayer1.conv2"),
    # the stem's channels: the depthwise conv, the SE gate's fc1 (reads)
    # and fc2 (writes the gate), the project conv
    ("efficientnet_b0", "features.1.0.block.0.0"),
    # a ConvNeXt block's MLP: the first Linear's units, read by the second
    ("convnext_tiny", "features.1.0.block.3"),
]


@pytest.fixture(scope="module")
def images():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("name,layer", CASES)
def test_widen_and_prune(name, layer, images):
    model = build(name)
    want = run(model, images)
    n, _ = group(model, layer)
    wide = nnx.widen_channels(model, layer_name=layer, new_width=n + n // 4,
                              rng_seed=1, inputs=INPUTS)
    assert group(wide, layer)[0] == n + n // 4
    torch.testing.assert_close(run(wide, images), want, **TOL)
    scores = np.random.RandomState(2).permutation(n).astype(np.float64)
    drop = sorted(np.argsort(scores)[: n // 4].tolist())
    pruned = nnx.prune_channels(model, layer_name=layer, keep=n - n // 4,
                                importance=scores, inputs=INPUTS)
    assert group(pruned, layer)[0] == n - n // 4
    zeroed = zero_producers(copy.deepcopy(model), layer, drop)
    torch.testing.assert_close(run(pruned, images), run(zeroed, images), **TOL)


def test_convnext_stream_is_refused_at_its_layer_norm():
    """The stream of a ConvNeXt stage is normalized over its channels
    (LayerNorm2d, and each block's LayerNorm after the permute): copies or
    removals would change the statistics, and the refusal names the op."""
    model = build("convnext_tiny")
    for edit, kw in ((nnx.widen_channels, dict(new_width=120)),
                     (nnx.prune_channels, dict(keep=72))):
        with pytest.raises(ValueError, match="reduces over"):
            edit(model, layer_name="features.1.0.block.0", inputs=INPUTS, **kw)
