"""Recorded recipes from Python, as the seed's §8 writes them::

    from nnx.transforms import TransformRecipe, check_optimizer, lora, low_rank

    recipe = TransformRecipe([lora("layers.0", r=4, alpha=8.0),
                              low_rank("layers.1", rank=4)],
                             materialization="in_place")
    recipe.validate(net)              # mutates nothing; one RecipeError
    recipe.materialize(net)           # transactional; the operations are recorded
    optimizer = torch.optim.Adam(p for p in net.parameters() if p.requires_grad)
    check_optimizer(net, optimizer)

A recipe is data: operations (``lora`` / ``low_rank``, version 1, explicit
dotted targets, a read-only config) that equal, hash and pickle by value.
The checks and the transformation are the compiler's
(``nnx-validate-recipe``, ``nnx-materialize-recipe``; docs/Recipes.md): the
net is exported with its base descriptor (``nnx-record-base`` of
``Net.from_params(net.params)``) and every operation recorded so far, the
pass runs, and the targets of the new operations are replaced in the net by
what the pass built (:class:`nnx.peft.LoraLinear`, or a two-Linear
``nn.Sequential``), with its flags and modes. A refusal raises
:class:`RecipeError` listing every problem, with the compiler's text, and
changes nothing (the net, its recorded recipe, the global RNG).

Which nets: any module nnx exports whose input its first layer tells
(:mod:`nnx.surgery`'s rule). The IR's base descriptor describes the whole
module tree, so, unlike the seed's runtime-only ``module=``, any such net
can be rebuilt: the base is recorded on the net at its first
materialization, with the operations (:func:`recorded_recipe`), and the
compiler refuses a net that has since changed outside its recipe. The
layers of a :class:`~nnx.nets.FeedFwdNN` / :class:`~nnx.nets.ConvNN` are
refused as targets, as the compiler refuses them (their ``params`` describe
them as Linears): recipes go on ``nn.Sequential``-built nets.
"""

import dataclasses
import weakref

import torch

from . import _nnx
from torch import nn

from .surgery import _Edit, _infer_input, diagnostic_message
from .runtime import parse_module
from .torch_export import _f64

__all__ = ["TransformRecipe", "Operation", "RecipeError", "lora", "low_rank",
           "check_optimizer", "recorded_recipe"]

MATERIALIZATIONS = ("in_place", "fresh")


class RecipeError(ValueError):
    """A recipe, model or optimizer refused; the message names every
    problem (one line each)."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclasses.dataclass(frozen=True)
class Operation:
    """One recipe operation: `id` ("lora" / "low_rank"), `version`, the
    dotted `targets` (as given: the validator names a malformed one) and a
    read-only `config` ((name, value) pairs, sorted)."""

    id: str
    version: int
    targets: tuple
    config: tuple

    def __post_init__(self):
        object.__setattr__(self, "targets", tuple(self.targets))
        items = self.config.items() if isinstance(self.config, dict) \
            else self.config
        object.__setattr__(self, "config", tuple(sorted(items)))

    @property
    def options(self):
        return dict(self.config)

    def to_ir(self):
        """The operation as ``#nnx.recipe_op<...>`` text."""
        targets = ", ".join(_target_text(t) for t in self.targets)
        config = ", ".join(f"{k} = {_config_text(v)}" for k, v in self.config)
        return (f'#nnx.recipe_op<id = {_quote(self.id)}, version = '
                f'{int(self.version)}, targets = [{targets}], '
                f'config = {{{config}}}>')


def _targets(target):
    return (target,) if isinstance(target, str) else tuple(target)


def lora(target, *, r, alpha):
    """LoRA (rank `r`, scaling `alpha / r`) on the Linear(s) at `target` (a
    dotted path, or a list of them)."""
    return Operation("lora", 1, _targets(target), {"r": r, "alpha": alpha})


def low_rank(target, *, rank):
    """SVD low-rank replacement (rank `rank`) of the Linear(s) at `target`."""
    return Operation("low_rank", 1, _targets(target), {"rank": rank})


