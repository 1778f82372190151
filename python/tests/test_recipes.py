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


# -----------------------------------------------------------------------------
# nnx.transforms: the seed's §8 recipes on PyTorch modules
# -----------------------------------------------------------------------------

torch = pytest.importorskip("torch")
import collections  # noqa: E402
import pickle  # noqa: E402

from torch import nn  # noqa: E402

from nnx.peft import LoraLinear  # noqa: E402
from nnx.transforms import (RecipeError, TransformRecipe,  # noqa: E402
                            check_optimizer, lora, low_rank, recorded_recipe)


def named_mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(collections.OrderedDict(
        fc1=nn.Linear(8, 16), act=nn.ReLU(), fc2=nn.Linear(16, 12),
        act2=nn.ReLU(), head=nn.Linear(12, 3))).eval()


def snapshot(net):
    return ({k: v.clone() for k, v in net.state_dict().items()},
            [(n, type(m)) for n, m in net.named_modules()])


def assert_unchanged(net, snap):
    state, modules = snap
    assert [(n, type(m)) for n, m in net.named_modules()] == modules
    for k, v in net.state_dict().items():
        assert torch.equal(v, state[k]), k


def test_recipes_equal_hash_and_pickle_by_value():
    ops = [lora("fc1", r=4, alpha=8.0), low_rank("head", rank=2)]
    a = TransformRecipe(ops)
    b = TransformRecipe([lora("fc1", r=4, alpha=8.0), low_rank("head", rank=2)])
    assert a == b and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == a
    ops.append(lora("fc2", r=1, alpha=1.0))  # the recipe copied the list
    assert len(a.operations) == 2
    with pytest.raises(Exception):
        a.operations[0].config = ()  # read-only
    assert a != TransformRecipe(a.operations, materialization="fresh")
    with pytest.raises(ValueError, match="materialization"):
        TransformRecipe([], materialization="later")
    with pytest.raises(TypeError, match="not an Operation"):
        TransformRecipe(["lora"])


def test_in_place_materialize_keeps_the_function_and_records():
    net = named_mlp()
    x = torch.randn(5, 8)
    want = net(x).detach()
    recipe = TransformRecipe([lora(["fc1", "fc2"], r=4, alpha=8.0),
                              low_rank("head", rank=3)])
    recipe.validate(net)
    assert isinstance(net.fc1, nn.Linear)  # validate mutates nothing
    assert recipe.materialize(net) is net
    assert isinstance(net.fc1, LoraLinear) and net.fc1.r == 4
    assert isinstance(net.head, nn.Sequential) and len(net.head) == 2
    # lora_B starts at zero; rank 3 = min(12, 3) is exact.
    torch.testing.assert_close(net(x).detach(), want, atol=1e-5, rtol=1e-5)
    assert torch.count_nonzero(net.fc1.lora_B) == 0
    assert torch.count_nonzero(net.fc1.lora_A) > 0
    flags = {k: p.requires_grad for k, p in net.named_parameters()}
    assert flags["fc1.weight"] is False and flags["fc1.bias"] is False
    assert flags["fc1.lora_A"] and flags["fc1.lora_B"]
    assert flags["head.0.weight"] and flags["head.1.bias"]
    assert list(net.state_dict())[:4] == ["fc1.weight", "fc1.bias",
                                          "fc1.lora_A", "fc1.lora_B"]
    assert recorded_recipe(net) == recipe


def test_a_refusal_names_every_problem_and_changes_nothing():
    net = named_mlp()
    TransformRecipe([lora("fc1", r=2, alpha=4.0)]).materialize(net)
    snap, rng = snapshot(net), torch.get_rng_state()
    bad = TransformRecipe([lora("nope", r=2, alpha=1.0),
                           lora("act", r=1, alpha=1.0),
                           low_rank("fc2", rank=99),
                           lora("fc1", r=1, alpha=1.0)])
    with pytest.raises(RecipeError) as err:
        bad.materialize(net)
    text = str(err.value)
    assert "operation 1 ('lora'), target 'nope': names no module" in text
    assert "operation 2 ('lora'), target 'act': is not exactly a Linear" in text
    assert "operation 3 ('low_rank'), target 'fc2'" in text and "99" in text
    assert "operation 4 ('lora'), target 'fc1'" in text
    assert len(err.value.problems) >= 4
    assert_unchanged(net, snap)
    assert torch.equal(torch.get_rng_state(), rng)
    assert len(recorded_recipe(net).operations) == 1


