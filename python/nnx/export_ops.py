"""The exporter's op handlers, registered per callable.

Each handler is registered for the PyTorch callables it implements (the
function, the ``Tensor`` method and the operator, e.g. ``torch.add``,
``Tensor.add``, ``Tensor.add_``), as the recorder sees them in
``__torch_function__``. A handler is called as ``handler(w, call)``: `w` the
:class:`~nnx.export_ir.ForwardWriter` of the forward being written, `call` a
:class:`Call` (its arguments with tensors as
:class:`~nnx.export_ir.Value` and run-time ints as
:class:`~nnx.export_ir.Size`, and the results of the call on both example
runs). It writes the op(s) through the writer and returns the result:
Values, in the structure the callable returns.

:func:`support_table` prints the registry as the table of
docs/Python.md.
"""

import math
import os
import string

import torch
import torch.nn.functional as F

from .export_ir import (Size, Value, _arg, _concrete, _is_sym, _norm_dim,
                        _shape_args, mlir_element_type, scalar_literal)

__all__ = ["Call", "HANDLERS", "handler_for", "support_table"]

T = torch.Tensor


class Call:
    """One call being written: `func` (the callable), `label` (its nnterp
    label base, e.g. ``add``), `args`/`kwargs` (Values, Sizes and plain
    values), `ex` (its results on the two example runs) and `in_place`."""

    def __init__(self, func, label, args, kwargs, ex, in_place):
        self.func = func
        self.label = label
        self.args = args
        self.kwargs = kwargs
        self.ex = ex
        self.in_place = in_place

    def arg(self, i, name, default=None):
        return _arg(self.args, self.kwargs, i, name, default)


class _Handler:
    def __init__(self, fn, group, doc):
        self.fn = fn
        self.group = group
        self.doc = doc
        self.callables = []


#: callable -> _Handler
HANDLERS = {}
_GROUPS = []


def _handles(group, *callables, doc=""):
    """Registers the decorated handler for `callables` under `group` (a row
    of the support table)."""
    def register(fn):
        h = _Handler(fn, group, doc)
        _GROUPS.append(h)
        for c in callables:
            if c is None:  # not in this torch version
                continue
            h.callables.append(c)
            HANDLERS[c] = h
        return fn
    return register


def _key(func):
    """The registry key of `func`: a property getter is keyed by its
    descriptor (``Tensor.shape``)."""
    self = getattr(func, "__self__", None)
    if getattr(func, "__name__", None) == "__get__" and self is not None:
        return self
    return func


def handler_for(func):
    try:
        return HANDLERS.get(_key(func))
    except TypeError:  # unhashable
        return None


def callable_name(func):
    """`torch.add`, `Tensor.add`, `F.softmax`: how the table names it."""
    key = _key(func)
    name = getattr(key, "__name__", None) or str(key)
    qual = getattr(key, "__qualname__", name) or name
    mod = getattr(key, "__module__", None) or ""
    if qual.startswith(("_TensorBase.", "Tensor.")) or \
            type(key).__name__ == "getset_descriptor":
        return "Tensor." + name
    if mod.startswith("torch.nn.functional") or mod == "torch._C._nn":
        return "F." + name
    return "torch." + name


def _methods(*names):
    return [getattr(T, n, None) for n in names]


def _torch(*names):
    return [getattr(torch, n, None) for n in names]


def _both(*names):
    return _methods(*names) + _torch(*names)


def _in_place(*names):
    return _methods(*[n + "_" for n in names])


# -----------------------------------------------------------------------------
# Elementwise
# -----------------------------------------------------------------------------

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div",
           "true_divide": "div", "pow": "pow", "maximum": "maximum",
           "minimum": "minimum", "multiply": "mul", "subtract": "sub",
           "divide": "div", "rsub": "sub", "__rsub__": "sub",
           "__rdiv__": "div", "__rtruediv__": "div", "__rpow__": "pow",
           "__radd__": "add", "__rmul__": "mul", "__truediv__": "div",
           "__iadd__": "add", "__isub__": "sub", "__imul__": "mul",
           "__itruediv__": "div", "__idiv__": "div"}
_REVERSED = {"rsub", "__rsub__", "__rdiv__", "__rtruediv__", "__rpow__"}


def _op_name(func):
    return getattr(_key(func), "__name__", "")


@_handles("arithmetic", *_both("add", "sub", "mul", "div", "true_divide",
                               "pow", "maximum", "minimum", "multiply",
                               "subtract", "divide", "rsub"),
          *_methods("__rsub__", "__rdiv__", "__rtruediv__", "__rpow__",
                    "__radd__", "__rmul__", "__truediv__", "__iadd__",
                    "__isub__", "__imul__", "__itruediv__"),
          *_in_place("add", "sub", "mul", "div", "pow"),
          doc="`+ - * / **`, in place too; `alpha=` of add/sub")
def _binary(w, c):
    name = _op_name(c.func).rstrip("_") if not _op_name(c.func).startswith(
        "__") else _op_name(c.func)
    op = _BINARY[name]
    if op == "div" and c.kwargs.get("rounding_mode", c.arg(
            2, "rounding_mode")) is not None:
        raise w.error("div with a rounding_mode is not a true division")
    a, b = c.args[0], c.arg(1, "other")
    if name in _REVERSED:
        a, b = b, a
    alpha = c.kwargs.get("alpha", 1)
    dtype = c.ex[0].dtype
    attrs = ["nnx.in_place = 0"] if c.in_place else []
    if alpha != 1:
        if _is_sym(alpha):
            raise w.error("a run-time 'alpha' has no nnx form")
        bex = tuple(_concrete(b, k) * alpha if isinstance(_concrete(b, k),
                    (int, float)) else _concrete(b, k) * alpha
                    for k in range(2))
        b = w.binary("mul", w.as_value(b, dtype), w.scalar(alpha, dtype),
                     bex, None)
    if dtype == torch.bool and op in ("mul", "add", "maximum", "minimum"):
        # On bools: and / or (nnx's arithmetic takes no i1).
        op = "logical_and" if op in ("mul", "minimum") else "logical_or"
    if op == "pow" and not _is_sym(b) and not isinstance(b, Value) and b == 2:
        x = w.as_value(a, dtype)
        return w.binary("mul", x, x, c.ex, c.label, attrs)
    return w.binary(op, w.as_value(a, dtype), w.as_value(b, dtype), c.ex,
                    c.label, attrs)


_COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


@_handles("comparison", *_both(*_COMPARE), *_both("greater", "less",
          "greater_equal", "less_equal", "not_equal"),
          doc="`== != < <= > >=`")
def _compare(w, c):
    name = {"greater": "gt", "less": "lt", "greater_equal": "ge",
            "less_equal": "le", "not_equal": "ne"}.get(_op_name(c.func),
                                                       _op_name(c.func))
    a, b = c.args[0], c.arg(1, "other")
    dtype = torch.result_type(_concrete(a, 0), _concrete(b, 0))
    return w.binary(name, w.as_value(a, dtype), w.as_value(b, dtype), c.ex,
                    c.label)


