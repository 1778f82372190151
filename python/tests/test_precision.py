"""Precision against float64: nnx's float32 output is never less accurate
than PyTorch's own (at most 1.5x PyTorch's distance from a float64 run of
the same model, the brief's rule for deep random nets), on the products
where the order of summation decides it: a Linear with a long K, 3x3
convolutions over many channels, grouped convolutions, a ResNet and GPT-2
small's MLP shape.

The distance is the root mean square over every output (the maximum of a
few elements is one draw of the rounding; the RMS is stable across seeds),
both measured in the same process on the same inputs."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")
import nnx  # noqa: E402

#: The brief's rule: nnx no farther from float64 than 1.5x PyTorch.
RATIO = 1.5


def distances(model, shape, seed=0):
    """(PyTorch's, nnx's) RMS distance from the model run in float64."""
    torch.manual_seed(seed)
    model = model.eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        ref32 = model(x).double()
        ref64 = copy.deepcopy(model).double()(x.double())
    spec = [(None,) + tuple(shape[1:])]
    got = np.asarray(nnx.compile(model, inputs=spec, threads=1)(x)[0])
    got = torch.from_numpy(got).double()

    def rms(y):
        return (y - ref64).pow(2).mean().sqrt().item()
    return rms(ref32), rms(got)


def calibrated(model, shape):
    """BatchNorm statistics from train-mode passes (momentum=None), so the
    activations stay O(1) as in a trained net."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.momentum = None
            m.reset_running_stats()
    model.train()
    torch.manual_seed(1)
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(*shape))
    return model.eval()


CASES = {
    "linear-k4608": (lambda: nn.Linear(4608, 64, bias=False), (16, 4608)),
    "gpt2-mlp": (lambda: nn.Sequential(nn.Linear(768, 3072), nn.GELU(),
                                       nn.Linear(3072, 768)), (8, 768)),
    "conv3x3-c512": (lambda: nn.Conv2d(512, 512, 3, padding=1), (2, 512, 8, 8)),
    "conv-stack": (lambda: nn.Sequential(*[
        layer for _ in range(6) for layer in (
            nn.Conv2d(128, 128, 3, padding=1), nn.ReLU())]), (2, 128, 8, 8)),
    # Grouped 3x3 convs (one matmul per group and tap): RegNet's group
    # widths 8, 16 and 24 at stride 1 and 2, ResNeXt 32x4d's layer2 and
    # layer4 convs, and RegNetX-32GF's group width 168 (K = 1512: where the
    # summation order decides it).
    "grouped-gw8": (lambda: nn.Conv2d(64, 64, 3, padding=1, groups=8),
                    (2, 64, 14, 14)),
    "grouped-gw16-s2": (lambda: nn.Conv2d(128, 128, 3, stride=2, padding=1,
                                          groups=8), (2, 128, 14, 14)),
    "grouped-gw24": (lambda: nn.Conv2d(192, 192, 3, padding=1, groups=8),
                     (2, 192, 8, 8)),
    "resnext-32x8-s2": (lambda: nn.Conv2d(256, 256, 3, stride=2, padding=1,
                                          groups=32), (2, 256, 14, 14)),
    "resnext-32x32": (lambda: nn.Conv2d(1024, 1024, 3, padding=1,
                                        groups=32), (2, 1024, 7, 7)),
    "grouped-gw168": (lambda: nn.Conv2d(336, 336, 3, padding=1, groups=2),
                      (2, 336, 8, 8)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_less_accurate_than_pytorch(name):
    make, shape = CASES[name]
    torch.manual_seed(0)
    theirs, ours = distances(make(), shape)
    print(f"{name}: PyTorch {theirs:.3g}, nnx {ours:.3g} from float64")
    assert ours <= RATIO * theirs, (name, ours, theirs)


def test_resnet18_no_less_accurate_than_pytorch():
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = calibrated(torchvision.models.resnet18(weights=None), (8, 3, 64, 64))
    theirs, ours = distances(model, (2, 3, 64, 64))
    print(f"resnet18: PyTorch {theirs:.3g}, nnx {ours:.3g} from float64")
    assert ours <= RATIO * theirs, (ours, theirs)
