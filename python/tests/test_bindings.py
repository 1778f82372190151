"""nnx._nnx: the pybind11 bindings over the C++ API."""

import os

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                        "examples")

_nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")

MODEL = """
nnx.model @cls inputs(tensor<?x4xf32>) {
  nnx.sequential @body keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.0> : tensor<8xf32>}
    nnx.relu @relu {train}
    nnx.linear @head {weight = dense<0.25> : tensor<2x8xf32>}
  }
}
nnx.model @res inputs(tensor<?x8xf32>) {
  nnx.module @block class = "ResidualBlock" {
    nnx.layer_norm @norm {normalized_shape = array<i64: 8>, weight = dense<1.0> : tensor<8xf32>}
    nnx.module_list @h {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x8xf32>}
    }
    nnx.alias @tied = @h::@"0"
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %p = nnx.call @tied(%h) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %y = arith.addf %x, %p {nnx.source = "add_0"} : tensor<?x8xf32>
      nnx.return %y : tensor<?x8xf32>
    }
  }
}
"""


@pytest.fixture
def model():
    return _nnx.Model.parse(MODEL)


def test_models_and_param_count(model):
    assert model.models == ["cls", "res"]
    assert model.param_count() == 8 * 4 + 8 + 2 * 8  # first model by default
    assert model.param_count("fc", model="cls") == 40
    assert model.param_count("head", model="cls") == 16
    # The aliased Linear is counted once.
    assert model.param_count(model="res") == 8 + 64
    assert model.param_count("h.0", model="res") == 64


def test_lookup(model):
    fc = model.lookup("fc")
    assert fc["kind"] == "nnx.linear"
    assert fc["path"] == "fc" and fc["key"] == "fc"
    assert fc["params"] == 40 and fc["tensors"] == ["weight", "bias"]
    assert fc["alias"] is False and fc["train"] is False
    assert model.lookup("relu")["train"] is True
    root = model.lookup("")
    assert root["kind"] == "nnx.sequential"
    assert root["children"] == ["fc", "relu", "head"]
    tied = model.lookup("tied", model="res")
    assert tied["alias"] is True and tied["kind"] == "nnx.linear"
    assert tied["target"] == "h.0"
    with pytest.raises(KeyError, match="nope"):
        model.lookup("nope")
    with pytest.raises(KeyError, match="@missing"):
        model.lookup("", model="missing")


def test_run_pipeline_returns_ir_and_keeps_model_on_failure(model):
    before = str(model)
    out = model.run_pipeline("builtin.module(canonicalize)")
    assert "nnx.model @cls" in out
    assert str(model) == out
    with pytest.raises(ValueError, match="invalid pass pipeline"):
        model.run_pipeline("no-such-pass")
    assert "nnx.model @res" in str(model)
    assert before.count("nnx.linear") == str(model).count("nnx.linear")


def test_pipeline_failure_carries_diagnostics(model):
    with pytest.raises(ValueError, match="bogus"):
        model.run_pipeline("canonicalize{bogus=1}")
    lazy = _nnx.Model.parse(
        'nnx.model @a inputs(tensor<?x4xf32>) {\n'
        '  nnx.linear @l {lazy, out_features = 3}\n}\n', "lazy.mlir")
    before = str(lazy)
    with pytest.raises(_nnx.Error) as e:
        lazy.run_pipeline("nnx-build-forward")
    msg = str(e.value)
    assert "pipeline 'nnx-build-forward' failed" in msg
    assert "lazy.mlir:2:3: error:" in msg and "uninitialized lazy layer" in msg
    assert str(lazy) == before


def test_errors_carry_their_kind_as_data():
    """Each error diagnostic's kind (nnx/Support/ErrorKind.h) reaches
    Python as data, `e.kinds`: the surgery API picks its exception class
    from it, not from the message text."""
    text = open(os.path.join(EXAMPLES, "mlp.mlir")).read()
    mlp = _nnx.Model.parse(text, "mlp.mlir")
    with pytest.raises(_nnx.Error) as e:
        mlp.run_pipeline("nnx-deepen{after=act2}")  # a tanh, not a ReLU
    assert e.value.kinds == ["type_error"]
    assert "type error" in e.value.diagnostics
    with pytest.raises(_nnx.Error) as e:
        mlp.run_pipeline("nnx-widen{layer=nope width=12}")
    assert e.value.kinds == ["refusal"]


def test_pipeline_runs_nnx_passes(model):
    fwd = _nnx.Model.parse(MODEL).run_pipeline("nnx-build-forward")
    assert "func.func" in fwd and "linalg" in fwd
    cls = _nnx.Model.parse(MODEL.split("nnx.model @res")[0])
    widened = cls.run_pipeline("nnx-widen{layer=fc width=12 seed=1}, canonicalize")
    assert "tensor<12x4xf32>" in widened
    assert cls.lookup("fc")["params"] == 12 * 4 + 12
    assert cls.param_count() == 12 * 4 + 12 + 2 * 12
    with pytest.raises(ValueError, match="no pass or pipeline named 'nope'"):
        cls.run_pipeline("canonicalize,nope")


def test_parse_errors_carry_diagnostics(tmp_path):
    bad = MODEL.replace("tensor<8x4xf32>, bias", "tensor<8x5xf32>, bias")
    with pytest.raises(_nnx.Error) as e:
        _nnx.Model.parse(bad, "bad.mlir")
    msg = str(e.value)
    assert "bad.mlir" in msg and "error" in msg
    with pytest.raises(_nnx.Error, match="expected"):
        _nnx.parse("nnx.model @m inputs(")
    with pytest.raises(_nnx.Error, match="no 'nnx.model'"):
        _nnx.parse("")
    with pytest.raises(ValueError, match="cannot read"):
        _nnx.parse_file(str(tmp_path / "missing.mlir"))
    p = tmp_path / "m.mlir"
    p.write_text(MODEL)
    assert _nnx.parse_file(str(p)).models == ["cls", "res"]


CONCAT_NEGATIVE_DIM = """
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = tensor.concat dim(-1) %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
"""


def test_parser_crash_is_an_error_not_a_dead_interpreter():
    """MLIR 22.1's parser crashes on `tensor.concat dim(-1)`; the tools
    contain it, and so does nnx._nnx.parse: an error, twice in a row, and
    the interpreter parses on."""
    for _ in range(2):
        with pytest.raises(_nnx.Error, match="parser crashed reading 'concat.mlir'"):
            _nnx.parse(CONCAT_NEGATIVE_DIM, "concat.mlir")
    assert _nnx.parse(MODEL).models == ["cls", "res"]