@_handles("logical", *_both("logical_and", "logical_or", "logical_xor",
                            "logical_not", "bitwise_not", "bitwise_and",
                            "bitwise_or", "bitwise_xor"),
          *_methods("__and__", "__or__", "__xor__", "__invert__", "__rand__",
                    "__ror__", "__rxor__", "__iand__", "__ior__", "__ixor__"),
          *_in_place("logical_and", "logical_or", "logical_xor",
                     "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "bitwise_not"),
          doc="`~ & | ^` and `logical_*` on bool tensors")
def _logical(w, c):
    name = _op_name(c.func).strip("_")
    if name.startswith("i") and name[1:] in ("and", "or", "xor"):
        name = name[1:]
    kind = {"logical_and": "and", "bitwise_and": "and", "and": "and",
            "rand": "and", "logical_or": "or", "bitwise_or": "or", "or": "or",
            "ror": "or", "logical_xor": "xor", "bitwise_xor": "xor",
            "xor": "xor", "rxor": "xor", "invert": "not", "bitwise_not": "not",
            "logical_not": "not"}[name]
    a = c.args[0]
    if c.ex[0].dtype != torch.bool or (name.startswith("bitwise") or
                                       kind == "not" and name != "logical_not"
                                       ) and a.dtype != torch.bool:
        raise w.error(f"'{name}' on {a.dtype} tensors (bitwise integer "
                      "operations) has no nnx form; only bool tensors")
    x = w.as_value(a, torch.bool)
    if kind == "not":
        return w.binary("logical_xor", x, w.scalar(True, torch.bool), c.ex,
                        c.label)
    y = w.as_value(c.arg(1, "other"), torch.bool)
    return w.binary("logical_" + kind, x, y, c.ex, c.label)


def _where_op(w, cond, a, b, ex, label):
    cond = w.as_value(cond, torch.bool)
    a, b = w.as_value(a, ex[0].dtype), w.as_value(b, ex[0].dtype)
    return w.value("where", ex, f"nnx.fn.where {cond.name}, {a.name}, "
                   f"{b.name}", f"{cond.type}, {a.type}, {b.type} -> {{r}}",
                   label=label)


@_handles("where", *_both("where"), doc="three-argument `where`")
def _where(w, c):
    if len(c.args) + len(c.kwargs) != 3:
        raise w.error("torch.where with one argument (nonzero) has no nnx "
                      "form: its result size depends on the data")
    return _where_op(w, c.args[0], c.arg(1, "input"), c.arg(2, "other"),
                     c.ex, c.label)


@_handles("masked_fill", *_methods("masked_fill", "masked_fill_"),
          *_torch("masked_fill"))
def _masked_fill(w, c):
    return _where_op(w, c.arg(1, "mask"), c.arg(2, "value"), c.args[0], c.ex,
                     c.label)


_MATH = {"exp": "exp", "sqrt": "sqrt", "rsqrt": "rsqrt", "cos": "cos",
         "sin": "sin", "tanh": "tanh", "log": "log", "erf": "erf",
         "floor": "floor", "ceil": "ceil", "log1p": "log1p", "expm1": "expm1",
         "round": "roundeven", "abs": "absf", "exp2": "exp2", "log2": "log2",
         "trunc": "trunc", "tan": "tan", "sinh": "sinh", "cosh": "cosh",
         "asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh",
         "acosh": "acosh", "atanh": "atanh", "log10": "log10",
         "erfc": "erfc"}


@_handles("math", *_both(*_MATH), *_in_place(*_MATH), *_methods("__abs__"),
          doc="`exp sqrt rsqrt cos sin tanh log erf floor ceil log1p expm1 "
              "round abs exp2 log2 trunc tan sinh cosh asin acos atan asinh "
              "acosh atanh log10 erfc` (upstream `math`)")
def _math(w, c):
    name = _op_name(c.func).strip("_").rstrip("_")
    x = c.args[0]
    if not x.examples[0].is_floating_point():
        if name == "abs":
            return w.value("abs", c.ex, f"math.absi {x.name}", label=c.label)
        if name in ("floor", "ceil", "round", "trunc"):
            return x
        x = w.cast(x, c.ex[0].dtype)
    if c.kwargs.get("decimals"):
        raise w.error("round(decimals=) has no nnx form")
    return w.value(name, c.ex, f"math.{_MATH[name]} {x.name}", label=c.label)


@_handles("neg", *_both("neg", "negative"), *_methods("__neg__", "neg_"))
def _neg(w, c):
    x = c.args[0]
    if c.ex[0].is_floating_point():
        return w.value("neg", c.ex, f"arith.negf {x.name}", label=c.label)
    return w.binary("sub", w.scalar(0, x.dtype), x, c.ex, c.label)


@_handles("clamp", *_both("clamp", "clip", "clamp_min", "clamp_max"),
          *_in_place("clamp", "clamp_min", "clamp_max"),
          doc="`clamp`/`clip` (`min=`, `max=`, numbers or tensors)")
def _clamp(w, c):
    name = _op_name(c.func).rstrip("_")
    if name == "clamp_min":
        lo, hi = c.arg(1, "min"), None
    elif name == "clamp_max":
        lo, hi = None, c.arg(1, "max")
    else:
        lo, hi = c.arg(1, "min"), c.arg(2, "max")
    return _clamp_op(w, c, lo, hi)


@_handles("hardtanh", F.hardtanh, F.relu6, *[getattr(torch._C._nn, n, None)
                                              for n in ("hardtanh",
                                                        "hardtanh_", "relu6",
                                                        "relu6_")],
          getattr(F, "hardtanh_", None),
          doc="`F.hardtanh`, `F.relu6` (`nn.Hardtanh`, `nn.ReLU6`): a clamp")
def _hardtanh(w, c):
    if _op_name(c.func).rstrip("_") == "relu6":
        return _clamp_op(w, c, 0.0, 6.0)
    return _clamp_op(w, c, float(c.arg(1, "min_val", -1.0)),
                     float(c.arg(2, "max_val", 1.0)))


def _clamp_op(w, c, lo, hi):
    """`x` clamped to [lo, hi] (either None: no bound)."""
    x = c.args[0]
    dtype = c.ex[0].dtype
    y = w.cast(x, dtype)
    steps = [(op, b) for op, b in (("maximum", lo), ("minimum", hi))
             if b is not None]
    for i, (op, b) in enumerate(steps):
        last = i == len(steps) - 1
        ex = c.ex if last else tuple(
            torch.clamp_min(y.examples[k], _concrete(b, k))
            if not isinstance(b, Value) else
            torch.maximum(y.examples[k], b.examples[k]) for k in range(2))
        y = w.binary(op, y, w.as_value(b, dtype), ex, c.label if last else None)
    return y


_ACTIVATIONS = {"relu": "relu", "silu": "silu", "sigmoid": "sigmoid",
                "gelu": "gelu"}


@_handles("activation", *_both("relu", "sigmoid", "silu"),
          *_in_place("relu", "sigmoid"), F.relu, F.silu, F.gelu, F.sigmoid,
          getattr(torch._C._nn, "silu", None), getattr(F, "relu_", None),
          doc="`relu silu sigmoid gelu` (`approximate=`)")
def _activation(w, c):
    name = _op_name(c.func).rstrip("_")
    x = w.as_value(c.args[0], c.ex[0].dtype)
    attrs = []
    if name == "gelu":
        approx = c.arg(1, "approximate", "none")
        attrs.append(f"approximate = #nnx.gelu_approximation<{approx}>")
    return w.value(name, c.ex, f"nnx.fn.{name} {x.name}", attrs=attrs,
                   label=c.label)


@_handles("tanh", F.tanh)
def _f_tanh(w, c):
    x = c.args[0]
    return w.value("tanh", c.ex, f"math.tanh {x.name}", label=c.label)


def _softmax_dim(w, c, x):
    dim = c.arg(1, "dim")
    if dim is None:
        raise w.error(f"{c.label} needs an explicit dim")
    return _norm_dim(dim, x.rank, w.where())


def _softmax_dtype(c):
    dtype = c.kwargs.get("dtype")
    if dtype is None and len(c.args) > 2 and isinstance(c.args[2],
                                                        torch.dtype):
        dtype = c.args[2]
    if dtype is None and len(c.args) > 3 and isinstance(c.args[3],
                                                        torch.dtype):
        dtype = c.args[3]  # F.softmax(input, dim, _stacklevel, dtype)
    return dtype


@_handles("softmax", *_both("softmax"), F.softmax)
def _softmax(w, c):
    x = w.cast(c.args[0], _softmax_dtype(c) or c.args[0].dtype)
    d = _softmax_dim(w, c, x) - x.rank
    return w.value("softmax", c.ex, f"nnx.fn.softmax {x.name}",
                   attrs=[f"dim = {d} : i64"], label=c.label)


@_handles("log_softmax", *_both("log_softmax"), F.log_softmax,
          doc="as `x - max - log(sum(exp(x - max)))`, as torch computes it")
def _log_softmax(w, c):
    x = w.cast(c.args[0], _softmax_dtype(c) or c.args[0].dtype)
    d = _softmax_dim(w, c, x)
    m = _reduce_op(w, "amax", x, [d], True, None)
    s = w.binary("sub", x, m, tuple(x.examples[k] - m.examples[k]
                                    for k in range(2)), None)
    e = w.value("exp", tuple(torch.exp(t) for t in s.examples),
                f"math.exp {s.name}")
    z = _reduce_op(w, "sum", e, [d], True, None)
    lz = w.value("log", tuple(torch.log(t) for t in z.examples),
                 f"math.log {z.name}")
    return w.binary("sub", s, lz, c.ex, c.label)


@_handles("dropout", F.dropout, *_torch("dropout"),
          doc="`F.dropout` (`training=` as given)")
def _dropout(w, c):
    x = c.args[0]
    p = float(c.arg(1, "p", 0.5))
    training = bool(c.arg(2, "training", True if c.func is F.dropout else
                          False))
    if c.func is not F.dropout:  # torch.dropout(input, p, train)
        training = bool(c.arg(2, "train", False))
    attrs = [f"p = {scalar_literal(p, 'f64')} : f64"]
    if training:
        attrs.append("train")
    return w.value("dropout", c.ex, f"nnx.fn.dropout {x.name}", attrs=attrs,
                   label=c.label)


# -----------------------------------------------------------------------------
# Reductions and matmul
# -----------------------------------------------------------------------------

def _reduce_op(w, op, x, dims, keep, label, ex=None):
    if x.rank == 0:  # a reduction of a scalar is the scalar
        return x
    attrs = ["dims = array<i64: " + ", ".join(map(str, dims)) + ">"]
    if keep:
        attrs.append("keepdim")
    if ex is None:
        fn = {"amax": torch.amax, "amin": torch.amin, "sum": torch.sum,
              "mean": torch.mean}[op]
        ex = tuple(fn(t, dim=dims, keepdim=keep) if dims else
                   fn(t, dim=list(range(t.dim())), keepdim=keep)
                   for t in x.examples)
    return w.value(op, ex, f"nnx.fn.{op} {x.name}", f"{x.type} -> {{r}}",
                   attrs, label)


def _reduce_dims(w, dim, rank):
    if dim is None:
        return list(range(rank))
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    return [_norm_dim(d, rank, w.where()) for d in dims]


@_handles("sum/mean", *_both("sum", "mean"), doc="`sum mean` (`dim=`, "
          "`keepdim=`, `dtype=`)")
def _reduce(w, c):
    x = c.args[0]
    if c.kwargs.get("dtype") is not None:
        x = w.cast(x, c.kwargs["dtype"])
    elif c.ex[0].dtype != x.dtype:  # sum of ints / bools gives i64
        x = w.cast(x, c.ex[0].dtype)
    dims = _reduce_dims(w, c.arg(1, "dim"), x.rank)
    keep = bool(c.arg(2, "keepdim", False))
    return _reduce_op(w, _op_name(c.func), x, dims, keep, c.label, c.ex)


@_handles("any/all", *_both("any", "all"), doc="`any all` (`dim=`, "
          "`keepdim=`), as a sum of the flags")
def _any(w, c):
    name = _op_name(c.func)
    x = c.args[0]
    dims = _reduce_dims(w, c.arg(1, "dim"), x.rank)
    keep = bool(c.arg(2, "keepdim", False))
    flags = w.cast(x, torch.bool)
    if name == "all":  # all(x) = not any(not x)
        flags = w.binary("logical_xor", flags, w.scalar(True, torch.bool),
                         tuple(~e for e in flags.examples), None)
    n = w.cast(flags, torch.int64)
    total = _reduce_op(w, "sum", n, dims, keep, None)
    ex = c.ex if name == "any" else tuple(~e for e in c.ex)
    res = w.binary("gt", total, w.scalar(0, torch.int64), ex,
                   c.label if name == "any" else None)
    if name == "any":
        return res
    return w.binary("logical_xor", res, w.scalar(True, torch.bool), c.ex,
                    c.label)


@_handles("amax/amin", *_both("amax", "amin"))
def _amax(w, c):
    x = c.args[0]
    dims = _reduce_dims(w, c.arg(1, "dim", ()), x.rank) \
        if c.arg(1, "dim", ()) != () else list(range(x.rank))
    return _reduce_op(w, _op_name(c.func), x, dims,
                      bool(c.arg(2, "keepdim", False)), c.label, c.ex)


@_handles("max/min", *_both("max", "min", "argmax", "argmin"),
          doc="`max`/`min` (whole tensor, `dim=` with indices, or "
              "elementwise of two), `argmax`/`argmin`")
def _max(w, c):
    name = _op_name(c.func)
    x = c.args[0]
    other = c.arg(1, "other") if "other" in c.kwargs or (
        len(c.args) > 1 and isinstance(c.args[1], Value)) else None
    if other is not None:
        op = "maximum" if name == "max" else "minimum"
        dtype = c.ex[0].dtype
        return w.binary(op, w.as_value(x, dtype), w.as_value(other, dtype),
                        c.ex, c.label)
    dim = c.arg(1, "dim")
    keep = bool(c.arg(2, "keepdim", False))
    if dim is None:
        if name.startswith("arg"):
            raise w.error(f"{name} without dim has no nnx form")
        return _reduce_op(w, "amax" if name == "max" else "amin", x,
                          list(range(x.rank)), False, c.label, c.ex)
    d = _norm_dim(dim, x.rank, w.where())
    largest = name in ("max", "argmax")
    vals, idx = _topk(w, x, 1, d, largest, None)
    if not keep:
        sq = tuple(e.squeeze(d) for e in idx.examples)
        idx = w.reshape(idx, sq, None, None, "squeeze")
        if not name.startswith("arg"):
            sv = tuple(e.squeeze(d) for e in vals.examples)
            vals = w.reshape(vals, sv, None, c.label, "squeeze")
    if name.startswith("arg"):
        return idx
    return (vals, idx)


def _topk(w, x, k, d, largest, label, ex=None):
    if ex is None:
        ex = tuple(torch.topk(t, k, dim=d, largest=largest) for t in
                   x.examples)
    vt = ex[0][0], ex[1][0]
    it = ex[0][1], ex[1][1]
    from .export_ir import tensor_type
    v_type = tensor_type(vt, w.where())
    i_type = tensor_type(it, w.where())
    vals = Value(w.name("topk"), vt, v_type)
    idx = Value(w.name("indices"), it, i_type)
    attrs = [f"k = {k} : i64", f"dim = {d} : i64"]
    if largest:
        attrs.append("largest")
    attrs.append("sorted")
    w.emit([vals.name, idx.name], f"nnx.fn.topk {x.name}",
           f"{x.type} -> {v_type}, {i_type}", attrs, label)
    return vals, idx


@_handles("topk", *_both("topk"), doc="`topk` (values and indices)")
def _topk_handler(w, c):
    x = c.args[0]
    k = c.arg(1, "k")
    if _is_sym(k):
        raise w.error("topk with a run-time k has no nnx form")
    d = _norm_dim(c.arg(2, "dim", -1), x.rank, w.where())
    vals, idx = _topk(w, x, int(k), d, bool(c.arg(3, "largest", True)),
                      c.label, c.ex)
    return (vals, idx)


@_handles("cumsum", *_both("cumsum"), *_in_place("cumsum"))
def _cumsum(w, c):
    x = c.args[0]
    if c.kwargs.get("dtype") is not None or c.ex[0].dtype != x.dtype:
        x = w.cast(x, c.ex[0].dtype)
    d = _norm_dim(c.arg(1, "dim"), x.rank, w.where())
    return w.value("cumsum", c.ex, f"nnx.fn.cumsum {x.name}",
                   attrs=[f"dim = {d} : i64"], label=c.label)


def _matmul_op(w, a, b, ex, label):
    if a.rank < 2 or b.rank < 2:
        va = a if a.rank >= 2 else w.reshape(
            a, tuple(t.unsqueeze(0) for t in a.examples), None, None,
            "unsqueeze")
        vb = b if b.rank >= 2 else w.reshape(
            b, tuple(t.unsqueeze(-1) for t in b.examples), None, None,
            "unsqueeze")
        mex = tuple(va.examples[k] @ vb.examples[k] for k in range(2))
        m = w.value("matmul", mex, f"nnx.fn.matmul {va.name}, {vb.name}",
                    f"{va.type}, {vb.type} -> {{r}}", label=label)
        return w.reshape(m, ex, None, None, "squeeze")
    return w.value("matmul", ex, f"nnx.fn.matmul {a.name}, {b.name}",
                   f"{a.type}, {b.type} -> {{r}}", label=label)


@_handles("matmul", *_both("matmul", "bmm", "mm"), *_methods("__matmul__",
                                                              "__rmatmul__"),
          doc="`@ matmul bmm mm` (rank-1 operands too)")
def _matmul(w, c):
    a, b = c.args[0], c.arg(1, "other", c.arg(1, "mat2"))
    if _op_name(c.func) == "__rmatmul__":
        a, b = b, a
    dtype = c.ex[0].dtype
    return _matmul_op(w, w.as_value(a, dtype), w.as_value(b, dtype), c.ex,
                      c.label)


def _transpose_last(w, v):
    perm = list(range(v.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    ex = tuple(t.transpose(-1, -2) for t in v.examples)
    return w.value("transpose", ex, f"nnx.fn.permute {v.name} "
                   f"[{', '.join(map(str, perm))}]", f"{v.type} -> {{r}}")


@_handles("linear", F.linear, doc="`F.linear`: a call of the Linear child "
          "whose weight and bias it reads, else `x @ W.T + b`")
def _linear(w, c):
    x, weight, bias = c.args[0], c.arg(1, "weight"), c.arg(2, "bias")
    dtype = c.ex[0].dtype
    wt = _transpose_last(w, w.as_value(weight, dtype))
    if bias is None:
        return _matmul_op(w, x, wt, c.ex, c.label)
    mex = tuple(x.examples[k] @ wt.examples[k] for k in range(2))
    m = _matmul_op(w, x, wt, mex, None)
    return w.binary("add", m, w.as_value(bias, dtype), c.ex, c.label)


def _bmm_scaled(w, c, mm):
    inp, b1, b2 = c.args[0], c.arg(1, "batch1", c.arg(1, "mat1")), \
        c.arg(2, "batch2", c.arg(2, "mat2"))
    beta, alpha = c.kwargs.get("beta", 1), c.kwargs.get("alpha", 1)
    dtype = c.ex[0].dtype
    b1, b2 = w.as_value(b1, dtype), w.as_value(b2, dtype)
    mex = tuple(b1.examples[k] @ b2.examples[k] for k in range(2))
    prod = _matmul_op(w, b1, b2, mex, None)
    if alpha != 1:
        prod = w.binary("mul", prod, w.scalar(alpha, dtype),
                        tuple(e * alpha for e in prod.examples), None)
    if beta == 0:
        return prod
    x = w.as_value(inp, dtype)
    if beta != 1:
        x = w.binary("mul", x, w.scalar(beta, dtype),
                     tuple(e * beta for e in x.examples), None)
    return w.binary("add", x, prod, c.ex, c.label)


@_handles("baddbmm/addmm", *_both("baddbmm", "addmm", "addbmm"),
          doc="`beta * input + alpha * (a @ b)`")
def _baddbmm(w, c):
    if _op_name(c.func) == "addbmm":
        raise w.error("addbmm (a sum over the batch) has no nnx form")
    return _bmm_scaled(w, c, True)


# -----------------------------------------------------------------------------
# Shapes
# -----------------------------------------------------------------------------

@_handles("reshape", *_both("view", "reshape", "flatten", "unsqueeze",
                            "squeeze", "unflatten"),
          *_in_place("unsqueeze", "squeeze"), *_methods("view_as",
                                                        "reshape_as"),
          doc="`view reshape flatten unflatten unsqueeze squeeze view_as`")
def _reshape(w, c):
    x = c.args[0]
    name = _op_name(c.func).rstrip("_")
    hints = None
    if name in ("view", "reshape"):
        if len(c.args) == 2 and isinstance(c.args[1], torch.dtype):
            raise w.error("view(dtype) has no nnx form")
        hints = _shape_args(c.args[1:] or [c.kwargs.get("shape",
                                                        c.kwargs.get("size"))])
    elif name in ("view_as", "reshape_as"):
        hints = w.dims(c.args[1])
    return w.reshape(x, c.ex, hints, c.label, name)


@_handles("expand", *_methods("expand", "expand_as"), *_both("broadcast_to"),
          doc="`expand expand_as broadcast_to`")
def _expand(w, c):
    x = c.args[0]
    if _op_name(c.func) == "expand_as":
        hints = w.dims(c.args[1])
    else:
        hints = _shape_args(c.args[1:] or [c.kwargs.get("size")])
        lead = len(hints) - x.rank
        hints = [w.dim(x, i - lead) if not _is_sym(h) and h == -1 else h
                 for i, h in enumerate(hints)]
    sizes = w.sizes_for(c.ex, hints, x)
    y = w.value("expand", c.ex, f"nnx.fn.expand {x.name} "
                f"{w.size_list(sizes)}", f"{x.type} -> {{r}}", label=c.label)
    y.alias = ("expand", x)
    return y


@_handles("repeat", *_methods("repeat"), *_both("repeat_interleave"),
          doc="`repeat` (counts constant or run-time), `repeat_interleave` "
              "(a constant count)")
def _repeat(w, c):
    x = c.args[0]
    name = _op_name(c.func)
    if name == "repeat":
        reps = _shape_args(c.args[1:] or [c.kwargs.get("repeats")])
        lead = len(reps) - x.rank
        dims = [1] * lead + w.dims(x)
        # [r0, d0, r1, d1, ...] by expand, then merged pairs by reshape.
        inter = [v for d in dims for v in (1, d)]
        sizes = [v for r, d in zip(reps, dims) for v in (r, d)]
        src = tuple(t.reshape([v for d in ([1] * lead + list(t.shape))
                               for v in (1, d)]) for t in x.examples)
        y = w.reshape(x, src, inter, None, "view")
        eex = tuple(src[k].expand([v for r, d in zip(
            _concrete(reps, k), [1] * lead + list(x.examples[k].shape))
            for v in (r, d)]) for k in range(2))
        e = w.value("expand", eex, f"nnx.fn.expand {y.name} "
                    f"{w.size_list(w.sizes_for(eex, sizes, y))}",
                    f"{y.type} -> {{r}}")
        return w.reshape(e, c.ex, None, c.label, "repeat")
    reps = c.arg(1, "repeats")
    d = c.arg(2, "dim")
    if isinstance(reps, Value) or _is_sym(reps) or d is None:
        raise w.error("repeat_interleave needs a constant count and a dim")
    d = _norm_dim(d, x.rank, w.where())
    dims = w.dims(x)
    uex = tuple(t.unsqueeze(d + 1) for t in x.examples)
    u = w.reshape(x, uex, dims[:d + 1] + [1] + dims[d + 1:], None,
                  "unsqueeze")
    eex = tuple(t.expand(*t.shape[:d + 1], reps, *t.shape[d + 2:])
                for t in uex)
    esz = w.sizes_for(eex, dims[:d + 1] + [reps] + dims[d + 1:], u)
    e = w.value("expand", eex, f"nnx.fn.expand {u.name} {w.size_list(esz)}",
                f"{u.type} -> {{r}}")
    return w.reshape(e, c.ex, None, c.label, "repeat_interleave")


@_handles("permute", *_both("transpose", "permute", "t", "swapaxes",
                            "swapdims", "movedim"), *_in_place("transpose",
                                                               "t"),
          T.T, T.mT, doc="`transpose permute t swapaxes movedim .T .mT`")
def _permute(w, c):
    x = c.args[0]
    r = x.rank
    key = _key(c.func)
    name = "T" if key is T.T else ("mT" if key is T.mT else _op_name(c.func))
    name = name.rstrip("_")
    perm = list(range(r))
    if name in ("transpose", "swapaxes", "swapdims"):
        i = _norm_dim(c.arg(1, "dim0"), r, w.where())
        j = _norm_dim(c.arg(2, "dim1"), r, w.where())
        perm[i], perm[j] = perm[j], perm[i]
    elif name in ("t", "T"):
        perm = perm[::-1]
    elif name == "mT":
        perm[-1], perm[-2] = perm[-2], perm[-1]
    elif name == "movedim":
        src = _norm_dim(c.arg(1, "source"), r, w.where())
        dst = _norm_dim(c.arg(2, "destination"), r, w.where())
        perm.pop(src)
        perm.insert(dst, src)
    else:
        perm = [_norm_dim(d, r, w.where())
                for d in _shape_args(c.args[1:] or [c.kwargs.get("dims")])]
    if perm == list(range(r)):
        return x
    label = c.label if name not in ("T", "mT") else name
    return w.permute(x, perm, c.ex, label,
                     "transpose" if name != "permute" else "permute")


@_handles("identity", *_methods("contiguous", "clone", "detach",
                                "requires_grad_", "cpu", "detach_"),
          *_torch("clone"), doc="`contiguous clone detach cpu`: no op")
def _identity(w, c):
    return c.args[0]


@_handles("cast", *_methods("to", "type", "type_as", "float", "double",
                            "half", "bfloat16", "long", "int", "bool", "short"),
          doc="dtype casts (`.to`, `.float()`, `.type_as`, ...)")
def _to(w, c):
    x = c.args[0]
    if c.ex[0].dtype == x.dtype:
        return x
    return w.cast(x, c.ex[0].dtype, c.label)


def _size_value(w, x, d):
    return w.dim(x, _norm_dim(d, x.rank, w.where()))


# -----------------------------------------------------------------------------
# Indexing
# -----------------------------------------------------------------------------

def _index_items(w, x, idx):
    items = list(idx) if isinstance(idx, tuple) else [idx]
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if items.count(Ellipsis) > 1 or used > x.rank:
        raise w.error(f"index {idx!r} does not fit rank {x.rank}")
    if Ellipsis in items:
        e = items.index(Ellipsis)
        items[e:e + 1] = [slice(None)] * (x.rank - used)
    else:
        items += [slice(None)] * (x.rank - used)
    return items


def _is_advanced(i):
    return isinstance(i, (Value, list, torch.Tensor)) and not isinstance(
        i, bool)


@_handles("getitem", T.__getitem__, doc="`x[...]`: ints, slices (steps, "
          "negative and run-time bounds), `None`, `...`, and one list or "
          "tensor index (a gather)")
def _getitem(w, c):
    x, idx = c.args
    items = _index_items(w, x, idx)
    adv = [k for k, i in enumerate(items) if _is_advanced(i)]
    if adv:
        return _advanced_index(w, c, x, items, adv)
    return _basic_index(w, x, items, c.ex, c.label)


def _basic_index(w, x, items, ex, label):
    offsets, sizes, strides, d = [], [], [], 0
    for it in items:
        if it is None:
            continue
        dim = w.dim(x, d)
        if isinstance(it, slice):
            o, s, st = w._slice_dim(it, dim)
        else:
            o, s, st = w._bound(it, dim, 0), None, 1
        offsets.append(o)
        sizes.append(s)
        strides.append(st)
        d += 1
    plain = tuple(i for i in items if i is not None)
    sex = tuple(e[_concrete(plain, k)] for k, e in enumerate(x.examples))
    has_new = any(i is None for i in items)
    y = w.extract_slice(x, offsets, sizes, strides, sex,
                        None if has_new else label)
    if not has_new:
        return y
    hints = iter(w.dims(y))
    return w.reshape(y, ex, [1 if i is None else next(hints) for i in items
                             if i is None or isinstance(i, slice)], label)


def _advanced_index(w, c, x, items, adv):
    """One list / tensor index among slices: the slices first, then an
    `index_select` along the indexed dim; a single constant index in a
    list (`x[:, [-1], :]`) is a slice of size 1."""
    if len(adv) > 1 or any(i is None for i in items):
        # Several index tensors (`x[torch.arange(b), idx]`): aten.index.
        from .export_decomp import write_decomposed
        return write_decomposed(w, c)
    k = adv[0]
    d = sum(1 for i in items[:k] if not isinstance(i, int) or True)
    # Dims before k that are ints are dropped by the basic index below.
    d = sum(1 for i in items[:k] if not isinstance(i, int) or _is_sym(i))
    index = items[k]
    if isinstance(index, list) and len(index) == 1 and isinstance(
            index[0], int) and not isinstance(index[0], bool):
        i0 = index[0]
        sl = slice(i0, None if i0 == -1 else i0 + 1)
        items2 = list(items)
        items2[k] = sl
        return _basic_index(w, x, items2, c.ex, c.label)
    items2 = list(items)
    items2[k] = slice(None)
    bex = tuple(e[_concrete(tuple(items2), j)] for j, e in
                enumerate(x.examples))
    y = _basic_index(w, x, items2, bex, None)
    if isinstance(index, (list, torch.Tensor)):
        t = torch.as_tensor(index)
        if t.dtype == torch.bool:
            raise w.error("indexing with a bool mask has no nnx form: its "
                          "result size depends on the data")
        n = w.dim(y, d)
        iv = w.constant(t.to(torch.int64))
        if (t < 0).any():
            iv = _wrap_negative(w, iv, n)
    else:
        iv = index
        if iv.dtype == torch.bool:
            raise w.error("indexing with a bool mask has no nnx form: its "
                          "result size depends on the data")
        iv = _wrap_negative(w, iv, w.dim(y, d))
    return _take(w, y, iv, d, c.ex, c.label)


def _wrap_negative(w, iv, n):
    """`where(i < 0, i + n, i)`, as Python indexing reads an index."""
    zero = w.scalar(0, iv.dtype)
    lt = w.binary("lt", iv, zero, tuple(e < 0 for e in iv.examples), None)
    nv = w.size_tensor(n, iv.dtype)
    ns = n.examples if isinstance(n, Size) else (n, n)
    plus = w.binary("add", iv, nv, tuple(e + ns[k] for k, e in
                                         enumerate(iv.examples)), None)
    ex = tuple(torch.where(e < 0, e + ns[k], e) for k, e in
               enumerate(iv.examples))
    return _where_op(w, lt, plus, iv, ex, None)


def _take(w, x, index, d, ex, label):
    """x's dim `d` indexed by the tensor `index` of any rank: the result
    has x's dims with `d` replaced by index's."""
    flat = index
    if index.rank != 1:
        fex = tuple(e.reshape(-1) for e in index.examples)
        flat = w.reshape(index, fex, None, None, "flatten")
    sex = tuple(torch.index_select(x.examples[k], d, flat.examples[k])
                for k in range(2))
    label_sel = label if index.rank == 1 else None
    sel = w.value("index_select", sex, f"nnx.fn.index_select {x.name}, "
                  f"{flat.name}", f"{x.type}, {flat.type} -> {{r}}",
                  attrs=[f"dim = {d} : i64"], label=label_sel)
    if index.rank == 1:
        return sel
    hints = w.dims(x)[:d] + w.dims(index) + w.dims(x)[d + 1:]
    return w.reshape(sel, ex, hints, label, "index")


@_handles("index_select", *_both("index_select"))
def _index_select(w, c):
    x, d, index = c.args[0], c.arg(1, "dim"), c.arg(2, "index")
    d = _norm_dim(d, x.rank, w.where())
    return _take(w, x, w.as_value(index, torch.int64), d, c.ex, c.label)


@_handles("gather", *_both("gather", "take_along_dim"))
def _gather(w, c):
    x, d, index = c.args[0], c.arg(1, "dim"), c.arg(2, "index")
    if _op_name(c.func) == "take_along_dim":
        index, d = c.arg(1, "indices"), c.arg(2, "dim")
    d = _norm_dim(d, x.rank, w.where())
    iv = w.as_value(index, index.dtype if isinstance(index, Value) else
                    torch.int64)
    return w.value("gather", c.ex, f"nnx.fn.gather {x.name}, {iv.name}",
                   f"{x.type}, {iv.type} -> {{r}}",
                   attrs=[f"dim = {d} : i64"], label=c.label)


@_handles("embedding", F.embedding, doc="`F.embedding`: a call of the "
          "Embedding child whose weight it reads, else an `index_select`")
def _embedding(w, c):
    ids, weight = c.args[0], c.arg(1, "weight")
    if c.arg(3, "max_norm") is not None:
        raise w.error("F.embedding with max_norm has no nnx form")
    return _take(w, w.as_value(weight, c.ex[0].dtype),
                 w.as_value(ids, torch.int64), 0, c.ex, c.label)


@_handles("split/chunk/unbind", *_both("split", "chunk", "unbind",
                                       "tensor_split"),
          getattr(torch.functional, "split", None),
          doc="`split chunk unbind` (pieces of constant size)")
def _split(w, c):
    x = c.args[0]
    name = _op_name(c.func)
    default = 0
    d = _norm_dim(c.arg(1 if name == "unbind" else 2, "dim", default), x.rank,
                  w.where())
    out, offset = [], 0
    for p0, p1 in zip(c.ex[0], c.ex[1]):
        if name == "unbind":
            sz = 1
        else:
            if p0.shape[d] != p1.shape[d]:
                raise w.error("a split into pieces of run-time size has no "
                              "nnx form")
            sz = int(p0.shape[d])
        offsets = [0] * x.rank
        offsets[d] = offset
        sizes = w.dims(x)
        sizes[d] = None if name == "unbind" else sz
        out.append(w.extract_slice(x, offsets, sizes, [1] * x.rank, (p0, p1),
                                   None))
        offset += sz
    return tuple(out)


@_handles("cat/stack", *_torch("cat", "concat", "concatenate", "stack",
                               "hstack", "vstack"),
          doc="`cat stack` of tensors (cast to the result's dtype)")
def _cat(w, c):
    name = _op_name(c.func)
    ts = [t for t in list(c.arg(0, "tensors"))]
    if not all(isinstance(t, Value) for t in ts):
        raise w.error(f"{name} of something that is not a tensor")
    dtype = c.ex[0].dtype
    ts = [w.cast(t, dtype) for t in ts]
    dim = c.arg(1, "dim", c.kwargs.get("axis", 0))
    if name in ("hstack", "vstack"):
        dim = 0 if name == "vstack" or ts[0].rank == 1 else 1
        if name == "vstack":  # rows: a vector is a 1 x n matrix
            ts = [w.reshape(t, tuple(e.reshape(1, -1) for e in t.examples),
                            [1] + w.dims(t), None, "row") if t.rank == 1
                  else t for t in ts]
    if name == "stack":
        d = _norm_dim(dim, ts[0].rank + 1, w.where())
        parts = []
        for t in ts:
            uex = tuple(e.unsqueeze(d) for e in t.examples)
            dims = w.dims(t)
            parts.append(w.reshape(t, uex, dims[:d] + [1] + dims[d:], None,
                                   "unsqueeze"))
        ts = parts
    else:
        d = _norm_dim(dim, ts[0].rank, w.where())
        ts = [t for t in ts if t.examples[0].numel() or t.rank != 1]
    if len(ts) == 1:
        return ts[0]
    return w.value(name, c.ex, f"tensor.concat dim({d}) "
                   + ", ".join(t.name for t in ts),
                   "(" + ", ".join(t.type for t in ts) + ") -> {r}",
                   label=c.label)


# -----------------------------------------------------------------------------
# einsum
# -----------------------------------------------------------------------------

def _einsum_parse(w, eq, n):
    eq = eq.replace(" ", "")
    if "..." in eq:
        raise w.error("einsum with '...' has no nnx form")
    if "->" in eq:
        ins, out = eq.split("->")
    else:
        ins = eq
        letters = [ch for ch in ins.replace(",", "")]
        out = "".join(sorted(ch for ch in set(letters)
                             if letters.count(ch) == 1))
    terms = ins.split(",")
    if len(terms) != n or not all(set(t) <= set(string.ascii_letters)
                                  for t in terms + [out]):
        raise w.error(f"einsum equation '{eq}' does not match {n} operands")
    if any(len(set(t)) != len(t) for t in terms):
        raise w.error(f"einsum '{eq}': a repeated index within one operand "
                      "(a diagonal) has no nnx form")
    return terms, out


def _einsum_reduce(w, v, term, keep):
    """Sums the letters of `term` not in `keep`; returns (value, term)."""
    drop = [i for i, ch in enumerate(term) if ch not in keep]
    if not drop:
        return v, term
    ex = tuple(t.sum(dim=drop) for t in v.examples)
    r = _reduce_op(w, "sum", v, drop, False, None, ex)
    return r, "".join(ch for ch in term if ch in keep)


def _einsum_permute(w, v, term, order):
    perm = [term.index(ch) for ch in order]
    if perm == list(range(len(term))):
        return v
    ex = tuple(t.permute(perm) for t in v.examples)
    return w.value("permute", ex, f"nnx.fn.permute {v.name} "
                   f"[{', '.join(map(str, perm))}]", f"{v.type} -> {{r}}")


@_handles("einsum", getattr(torch, "einsum", None),
          doc="`einsum` of one or two operands, as permute / reshape / "
              "matmul / sum")
def _einsum(w, c):
    eq = c.args[0]
    ops = list(c.args[1:])
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    if len(ops) not in (1, 2) or not all(isinstance(o, Value) for o in ops):
        raise w.error("einsum of more than two operands has no nnx form")
    terms, out = _einsum_parse(w, eq, len(ops))
    dtype = c.ex[0].dtype
    if len(ops) == 1:
        v, t = _einsum_reduce(w, w.cast(ops[0], dtype), terms[0], out)
        r = _einsum_permute(w, v, t, out)
        return r if r is not v else w.value("einsum", c.ex, "nnx.fn.reshape "
                                            f"{v.name} {w.size_list(w.dims(v))}",
                                            f"{v.type} -> {{r}}",
                                            label=c.label)
    (ta, tb) = terms
    a, ta = _einsum_reduce(w, w.cast(ops[0], dtype), ta, tb + out)
    b, tb = _einsum_reduce(w, w.cast(ops[1], dtype), tb, ta + out)
    batch = [ch for ch in ta if ch in tb and ch in out]
    contr = [ch for ch in ta if ch in tb and ch not in out]
    left = [ch for ch in ta if ch not in tb]
    right = [ch for ch in tb if ch not in ta]
    a = _einsum_permute(w, a, ta, batch + left + contr)
    b = _einsum_permute(w, b, tb, batch + contr + right)
    nb = len(batch)
    da, db = w.dims(a), w.dims(b)

    def prod(ds):
        acc = 1
        for s in ds:
            acc = w.arith_size("mul", acc, s)
        return acc

    a3s = da[:nb] + [prod(da[nb:nb + len(left)]), prod(da[nb + len(left):])]
    b3s = db[:nb] + [prod(db[nb:nb + len(contr)]), prod(db[nb + len(contr):])]
    a3ex = tuple(t.reshape(*t.shape[:nb], -1, max(1, math.prod(
        t.shape[nb + len(left):]))) for t in a.examples)
    b3ex = tuple(t.reshape(*t.shape[:nb], max(1, math.prod(
        t.shape[nb:nb + len(contr)])), -1) for t in b.examples)
    a3 = w.reshape(a, a3ex, a3s, None, "view")
    b3 = w.reshape(b, b3ex, b3s, None, "view")
    mex = tuple(a3ex[k] @ b3ex[k] for k in range(2))
    m = w.value("matmul", mex, f"nnx.fn.matmul {a3.name}, {b3.name}",
                f"{a3.type}, {b3.type} -> {{r}}")
    res_term = batch + left + right
    hints = da[:nb + len(left)] + db[nb + len(contr):]
    rex = tuple(t.reshape([*t.shape[:nb]] + [
        {**{ch: a.examples[k].shape[i] for i, ch in enumerate(
            batch + left + contr)}, **{ch: b.examples[k].shape[i] for i, ch
                                       in enumerate(batch + contr + right)}
         }[ch] for ch in left + right]) for k, t in enumerate(mex))
    r = w.reshape(m, rex, hints, None if "".join(res_term) != out else
                  c.label, "view")
    if "".join(res_term) == out:
        return r
    perm = [res_term.index(ch) for ch in out]
    return w.value("permute", c.ex, f"nnx.fn.permute {r.name} "
                   f"[{', '.join(map(str, perm))}]", f"{r.type} -> {{r}}",
                   label=c.label)


# -----------------------------------------------------------------------------
# Pooling
# -----------------------------------------------------------------------------

def _spatial_pair(w, v, name, op, default=None):
    """Argument `name` of `op` as (H, W): an int or a pair of ints."""
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        v = default
    items = list(v) if isinstance(v, (tuple, list)) else [v, v]
    if len(items) == 1:
        items = items * 2
    if len(items) != 2 or any(_is_sym(i) for i in items):
        raise w.error(f"{op} with {name}={v!r} has no nnx form (a static int "
                      "or pair of ints)")
    return tuple(int(i) for i in items)


def _image(w, x, op):
    """`x` as N x C x H x W: an unbatched C x H x W input gets a batch of 1
    (returned as the second result: whether to drop it again)."""
    if x.rank == 4:
        return x, False
    if x.rank != 3:
        raise w.error(f"{op} takes a (N, C, H, W) or (C, H, W) input, got "
                      f"rank {x.rank}")
    ex = tuple(t.unsqueeze(0) for t in x.examples)
    return w.reshape(x, ex, None, None, "unsqueeze"), True


def _pool_result(w, x, ex, text, attrs, label, spatial_follows):
    """Writes pool `text` of `x` (N x C x H x W); the result's dims are
    dynamic exactly where the op's shape rule leaves them so: N and C as
    the input's, H and W as the input's when `spatial_follows` (a window),
    else static (an adaptive pool's output size)."""
    shape = []
    for d in range(4):
        dynamic = x.examples[0].shape[d] != x.examples[1].shape[d]
        if d >= 2 and not spatial_follows:
            dynamic = False
        shape.append("?" if dynamic else str(ex[0].shape[d]))
    t = f"tensor<{'x'.join(shape)}x{mlir_element_type(ex[0].dtype)}>"
    v = Value(w.name(text.split()[0].split(".")[-1]), ex, t)
    w.emit([v.name], f"{text} {x.name}", f"{x.type} -> {t}", attrs, label)
    return v


def _pool_attrs(kernel, stride, padding):
    def arr(p):
        return f"array<i64: {p[0]}, {p[1]}>"
    return [f"kernel_size = {arr(kernel)}", f"stride = {arr(stride)}",
            f"padding = {arr(padding)}"]


def _run_pool(w, c, op, emit):
    """Runs `emit(w, x4, ex4)` on the input as N x C x H x W and gives the
    result the input's rank back."""
    x, unbatched = _image(w, c.args[0], op)
    ex = tuple(t.unsqueeze(0) for t in c.ex) if unbatched else c.ex
    y = emit(x, ex)
    if unbatched:
        y = w.reshape(y, c.ex, None, None, "squeeze")
    return y


@_handles("max_pool2d", F.max_pool2d, torch.max_pool2d,
          doc="`F.max_pool2d`: kernel, stride, padding, dilation, ceil_mode "
          "(not return_indices)")
def _max_pool2d(w, c):
    if c.arg(6, "return_indices", False):
        raise w.error("max_pool2d with return_indices has no nnx form")
    kernel = _spatial_pair(w, c.arg(1, "kernel_size"), "kernel_size",
                           "max_pool2d")
    stride = _spatial_pair(w, c.arg(2, "stride"), "stride", "max_pool2d",
                           kernel)
    padding = _spatial_pair(w, c.arg(3, "padding", 0), "padding",
                            "max_pool2d")
    dilation = _spatial_pair(w, c.arg(4, "dilation", 1), "dilation",
                             "max_pool2d")
    attrs = _pool_attrs(kernel, stride, padding)
    attrs.append(f"dilation = array<i64: {dilation[0]}, {dilation[1]}>")
    if c.arg(5, "ceil_mode", False):
        attrs.append("ceil_mode")
    return _run_pool(w, c, "max_pool2d", lambda x, ex: _pool_result(
        w, x, ex, "nnx.fn.max_pool2d", attrs, c.label, True))


def _is_whole_dim(x, k, d):
    """Whether kernel entry `k` is the size of `x`'s dim `d` on both runs."""
    sizes = tuple(int(t.shape[d]) for t in x.examples)
    if isinstance(k, Size):
        return tuple(k.examples) == sizes
    return sizes[0] == sizes[1] == k


def _adaptive(w, x, ex, out, label):
    for i in range(2):
        sizes = {int(t.shape[2 + i]) for t in x.examples}
        if len(sizes) == 1 and sizes.pop() % out[i]:
            raise w.error(
                f"adaptive_avg_pool2d to {out[i]} of a dim of "
                f"{int(x.examples[0].shape[2 + i])} (dim {2 + i}) has unequal "
                "windows, which have no nnx form (the output size must "
                "divide the input's)")
    attrs = [f"output_size = array<i64: {out[0]}, {out[1]}>"]
    return _pool_result(w, x, ex, "nnx.fn.adaptive_avg_pool2d", attrs, label,
                        False)


@_handles("avg_pool2d", F.avg_pool2d, doc="`F.avg_pool2d`: kernel, stride, "
          "padding, ceil_mode, count_include_pad (not divisor_override); "
          "`F.avg_pool2d(x, x.size(2))` over a whole dynamic image is the "
          "global pool")
def _avg_pool2d(w, c):
    if c.arg(6, "divisor_override") is not None:
        raise w.error("avg_pool2d with divisor_override has no nnx form")
    x0, k = c.args[0], c.arg(1, "kernel_size")
    ks = list(k) if isinstance(k, (tuple, list)) else [k, k]
    stride, padding = c.arg(2, "stride"), c.arg(3, "padding", 0)
    if len(ks) == 2 and x0.rank == 4 and any(_is_sym(v) for v in ks) and \
            all(_is_whole_dim(x0, ks[i], 2 + i) for i in range(2)) and \
            stride in (None, [], (), k) and padding in (0, (0, 0), [0, 0]):
        return _adaptive(w, x0, c.ex, (1, 1), c.label)
    kernel = _spatial_pair(w, k, "kernel_size", "avg_pool2d")
    stride = _spatial_pair(w, stride, "stride", "avg_pool2d", kernel)
    padding = _spatial_pair(w, padding, "padding", "avg_pool2d")
    attrs = _pool_attrs(kernel, stride, padding)
    if c.arg(4, "ceil_mode", False):
        attrs.append("ceil_mode")
    if c.arg(5, "count_include_pad", True):
        attrs.append("count_include_pad")
    return _run_pool(w, c, "avg_pool2d", lambda x, ex: _pool_result(
        w, x, ex, "nnx.fn.avg_pool2d", attrs, c.label, True))


@_handles("adaptive_avg_pool2d", F.adaptive_avg_pool2d,
          doc="`F.adaptive_avg_pool2d` to an output size that divides the "
          "input's (checked at run time)")
def _adaptive_avg_pool2d(w, c):
    size = c.arg(1, "output_size")
    items = list(size) if isinstance(size, (tuple, list)) else [size, size]
    if any(i is None for i in items):
        raise w.error("adaptive_avg_pool2d with a None output size has no "
                      "nnx form (give both sizes)")
    out = _spatial_pair(w, size, "output_size", "adaptive_avg_pool2d")
    return _run_pool(w, c, "adaptive_avg_pool2d",
                     lambda x, ex: _adaptive(w, x, ex, out, c.label))


# -----------------------------------------------------------------------------
# Factories
# -----------------------------------------------------------------------------

@_handles("arange", *_torch("arange"), doc="`arange` (run-time bounds, "
          "constant step)")
def _arange(w, c):
    pos = list(c.args)
    if len(pos) == 1:
        start, end, step = 0, pos[0], 1
    elif not pos:
        start, end = c.kwargs.get("start", 0), c.kwargs.get("end")
        step = c.kwargs.get("step", 1)
    else:
        start, end = pos[0], pos[1]
        step = pos[2] if len(pos) > 2 else c.kwargs.get("step", 1)
    if _is_sym(step) or step != 1 and (_is_sym(start) or _is_sym(end)):
        raise w.error("arange with a step other than 1 over run-time bounds "
                      "has no nnx form")
    n = w.arith_size("sub", end, start)
    dtype = c.ex[0].dtype
    if start == 0 and not _is_sym(start):
        return w.value("arange", c.ex, f"nnx.fn.arange {w.index(n)}",
                       label=c.label)
    base = tuple(torch.arange(_concrete(n, k), dtype=dtype) for k in range(2))
    r = w.value("arange", base, f"nnx.fn.arange {w.index(n)}")
    return w.binary("add", r, w.as_value(start, dtype), c.ex, c.label)


_FULL = ["ones", "zeros", "full", "empty", "ones_like", "zeros_like",
         "full_like", "empty_like"]


@_handles("ones/zeros/full", *_torch(*_FULL), *_methods(
    "new_ones", "new_zeros", "new_full", "new_empty"),
          doc="`ones zeros full empty`, their `_like` and `new_` forms")
def _full(w, c):
    name = _op_name(c.func)
    args = list(c.args)
    if name.startswith("new_"):
        args = args[1:]
        name = name[4:]
    if name.endswith("_like"):
        hints = w.dims(args[0])
        fill = c.arg(1, "fill_value") if name == "full_like" else None
    elif name == "full":
        hints = list(_arg(args, c.kwargs, 0, "size"))
        fill = _arg(args, c.kwargs, 1, "fill_value")
    else:
        hints = _shape_args(args or [c.kwargs.get("size")])
        fill = None
    if fill is None:
        fill = 1 if name.startswith("ones") else 0
    if _is_sym(fill) or isinstance(fill, Value):
        raise w.error("a fill value computed at run time has no nnx form")
    return w.splat(fill, c.ex, hints, c.label)


@_handles("tril/triu", *_both("tril", "triu"), *_in_place("tril", "triu"))
def _tril(w, c):
    x = c.args[0]
    diag = c.arg(1, "diagonal", 0)
    if _is_sym(diag):
        raise w.error("a diagonal computed at run time has no nnx form")
    name = _op_name(c.func).rstrip("_")
    return w.value(name, c.ex, f"nnx.fn.{name} {x.name}",
                   attrs=[f"diagonal = {int(diag)} : i64"], label=c.label)


@_handles("outer", *_both("outer", "ger"))
def _outer(w, c):
    a, b = c.args[0], c.arg(1, "vec2")
    dtype = c.ex[0].dtype
    a, b = w.cast(a, dtype), w.cast(b, dtype)
    ca = tuple(e.unsqueeze(1) for e in a.examples)
    rb = tuple(e.unsqueeze(0) for e in b.examples)
    a2 = w.reshape(a, ca, [w.dim(a, 0), 1], None, "col")
    b2 = w.reshape(b, rb, [1, w.dim(b, 0)], None, "row")
    return w.binary("mul", a2, b2, c.ex, c.label)


# -----------------------------------------------------------------------------
# The support table
# -----------------------------------------------------------------------------

def support_table():
    """The registry as a markdown table (one row per handler, and the
    decomposition fallback's core set of ATen ops), then the op-by-op
    coverage measured by python/tests/test_op_coverage.py (its stored
    results, python/tests/op_coverage.txt)."""
    from .export_decomp import aten_op_names
    rows = ["| ops | PyTorch callables | notes |", "|---|---|---|"]
    for h in _GROUPS:
        names = sorted({callable_name(f) for f in h.callables})
        cells = [h.group, ", ".join("`" + n + "`" for n in names), h.doc]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells)
                    + " |")
    rows.append("| anything else | every other torch callable (and a "
                "handler's refused arguments) | through its ATen "
                "decomposition (`python/nnx/export_decomp.py`), down to this "
                "core set: " + ", ".join("`" + n + "`" for n in
                                         aten_op_names()) + " |")
    return "\n".join(rows) + "\n" + _coverage_table()


_COVERAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "tests", "op_coverage.txt")


