"""nnx.compile: models compiled once and run many times in this process,
with probes, patches and rebound weights, against PyTorch (1e-5)."""

import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

_nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")
import nnx  # noqa: E402

from models import gpt2  # noqa: E402
from models.common import attention_interface  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)


def mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(collections.OrderedDict(
        fc1=nn.Linear(6, 16), act=nn.GELU(), fc2=nn.Linear(16, 3))).eval()


@pytest.fixture(scope="module")
def tiny_gpt2():
    model = gpt2.build(gpt2.small_config(), seed=3)
    run = nnx.compile(model, inputs=[((None, None), torch.int64)],
                      family="gpt2", threads=1, functions=[attention_interface],
                      probes=["layers.0.attention_output",
                              "layers.1.layer_output"],
                      patches=["layers.0.mlp_output"])
    return model, run


def ids(batch, seq, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).integers(
        0, gpt2.small_config().vocab_size, size=(batch, seq)))


def test_a_module_compiles_once_and_runs_at_many_shapes():
    model = mlp()
    run = nnx.compile(model, inputs=[(None, 6)], threads=1)
    compiled = run.compile_seconds
    for batch in (1, 5, 64):
        x = torch.randn(batch, 6)
        y, probes = run(x)
        assert isinstance(y, torch.Tensor) and probes == {}
        torch.testing.assert_close(y, model(x).detach(), **TOL)
    assert run.compile_seconds == compiled  # nothing was compiled again
    assert [i["shape"] for i in run.inputs] == [(None, 6)]
    assert [o["type"] for o in run.outputs] == ["tensor<?x3xf32>"]


def test_numpy_in_numpy_out_and_outputs_are_not_copied():
    model = mlp()
    run = nnx.compile(model, inputs=[(None, 6)], threads=1)
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    y, _ = run(x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    # The array views the buffer the forward wrote (owned by its base).
    assert not y.flags.owndata and y.base is not None
    np.testing.assert_allclose(y, model(torch.from_numpy(x)).detach().numpy(),
                               **TOL)


def test_probes_read_what_pytorch_hooks_see(tiny_gpt2):
    model, run = tiny_gpt2
    seen = {}
    hooks = [
        model.transformer.h[0].attn.register_forward_hook(
            lambda m, a, out: seen.__setitem__("layers.0.attention_output", out[0])),
        model.transformer.h[1].register_forward_hook(
            lambda m, a, out: seen.__setitem__("layers.1.layer_output", out)),
    ]
    try:
        for batch, seq in ((1, 5), (3, 9)):
            x = ids(batch, seq, seed=batch)
            # An all-zero patch of the MLP output... is not the identity;
            # patch with what PyTorch computes there, so the run is the
            # unpatched model.
            mlp_out = {}
            h = model.transformer.h[0].mlp.register_forward_hook(
                lambda m, a, out: mlp_out.__setitem__("v", out))
            with torch.no_grad():
                want = model(x)
            h.remove()
            got, probes = run(x, patches={"layers.0.mlp_output": mlp_out["v"]})
            torch.testing.assert_close(got, want, **TOL)
            assert sorted(probes) == sorted(seen)
            for name, value in probes.items():
                torch.testing.assert_close(value, seen[name], **TOL)
    finally:
        for h in hooks:
            h.remove()


def test_a_patch_value_changes_between_calls_without_recompiling(tiny_gpt2):
    model, run = tiny_gpt2
    x = ids(2, 7, seed=5)
    compiled = run.compile_seconds
    for scale in (0.0, 1.0, -3.0):
        patch = torch.full((2, 7, 32), scale)
        h = model.transformer.h[0].mlp.register_forward_hook(
            lambda m, a, out, patch=patch: patch)
        with torch.no_grad():
            want = model(x)
        h.remove()
        got, _ = run(x, patches={"layers.0.mlp_output": patch})
        torch.testing.assert_close(got, want, **TOL)
    assert run.compile_seconds == compiled


def test_patch_errors_name_the_patch(tiny_gpt2):
    _, run = tiny_gpt2
    x = ids(2, 7)
    with pytest.raises(ValueError, match="no value for the patch 'layers.0.mlp_output'"):
        run(x)
    with pytest.raises(ValueError, match="no patch named 'nope'"):
        run(x, patches={"nope": np.zeros(1), "layers.0.mlp_output": np.zeros(1)})
    with pytest.raises(nnx.Error, match="layers.0.mlp_output"):
        run(x, patches={"layers.0.mlp_output": torch.zeros(2, 6, 32)})


def test_bind_weights_from_a_state_dict_and_a_file(tmp_path):
    model = mlp(0)
    run = nnx.compile(model, inputs=[(None, 6)], threads=1)
    other = mlp(1)
    x = torch.randn(3, 6)
    run.bind_weights(other.state_dict())
    torch.testing.assert_close(run(x)[0], other(x).detach(), **TOL)
    from nnx.safetensors import write_safetensors
    path = tmp_path / "w.safetensors"
    write_safetensors(path, model.state_dict())
    run.bind_weights(path)
    torch.testing.assert_close(run(x)[0], model(x).detach(), **TOL)
    bad = dict(model.state_dict())
    bad["fc1.weight"] = torch.zeros(16, 5)
    with pytest.raises(nnx.Error, match="fc1.weight"):
        run.bind_weights(bad)
    # A refused rebind changes nothing.
    torch.testing.assert_close(run(x)[0], model(x).detach(), **TOL)


def test_bad_inputs_raise_with_the_runtime_message():
    run = nnx.compile(mlp(), inputs=[(None, 6)], threads=1)
    with pytest.raises(nnx.Error, match=r"input 0: dimension 1 is 5, expected 6"):
        run(np.zeros((2, 5), np.float32))
    with pytest.raises(nnx.Error, match="expected tensor<\\?x6xf32>, got float64"):
        run(np.zeros((2, 6)))
    with pytest.raises(TypeError, match="dtype"):
        run(np.zeros((2, 6), np.complex64))
    with pytest.raises(ValueError, match="needs inputs="):
        nnx.compile(mlp())


def test_strided_and_broadcast_inputs_are_copied_whole():
    model = mlp()
    run = nnx.compile(model, inputs=[(None, 6)], threads=1)
    x = np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)
    dense = np.ascontiguousarray(x.T)
    broadcast = np.broadcast_to(np.arange(6, dtype=np.float32), (4, 6))
    for given, same in [(x.T, dense), (broadcast, broadcast.copy())]:
        assert not given.flags.c_contiguous
        np.testing.assert_array_equal(run(given)[0], run(same)[0])
    expected = model(torch.from_numpy(broadcast.copy())).detach().numpy()
    np.testing.assert_allclose(run(broadcast)[0], expected, **TOL)


