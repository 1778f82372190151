"""The exporter's recorder: runs the user's forward as Python runs it and
writes every custom module's ``nnx.forward`` from what it does.

Why not torch.fx: symbolic tracing cannot run real Python (asserts,
branches on a config or on ``targets is not None``, ``*shape``
unpacking, ``torch.finfo(x.dtype)``, tuples of tensors). The recorder runs
the model once, on the first example inputs, under a
``TorchFunctionMode`` (plus ``Tensor.__getitem__``/``__setitem__``, whose
fast paths skip the mode, and ``nn.Module.__call__``). Every torch call is
also evaluated on the second example inputs, whose dynamic dims (batch,
sequence) have other sizes, so each value has two examples: its type says
which dims are dynamic (``?``), and integers read from shapes are
:class:`SymInt` s (``int`` subclasses carrying both values) whose
arithmetic is recorded as ``index`` ops. Python control flow sees the first
run's values; a branch or assertion whose outcome differs between the two
runs (it depends on a dynamic size or on data) is refused, naming the
source line.

Module boundaries: every call of an ``nn.Module`` from a custom module's
forward is an ``nnx.call`` of that child; a custom module's forward is
written from its first call (:class:`Frame`); containers (``Sequential``,
``ModuleList``, ``FeedFwdNN``, ``ConvNN``) are run without writing IR; leaf
layers are evaluated, not entered. Functions listed in ``functions=`` are kept as
calls too: each becomes a parameterless child module of the module whose
forward calls it.
"""

import builtins
import contextlib
from collections.abc import Mapping
import inspect
import operator
import os
import sys
import types

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from .export_ir import (ExportError, ForwardWriter, Size, Value, _sym,
                        scalar_literal, tensor_type, mlir_element_type)
from .export_ops import Call, handler_for, _op_name, _key
from .export_decomp import write_call
from .functionalize import METADATA_IN_PLACE, Views, version
from . import guards, size_reads
from .structure import unflatten

__all__ = ["SymInt", "Recorder", "Recorded"]

_NNX_DIR = os.path.dirname(os.path.abspath(__file__))
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_DisableTorchFunction = torch._C.DisableTorchFunction


def _inside(fn, directory):
    """Whether path `fn` lies in `directory`, matched by whole path
    components (``.../dist-packages/torchvision`` is not inside
    ``.../dist-packages/torch``)."""
    return fn == directory or fn.startswith(directory + os.sep)


def is_user_file(filename):
    """Whether code from `filename` is the user's: not nnx's, not torch's,
    not generated (``<string>``)."""
    if filename.startswith("<"):
        return False
    fn = os.path.abspath(filename)
    return not _inside(fn, _NNX_DIR) and not _inside(fn, _TORCH_DIR)


def user_site():
    """`file:line` of the innermost stack frame outside nnx and torch: the
    line of the user's model code being run."""
    f = sys._getframe(1)
    while f is not None:
        if is_user_file(f.f_code.co_filename):
            return f"{os.path.abspath(f.f_code.co_filename)}:{f.f_lineno}"
        f = f.f_back
    return None


def traceback_site(tb):
    """`file:line` of the innermost user frame of traceback `tb` (where an
    exception raised inside torch was called from), or None."""
    site = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_user_file(code.co_filename):
            site = f"{os.path.abspath(code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return site


def forward_error(e, where=None, when="on the example inputs"):
    """An exception raised by the user's forward (or by torch inside it)
    as an ExportError naming the module and the user's line it came from,
    never a torch-internal traceback."""
    site = traceback_site(e.__traceback__)
    lines = str(e).strip().splitlines()
    msg = lines[0] if lines else ""
    if len(msg) > 300:
        msg = msg[:300] + "..."
    text = (f"{where + ': ' if where else ''}the forward raised "
            f"{type(e).__name__} {when}: {msg}")
    if site:
        text += f" (at {site})"
    if isinstance(e, RuntimeError):
        text += (". If the example sizes are too small for the model, give "
                 "two example inputs it accepts (examples=)")
    return ExportError(text)


# The recorders running (innermost last), so errors raised outside a frame
# (a SymInt guard) still name the module whose forward is being recorded.
_ACTIVE = []


def _error(msg):
    site = user_site()
    if _ACTIVE and _ACTIVE[-1].frames and not msg.startswith("module at"):
        msg = f"{_ACTIVE[-1].frames[-1].where()}: {msg}"
    return ExportError(msg + (f" (at {site})" if site else ""))


# -----------------------------------------------------------------------------
# Run-time integers
# -----------------------------------------------------------------------------