@dataclasses.dataclass(frozen=True)
class TransformRecipe:
    """An ordered list of operations and what they transform:
    ``"in_place"`` (the given net, keeping its weights) or ``"fresh"`` (a
    new, randomly initialized net built from its descriptor)."""

    operations: tuple
    materialization: str = "in_place"

    def __init__(self, operations, materialization="in_place"):
        ops = tuple(operations)
        for i, op in enumerate(ops):
            if not isinstance(op, Operation):
                raise TypeError(f"operation {i} is a {type(op).__name__}, "
                                "not an Operation (lora(...), low_rank(...))")
        if materialization not in MATERIALIZATIONS:
            raise ValueError(f"materialization must be one of "
                             f"{MATERIALIZATIONS}, got {materialization!r}")
        object.__setattr__(self, "operations", ops)
        object.__setattr__(self, "materialization", materialization)

    def validate(self, model):
        """Checks exactly what :meth:`materialize` would (on the fresh base
        for "fresh"); mutates nothing."""
        with torch.random.fork_rng(devices=[]):
            self._prepare(model, optimizers=())

    def materialize(self, model, *, optimizers=(), seed=None):
        """Applies the operations, all or nothing, and records them; returns
        the transformed net (`model` itself in place, else a new one).
        `optimizers`: each is refused if it already holds a target's
        parameters (build optimizers after the recipe). `seed`: of the new
        adapters' initialization (default: drawn from torch's RNG once the
        checks pass)."""
        # `weights` keeps the IR's weights file (a large net's) until done.
        net, ir, prior, weights = self._prepare(model, optimizers)
        if seed is None:
            seed = int(torch.randint(0, 2**31 - 1, ()).item())
        try:
            ir.run_pipeline(f"builtin.module(nnx-materialize-recipe{{seed="
                            f"{int(seed)}}})")
        except _nnx.Error as e:
            raise RecipeError(_problems(e)) from None
        recipe = TransformRecipe(prior + self.operations,
                                 self.materialization)
        if self.materialization == "fresh":
            # The compiler built `<name>_fresh` from the base, randomly
            # initialized, and applied every operation to it.
            net = _Edit.on_ir(model, ir, "model_fresh").result()
            _forget(net)
            _record(net, recipe, ir, "model_fresh")
            return net
        _apply(net, ir, self.operations)
        _record(net, recipe, ir)
        return net

    def _prepare(self, model, optimizers):
        """The net to transform, its IR with the recipe pending, the
        operations it had recorded and the IR's weights directory (or None);
        raises RecipeError for every problem the compiler or the
        optimizers show."""
        if not isinstance(model, nn.Module):
            raise TypeError(f"a recipe transforms an nn.Module, got "
                            f"{type(model).__name__}")
        net = model
        prior = recorded_recipe(net).operations
        ir, weights = _export_with_recipe(net, prior, self)
        problems = []
        try:
            ir.run_pipeline("builtin.module(nnx.model(nnx-validate-recipe))")
        except _nnx.Error as e:
            problems += _problems(e)
        problems += _optimizer_problems(net, self.operations, optimizers,
                                        start=len(prior))
        if problems:
            raise RecipeError(problems)
        return net, ir, prior, weights


def _forget(net):
    """Drops what `net` (a copy) recorded of its source's recipes."""
    for attr in ("_nnx_recipe", "_nnx_base", "_nnx_applied_ir",
                 "_nnx_replaced"):
        net.__dict__.pop(attr, None)


def recorded_recipe(net):
    """The operations `net` has materialized (an empty in-place recipe if
    none)."""
    return getattr(net, "_nnx_recipe", None) or TransformRecipe([])


def _record(net, recipe, ir, model_name=""):
    """Records on `net` the operations it has materialized, the IR's base
    descriptor and the applied operations' IR text."""
    net._nnx_recipe = recipe
    net._nnx_base = ir.get_attribute("nnx.base", model_name)
    text = ir.get_attribute("nnx.recipe", model_name)
    start = text.index("operations = [") + len("operations = [")
    net._nnx_applied_ir = text[start:text.rindex("]>")]


# -----------------------------------------------------------------------------
# The IR
# -----------------------------------------------------------------------------

def _export_with_recipe(net, prior, recipe):
    """`net` as IR with its base descriptor and the recipe: `prior` applied,
    `recipe`'s operations pending, and the directory of its weights file
    (keep it while the IR is used). The base is the structure the net had
    when its first recipe was materialized (recorded then, on the net);
    before that, the net's own."""
    ir, weights = _parse(net)
    base = getattr(net, "_nnx_base", None)
    if base is None:
        if prior:
            raise RecipeError(["the net records recipe operations but no "
                               "base descriptor"])
        ir.record_base()
    else:
        ir.set_attribute("nnx.base", base)
    # The applied operations as the compiler recorded them (with the
    # shapes of their targets), then the pending ones.
    ops = [getattr(net, "_nnx_applied_ir", "")] if prior else []
    ops += [op.to_ir() for op in recipe.operations]
    ir.set_attribute("nnx.recipe", (
        f"#nnx.recipe<materialization = {recipe.materialization}, "
        f"materialized = {len(prior)}, operations = [{', '.join(ops)}]>"))
    return ir, weights


