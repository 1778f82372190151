"""The model corpus (python/tests/corpus: models written the way their
authors write them) exported whole through nnx.torch_export, ONCE per model,
and run by nnx-run at two shapes (batch and sequence length, or image size /
frames): every output (flattened in order, None entries dropped) within the
1e-5 contract of the PyTorch model. Every model also runs in PyTorch at both
shapes, deterministically, without nnx."""

import dataclasses
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

from nnx import tools  # noqa: E402
from nnx.testing import CONTRACT  # noqa: E402
from nnx.torch_export import export  # noqa: E402

CASES = corpus.cases()


def case_id(case):
    return case.name


def flatten(out):
    """The tensors of a model's output in order: tuples and lists in order,
    dicts (and dict-like ModelOutputs) by their values, dataclasses by their
    fields; None entries dropped."""
    if out is None:
        return []
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flatten(v)]
    if dataclasses.is_dataclass(out):
        return [t for f in dataclasses.fields(out) for t in flatten(getattr(out, f.name))]
    if isinstance(out, (tuple, list)):
        return [t for v in out for t in flatten(v)]
    raise TypeError(f"a model output of type {type(out).__name__}")


def reference(model, inputs):
    with torch.no_grad():
        return [t.detach().numpy() for t in flatten(model(*inputs))]


def nnx_run_all(text, inputs, n_outputs):
    """Compiles and runs `text` through nnx-run on numpy `inputs`; returns
    its `n_outputs` outputs (nnx-run refuses a different count)."""
    return tools.nnx_run_outputs(text, inputs, n_outputs)[0]


def export_name(case):
    return case.name.replace(".", "_")


# --- PyTorch alone -----------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_runs_in_pytorch_at_two_shapes_deterministically(case):
    """The model itself works: both shapes run, outputs are finite, the
    batch is the first dim of the first output, and building it again with
    the same seed gives bit-identical outputs (another seed, other ones)."""
    model, again, other = case.build(0), case.build(0), case.build(1)
    assert not model.training
    assert len(case.inputs) == len(case.example(*case.shapes[0]))
    for batch, n in case.shapes:
        inputs = case.example(batch, n, seed=n)
        want = reference(model, inputs)
        assert want, "no tensor output"
        assert want[0].shape[0] == batch
        for w in want:
            assert np.isfinite(w).all()
        for w, a in zip(want, reference(again, inputs)):
            np.testing.assert_array_equal(w, a)
        assert any(np.abs(w - o).max() > 1e-3
                   for w, o in zip(want, reference(other, inputs)))


# --- exported through nnx ----------------------------------------------------

@pytest.fixture(scope="module", params=CASES, ids=case_id)
def exported(request):
    """(case, model, IR text): each model exported once, with its INPUTS."""
    case = request.param
    model = case.build()
    text = export(model, inputs=case.inputs, name=export_name(case))
    return case, model, text


@pytest.mark.parametrize("which", [0, 1], ids=["shape0", "shape1"])
def test_outputs_match_pytorch(exported, which):
    case, model, text = exported
    batch, n = case.shapes[which]
    inputs = case.example(batch, n, seed=n)
    want = reference(model, inputs)
    # Exporting left the model as it was (its weights, buffers and state).
    for w, fresh in zip(want, reference(case.build(), inputs)):
        np.testing.assert_array_equal(w, fresh, err_msg="the model after export")
    got = nnx_run_all(text, [x.numpy() for x in inputs], len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {i}: shape {g.shape}, want {w.shape}"
        assert g.dtype == w.dtype, f"output {i}: dtype {g.dtype}, want {w.dtype}"
        np.testing.assert_allclose(g, w, err_msg=f"output {i}", **CONTRACT)