class SymInt(int):
    """A run-time integer: its value in the first example run (what Python
    computes with), in the second (`ex[1]`), and how it was computed
    (`recipe`: ``("dim", tensor, d)`` or ``(op, a, b)``).

    Its ``+ - * // %`` with ints are recorded; comparisons and ``bool()``
    are guards. Everything else Python does with its value is a decision
    (:meth:`decide`): every other ``int`` method (``int()``, ``float()``,
    ``/``, ``**``, ``abs()``, ``round()``, bitwise ops, ...; added below the
    class), and the reads CPython makes without calling one, ``range()``
    and subscripts of sequences (:mod:`nnx.size_reads`)."""

    def __new__(cls, ex0, ex1, recipe):
        obj = int.__new__(cls, ex0)
        obj.ex = (int(ex0), int(ex1))
        obj.recipe = recipe
        return obj

    def __repr__(self):
        return f"SymInt({self.ex[0]}, {self.ex[1]})"

    # -- arithmetic, recorded --------------------------------------------------
    def _arith(self, op, other, fn, swap=False):
        if op == "mul" and isinstance(other, (list, tuple, str)):
            # `[x] * n`: Python repeats by the first run's value.
            return other * self.decide("to repeat a list or a tuple")
        if isinstance(other, float):
            v = self.decide("in float arithmetic")
            return _FLOAT_OPS[op](*((other, v) if swap else (v, other)))
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        e = tuple(fn(_ex(a, k), _ex(b, k)) for k in range(2))
        # One value in both runs (`t % 8`, `t // 100`) is still a run-time
        # value: pinned (guards.pin) where it is used as a plain int.
        return SymInt(e[0], e[1], (op, a, b))

    def __add__(self, o):
        return self._arith("add", o, int.__add__)

    def __radd__(self, o):
        return self._arith("add", o, int.__add__, True)

    def __sub__(self, o):
        return self._arith("sub", o, int.__sub__)

    def __rsub__(self, o):
        return self._arith("sub", o, int.__sub__, True)

    def __mul__(self, o):
        return self._arith("mul", o, int.__mul__)

    def __rmul__(self, o):
        return self._arith("mul", o, int.__mul__, True)

    def __floordiv__(self, o):
        return self._arith("floordiv", o, int.__floordiv__)

    def __rfloordiv__(self, o):
        return self._arith("floordiv", o, int.__floordiv__, True)

    def __mod__(self, o):
        return self._arith("mod", o, int.__mod__)

    def __rmod__(self, o):
        return self._arith("mod", o, int.__mod__, True)

    def __neg__(self):
        return self._arith("sub", 0, int.__sub__, True)

    def __pos__(self):
        return self

    def decide(self, what):
        """The value of this size where Python computes with it `what`:
        pinned by a guard (guards.pin) where both example runs give it one
        value; refused where they differ (the exported forward would hold
        the first run's value at every size)."""
        frame = guards._current_frame()
        if self.ex[0] != self.ex[1] or frame is None:
            raise _error(
                f"a run-time size ({self.ex[0]} and {self.ex[1]} in the "
                f"example runs) used {what}: Python computes with its value, "
                f"so the exported forward would hold {self.ex[0]} at every "
                "batch or sequence length; make that dim static (a number in "
                "inputs=) or compute with tensor ops")
        return guards.pin(frame, self)

    def __float__(self):
        return float(self.decide("as a float"))

    def __int__(self):
        return self.decide("as a Python int (int())")

    def __index__(self):
        return self.decide("as an index (__index__)")

    def __hash__(self):
        return int.__hash__(self)

    # -- comparisons: guards ---------------------------------------------------
    def _cmp(self, o, fn, sym):
        if not isinstance(o, (int, float)):
            return NotImplemented
        r = [fn(_ex(self, k), _ex(o, k)) for k in range(2)]
        if r[0] != r[1]:
            raise _error(f"a branch or assertion on a run-time size "
                         f"({_ex(self, 0)} {sym} {_ex(o, 0)} is {r[0]}, but "
                         f"{_ex(self, 1)} {sym} {_ex(o, 1)} is {r[1]} in the "
                         "second example run): its outcome depends on the "
                         "input size")
        # Both runs agree: the forward holds this way only; a guard checks
        # every call takes it.
        return guards.record_comparison(self, sym, o, r[0])

    def __eq__(self, o):
        return self._cmp(o, lambda a, b: a == b, "==")

    def __ne__(self, o):
        return self._cmp(o, lambda a, b: a != b, "!=")

    def __lt__(self, o):
        return self._cmp(o, lambda a, b: a < b, "<")

    def __le__(self, o):
        return self._cmp(o, lambda a, b: a <= b, "<=")

    def __gt__(self, o):
        return self._cmp(o, lambda a, b: a > b, ">")

    def __ge__(self, o):
        return self._cmp(o, lambda a, b: a >= b, ">=")

    def __bool__(self):
        return self._cmp(0, lambda a, b: a != b, "!=")


_FLOAT_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "floordiv": operator.floordiv, "mod": operator.mod}

# int's members that say nothing of the value, or that make text.
_NOT_READS = {"__new__", "__init__", "__init_subclass__", "__getattribute__",
              "__setattr__", "__delattr__", "__subclasshook__", "__class__",
              "__doc__", "__dir__", "__reduce__", "__reduce_ex__",
              "__getnewargs__", "__getstate__", "__sizeof__", "__repr__",
              "__str__", "__format__", "__hash__", "from_bytes", "imag",
              "denominator"}


def _read(name):
    """int's member `name` on the decided values of the sizes involved,
    computed as Python computes it on plain values (so that `n / 2.0` takes
    float's way, which would read the size's value itself)."""
    member = getattr(int, name)
    what = f"in int.{name}"
    if not callable(member):  # .real, .numerator, ...
        return property(lambda self: member.__get__(self.decide(what)))
    base = "__" + name[3:]
    swap = name.startswith("__r") and hasattr(int, base)  # __rand__: &
    key = base if swap else name
    fn = {"__divmod__": divmod, "__pow__": pow}.get(key) or getattr(
        operator, key, None) or getattr(int, key)

    def read(self, *args):
        v = self.decide(what)
        args = [a.decide(what) if isinstance(a, SymInt) else a for a in args]
        return fn(args[0], v, *args[1:]) if swap else fn(v, *args)
    read.__name__ = name
    return read


for _name in sorted(set(dir(int)) - _NOT_READS - set(SymInt.__dict__)):
    setattr(SymInt, _name, _read(_name))


def _differ(r0, r1):
    """Whether two non-tensor results differ (tensors inside compared by
    value)."""
    if isinstance(r0, torch.Tensor):
        return False
    try:
        return bool(r0 != r1)
    except RuntimeError:  # a structure holding tensors
        return repr(r0) != repr(r1)


def _ex(x, k):
    return x.ex[k] if isinstance(x, SymInt) else x


class _Shape(tuple):
    """`x.shape` / `x.size()` with run-time dims as SymInts."""

    def numel(self):
        n = 1
        for d in self:
            n = n * d
        return n


# -----------------------------------------------------------------------------
# One forward being written
# -----------------------------------------------------------------------------

class Recorded:
    """What a recorded forward gives the exporter: its arguments and
    results (Values and Sizes), its body, its output names, and the kept
    functions it calls (name -> Recorded)."""

    def __init__(self, frame, args, results, output_names):
        self.args = args
        self.results = results
        self.lines = frame.lines
        self.output_names = output_names
        self.kept = frame.kept
        self.signature = None


