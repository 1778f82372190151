"""torchvision models with modules their eval forward never calls: every
EfficientNet's StochasticDepth on the blocks without a residual, the
auxiliary heads of GoogLeNet and Inception v3. Each is exported with the
batch dynamic (the uncalled modules kept, marked ``nnx.uncalled``, with
their weights), compiled, and run at batch 1 and 2 within 1e-5 of PyTorch;
the weights are random (``corpus.randomize``: no BatchNorm is the
identity)."""

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import randomize  # noqa: E402

import nnx  # noqa: E402
from nnx.torch_export import write  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
M = torchvision.models

CASES = {
    # name: (builder, input spec, the uncalled modules' paths)
    "efficientnet_b0": (lambda: M.efficientnet_b0(weights=None),
                        (None, 3, 224, 224),
                        ["features.1.0.stochastic_depth",
                         "features.2.0.stochastic_depth"]),
    "googlenet_aux": (lambda: M.googlenet(weights=None, aux_logits=True,
                                          init_weights=True),
                      (None, 3, 224, 224), ["aux1", "aux2", "aux1.conv"]),
    "inception_v3_aux": (lambda: M.inception_v3(weights=None,
                                                aux_logits=True,
                                                init_weights=True),
                         (None, 3, 299, 299), ["AuxLogits",
                                               "AuxLogits.conv0"]),
}


def _build(name):
    model = CASES[name][0]()
    randomize(model, 0)
    return model.eval()


@pytest.fixture(scope="module", params=sorted(CASES))
def exported(request, tmp_path_factory):
    name = request.param
    model = _build(name)
    path = tmp_path_factory.mktemp(name) / "model.mlir"
    text = write(model, path, inputs=[CASES[name][1]], weights=True)
    return name, model, path, text


def _module_line(text, path):
    """The op line of the module at dotted `path` (its last key)."""
    key = path.split(".")[-1]
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("nnx.module ") and (
                s.split()[1] in (f"@{key}", f'@"{key}"')):
            return s
    raise AssertionError(f"no module '{path}'")


def test_uncalled_modules_are_kept(exported):
    name, model, path, text = exported
    for p in CASES[name][2]:
        assert "nnx.uncalled" in _module_line(text, p), p


def test_outputs_match_pytorch(exported):
    name, model, path, text = exported
    run = nnx.compile(str(path), threads=0)
    size = CASES[name][1][2]
    for batch in (1, 2):
        x = torch.randn(batch, 3, size, size,
                        generator=torch.Generator().manual_seed(batch))
        with torch.no_grad():
            want = model(x)
        got, _ = run(x)
        torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want,
                                   **TOL)
