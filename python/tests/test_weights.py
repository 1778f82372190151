"""Weights files: nnx.safetensors (read / write / validation) and the
exporter's weights modes (inline, #nnx.external + a safetensors file,
automatic), checked by running the exported models through the built
nnx-run (also with --weights) against PyTorch at atol = rtol = 1e-5."""

import collections
import json
import os
import re
import struct
import subprocess

import numpy as np
import pytest

from nnx.safetensors import (ALIGNMENT, BF16, SafeTensorsError, bf16_bits,
                             read_header, read_safetensors, write_safetensors)

TOL = dict(atol=1e-5, rtol=1e-5)


# -- nnx.safetensors ---------------------------------------------------------

def _all_dtypes():
    rng = np.random.default_rng(0)
    return collections.OrderedDict([
        ("f32", rng.standard_normal((3, 5)).astype(np.float32)),
        ("f64", rng.standard_normal((2, 2, 2))),
        ("f16", rng.standard_normal(7).astype(np.float16)),
        ("bf16", bf16_bits(rng.integers(0, 1 << 16, (4, 3)).astype(np.uint16))),
        ("i64", rng.integers(-2**62, 2**62, (5,), dtype=np.int64)),
        ("i32", np.array([[-1, 2**31 - 1]], dtype=np.int32)),
        ("i16", np.array([-32768, 7], dtype=np.int16)),
        ("i8", np.array([-128, 127], dtype=np.int8)),
        ("u8", np.arange(256, dtype=np.uint8)),
        ("bool", np.array([[True, False, True]])),
        ("scalar", np.float32(2.5)),
        ("empty", np.zeros((0, 4), np.float32)),
    ])


def test_round_trip_is_exact_and_aligned(tmp_path):
    path = tmp_path / "t.safetensors"
    tensors = _all_dtypes()
    size = write_safetensors(path, tensors, metadata={"format": "pt"})
    assert size == os.path.getsize(path)
    got, meta = read_safetensors(path, with_metadata=True)
    assert meta == {"format": "pt"}
    assert list(got) == list(tensors)
    for name, want in tensors.items():
        want = np.asarray(want)
        assert got[name].shape == want.shape, name
        assert got[name].dtype == want.dtype, name
        assert got[name].tobytes() == want.tobytes(), name
    assert got["bf16"].dtype.metadata["safetensors"] == "BF16"
    # The layout nnx's C++ writer uses: the data region and every tensor
    # start at a multiple of 64 bytes.
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert (8 + n) % ALIGNMENT == 0
    header = json.loads(raw[8:8 + n])
    dtypes = {k: v["dtype"] for k, v in header.items() if k != "__metadata__"}
    assert dtypes["bf16"] == "BF16" and dtypes["bool"] == "BOOL"
    assert dtypes["u8"] == "U8" and dtypes["f64"] == "F64"
    for k, v in header.items():
        if k != "__metadata__":
            assert v["data_offsets"][0] % ALIGNMENT == 0, k
    # Writing what was read gives the same file.
    again = tmp_path / "again.safetensors"
    write_safetensors(again, got, metadata=meta)
    assert again.read_bytes() == raw
    assert read_header(path)[0]["f32"] == ("F32", (3, 5))


def test_torch_tensors_bf16_and_byte_order(tmp_path):
    torch = pytest.importorskip("torch")
    t = torch.randn(4, 3).to(torch.bfloat16)
    big = np.arange(6, dtype=">f4").reshape(2, 3)
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    path = tmp_path / "t.safetensors"
    write_safetensors(path, {"bf": t, "big": big, "strided": strided})
    got = read_safetensors(path)
    assert got["bf"].dtype == BF16
    back = torch.from_numpy(got["bf"].view(np.int16)).view(torch.bfloat16)
    assert torch.equal(back, t)
    assert got["big"].dtype == np.dtype("<f4")
    np.testing.assert_array_equal(got["big"], big)
    np.testing.assert_array_equal(got["strided"], strided)