class Frame(ForwardWriter):
    """The forward of `module` (None for a kept function) at `path`, being
    written from its call."""

    def __init__(self, rec, module, path, silent=False):
        super().__init__(path)
        self.rec = rec
        self.module = module
        self.silent = silent
        self.values = {}  # id(tensor) -> Value
        self.syms = {}  # id(SymInt) -> Size
        self.kept = {}  # function name -> Recorded
        self.views = Views(self)  # aliases and in-place writes
        self._own = {}
        if module is not None:
            for n, t in list(module._parameters.items()) + \
                    list(module._buffers.items()):
                if t is not None:
                    self._own[id(t)] = n

    def where(self):
        return f"module at '{self.path or '<root>'}'"

    def error(self, msg):
        return _error(f"{self.where()}: {msg}")

    def size_tensor(self, n, dtype):
        """A rank-0 tensor holding the size `n` (an int or a Size)."""
        if not isinstance(n, Size):
            return self.scalar(n, dtype)
        elt = mlir_element_type(dtype)
        i = self.name("n")
        self.lines.append(f"{i} = arith.index_cast {n.name} : index to {elt}")
        ex = tuple(torch.tensor(e, dtype=dtype) for e in n.examples)
        return self.value("n", ex, f"tensor.from_elements {i}")

    # -- tensors and sizes into IR values ------------------------------------
    def bind(self, t, v):
        self.values[id(t)] = v
        self.views.bound(t)
        self._keep.append(t)

    def value_of(self, t):
        """The current value of tensor `t` (a view written through since
        it was bound is made again from its base: nnx.functionalize)."""
        v = self.values.get(id(t))
        if v is not None:
            return self.views.refresh(t) if self.views.stale(t) else v
        if id(t) in self.views.links:
            return self.views.refresh(t)
        name = self._own.get(id(t))
        if name is not None:
            v = self.state(name, t)
        elif id(t) in self.rec.twins and id(t) not in self.rec.params:
            raise self.error("uses a tensor computed outside this forward "
                             "that is not one of its arguments (pass it to "
                             "the module as an argument)")
        elif id(t) in self.rec.params:
            v = self.foreign_state(t)
        else:
            v = self.constant(t)
        self.bind(t, v)
        return v

    def state(self, name, t, of=None):
        """`nnx.state`: a read of tensor `name` of this module, or of the
        module at relative path `of` below it."""
        ex = t.detach()
        typ = tensor_type((ex, ex), self.where())
        attrs = ""
        if of is not None:
            attrs = " {nnx.of = " + "::".join(
                _sym(k) for k in of.split(".")) + "}"

        def define(v):
            self.lines.append(f'{v._name} = nnx.state "{name}"{attrs} : '
                              f'{typ}')
        hint = name if of is None else f"{of}_{name}"
        return Value(self.name(hint), (ex, ex), typ, define)

    def foreign_state(self, t):
        """A read of a tensor another module registers (``self.q_proj.bias``
        in a forward): an `nnx.state` with `nnx.of` when that module is below
        this one, so surgery sees the read; refused otherwise."""
        for m in self.rec.owners.get(id(t), []):
            rel = self.rec._rel_path(self, m)
            if rel is None:
                continue
            for n, x in list(m._parameters.items()) + list(
                    m._buffers.items()):
                if x is t:
                    return self.state(n, t, of=rel)
        raise self.error(f"reads '{self.rec.params[id(t)]}', a tensor of a "
                         "module outside this one, directly; pass it as an "
                         "argument or call that module instead")

    def constant(self, t):
        """A tensor made without the example inputs, as a constant."""
        t = t.detach()
        if t.numel() > 1 << 20:
            raise self.error(f"a constant tensor of {t.numel()} elements "
                             "made in the forward is too large to write "
                             "into the IR; register it as a buffer")
        typ = tensor_type((t, t), self.where())
        elt = mlir_element_type(t.dtype)

        def literal(x):
            if isinstance(x, list):
                return "[" + ", ".join(literal(i) for i in x) + "]"
            return scalar_literal(x, elt)
        flat = t.reshape(-1)
        if t.numel() and bool((flat == flat[0]).all()):
            lit = literal(flat[0].item())
        else:
            lit = literal(t.tolist())

        def define(v):
            self.lines.append(f"{v._name} = arith.constant dense<{lit}> : "
                              f"{typ}")
        return Value(self.name("cst"), (t, t), typ, define)

    def size_of(self, s):
        """The Size (or int) of SymInt `s` in this forward."""
        got = self.syms.get(id(s))
        if got is not None:
            return got
        r = s.recipe
        got = None
        if s.ex[0] == s.ex[1]:
            got = guards.pin(self, s)
        elif r[0] == "dim" and id(r[1]) in self.values:
            got = self.dim(self.values[id(r[1])], r[2])
        elif r[0] in ("add", "sub", "mul", "floordiv", "mod"):
            a, b = (self.to_ir(x) for x in r[1:])
            if r[0] in ("floordiv", "mod"):
                guards.check_divisor(self, r[2], self.index(b))
            got = self.arith_size(r[0], a, b)
        else:
            got = self.size_from_scope(s.ex)
        self.syms[id(s)] = got
        self._keep.append(s)
        return got

    def size_from_scope(self, ex):
        for sz in self._sizes:
            if sz.examples == ex:
                return sz
        for v in list(self.values.values()):
            for d in range(v.rank):
                if (v.examples[0].shape[d], v.examples[1].shape[d]) == ex:
                    return self.dim(v, d)
        raise self.error(f"cannot express a run-time size (examples {ex[0]} "
                         f"and {ex[1]}) from the sizes in scope")

    def to_ir(self, x):
        if isinstance(x, torch.Tensor):
            return self.value_of(x)
        if isinstance(x, SymInt):
            return self.size_of(x)
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(self.to_ir(i) for i in x)
        if isinstance(x, list):
            return [self.to_ir(i) for i in x]
        if isinstance(x, dict):
            return {k: self.to_ir(i) for k, i in x.items()}
        if isinstance(x, slice):
            return slice(self.to_ir(x.start), self.to_ir(x.stop),
                         self.to_ir(x.step))
        return x

    # -- constants and splats used by the handlers ----------------------------
    def splat(self, fill, ex, hints, label):
        sizes = self.sizes_for(ex, hints)
        elt = mlir_element_type(ex[0].dtype)
        lit = scalar_literal(fill, elt)
        if not any(isinstance(s, Size) for s in sizes):
            return self.value("full", ex, f"arith.constant dense<{lit}>",
                              label=None)
        c = self.name("fill")
        typed = lit if elt == "i1" else f"{lit} : {elt}"
        self.lines.append(f"{c} = arith.constant {typed}")
        dyn = [s.name for s in sizes if isinstance(s, Size)]
        return self.value("full", ex, f"tensor.splat {c}[{', '.join(dyn)}]",
                          label=label)


def _concrete(x, k, twins):
    """`x` with tensors replaced by their run-`k` examples and SymInts by
    their run-`k` values."""
    if isinstance(x, torch.Tensor):
        if k == 0:
            return x
        pair = twins.get(id(x))
        return pair[1] if pair is not None else x
    if isinstance(x, SymInt):
        return x.ex[k]
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(_concrete(i, k, twins) for i in x)
    if isinstance(x, list):
        return [_concrete(i, k, twins) for i in x]
    if isinstance(x, dict):
        return {n: _concrete(i, k, twins) for n, i in x.items()}
    if isinstance(x, slice):
        return slice(_concrete(x.start, k, twins),
                     _concrete(x.stop, k, twins),
                     _concrete(x.step, k, twins))
    return x


def _same_path(recorded, real):
    """Whether the recording's value of an output is the real one up to
    rounding: within 1e-5 of the output's largest magnitude (plus 1e-6),
    normwise. Another path (a branch, a loop count) changes an output by
    its own magnitude; the recording's ops, rounded in another order
    (a decomposed attention), may differ by a few ulps of the largest
    element in an element near zero (vit_h_14: 2.3e-6 of 2.3), which an
    elementwise tolerance would take for another path."""
    if not recorded.is_floating_point():
        return torch.equal(recorded, real)
    if recorded.numel() == 0:
        return True
    if not torch.equal(torch.isnan(recorded), torch.isnan(real)):
        return False
    a, b = recorded.double(), real.double()
    # Equal values (infinities too) differ by 0; NaNs where both have one.
    diff = torch.where((a == b) | torch.isnan(b), torch.zeros_like(a),
                       (a - b).abs())
    finite = torch.isfinite(b)
    scale = float(b[finite].abs().max()) if finite.any() else 0.0
    return float(diff.max()) <= 1e-5 * scale + 1e-6