def _parse(net):
    """`net` as a Model, and the directory of its weights file (or None)."""
    with torch.random.fork_rng(devices=[]):
        return parse_module(net, [_infer_input(net)], "<nnx.transforms>")


def _apply(net, ir, operations):
    """Replaces each target of `operations` in `net` by the module the IR
    now holds there (flags and modes as the pass set them)."""
    edit = _Edit.on_ir(net, ir)
    edit.state, edit.grad = ir.state_dict(), ir.requires_grad()
    replaced = _replaced_parameters(net)
    for op in operations:
        for target in op.targets:
            parent, _, key = target.rpartition(".")
            owner = net.get_submodule(parent) if parent else net
            old = owner._modules[key]
            replaced.update((id(p), weakref.ref(p)) for p in old.parameters())
            owner._modules[key] = edit.module(target)


def _replaced_parameters(net):
    """id -> weakref of every parameter a recipe operation replaced in
    `net` (by identity: tensors do not compare as set members)."""
    found = net.__dict__.get("_nnx_replaced")
    if found is None:
        found = {}
        net._nnx_replaced = found
    return found


def _was_replaced(net, p):
    ref = net.__dict__.get("_nnx_replaced", {}).get(id(p))
    return ref is not None and ref() is p


def _problems(error):
    return [line for line in diagnostic_message(error.diagnostics).splitlines()
            if line.strip()]


# -----------------------------------------------------------------------------
# Optimizers
# -----------------------------------------------------------------------------

def _optimizer_params(optimizer):
    return [p for g in optimizer.param_groups for p in g["params"]]


def _optimizer_problems(net, operations, optimizers, start):
    problems = []
    for k, opt in enumerate(optimizers):
        held = {id(p) for p in _optimizer_params(opt)}
        for i, op in enumerate(operations, start):
            for t in op.targets:
                try:
                    module = net.get_submodule(t)
                except (AttributeError, TypeError):
                    continue
                if any(id(p) in held for p in module.parameters()):
                    problems.append(
                        f"optimizer {k} already holds the parameters of "
                        f"operation {i} ('{op.id}'), target '{t}': build the "
                        "optimizer after the recipe")
    return problems


def check_optimizer(model, optimizer):
    """Refuses an optimizer stale for `model`'s current topology: one that
    holds parameters a recipe operation replaced, or a LoRA target's frozen
    base weights but none of its adapter. Accepts one built afterwards over
    any trainable parameters (a subset, or parameters outside the net)."""
    held = _optimizer_params(optimizer)
    held_ids = {id(p) for p in held}
    problems = []
    stale = [p for p in held if _was_replaced(model, p)]
    if stale:
        problems.append(f"the optimizer holds {len(stale)} parameter(s) that "
                        "a recipe operation replaced: build it after the "
                        "recipe")
    from .peft import LoraLinear
    for path, m in model.named_modules():
        if not isinstance(m, LoraLinear):
            continue
        base = [p for p in (m.weight, m.bias) if p is not None]
        adapter = (m.lora_A, m.lora_B)
        if any(id(p) in held_ids for p in base) and not any(
                id(p) in held_ids for p in adapter):
            problems.append(f"the optimizer holds the frozen base weights of "
                            f"the LoRA target '{path}' but none of its "
                            "adapter (lora_A, lora_B): it would never train")
    if problems:
        raise RecipeError(problems)


# -----------------------------------------------------------------------------
# Attribute text
# -----------------------------------------------------------------------------

def _quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _target_text(t):
    if isinstance(t, str):
        return _quote(t)
    if isinstance(t, bool) or not isinstance(t, int):
        raise TypeError(f"a recipe target is a dotted path string, got "
                        f"{type(t).__name__} {t!r}")
    return f"{t} : i64"  # the validator names a non-string target


def _config_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i64"
    if isinstance(v, float):
        return _f64(v)
    if isinstance(v, str):
        return _quote(v)
    raise TypeError(f"a recipe config value is a number, bool or string, "
                    f"got {type(v).__name__}")