def _coverage_table():
    """The op-by-op coverage (python/tests/op_coverage.txt) as markdown."""
    if not os.path.exists(_COVERAGE):
        return ""
    by = {}
    with open(_COVERAGE) as f:
        lines = [ln.rstrip("\n").split("\t") for ln in f
                 if ln.strip() and not ln.startswith("#")]
    for name, status, detail in ((ln + ["", ""])[:3] for ln in lines):
        by.setdefault(status, []).append((name, detail))
    n = len(by.get("pass", []))
    total = sum(len(v) for k, v in by.items() if k != "n/a")
    out = [f"\n**Op-by-op coverage** (`python/tests/test_op_coverage.py`: "
           "every op of torch's OpInfo database with a float32 CPU kernel "
           "and every `torch.nn.functional` function, each exported, "
           f"compiled, run and compared with PyTorch at 1e-5): **{n} of "
           f"{total}**.\n", "| result | ops |", "|---|---|"]
    why = {"pass": "exported, compiled, equal to PyTorch",
           "refused": "refused (`ExportError` naming the op)",
           "compile-error": "exported, not compiled",
           "no-sample": "not measured (no float32 sample)",
           "n/a": "outside the measure (complex, sparse, random or no "
                  "tensor result)"}
    for status in ("pass", "refused", "compile-error", "no-sample", "n/a"):
        ops = by.get(status, [])
        if not ops:
            continue
        cell = ", ".join("`" + name + "`" + (
            f" ({_reason(d)})" if status == "refused" and _reason(d) else "")
            for name, d in sorted(ops))
        out.append(f"| {why[status]}: {len(ops)} | {cell} |")
    return "\n".join(out) + "\n"


