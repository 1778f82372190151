"""Recipes through the bindings: validate / materialize / rebuild raise
nnx._nnx.Error carrying the diagnostics' text."""

import re

import pytest

_nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")

RECIPE = ('#nnx.recipe<materialization = in_place, materialized = 0, '
          'operations = [#nnx.recipe_op<id = "lora", version = 1, '
          'targets = [%s], config = {r = %d : i64, alpha = 2.0 : f64}>]>')


def model_text(targets='"fc"', r=1):
    return """
nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.recipe = %s} {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<3x4xf32>}
    nnx.relu @act
  }
}
""" % (RECIPE % (targets, r))


def test_validate_materialize_rebuild():
    model = _nnx.Model.parse(model_text())
    model.record_base()
    model.validate_recipe()
    text = model.materialize_recipe(seed=3)
    assert "nnx.lora @fc" in text
    assert "materialized = 1" in text
    assert "shapes = [tensor<3x4xf32>]" in text
    assert model.rebuild() == text


def test_validate_reports_every_problem():
    model = _nnx.Model.parse(model_text('"nope", "act"', r=9))
    model.record_base()
    before = str(model)
    with pytest.raises(_nnx.Error) as err:
        model.validate_recipe()
    message = str(err.value)
    assert ("operation 0 ('lora'), target 'nope': names no module" in
            message)
    assert ("operation 0 ('lora'), target 'act': is not exactly a Linear"
            in message)
    # Materialization refuses with the same text and changes nothing.
    with pytest.raises(_nnx.Error) as err:
        model.materialize_recipe()
    assert "nnx-materialize-recipe: operation 0 ('lora'), target 'nope'" in \
        str(err.value)
    assert str(model) == before


def test_descriptor_less_model_is_refused():
    model = _nnx.Model.parse(model_text())
    with pytest.raises(_nnx.Error) as err:
        model.validate_recipe()
    assert "has no base descriptor" in str(err.value)
    assert "use the surgery passes directly" in str(err.value)


def test_rebuild_refuses_weights_without_their_recipe():
    model = _nnx.Model.parse(model_text())
    model.record_base()
    text = model.materialize_recipe()
    # The recipe is dropped from the checkpoint: the LoRA weights remain.
    without = re.sub(r", nnx\.recipe = #nnx\.recipe<.*?\]>\} \{", "} {", text,
                     count=1)
    assert "nnx.lora @fc" in without and "recipe" not in without
    stripped = _nnx.Model.parse(without)
    with pytest.raises(_nnx.Error) as err:
        stripped.rebuild()
    assert "transformed without their recipe" in str(err.value)