def _leaves(x, path=""):
    """(python path, leaf) of every leaf of a nested output structure."""
    if isinstance(x, (tuple, list)):
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}.{i}" if path else str(i))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif hasattr(x, "__dataclass_fields__"):
        for k in x.__dataclass_fields__:
            yield from _leaves(getattr(x, k), f"{path}.{k}" if path else k)
    else:
        yield path, x


# -----------------------------------------------------------------------------
# The recorder
# -----------------------------------------------------------------------------

_RANDOM = {getattr(torch, n, None) for n in (
    "rand", "randn", "randint", "randperm", "normal", "bernoulli",
    "multinomial", "rand_like", "randn_like", "randint_like", "poisson")}
_RANDOM |= {getattr(torch.Tensor, n, None) for n in (
    "uniform_", "normal_", "bernoulli_", "random_", "exponential_",
    "geometric_", "cauchy_", "log_normal_")}
_RANDOM.discard(None)

# Handler groups that write IR even when no input is traced: factories, so
# `torch.ones(t, t)` or a static `torch.full(...)` is a splat, not a blob.
_FACTORY_GROUPS = {"arange", "ones/zeros/full"}

_LABELS = {"__rsub__": "sub", "__rdiv__": "truediv", "__rtruediv__":
           "truediv", "__truediv__": "truediv", "div": "truediv",
           "__rpow__": "pow", "__radd__": "add", "__rmul__": "mul",
           "__matmul__": "matmul", "__rmatmul__": "matmul",
           "__getitem__": "getitem", "__setitem__": "setitem",
           "__invert__": "invert", "__and__": "and", "__or__": "or",
           "__xor__": "xor", "__neg__": "neg", "__abs__": "abs",
           "add_": "iadd", "sub_": "isub", "mul_": "imul", "div_": "itruediv"}

# Tensor methods that give Python the tensor's value.
_VALUE_READS = {"__bool__", "item", "tolist", "__float__", "__int__",
                "__index__", "__complex__", "numpy", "__array__"}


def _writes_in_place(func, name, args, kwargs):
    """Whether the call of torch callable `func` (named `name`) writes into
    its first argument: an in-place method (``add_``, ``__iadd__``,
    ``__setitem__``) or a function called with ``inplace=True``
    (``F.relu(x, inplace=True)``)."""
    if name.endswith("_") and not name.endswith("__") or name in _I_OPS:
        return True
    flag = kwargs.get("inplace")
    i = _inplace_position(func) if flag is None else None
    if i is not None and len(args) > i:
        flag = args[i]
    return flag is True


# The augmented assignments (`x += y`) and `x[i] = v`.
_I_OPS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__idiv__",
          "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
          "__ixor__", "__ilshift__", "__irshift__", "__setitem__"}

# torch callable -> the position of its `inplace` parameter, or None.
_INPLACE_PARAMETER = {}


def _inplace_position(func):
    try:
        return _INPLACE_PARAMETER[func]
    except KeyError:
        pass
    except TypeError:  # unhashable
        return None
    try:
        names = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        names = []
    pos = names.index("inplace") if "inplace" in names else None
    _INPLACE_PARAMETER[func] = pos
    return pos


class _Mode(TorchFunctionMode):
    def __init__(self, rec):
        super().__init__()
        self.rec = rec

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.rec.dispatch(func, args, kwargs or {})


