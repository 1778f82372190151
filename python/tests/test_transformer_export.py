"""The six reference transformer families exported whole through
nnx.torch_export (the recorded forward) and run by nnx-run with ONE IR file per family at
two batch sizes and two sequence lengths: logits, every standardized value a
family supports (read with --probe, compared with PyTorch forward hooks at the
families/*.json locations) and writes of attention_output / mlp_output
(compared with PyTorch run with the same replacement), all within 1e-5."""

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import FAMILIES, build, hooks  # noqa: E402
from models.common import attention_interface, dropout_add  # noqa: E402

from nnx import tools  # noqa: E402
from nnx.torch_export import ExportError, export  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
# (batch, sequence) pairs run on the same exported file.
SHAPES = [(1, 5), (3, 9)]
LAYER = 1


@pytest.fixture(scope="module", params=FAMILIES)
def family(request):
    """(name, model, exported text), exported once per family."""
    model = build(request.param)
    text = export(model, [((None, None), torch.int64)], name=request.param,
                  functions=[attention_interface, dropout_add])
    return request.param, model, text


def token_ids(model, batch, seq, seed):
    vocab = model.lm_head.out_features
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocab, size=(batch, seq)).astype(np.int64)


def reference(model, family, ids, reads=None, writes=None):
    with torch.no_grad():
        logits, values = hooks.run(model, family, torch.from_numpy(ids),
                                   layer=LAYER, reads=reads, writes=writes)
    return logits.numpy(), {k: v.detach().numpy() for k, v in values.items()}


def execution_order(model, family, ids, names):
    """`names` in the order PyTorch computes them (nnx-run wants reads in
    execution order)."""
    with torch.no_grad():
        _, values = hooks.run(model, family, torch.from_numpy(ids),
                              layer=LAYER, reads=list(names))
    return list(values)


def test_export_reads_as_the_source(family):
    name, _, text = family
    # No affine maps to decode, -inf written exactly, one forward per module.
    assert "affine_map" not in text
    assert "linalg.generic" not in text
    assert "nnx.call @attention_interface" in text
    assert "-3.4" not in text


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"b{s[0]}xt{s[1]}")
def test_logits_match_pytorch(family, shape):
    name, model, text = family
    ids = token_ids(model, *shape, seed=shape[1])
    out, _ = tools.nnx_run(text, [ids])
    ref, _ = reference(model, name, ids, reads=[])
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, **TOL)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"b{s[0]}xt{s[1]}")
def test_every_standardized_value_matches_pytorch(family, shape):
    name, model, text = family
    ids = token_ids(model, *shape, seed=7)
    names = [n for n, why in hooks.available(model, name, LAYER).items()
             if why is None]
    assert len(names) >= 10
    reads = [n if n in ("input_ids", "embeddings", "final_norm_output",
                        "logits") else f"layers.{LAYER}.{n}"
             for n in execution_order(model, name, ids, names)]
    _, got = tools.nnx_run_traced(text, [ids], name, reads=reads)
    _, want = reference(model, name, ids, reads=names)
    for read in reads:
        bare = read.split(".")[-1]
        assert got[read].shape == want[bare].shape, read
        np.testing.assert_allclose(got[read], want[bare], err_msg=read, **TOL)


@pytest.mark.parametrize("value", ["attention_output", "mlp_output"])
def test_write_matches_pytorch_with_the_same_replacement(family, value):
    name, model, text = family
    ids = token_ids(model, 2, 6, seed=3)
    _, values = reference(model, name, ids, reads=[value])
    rng = np.random.default_rng(11)
    patch = rng.standard_normal(values[value].shape).astype(np.float32)
    got, _ = tools.nnx_run_traced(text, [ids], name,
                                  patches={f"layers.{LAYER}.{value}": patch})
    want, _ = reference(model, name, ids, reads=[],
                        writes={value: torch.from_numpy(patch)})
    unpatched, _ = reference(model, name, ids, reads=[])
    assert np.abs(want - unpatched).max() > 1e-3  # the write matters
    np.testing.assert_allclose(got, want, **TOL)


def test_masked_scores_are_minus_inf_exactly_where_pytorch_has_them(family):
    name, model, text = family
    if hooks.available(model, name, LAYER)["attention_scores"] is not None:
        pytest.skip("no attention scores on this family")
    ids = token_ids(model, 2, 6, seed=5)
    read = f"layers.{LAYER}.attention_scores"
    _, got = tools.nnx_run_traced(text, [ids], name, reads=[read])
    _, want = reference(model, name, ids, reads=["attention_scores"])
    want = want["attention_scores"]
    assert np.isneginf(want).any()
    np.testing.assert_array_equal(np.isneginf(got[read]), np.isneginf(want))


def test_unsupported_op_names_module_and_node():
    class Sorted(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, dim=1).values

    with pytest.raises(ExportError) as e:
        export(Sorted(), [(None, None, 4)])
    assert "module at '<root>'" in str(e.value)
    assert "'torch.sort' has no nnx form" in str(e.value)
    assert "test_transformer_export.py:%d" % (
        Sorted.forward.__code__.co_firstlineno + 1) in str(e.value)


def observer_runs(model, name, text, ids, threads):
    """Logits without probes, with every value of both layers read (in
    execution order), and with every float value just read written back."""
    args = ["--threads", str(threads)]
    plain, _ = tools.nnx_run(text, [ids], extra_args=args)
    bare = [n for n, why in hooks.available(model, name, LAYER).items()
            if why is None]
    order = execution_order(model, name, ids, bare)
    model_level = ("input_ids", "embeddings", "final_norm_output", "logits")
    reads = []
    for layer in range(LAYER + 1):
        for n in order:
            if n not in model_level:
                reads.append(f"layers.{layer}.{n}")
    reads = ([n for n in order if n in ("input_ids", "embeddings")] + reads
             + [n for n in order if n in ("final_norm_output", "logits")])
    probed, got = tools.nnx_run_traced(text, [ids], name, reads=reads,
                                       extra_args=args)
    back = {n: v for n, v in got.items()
            if v.dtype == np.float32 and n != "logits"}
    written, _ = tools.nnx_run_traced(text, [ids], name, patches=back,
                                      extra_args=args)
    return plain, probed, written


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"b{s[0]}xt{s[1]}")
def test_probes_are_pure_observers(family, shape, threads):
    """Reading values, or writing back exactly what was read, changes no
    bit of the logits (PyTorch hooks that only read change nothing): the
    computation of every value is the same with and without probes."""
    name, model, text = family
    ids = token_ids(model, *shape, seed=13)
    plain, probed, written = observer_runs(model, name, text, ids, threads)
    np.testing.assert_array_equal(probed, plain, err_msg="with reads")
    np.testing.assert_array_equal(written, plain, err_msg="written back")