def test_writer_refusals_leave_the_old_file(tmp_path):
    path = tmp_path / "t.safetensors"
    write_safetensors(path, {"a": np.ones(2, np.float32)})
    before = path.read_bytes()
    with pytest.raises(SafeTensorsError, match="tensor 'u': dtype uint16"):
        write_safetensors(path, {"a": np.ones(2), "u": np.ones(2, np.uint16)})
    with pytest.raises(SafeTensorsError, match="__metadata__"):
        write_safetensors(path, {"__metadata__": np.ones(2)})
    with pytest.raises(SafeTensorsError, match="non-empty str"):
        write_safetensors(path, {"": np.ones(2)})
    with pytest.raises(SafeTensorsError, match="map str to str"):
        write_safetensors(path, {"a": np.ones(2)}, metadata={"n": 1})
    with pytest.raises(TypeError, match="16-bit"):
        bf16_bits(np.ones(2, np.float32))
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["t.safetensors"]  # no temporary left


def _raw_file(path, header, data=b"", pad=True):
    """A safetensors file with `header` (a dict, or raw bytes) as given."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        text += b" " * (-(8 + len(text)) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


F32x2 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


@pytest.mark.parametrize("header, data, message", [
    (b"[1, 2]", b"", "a JSON list, not an object"),
    (b"{\"a\": ", b"", "not valid JSON"),
    (b"\xff\xfe{}", b"", "not valid JSON"),
    (b'{"a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]},'
     b' "a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}', b"",
     "duplicate key 'a'"),
    ({"a": F32x2}, b"\0" * 4, r"tensor 'a': data_offsets \[0, 8\] are outside "
     r"the data region of 4 bytes"),
    ({"a": dict(F32x2, shape=[3])}, b"\0" * 8, "8 bytes for F32 \\[3\\], which needs 12"),
    ({"a": dict(F32x2, dtype="F7")}, b"\0" * 8, "unknown dtype 'F7'"),
    ({"a": dict(F32x2, shape=[-2])}, b"\0" * 8, "not a list of non-negative"),
    ({"a": dict(F32x2, data_offsets=[8, 0])}, b"\0" * 8, "outside the data region"),
    ({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8, "exactly dtype, shape"),
    ({"a": F32x2, "b": dict(F32x2, data_offsets=[4, 12])}, b"\0" * 12,
     r"tensors 'a' \[0, 8\] and 'b' \[4, 12\] overlap"),
    ({"a": F32x2, "__metadata__": {"k": 1}}, b"\0" * 8, "__metadata__ is not"),
    ({"a": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\1\2",
     "BOOL bytes other than 0 and 1"),
])
def test_reader_rejects_malformed_files(tmp_path, header, data, message):
    path = _raw_file(tmp_path / "bad.safetensors", header, data)
    with pytest.raises(SafeTensorsError, match=message) as e:
        read_safetensors(path)
    assert str(e.value).startswith(str(path) + ": ")


def test_reader_rejects_every_truncation(tmp_path):
    path = tmp_path / "t.safetensors"
    write_safetensors(path, {"a": np.arange(10, dtype=np.float32),
                             "b": np.arange(3, dtype=np.int64)})
    raw = path.read_bytes()
    cut = tmp_path / "cut.safetensors"
    for n in sorted({0, 4, 7, 8, 9, 50, len(raw) // 2, len(raw) - 1}):
        cut.write_bytes(raw[:n])
        with pytest.raises(SafeTensorsError,
                           match="too short|header length|outside the data"):
            read_safetensors(cut)
    # A header length far beyond the file.
    cut.write_bytes(struct.pack("<Q", 1 << 60) + raw[8:])
    with pytest.raises(SafeTensorsError, match="exceeds the file"):
        read_safetensors(cut)


# -- the exporter and nnx-run -------------------------------------------------

try:
    import torch
    from torch import nn

    from nnx import torch_export
    from nnx.torch_export import Exporter, ExportError, export, write
except ImportError:  # pragma: no cover - depends on the machine
    torch = None
from nnx import tools  # noqa: E402

# The tests below export PyTorch models; the ones above need only numpy.
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def mlp(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).eval()


def embed_norm(seed):
    torch.manual_seed(seed)
    ln = nn.LayerNorm(8, eps=1e-5)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    return nn.Sequential(collections.OrderedDict(
        emb=nn.Embedding(20, 8, padding_idx=3), norm=ln, fc=nn.Linear(8, 4),
        act=nn.Tanh())).eval()


def batch_norm(seed):
    torch.manual_seed(seed)
    bn = nn.BatchNorm1d(10)
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2.0)
    return nn.Sequential(nn.Linear(6, 10), bn, nn.ReLU(), nn.Linear(10, 3)).eval()


MODELS = {
    "mlp": (mlp, lambda: np.random.default_rng(1).standard_normal((5, 6))
            .astype(np.float32)),
    "embed_norm": (embed_norm, lambda: np.random.default_rng(2)
                   .integers(0, 20, size=(4, 7)).astype(np.int64)),
    "batch_norm": (batch_norm, lambda: np.random.default_rng(3)
                   .standard_normal((5, 6)).astype(np.float32)),
}


def spec(x):
    return [((None,) + x.shape[1:], torch.from_numpy(x).dtype)]


def reference(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def nnx_run(model_path, x, *extra, check=True, cwd=None):
    """Runs the built nnx-run on the model file; returns (output, process).
    Runs from `cwd` (default: the root directory, so that a relative weights
    path can only be found relative to the model file)."""
    model_path = os.path.abspath(model_path)
    base = os.path.splitext(model_path)[0]
    np.save(base + ".in.npy", x)
    out = base + ".out.npy"
    if os.path.exists(out):
        os.unlink(out)
    proc = subprocess.run([tools.tool_path("nnx-run"), model_path, "--input",
                           base + ".in.npy", "--output", out] + list(extra),
                          capture_output=True, text=True, cwd=cwd or "/")
    if check:
        assert proc.returncode == 0, proc.stderr
        return np.load(out), proc
    return None, proc


@needs_torch
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_external_weights_run_like_torch(tmp_path, kind):
    build, inputs = MODELS[kind]
    model, x = build(0), inputs()
    path = tmp_path / "m.mlir"
    text = write(model, path, spec(x), name=kind, weights="m.safetensors")
    assert text == path.read_text()
    assert (f"nnx.model @{kind} inputs(" in text
            and ') attributes {weights = "m.safetensors"} {' in text)
    assert "dense_resource" not in text and "dialect_resources" not in text
    first = next(iter(model.state_dict()))
    assert f'#nnx.external<"{first}"> : tensor<' in text
    # The file holds every exported tensor under its state_dict name.
    stored = read_safetensors(tmp_path / "m.safetensors")
    state = model.state_dict()
    assert set(stored) == {k for k in state if not k.endswith("num_batches_tracked")}
    for k, v in stored.items():
        assert v.tobytes() == state[k].numpy().tobytes(), k
    got, _ = nnx_run(path, x)
    want = reference(model, x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **TOL)


@needs_torch
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_inline_and_external_give_identical_outputs(tmp_path, kind):
    build, inputs = MODELS[kind]
    model, x = build(1), inputs()
    write(model, tmp_path / "inline.mlir", spec(x), weights=False)
    write(model, tmp_path / "ext.mlir", spec(x), weights="ext.safetensors")
    assert "dense_resource" in (tmp_path / "inline.mlir").read_text()
    assert not (tmp_path / "inline.safetensors").exists()
    a, _ = nnx_run(tmp_path / "inline.mlir", x)
    b, _ = nnx_run(tmp_path / "ext.mlir", x)
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@needs_torch
@pytest.mark.parametrize("mode", ["external", "inline"])
@pytest.mark.parametrize("kind", ["mlp", "embed_norm", "batch_norm"])
def test_weights_flag_runs_another_checkpoint(tmp_path, kind, mode):
    """--weights looks parameters up by #nnx.external key, or by dotted name
    for inline tensors; both are the state_dict names. The full state_dict
    (BatchNorm's num_batches_tracked too, which nnx does not use) is given."""
    build, inputs = MODELS[kind]
    first, second, x = build(2), build(3), inputs()
    path = tmp_path / "m.mlir"
    write(first, path, spec(x), weights="m.safetensors" if mode == "external"
          else False)
    write_safetensors(tmp_path / "second.safetensors", second.state_dict())
    got, _ = nnx_run(path, x, "--weights", str(tmp_path / "second.safetensors"))
    np.testing.assert_allclose(got, reference(second, x), **TOL)
    assert not np.allclose(got, reference(first, x), **TOL)


@needs_torch
@pytest.mark.parametrize("damage, message", [
    ("missing", "no tensor '2.bias'"),
    ("shape", "tensor '2.bias' is F32 of shape \\(5,\\)"),
    ("dtype", "tensor '2.bias' is F64 of shape \\(3,\\)"),
])
def test_weights_flag_refuses_a_mismatched_checkpoint(tmp_path, damage, message):
    x = MODELS["mlp"][1]()
    path = tmp_path / "m.mlir"
    write(mlp(4), path, spec(x), weights="m.safetensors")
    state = dict(mlp(5).state_dict())
    if damage == "missing":
        del state["2.bias"]
    elif damage == "shape":
        state["2.bias"] = torch.zeros(5)
    else:
        state["2.bias"] = state["2.bias"].double()
    bad = tmp_path / f"{damage}.safetensors"
    write_safetensors(bad, state)
    _, proc = nnx_run(path, x, "--weights", str(bad), check=False)
    assert proc.returncode != 0
    assert bad.name in proc.stderr and "'2.bias'" in proc.stderr
    assert re.search(message, proc.stderr), proc.stderr


@needs_torch
def test_automatic_mode_switches_at_the_threshold(tmp_path, monkeypatch):
    model, x = mlp(6), MODELS["mlp"][1]()
    nbytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    assert Exporter().add_model(model, spec(x)).tensor_bytes() == nbytes
    # At the limit: inline (automatic is `<=`), and no weights file.
    monkeypatch.setattr(torch_export, "INLINE_WEIGHTS_LIMIT", nbytes)
    text = write(model, tmp_path / "small.mlir", spec(x))
    assert "dense_resource" in text and "#nnx.external" not in text
    assert not (tmp_path / "small.safetensors").exists()
    assert "dense_resource" in export(model, spec(x))
    # One byte above: external, <stem>.safetensors next to the .mlir.
    monkeypatch.setattr(torch_export, "INLINE_WEIGHTS_LIMIT", nbytes - 1)
    sub = tmp_path / "out"
    sub.mkdir()
    text = write(model, sub / "big.mlir", spec(x))
    assert 'attributes {weights = "big.safetensors"}' in text
    assert "dense_resource" not in text
    assert set(read_safetensors(sub / "big.safetensors")) == set(model.state_dict())
    got, _ = nnx_run(sub / "big.mlir", x)
    np.testing.assert_allclose(got, reference(model, x), **TOL)
    # weights=False still inlines; export() to a string refuses instead of
    # writing a file it has no directory for.
    assert "dense_resource" in write(model, tmp_path / "f.mlir", spec(x),
                                     weights=False)
    with pytest.raises(ExportError, match="INLINE_WEIGHTS_LIMIT"):
        export(model, spec(x))
    assert "dense_resource" in export(model, spec(x), weights=False)


@needs_torch
def test_weights_true_and_paths(tmp_path, monkeypatch):
    model, x = mlp(7), MODELS["mlp"][1]()
    text = write(model, tmp_path / "named.mlir", spec(x), weights=True)
    assert 'weights = "named.safetensors"' in text
    assert (tmp_path / "named.safetensors").exists()
    # A relative path is relative to the .mlir's directory, written as given.
    (tmp_path / "w").mkdir()
    monkeypatch.chdir(tmp_path / "w")
    text = write(model, tmp_path / "rel.mlir", spec(x), weights="w/rel.safetensors")
    assert 'weights = "w/rel.safetensors"' in text
    assert (tmp_path / "w" / "rel.safetensors").exists()
    assert not (tmp_path / "w" / "w").exists()
    np.testing.assert_allclose(nnx_run(tmp_path / "rel.mlir", x)[0],
                               reference(model, x), **TOL)
    # export() with a path: the file is written there (relative to the
    # current directory) and the IR names it by its absolute path, so the
    # text runs from anywhere (tools.nnx_run saves it in a temporary dir).
    text = export(model, spec(x), weights="s.safetensors")
    absolute = str(tmp_path / "w" / "s.safetensors")
    assert f'weights = "{absolute}"' in text
    got, _ = tools.nnx_run(text, [x])
    np.testing.assert_allclose(got, reference(model, x), **TOL)
    with pytest.raises(ExportError, match="needs a file name"):
        export(model, spec(x), weights=True)


@needs_torch
def test_several_models_share_one_file_with_prefixed_keys(tmp_path):
    a, b, x = mlp(8), mlp(9), MODELS["mlp"][1]()
    ex = Exporter().add_model(a, spec(x), name="a").add_model(b, spec(x), name="b")
    text = ex.write(tmp_path / "two.mlir", weights="two.safetensors")
    assert text.count('attributes {weights = "two.safetensors"}') == 2
    assert '#nnx.external<"a/0.weight">' in text and '#nnx.external<"b/2.bias">' in text
    stored = read_safetensors(tmp_path / "two.safetensors")
    assert set(stored) == {f"{m}/{k}" for m in "ab" for k in a.state_dict()}
    for name, model in (("a", a), ("b", b)):
        got, _ = nnx_run(tmp_path / "two.mlir", x, "--model", name)
        np.testing.assert_allclose(got, reference(model, x), **TOL)
    with pytest.raises(ExportError, match="already added"):
        ex.add_model(a, spec(x), name="a")


@needs_torch
def test_tied_weights_are_stored_once(tmp_path):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(6, 6)
            self.act = nn.ReLU()
            self.b = nn.Linear(6, 6)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.act(self.a(x)))

    torch.manual_seed(10)
    model, x = Tied().eval(), MODELS["mlp"][1]()
    text = write(model, tmp_path / "t.mlir", spec(x), weights="t.safetensors")
    assert text.count('#nnx.external<"a.weight">') == 2
    assert set(read_safetensors(tmp_path / "t.safetensors")) == {
        "a.weight", "a.bias", "b.bias"}
    got, _ = nnx_run(tmp_path / "t.mlir", x)
    np.testing.assert_allclose(got, reference(model, x), **TOL)
    inline = write(model, tmp_path / "i.mlir", spec(x), weights=False)
    assert inline.count("dense_resource<model_a_weight>") == 2
    assert nnx_run(tmp_path / "i.mlir", x)[0].tobytes() == got.tobytes()