def test_an_input_too_large_to_copy_says_so():
    # 1 << 40 rows of 6 float32 zeros from 4 bytes of storage: nnx would
    # copy 26 TB. The error names the input, its shape and its size (a
    # TypeError "not an array" before).
    run = nnx.compile(mlp(), inputs=[(None, 6)], threads=1)
    huge = np.broadcast_to(np.zeros(1, np.float32), (1 << 40, 6))
    with pytest.raises(MemoryError,
                       match=r"input 0 of shape \(1099511627776, 6\) float32 "
                             r"is 26388279066624 bytes \(a broadcast view, "
                             r"with zero strides: nnx copies it into dense "
                             r"memory\), more than this machine's [0-9]+ "
                             r"bytes of memory"):
        run(huge)
    with pytest.raises(TypeError, match=r"input 0 has dtype object"):
        run(object())
    # The model still runs.
    assert run(np.zeros((2, 6), np.float32))[0].shape == (2, 3)


def test_a_batch_of_zero_rows_gives_an_empty_result():
    # As in PyTorch: a static batch of 0 and a dynamic one given 0 rows.
    model = nn.Linear(4, 3).eval()
    static = nnx.compile(model, inputs=[((0, 4), torch.float32)], threads=1)
    dynamic = nnx.compile(model, inputs=[((None, 4), torch.float32)],
                          threads=1)
    for run in (static, dynamic):
        y = run(np.zeros((0, 4), np.float32))[0]
        assert y.shape == (0, 3) and y.dtype == np.float32
    assert model(torch.zeros(0, 4)).shape == (0, 3)
    expected = mlp()(torch.zeros(0, 6)).detach().numpy()
    run = nnx.compile(mlp(), inputs=[(None, 6)], threads=1)
    np.testing.assert_array_equal(run(np.zeros((0, 6), np.float32))[0],
                                  expected)