class Recorder:
    """Runs `model` on two example inputs and records the forward of every
    custom module it calls (`forwards`: id(module) -> Recorded).

    `is_custom(module)` says which modules get a forward; `kinds` of the
    others: "leaf" (evaluated, not entered) or "container" (run without
    writing IR). `functions` are kept as calls."""

    def __init__(self, model, is_custom, is_leaf, functions=(),
                 method="forward"):
        self.model = model
        self.method = method
        self.is_custom = is_custom
        self.is_leaf = is_leaf
        self.functions = {f: f.__name__ for f in functions}
        self.twins = {}  # id(t0) -> (t0, t1)
        self.params = {}  # id(tensor) -> dotted name, for every module
        self.frames = []
        self.forwards = {}  # id(module) -> Recorded
        self.paths = {}  # id(module) -> [paths]
        self.owners = {}  # id(tensor) -> [modules registering it]
        self._plain = 0
        self._entering = set()
        self._through = set()  # Python torch functions being recorded through
        self.dependent = set()  # ids of tensors computed from the inputs
        for path, m in model.named_modules(remove_duplicate=False):
            self.paths.setdefault(id(m), []).append(path)
            for n, t in list(m._parameters.items()) + list(m._buffers.items()):
                if t is not None:
                    self.owners.setdefault(id(t), []).append(m)
                    self.params.setdefault(id(t), f"{path}.{n}" if path else n)
                    self.twins[id(t)] = (t, t)
        self.mode = _Mode(self)

    def entry(self, *args):
        """The model's entry point (`method`) called under the recorder."""
        if self.method == "forward":
            return self.model(*args)
        return self.call_module(self.model, args, {}, entry=getattr(
            self.model, self.method))

    def _orig_entry(self, *args):
        if self.method == "forward":
            return self._orig_call(self.model, *args)
        return getattr(self.model, self.method)(*args)

    # -- running -------------------------------------------------------------
    def run(self, examples, tree):
        """Calls the model on the first examples (each `examples[i]` a pair:
        one tensor of the call, whose arguments nest the tensors as `tree`
        says, :mod:`nnx.structure`); returns the output."""
        args = []
        # The second inputs as given: a forward that writes into its input
        # changes them while recording (the check runs on these copies).
        with torch.no_grad():
            inputs1 = [t1.clone() for _, t1 in examples]
        for t0, t1 in examples:
            self.twins[id(t0)] = (t0, t1)
            self.dependent.add(id(t0))
            args.append(t0)
        _ACTIVE.append(self)
        try:
            with self._patched(), self._size_reads(), self.mode:
                out = self.entry(*unflatten(tree, args))
        except ExportError:
            raise
        except Exception as e:
            raise forward_error(e, getattr(e, "_nnx_where", None)) from None
        finally:
            _ACTIVE.pop()
        self._check_second_run(out, unflatten(tree, inputs1))
        return out

    def held_bytes(self):
        """Bytes of the example values (both runs) the recording holds,
        the model's own tensors not counted (a view as if it were a copy:
        an upper bound)."""
        total = 0
        for tid, pair in self.twins.items():
            if tid not in self.params:
                total += sum(t.numel() * t.element_size() for t in pair)
        return total

    def _check_second_run(self, out, inputs1):
        """The model run as Python runs it on the second example inputs
        must give what the recording computed for them: else its Python
        took another path there (`for i in range(x.shape[0])`, a branch
        on a value the recorder could not see)."""
        try:
            with self.plain():
                real = self._orig_entry(*inputs1)
        except Exception as e:
            raise forward_error(e, None, "on the second example inputs "
                                "(other batch / sequence sizes)") from None
        got = [(p, t) for p, t in _leaves(out) if isinstance(t, torch.Tensor)]
        want = [(p, t) for p, t in _leaves(real) if isinstance(t, torch.Tensor)]
        bad = None
        if [p for p, _ in got] != [p for p, _ in want]:
            bad = "its outputs differ in structure"
        for (p, t), (_, r) in zip(got, want):
            t1 = self.twins[id(t)][1]
            if bad is None and (t1.shape != r.shape or not _same_path(t1, r)):
                bad = (f"output '{p or 0}' has shape {tuple(r.shape)} there, "
                       f"but the recording gives {tuple(t1.shape)}"
                       if t1.shape != r.shape else
                       f"output '{p or 0}' differs from the recording")
        if bad is not None:
            raise ExportError(
                "the forward takes another path on the second example inputs "
                f"(other batch / sequence sizes): {bad}. Some Python control "
                "flow depends on an input size or value in a way the recorder "
                "cannot see (e.g. `for i in range(x.shape[0])`, or a Python "
                "int taken from a tensor); write it with tensor ops")

    @contextlib.contextmanager
    def _patched(self):
        rec = self
        orig_call = nn.Module.__call__
        orig_get = torch.Tensor.__getitem__
        orig_set = torch.Tensor.__setitem__
        self._orig_call = orig_call

        def call(module, *args, **kwargs):
            if rec._plain:
                return orig_call(module, *args, **kwargs)
            return rec.call_module(module, args, kwargs)

        def getitem(t, idx):
            if rec._plain:
                return orig_get(t, idx)
            return rec.dispatch(torch._C._TensorBase.__getitem__, (t, idx), {})

        def setitem(t, idx, v):
            if rec._plain:
                return orig_set(t, idx, v)
            return rec.dispatch(torch._C._TensorBase.__setitem__, (t, idx, v),
                                {})
        saved = []
        for fn, name in self.functions.items():
            wrapper = self._keep_wrapper(fn)
            for mod in list(sys.modules.values()):
                d = getattr(mod, "__dict__", None)
                if isinstance(d, dict) and d.get(name) is fn:
                    saved.append((d, name, fn))
                    d[name] = wrapper
        orig_len = builtins.len

        def length(x):
            # len(x) is x.size(0): a run-time size where dim 0 is dynamic.
            # (Python's len() makes whatever __len__ returns a plain int, so
            # the builtin itself is replaced while recording.)
            if rec._plain or not isinstance(x, torch.Tensor) or \
                    id(x) not in rec.twins or x.dim() == 0 or \
                    not is_user_file(sys._getframe(1).f_code.co_filename):
                return orig_len(x)
            return rec.tensor_len(x)
        shadowed = []
        for m in self.model.modules():
            if "forward" not in m.__dict__:
                m.forward = self._forward_wrapper(m)
                shadowed.append(m)
        nn.Module.__call__ = call
        torch.Tensor.__getitem__ = getitem
        torch.Tensor.__setitem__ = setitem
        builtins.len = length
        try:
            yield
        finally:
            builtins.len = orig_len
            nn.Module.__call__ = orig_call
            torch.Tensor.__getitem__ = orig_get
            torch.Tensor.__setitem__ = orig_set
            for d, name, fn in saved:
                d[name] = fn
            for m in shadowed:
                del m.forward

    @staticmethod
    @contextlib.contextmanager
    def _size_reads():
        """``range()`` and subscripts of sequences (not tensors, not
        mappings) in the model's code decide the run-time sizes they read
        (:mod:`nnx.size_reads`)."""
        def is_size(x):
            return isinstance(x, SymInt)

        def decide(x, what):
            return x.decide(what)
        orig = builtins.range
        builtins.range = size_reads.recording_range(is_size, decide)
        try:
            with size_reads.observe_subscripts(
                    lambda code: is_user_file(code.co_filename), is_size,
                    lambda c: not isinstance(c, (torch.Tensor, Mapping)),
                    decide):
                yield
        finally:
            builtins.range = orig

    def tensor_len(self, x):
        """`len(x)`: dim 0 of `x`, a SymInt where it is dynamic."""
        with self.plain():
            a, b = (int(t.shape[0]) for t in self.twins[id(x)])
        return a if a == b else SymInt(a, b, ("dim", x, 0))

    def _forward_wrapper(self, module):
        """`module.forward(...)` called directly (llama2.c's
        `self.attention.forward(x, ...)`) is a call of the module too;
        `nn.Module.__call__` reaching it is the module's own forward."""
        rec = self
        real = type(module).forward.__get__(module)

        def forward(*args, **kwargs):
            if rec._plain or id(module) in rec._entering:
                rec._entering.discard(id(module))
                return real(*args, **kwargs)
            return rec.call_module(module, args, kwargs)
        forward.__signature__ = inspect.signature(real)
        forward.__wrapped__ = real
        return forward

    def _call(self, module, *args, **kwargs):
        """`nn.Module.__call__` of `module` under the recorder."""
        self._entering.add(id(module))
        try:
            return self._orig_call(module, *args, **kwargs)
        finally:
            self._entering.discard(id(module))

    @contextlib.contextmanager
    def plain(self):
        """Plain PyTorch: no mode, no recording."""
        self._plain += 1
        was_on = torch._C._is_torch_function_mode_enabled()
        torch._C._set_torch_function_mode(None)
        try:
            with _DisableTorchFunction():
                yield
        finally:
            self._plain -= 1
            if was_on:
                torch._C._set_torch_function_mode(
                    torch.overrides._TorchFunctionStackMode())

    def _keep_wrapper(self, fn):
        rec = self

        def kept(*args, **kwargs):
            if rec._plain or not rec.frames or rec.frames[-1].silent:
                return fn(*args, **kwargs)
            return rec.call_function(fn, args, kwargs)
        kept.__wrapped__ = fn
        return kept

    # -- twins ---------------------------------------------------------------
    def is_traced(self, x):
        if isinstance(x, torch.Tensor):
            return id(x) in self.twins
        if isinstance(x, SymInt):
            return True
        if isinstance(x, (tuple, list)):
            return any(self.is_traced(i) for i in x)
        if isinstance(x, dict):
            return any(self.is_traced(i) for i in x.values())
        if isinstance(x, slice):
            return any(self.is_traced(i) for i in (x.start, x.stop, x.step))
        return False

    def depends(self, x):
        """Whether `x` (a structure of arguments) holds a tensor computed
        from the model's inputs, or a run-time size."""
        if isinstance(x, torch.Tensor):
            return id(x) in self.dependent
        if isinstance(x, SymInt):
            return True
        if isinstance(x, (tuple, list)):
            return any(self.depends(i) for i in x)
        if isinstance(x, dict):
            return any(self.depends(i) for i in x.values())
        if isinstance(x, slice):
            return any(self.depends(i) for i in (x.start, x.stop, x.step))
        return False

    def register(self, r0, r1, dep=True):
        """Pairs the run-0 and run-1 results: tensors become traced, ints
        that differ SymInts; other values must agree."""
        if isinstance(r0, torch.Tensor):
            if not isinstance(r1, torch.Tensor):
                raise _error("a call returned a tensor in one example run "
                             "and not in the other")
            self.twins[id(r0)] = (r0, r1)
            if dep:
                self.dependent.add(id(r0))
            else:
                self.dependent.discard(id(r0))
            return r0
        if isinstance(r0, (tuple, list)) and type(r0) is type(r1) and \
                len(r0) == len(r1):
            out = [self.register(a, b, dep) for a, b in zip(r0, r1)]
            if hasattr(r0, "_fields") or type(r0).__module__ == \
                    "torch.return_types":
                return r0
            return type(r0)(out) if isinstance(r0, list) else tuple(out)
        return r0

    # -- torch calls ---------------------------------------------------------
    def dispatch(self, func, args, kwargs):
        h = handler_for(func)
        if h is None and self._is_python(func) and self.is_traced(
                (args, kwargs)) and func not in self._through:
            self._through.add(func)
            try:
                return self._trace_through(func, args, kwargs)
            finally:
                self._through.discard(func)
        with self.plain():
            return self._dispatch(func, h, args, kwargs)

    def _dispatch(self, func, h, args, kwargs):
        frame = self.frames[-1] if self.frames else None
        traced = self.is_traced(args) or self.is_traced(kwargs)
        if frame is not None and not frame.silent and func in _RANDOM:
            raise frame.error(f"{_op_name(func)}: random numbers made in a "
                              "forward have no nnx form")
        if not traced and not (h is not None and h.group in _FACTORY_GROUPS
                               and frame is not None and not frame.silent):
            return func(*args, **kwargs)
        name = _op_name(func)
        recording = frame is not None and not frame.silent
        # An in-place call: its IR operands are read before it runs, and
        # the chain of views it writes up (none for a metadata op).
        ir = chain = before = None
        in_place = _writes_in_place(func, name, args, kwargs)
        if recording and in_place and isinstance(args[0], torch.Tensor):
            if name in METADATA_IN_PLACE:
                frame.views.retarget(args[0], func, args, kwargs)
                before = version(args[0])
            else:
                chain = frame.views.prepare(args[0], name)
            ir = (frame.to_ir(args), frame.to_ir(kwargs))
        ex = self._evaluate(func, args, kwargs)
        if before is not None:  # its version moved, its data did not
            frame.views.acknowledge(args[0], before)
        if name == "__setitem__":  # in place: the result is the target
            ex = (args[0], self.twins[id(args[0])][1])
        if recording:
            leaf = self._leaf_of(frame, func, args, kwargs)
            if leaf is not None:
                out = self.register(*ex, self.depends((args, kwargs)))
                self._emit_call(frame, leaf[0], "self_" + leaf[0].replace(
                    ".", "_"), leaf[1].forward, (args[0],), {}, out)
                return out
        if not isinstance(ex[0], torch.Tensor) and not (
                isinstance(ex[0], (tuple, list)) and ex[0] and
                all(isinstance(e, torch.Tensor) for e in ex[0])):
            return self._metadata(func, name, args, ex)
        if frame is None or frame.silent:
            return self.register(*ex, self.depends((args, kwargs)))
        ir = ir or (frame.to_ir(args), frame.to_ir(kwargs))
        c = Call(func, _LABELS.get(name, name.strip("_")), *ir, ex, in_place)
        # No handler: written through its ATen decomposition.
        res = write_call(h, frame, c)
        depends = self.depends((args, kwargs))
        out = self.register(*ex, depends)
        if chain is not None:
            frame.views.write(chain, res, ex, depends, name)
            return out
        self._bind(frame, out, res)
        frame.views.link_results(func, args, kwargs, out)
        return out

    _LEAF_FUNCTIONS = {F.linear: (nn.Linear, ("weight", "bias")),
                       F.embedding: (nn.Embedding, ("weight",)),
                       F.layer_norm: (nn.LayerNorm, ("weight", "bias"))}

    def _leaf_of(self, frame, func, args, kwargs):
        """(relative path, module) of the descendant layer whose own tensors
        `F.linear` / `F.embedding` / `F.layer_norm` reads (as
        nn.MultiheadAttention reads `out_proj.weight`), so the call is a
        call of that layer; None otherwise."""
        spec = self._LEAF_FUNCTIONS.get(func)
        if spec is None or frame.module is None:
            return None
        cls, names = spec
        pos = {F.linear: (1, 2), F.embedding: (1,), F.layer_norm: (2, 3)}[func]
        got = [args[i] if len(args) > i else kwargs.get(n)
               for i, n in zip(pos, names)]
        w = got[0]
        if not isinstance(w, torch.Tensor) or id(w) in frame._own:
            return None
        for m in self.owners.get(id(w), []):
            if not isinstance(m, cls) or type(m).forward is not cls.forward:
                continue
            mine = [getattr(m, n, None) for n in names]
            if all((a is b) for a, b in zip(got, mine)) and self._same_call(
                    func, m, args, kwargs):
                rel = self._rel_path(frame, m)
                if rel is not None:
                    return rel, m
        return None

    @staticmethod
    def _same_call(func, m, args, kwargs):
        if func is F.layer_norm:
            shape = args[1] if len(args) > 1 else kwargs.get(
                "normalized_shape")
            eps = args[4] if len(args) > 4 else kwargs.get("eps", 1e-5)
            return tuple(shape) == tuple(m.normalized_shape) and eps == m.eps
        if func is F.embedding:
            rest = list(args[2:]) + list(kwargs.values())
            return all(r is None or r is False or r == 2.0 for r in rest) \
                and m.padding_idx is None and m.max_norm is None
        return len(args) <= 3

    def _describe(self, func):
        from .export_ops import callable_name
        return f"'{callable_name(func)}'"

    @staticmethod
    def _is_python(func):
        return isinstance(func, types.FunctionType) and (
            getattr(func, "__module__", "") or "").startswith("torch")

    def _evaluate(self, func, args, kwargs):
        """The call on both example runs (run 1 first: an in-place op then
        still sees run 0's inputs unchanged)."""
        a1, k1 = (_concrete(args, 1, self.twins),
                  _concrete(kwargs, 1, self.twins))
        a0, k0 = (_concrete(args, 0, self.twins),
                  _concrete(kwargs, 0, self.twins))
        try:
            with self.plain():
                r1 = func(*a1, **k1)
                r0 = func(*a0, **k0)
        except ExportError:
            raise
        except Exception as e:
            raise _error(f"{self._describe(func)} failed on the example "
                         f"inputs ({type(e).__name__}: {e})") from None
        return r0, r1

    def _bind(self, frame, out, res):
        if isinstance(out, torch.Tensor):
            if not isinstance(res, Value):
                raise frame.error("internal: a handler gave no value")
            frame.bind(out, res)
        elif isinstance(out, (tuple, list)):
            for o, r in zip(out, res):
                self._bind(frame, o, r)

    def _metadata(self, func, name, args, ex):
        """A call whose result is not a tensor: shapes give SymInts, other
        values must agree between the runs."""
        r0, r1 = ex
        key = _key(func)
        if key in (torch.Tensor.shape, torch.Tensor.size) or name == "size":
            x = args[0]
            dims = [a if a == b else SymInt(a, b, ("dim", x, d))
                    for d, (a, b) in enumerate(zip(self.twins.get(
                        id(x), (x, x))[0].shape, self.twins.get(
                        id(x), (x, x))[1].shape))]
            if isinstance(r0, int):  # size(d)
                d = args[1] if len(args) > 1 else 0
                return dims[d % len(dims)]
            return _Shape(dims)
        if name == "__len__" and isinstance(args[0], torch.Tensor):
            return self.tensor_len(args[0])
        if name in ("numel", "nelement") and r0 != r1:
            x = args[0]
            n = 1
            for d in self._metadata(torch.Tensor.size, "size", (x,),
                                    (x.shape, x.shape)):
                n = n * d
            return n
        if name in ("__repr__", "__format__", "__str__"):
            return r0
        if name in _VALUE_READS and isinstance(args[0], torch.Tensor):
            if self.depends(args[0]):
                raise _error(f"{self._describe(func)} reads the value of a "
                             "tensor computed from the inputs as a Python "
                             "value: control flow or numbers that depend on "
                             "the input data have no nnx form (it would be "
                             "fixed to the example's outcome)")
        if _differ(r0, r1):
            what = ("len()" if name == "__len__" else
                    f"{self._describe(func)}")
            if name in _VALUE_READS:
                raise _error(f"{what} gives {r0!r} in the first example run "
                             f"and {r1!r} in the second: control flow or "
                             "numbers that depend on the input data have no "
                             "nnx form")
            raise _error(f"{what} gives {r0!r} in the first example run and "
                         f"{r1!r} in the second: a Python value that depends "
                         "on the input data or sizes (data-dependent control "
                         "flow) has no nnx form")
        return r0

    def _trace_through(self, func, args, kwargs):
        """A torch function written in Python without a handler (e.g.
        ``F.multi_head_attention_forward``): its body is run under the
        recorder, its own dispatch to the mode skipped."""
        g = dict(func.__globals__)
        for n in ("has_torch_function", "has_torch_function_unary",
                  "has_torch_function_variadic"):
            if n in g:
                g[n] = lambda *a, **k: False
        body = types.FunctionType(func.__code__, g, func.__name__,
                                  func.__defaults__, func.__closure__)
        body.__kwdefaults__ = func.__kwdefaults__
        with self.recording():
            return body(*args, **kwargs)

    @contextlib.contextmanager
    def recording(self):
        """User code run again under the recorder (inside `plain`)."""
        saved, self._plain = self._plain, 0
        try:
            with self.mode:
                yield
        finally:
            self._plain = saved

    # -- module and kept-function calls --------------------------------------
    def _rel_path(self, frame, module):
        """The path of `module` below the module of `frame`, or None."""
        base = frame.path
        for p in self.paths.get(id(module), []):
            if frame.module is None:
                continue
            if not base:
                if p:
                    return p
            elif p.startswith(base + "."):
                return p[len(base) + 1:]
        return None

    def _path_of(self, module, parent):
        paths = self.paths.get(id(module))
        if not paths:
            return None
        if parent is not None:
            for p in paths:
                if parent.path == "" or p.startswith(parent.path + "."):
                    return p
        return paths[0]

    def call_module(self, module, args, kwargs, entry=None):
        parent = self.frames[-1] if self.frames else None
        if entry is not None:  # the root, entered by another method
            return self._record(module, "", args, kwargs, entry)
        with self.plain():
            path = self._path_of(module, parent)
            recording = parent is not None and not parent.silent
            rel = self._rel_path(parent, module) if recording and \
                path is not None else None
        if path is None:
            # A module made in the forward (not registered in the model):
            # its ops are part of the caller's forward.
            return self._call(module, *args, **kwargs)
        if recording and rel is None:
            raise parent.error(f"calls the module at '{path}', which is not "
                               "one of its own submodules")
        pre = None
        if recording:
            with self.plain():
                pre = self._pre_call(parent, module.forward, args, kwargs)
        if self.is_custom(module) and id(module) not in self.forwards:
            out = self._record(module, path, args, kwargs, module.forward)
        elif self.is_custom(module) or self.is_leaf(module):
            with self.plain():
                self._check_signature(module, path, args, kwargs)
                out = self._run_plain(module, args, kwargs)
        else:  # a container: run it, writing no IR, so its children record
            frame = Frame(self, module, path, silent=True)
            self.frames.append(frame)
            try:
                out = self._call(module, *args, **kwargs)
            finally:
                self.frames.pop()
        if recording:
            with self.plain():
                self._emit_call(parent, rel, "self_" + rel.replace(".", "_"),
                                module.forward, args, kwargs, out, pre)
        return out

    def _check_signature(self, module, path, args, kwargs):
        rec = self.forwards.get(id(module))
        if rec is None:
            return
        operands, consts = self._operands(module.forward, args, kwargs, None)
        types_ = [tensor_type(self.twins[id(x)], path) if isinstance(
            x, torch.Tensor) else "index" for _, x, _ in operands]
        if [n for n, _, _ in operands] != rec.signature[2]:
            raise _error(f"module at '{path}' is called again with other "
                         "tensor arguments ("
                         f"{', '.join(n for n, _, _ in operands)}; first "
                         f"call: {', '.join(rec.signature[2])})")
        if types_ != rec.signature[0]:
            raise _error(f"module at '{path}' is called again with other "
                         f"argument types ({', '.join(types_)}; first call: "
                         f"{', '.join(rec.signature[0])}): one nnx.forward "
                         "cannot serve both")
        try:
            same = consts == rec.signature[1]
        except Exception:  # e.g. tensors compared elementwise
            same = True
        if not same:
            raise _error(f"module at '{path}' is called again with other "
                         f"constant arguments ({consts} vs "
                         f"{rec.signature[1]}): one nnx.forward cannot serve "
                         "both")

    def call_function(self, fn, args, kwargs):
        parent = self.frames[-1]
        name = fn.__name__
        with self.plain():
            pre = self._pre_call(parent, fn, args, kwargs)
        if name not in parent.kept:
            path = f"{parent.path}.{name}" if parent.path else name
            out = self._record(None, path, args, kwargs, fn, kept_in=parent)
        else:
            with self.plain():
                out = self._run_plain(fn, args, kwargs)
        with self.plain():
            self._emit_call(parent, name, name, fn, args, kwargs, out, pre)
        return out

    def _run_plain(self, callee, args, kwargs):
        a1, k1 = _concrete(args, 1, self.twins), _concrete(kwargs, 1,
                                                           self.twins)
        a0, k0 = _concrete(args, 0, self.twins), _concrete(kwargs, 0,
                                                           self.twins)
        with self.plain():
            r1 = callee(*a1, **k1)
            r0 = callee(*a0, **k0)
        return self.register(r0, r1, self.depends((args, kwargs)))

    def _operands(self, fn, args, kwargs, where):
        """(name, leaf, by keyword) of the tensors and run-time sizes passed,
        flattened (a tuple argument `pe` gives `pe.0`, `pe.1`), positional
        ones first; and the constant arguments by name."""
        try:
            sig = inspect.signature(fn)
            bound = sig.bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise (where.error(f"call does not match the signature: {e}")
                   if where is not None else _error(str(e))) from None
        items = []
        for name, v in bound.arguments.items():
            kind = sig.parameters[name].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                items += [(k, x, True) for k, x in v.items()]
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                items += [(f"{name}.{i}", x, False) for i, x in enumerate(v)]
            else:
                items.append((name, v, name in kwargs))
        operands, consts = [], {}
        for name, v, kw in items:
            leaves = [(f"{name}.{p}" if p else name, x) for p, x in
                      _leaves(v)]
            if not any(self.is_traced(x) for _, x in leaves):
                consts[name] = v
                continue
            for n, x in leaves:
                if self.is_traced(x):
                    operands.append((n, x, kw))
                elif x is not None and not isinstance(
                        x, (int, float, bool, str)):
                    raise _error(f"argument '{name}' mixes tensors with a "
                                 f"{type(x).__name__}")
        operands.sort(key=lambda o: o[2])  # stable: positional ones first
        return operands, consts

    def _record(self, module, path, args, kwargs, fn, kept_in=None):
        with self.plain():
            frame = self._open_frame(module, path, args, kwargs, fn)
        self.frames.append(frame)
        try:
            if module is not None and fn is module.forward:
                out = self._call(module, *args, **kwargs)
            else:
                out = fn(*args, **kwargs)
        except Exception as e:
            if not isinstance(e, ExportError) and \
                    not hasattr(e, "_nnx_where"):
                e._nnx_where = frame.where()
            raise
        finally:
            self.frames.pop()
        with self.plain():
            self._close_frame(frame, module, fn, out, kept_in)
        return out

    def _open_frame(self, module, path, args, kwargs, fn):
        frame = Frame(self, module, path)
        operands, consts = self._operands(fn, args, kwargs, frame)
        block_args = []
        for n, x, _ in operands:
            hint = n.replace(".", "_")
            if isinstance(x, torch.Tensor):
                ex = self.twins[id(x)]
                v = Value(frame.name(hint), ex, tensor_type(
                    ex, f"{frame.where()}, argument '{n}'"))
                frame.bind(x, v)
            else:
                v = Size(frame.name(hint), x.ex)
                frame.syms[id(x)] = v
                frame._keep.append(x)
                frame.known_sizes([v])
            block_args.append(v)
        frame.block_args = block_args
        frame.operand_names = [n for n, _, _ in operands]
        frame.consts = consts
        return frame

    def _close_frame(self, frame, module, fn, out, kept_in):
        block_args, consts = frame.block_args, frame.consts
        results, names = [], []
        for p, leaf in _leaves(out):
            if isinstance(leaf, torch.Tensor):
                results.append(frame.value_of(leaf))
                names.append(p)
        if not results:
            raise frame.error("the forward returns no tensor")
        trivial = not isinstance(out, (tuple, list, dict)) or (
            isinstance(out, (tuple, list)) and all(
                isinstance(o, torch.Tensor) for o in out))
        rec = Recorded(frame, block_args, results, None if trivial else names)
        rec.signature = ([v.type for v in block_args], consts,
                         frame.operand_names)
        if module is not None:
            self.forwards[id(module)] = rec
        else:
            kept_in.kept[fn.__name__] = rec

    def _pre_call(self, frame, fn, args, kwargs):
        """The IR operands of a call of `fn`, read before it runs (it may
        write into them), and the view chains and versions of its tensor
        operands."""
        operands, _ = self._operands(fn, args, kwargs, frame)
        names = [frame.to_ir(x) for _, x, _ in operands]
        chains = {id(x): (frame.views.chain(x), version(x))
                  for _, x, _ in operands if isinstance(x, torch.Tensor)}
        return names, chains

    def _emit_call(self, frame, callee_path, label, fn, args, kwargs, out,
                   pre=None):
        """The `nnx.call` of `fn` in `frame`. A result that is one of the
        call's tensor operands, written by the call (a module writing into
        its input, as ReLU(inplace=True) does), is a write into that tensor
        (through the views it is one of)."""
        operands, _ = self._operands(fn, args, kwargs, frame)
        names, chains = pre or ([frame.to_ir(x) for _, x, _ in operands], {})
        keywords = [n for n, _, kw in operands if kw]
        results = []
        for _, leaf in _leaves(out):
            if isinstance(leaf, torch.Tensor):
                ex = self.twins[id(leaf)]
                results.append((leaf, Value(frame.name(label.removeprefix(
                    "self_")), ex, tensor_type(ex, frame.where()))))
        callee = "::".join(_sym(s) for s in callee_path.split("."))
        attrs = []
        if keywords:
            attrs.append("nnx.kwargs = [" + ", ".join(
                '"' + k + '"' for k in keywords) + "]")
        in_types = ", ".join(v.type for v in names)
        out_types = ", ".join(v.type for _, v in results)
        if len(results) != 1:
            out_types = f"({out_types})"
        frame.emit([v.name for _, v in results],
                   f"nnx.call {callee}({', '.join(v.name for v in names)})",
                   f"({in_types}) -> {out_types}", attrs, label)
        for leaf, v in results:
            chain, before = chains.get(id(leaf), (None, None))
            if chain is not None and version(leaf) != before:
                frame.views.write(chain, v, self.twins[id(leaf)], True,
                                  callee_path)
            else:
                frame.bind(leaf, v)