@needs_torch
def test_the_models_own_weights_file_is_checked(tmp_path):
    """The weights file the IR names is checked like a --weights one: a
    tensor of the wrong shape is an error naming the tensor and the file."""
    x = MODELS["mlp"][1]()
    path = tmp_path / "m.mlir"
    write(mlp(11), path, spec(x), weights="m.safetensors")
    state = read_safetensors(tmp_path / "m.safetensors")
    state["0.weight"] = state["0.weight"][:, :5].copy()
    write_safetensors(tmp_path / "m.safetensors", state)
    _, proc = nnx_run(path, x, check=False)
    assert proc.returncode != 0
    assert "m.safetensors" in proc.stderr and "'0.weight'" in proc.stderr
    assert "(16, 5)" in proc.stderr, proc.stderr


@needs_torch
def test_bindings_count_external_parameters_without_the_file(tmp_path):
    _nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")
    model, x = embed_norm(12), MODELS["embed_norm"][1]()
    text = export(model, spec(x), weights=str(tmp_path / "e.safetensors"))
    (tmp_path / "e.safetensors").unlink()  # the types are in the IR
    parsed = _nnx.Model.parse(text)
    assert parsed.param_count() == sum(p.numel() for p in model.parameters())
    assert parsed.lookup("norm")["tensors"] == ["weight", "bias"]