def test_unrecorded_surgery_after_a_recipe_is_refused():
    net = named_mlp()
    TransformRecipe([lora("fc1", r=2, alpha=4.0)]).materialize(net)
    net.head = nn.Linear(12, 5)  # resized outside the recipe
    with pytest.raises(RecipeError, match="differs from base"):
        TransformRecipe([low_rank("fc2", rank=2)]).validate(net)


def test_fresh_materialization_leaves_the_model_alone():
    net = named_mlp()
    snap = snapshot(net)
    fresh = TransformRecipe([lora("fc2", r=2, alpha=2.0)],
                            materialization="fresh").materialize(net, seed=7)
    assert fresh is not net and isinstance(fresh.fc2, LoraLinear)
    assert_unchanged(net, snap)
    assert not torch.equal(fresh.fc1.weight, net.fc1.weight)  # re-initialized
    assert recorded_recipe(net).operations == ()


def test_optimizers_built_before_the_recipe_are_refused():
    net = named_mlp()
    early = torch.optim.Adam(net.parameters())
    with pytest.raises(RecipeError, match="optimizer 0 already holds the "
                       "parameters of operation 0 \\('lora'\\), target 'fc1'"):
        TransformRecipe([lora("fc1", r=2, alpha=2.0)]).materialize(
            net, optimizers=[early])
    assert isinstance(net.fc1, nn.Linear)


def test_check_optimizer():
    net = named_mlp()
    stale = torch.optim.Adam(net.head.parameters())
    TransformRecipe([lora("fc1", r=2, alpha=2.0),
                     low_rank("head", rank=2)]).materialize(net)
    with pytest.raises(RecipeError, match="replaced"):
        check_optimizer(net, stale)
    base_only = torch.optim.SGD([net.fc1.weight], lr=0.1)
    with pytest.raises(RecipeError, match="frozen base weights of the LoRA "
                       "target 'fc1' but none of its adapter"):
        check_optimizer(net, base_only)
    temperature = nn.Parameter(torch.ones(()))
    check_optimizer(net, torch.optim.Adam(
        [p for p in net.parameters() if p.requires_grad] + [temperature]))
    check_optimizer(net, torch.optim.Adam([net.fc1.lora_A]))  # a subset


def test_training_a_lora_net_moves_only_the_adapters():
    net = named_mlp()
    TransformRecipe([lora(["fc1", "fc2"], r=4, alpha=8.0)]).materialize(net)
    base = net.fc1.weight.clone()
    opt = torch.optim.Adam([p for p in net.parameters() if p.requires_grad],
                           lr=1e-2)
    check_optimizer(net, opt)
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    assert torch.equal(net.fc1.weight, base)
    assert torch.count_nonzero(net.fc1.lora_B) > 0


def test_a_lora_net_exports_and_runs_compiled():
    nnx = pytest.importorskip("nnx")
    net = named_mlp()
    TransformRecipe([lora("fc1", r=3, alpha=6.0)]).materialize(net)
    with torch.no_grad():
        net.fc1.lora_B.normal_()
    run = nnx.compile(net, inputs=[(None, 8)], threads=1)
    x = torch.randn(4, 8)
    torch.testing.assert_close(run(x)[0], net(x).detach(), atol=1e-5,
                               rtol=1e-5)


def test_feed_fwd_layers_are_refused_as_the_compiler_refuses_them():
    from nnx.nets import FeedFwdNN
    net = FeedFwdNN(8, [16], 3)
    with pytest.raises(RecipeError, match="is a layer of a feed_fwd"):
        TransformRecipe([lora("layers.0", r=2, alpha=2.0)]).validate(net)
