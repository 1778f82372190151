"""The convnet corpus (python/tests/convnets: the standard convolutional
families written the way their authors write them) exported whole through
nnx.torch_export, ONCE per model, with the batch dynamic, and run by nnx-run
at batch 1 and 3 (the ImageNet-sized ResNet-18 also at two image sizes):
every output within the 1e-5 contract of the PyTorch model. Every model
also runs in PyTorch at both shapes, deterministically, without nnx, and
none of its BatchNorms is the identity.

The weights go to a safetensors file beside the IR (the ResNets and VGG
hold ~10M parameters each, too many for inline blobs)."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convnets  # noqa: E402
import test_corpus  # noqa: E402
from test_corpus import case_id, export_name  # noqa: E402

from nnx.torch_export import export  # noqa: E402

CASES = convnets.cases()


# --- PyTorch alone -----------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_runs_in_pytorch_at_two_shapes_deterministically(case):
    """Both shapes run with finite outputs, the batch first, and the same
    seed gives bit-identical outputs (another seed, other ones): the model
    corpus's check (test_corpus.py), on the convnets."""
    test_corpus.test_runs_in_pytorch_at_two_shapes_deterministically(case)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_batch_norm_is_not_the_identity(case):
    """Eval mode, and every BatchNorm has random running statistics and
    affine parameters, so a wrong normalization cannot pass."""
    model = case.build()
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bns or case.name == "lenet", "no BatchNorm2d"
    for bn in bns:
        assert not bn.training and bn.track_running_stats
        assert bn.running_mean.abs().min() > 0
        assert (bn.running_var - 1).abs().max() > 0.1
        assert (bn.weight - 1).abs().max() > 0 and bn.bias.abs().min() > 0


# --- exported through nnx ----------------------------------------------------

@pytest.fixture(scope="module", params=CASES, ids=case_id)
def exported(request, tmp_path_factory):
    """(case, model, IR text): each model exported once, with its inputs
    (the batch dynamic), its tensors in a safetensors file."""
    case = request.param
    model = case.build()
    weights = tmp_path_factory.mktemp(case.name) / "weights.safetensors"
    text = export(model, inputs=case.inputs, name=export_name(case),
                  weights=weights)
    return case, model, text


@pytest.mark.parametrize("which", [0, 1], ids=["shape0", "shape1"])
def test_outputs_match_pytorch(exported, which):
    """Batch 1 and batch 3 (the ImageNet ResNet-18: 224 and 160 pixels),
    every output within CONTRACT of PyTorch, and the model left as it was:
    the model corpus's check (test_corpus.py)."""
    test_corpus.test_outputs_match_pytorch(exported, which)