def test_compile_errors_carry_the_diagnostics():
    with pytest.raises(nnx.Error) as info:
        nnx.compile(mlp(), inputs=[(None, 6)], family="no-such-family",
                    probes=["layers.0.mlp_output"])
    assert "cannot read family 'no-such-family'" in info.value.diagnostics
    # Where: the model's location (nnx.compile of a torch module).
    assert str(info.value).startswith("<nnx.compile>:1:1: nnx-insert-probes:")
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        nnx.compile(mlp(), inputs=[(None, 6)], target="tpu")


def test_load_save_and_compile_a_file(tmp_path):
    from nnx.torch_export import write
    model = mlp()
    path = tmp_path / "m.mlir"
    write(model, path, [(None, 6)])
    loaded = nnx.load(path)
    x = torch.randn(2, 6)
    want = model(x).detach()
    torch.testing.assert_close(nnx.compile(loaded, threads=1)(x)[0], want, **TOL)
    torch.testing.assert_close(nnx.compile(str(path), threads=1)(x)[0], want,
                               **TOL)
    bc = tmp_path / "m.mlirbc"
    nnx.save(loaded, bc, bytecode=True)
    assert bc.read_bytes()[:4] == b"ML\xefR"
    torch.testing.assert_close(nnx.compile(nnx.load(bc), threads=1)(x)[0], want,
                               **TOL)
    with pytest.raises(ValueError, match="inputs= and examples= are for an nn.Module"):
        nnx.compile(loaded, inputs=[(None, 6)])


def test_tracing_support_is_nnx_supports_report(tmp_path):
    import os
    from nnx import tools
    path = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                        "examples", "families", "cohere.mlir")
    report = nnx.tracing.support(nnx.load(path), "cohere")
    assert report["input_ids"].available
    mid = report["layers.0.layer_mid"]
    assert not mid.available and "parallel" in mid.reason
    printed = tools.run_tool("nnx-opt", [path, "--nnx-support=family=cohere",
                                         "-o", str(tmp_path / "out.mlir")]).stdout
    lines = printed.splitlines()[1:]
    assert len(lines) == len(report)
    for (name, row), line in zip(report.items(), lines):
        status = "available" if row.available else "unavailable"
        assert line.split()[:2] == [name, status], line
        assert line.rstrip().endswith(row.where or row.reason), line
    with pytest.raises(nnx.Error, match="cannot read family 'nope'"):
        nnx.tracing.support(nnx.load(path), "nope")


def test_bad_options_and_weights_files_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="threads must be a non-negative"):
        nnx.compile(mlp(), inputs=[(None, 6)], threads=-1)
    with pytest.raises(ValueError, match="opt_level must be 0-3"):
        nnx.compile(mlp(), inputs=[(None, 6)], opt_level=9)
    with pytest.raises(TypeError, match="tensor_parallel must be True or "
                       "False, got 'yes'"):
        nnx.compile(mlp(), inputs=[(None, 6)], tensor_parallel="yes")
    with pytest.raises(ValueError, match="tensor_parallel=True is for "
                       "target='cpu'"):
        nnx.compile(mlp(), inputs=[(None, 6)], target="cuda",
                    tensor_parallel=True)
    run = nnx.compile(mlp(), inputs=[(None, 6)], threads=1)
    assert (run.ranks, run.rank) == (1, 0)  # compiled whole
    bad = tmp_path / "corrupt.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}xxxxxxx")
    with pytest.raises(nnx.Error, match="the header is not valid JSON"):
        run.bind_weights(bad)
    with pytest.raises(nnx.Error, match="cannot open file"):
        run.bind_weights(tmp_path / "missing.safetensors")
    with pytest.raises(nnx.Error, match="takes 1 input"):
        run()
    with pytest.raises(ValueError, match="cannot read"):
        nnx.load(tmp_path / "missing.mlir")
    (tmp_path / "bad.mlir").write_text(
        "nnx.model @m inputs(tensor<?x4xf32>) { nnx.linear @l }")
    with pytest.raises(nnx.Error, match="bad.mlir:1:40: error: 'nnx.linear' "
                       "op at '<root>': needs a 'weight'"):
        nnx.load(tmp_path / "bad.mlir")