def _reason(detail):
    """The short reason of a refusal: the ATen op that stopped it."""
    import re
    m = re.search(r"ATen op '([^']+)'", detail)
    return m.group(1) if m else ""


@_handles("layer_norm", F.layer_norm, doc="`F.layer_norm`: a call of the "
          "LayerNorm child whose tensors it reads, else mean / variance / "
          "rsqrt")
def _layer_norm(w, c):
    x = c.args[0]
    shape = list(c.arg(1, "normalized_shape"))
    weight, bias = c.arg(2, "weight"), c.arg(3, "bias")
    eps = float(c.arg(4, "eps", 1e-5))
    dims = list(range(x.rank - len(shape), x.rank))
    ex = [t for t in x.examples]
    mean = _reduce_op(w, "mean", x, dims, True, None)
    xc = w.binary("sub", x, mean, tuple(ex[k] - mean.examples[k]
                                        for k in range(2)), None)
    sq = w.binary("mul", xc, xc, tuple(e * e for e in xc.examples), None)
    var = _reduce_op(w, "mean", sq, dims, True, None)
    ve = w.binary("add", var, w.scalar(eps, x.dtype),
                  tuple(e + eps for e in var.examples), None)
    inv = w.value("rsqrt", tuple(torch.rsqrt(e) for e in ve.examples),
                  f"math.rsqrt {ve.name}")
    steps = [("mul", inv)] + [(op, t) for op, t in (("mul", weight),
                                                    ("add", bias))
                              if t is not None]
    y = xc
    for i, (op, t) in enumerate(steps):
        last = i == len(steps) - 1
        tv = t if isinstance(t, Value) else w.as_value(t, x.dtype)
        yex = c.ex if last else tuple(
            (y.examples[k] * tv.examples[k]) if op == "mul" else
            (y.examples[k] + tv.examples[k]) for k in range(2))
        y = w.binary(op, y, tv, yex, c.label if last else None)
    return y


@_handles("setitem", T.__setitem__, doc="`x[...] = v` with ints, slices "
          "and `...` (an `insert_slice`)")
def _setitem(w, c):
    x, idx, v = c.args
    items = _index_items(w, x, idx)
    if any(_is_advanced(i) or i is None for i in items):
        raise w.error("assignment through a list / tensor index or None has "
                      "no nnx form")
    offsets, sizes, strides, box, d = [], [], [], [], 0
    for it in items:
        dim = w.dim(x, d)
        if isinstance(it, slice):
            o, s, st = w._slice_dim(it, dim)
            box.append(s)
        else:
            o, s, st = w._bound(it, dim, 0), 1, 1
        offsets.append(o)
        sizes.append(s)
        strides.append(st)
        d += 1
    plain = tuple(items)
    bex = tuple(c.ex[k][_concrete(plain, k)] for k in range(2))
    val = w.as_value(v, x.dtype)
    if [tuple(e.shape) for e in val.examples] != [tuple(e.shape)
                                                   for e in bex]:
        sz = w.sizes_for(bex, box)
        val = w.value("expand", tuple(e.clone() for e in bex),
                      f"nnx.fn.expand {val.name} {w.size_list(sz)}",
                      f"{val.type} -> {{r}}")
    lst = w.size_list
    return w.value("setitem", c.ex, f"tensor.insert_slice {val.name} into "
                   f"{x.name}{lst(offsets)}{lst(sizes)}{lst(strides)}",
                   f"{val.type} into {x.type}", label=c.label)
