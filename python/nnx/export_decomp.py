"""Coverage by decomposition: the torch calls that have no handler of their
own in :mod:`nnx.export_ops`.

Such a call (``F.hardswish``, ``F.pad``, ``F.interpolate``,
``F.group_norm``, ``x[torch.arange(b), idx]``, ...) is run again on each
example run under :func:`make_fx`, at the ATen level, with :data:`TABLE`:
torch's own decompositions (``torch._decomp``: its ATen-level ones first,
then its ``_refs``) of every ATen op that has no writer here. That reduces
the call to a graph over a core set of ATen / prims ops, and :data:`ATEN`
writes each of them, mostly through the per-callable handlers
(``aten.add`` is ``torch.add``'s handler), so coverage comes from the
mechanism, the way torch.export and AOTAutograd reach theirs, and only
the core set needs nnx forms.

The two example runs give two graphs; they must agree op by op. An int
argument that differs between them (a batch size baked into a ``view``) is
a run-time size: it is written as the :class:`Size` of the call's operands
(a dim, or a product of dims) that has the same two values, and refused if
none has. Any other difference (a float, a constant tensor) is refused.
The result is checked against what the call gave on both runs.

Data-movement ops whose index map depends only on static trailing dims
(``constant_pad_nd`` and the reflection / replication pads, nearest
upsampling, ``pixel_shuffle``, ``flip``, ``roll``) are written by probing:
the op is run on an ``arange`` of the trailing dims' size, which gives, per
output element, the input element it reads; the op is then one constant
``index_select`` over the flattened trailing dims (and a prepended fill
value for padding).

Every refusal names the user's callable, the ATen op that stopped it and
(through the recorder's error) the line of the model's source.
"""

import math
import operator

import torch
import torch._decomp as _decomp
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

from . import export_ops as ops
from .export_ir import ExportError, Size, Value, _concrete, _norm_dim
from .export_ops import Call, HANDLERS, callable_name
from .functionalize import insert_slice, probe_scatter, scatter_up

__all__ = ["ATEN", "TABLE", "write_call", "write_decomposed",
           "aten_op_names"]

aten = torch.ops.aten
prims = torch.ops.prims
T = torch.Tensor

#: OpOverload / OpOverloadPacket -> writer(w, call): the core set.
ATEN = {}


def _get(ns, name):
    """`ns.name`, or None where this torch has no such op."""
    try:
        return getattr(ns, name)
    except (AttributeError, RuntimeError):
        return None


def _writes(*targets):
    def register(fn):
        for t in targets:
            if t is not None:
                ATEN[t] = fn
        return fn
    return register


def _via(callable_, *targets):
    """`targets` are written by `callable_`'s handler (same argument
    order)."""
    h = HANDLERS[callable_]

    def fn(w, c):
        return h.fn(w, Call(callable_, c.label, c.args, c.kwargs, c.ex, False))
    for t in targets:
        ATEN[t] = fn


def _packets(*names, ns=aten):
    return [p for p in (_get(ns, n) for n in names) if p is not None]


for _n in ("add", "sub", "mul", "pow", "maximum", "minimum", "rsub", "eq",
           "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
           "logical_xor", "logical_not", "bitwise_not", "bitwise_and",
           "bitwise_or", "bitwise_xor", "neg", "relu", "sigmoid", "silu",
           "clamp", "clamp_min", "clamp_max", "sum", "mean", "argmax",
           "argmin", "cumsum", "topk", "mm", "bmm", "addmm", "baddbmm",
           "transpose", "t", "permute", "unsqueeze", "squeeze",
           "index_select", "gather", "cat", "stack", "tril", "triu",
           "arange", "full", "zeros", "ones", "full_like", "zeros_like",
           "ones_like", "empty_like", "unbind", "split", "max", "min",
           *ops._MATH):
    if getattr(torch, _n, None) in HANDLERS:
        _via(getattr(torch, _n), *_packets(_n))
_via(torch.div, aten.div.Tensor, aten.div.Scalar)
_via(torch.where, aten.where.self, aten.where.ScalarSelf,
     aten.where.ScalarOther, aten.where.Scalar)
_via(torch.softmax, aten._softmax)
_via(torch.log_softmax, aten._log_softmax)
_via(F.gelu, aten.gelu)
_via(F.hardtanh, aten.hardtanh)
_via(T.masked_fill, aten.masked_fill)
_via(T.view, aten.view, aten._unsafe_view, aten.reshape, prims.reshape)
_via(T.expand, aten.expand)
_via(T.repeat, aten.repeat)
_via(T.to, aten._to_copy, prims.convert_element_type)
_via(T.new_zeros, aten.new_zeros)
_via(T.new_ones, aten.new_ones)
_via(T.new_full, aten.new_full)
_via(T.new_empty, aten.new_empty)
_via(torch.split, aten.split_with_sizes)
_via(F.avg_pool2d, aten.avg_pool2d)
_via(F.adaptive_avg_pool2d, aten.adaptive_avg_pool2d,
     aten._adaptive_avg_pool2d)
for _n in ("add", "sub", "mul", "maximum", "minimum", "eq", "ne", "lt", "le",
           "gt", "ge", "neg", "where", "pow", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", *ops._MATH):
    if _get(prims, _n) is not None and getattr(torch, _n, None) in HANDLERS:
        _via(getattr(torch, _n), getattr(prims, _n))
_via(T.permute, prims.transpose)
_via(torch.sum, prims.sum)
_via(torch.amax, prims.amax)
_via(torch.amin, prims.amin)


@_writes(aten.amax, aten.amin)
def _amax(w, c):
    fn = torch.amax if c.func.overloadpacket is aten.amax else torch.amin
    args = list(c.args)
    if len(args) > 1 and not args[1]:  # dim=[]: all of them
        args[1] = list(range(args[0].rank))
    return HANDLERS[fn].fn(w, Call(fn, c.label, args, c.kwargs, c.ex, False))


@_writes(prims.div)
def _prims_div(w, c):
    if not c.ex[0].is_floating_point():
        raise w.error("prims.div of integers (a truncating division) has "
                      "no nnx form")
    return HANDLERS[torch.div].fn(w, Call(torch.div, c.label, c.args,
                                          c.kwargs, c.ex, False))


@_writes(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(w, c):
    mode = c.kwargs.get("rounding_mode", c.arg(2, "rounding_mode"))
    if not c.ex[0].is_floating_point():
        raise w.error(f"an integer division (rounding_mode={mode!r}) has no "
                      "nnx form")
    a, b = c.args[0], c.args[1]
    dtype = c.ex[0].dtype
    q = w.binary("div", w.as_value(a, dtype), w.as_value(b, dtype),
                 _ex2(lambda k: _c(a, k) / _c(b, k)), None if mode else
                 c.label)
    if mode is None:
        return q
    if mode == "trunc":
        return w.value("trunc", c.ex, f"math.trunc {q.name}", label=c.label)
    return _floor_divide(w, w.as_value(a, dtype), w.as_value(b, dtype), c)


@_writes(aten.floor_divide)
def _floor_divide_op(w, c):
    if not c.ex[0].is_floating_point():
        raise w.error("an integer floor division has no nnx form")
    dtype = c.ex[0].dtype
    return _floor_divide(w, w.as_value(c.args[0], dtype),
                         w.as_value(c.args[1], dtype), c)


_TORCH_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
                 "div": torch.div, "eq": torch.eq, "ne": torch.ne,
                 "lt": torch.lt, "gt": torch.gt,
                 "logical_and": torch.logical_and,
                 "logical_xor": torch.logical_xor}


def _floor_divide(w, a, b, c):
    """torch's floor division of floats (ATen's div_floor_floating: from
    fmod, so a quotient just below an integer is not rounded up)."""
    def bin_(kind, x, y, label=None, ex=None):
        if not isinstance(y, Value):
            y = w.scalar(y, x.dtype)
        ex = ex or _ex2(lambda k: _TORCH_BINARY[kind](x.examples[k],
                                                      y.examples[k]))
        return w.binary(kind, x, y, ex, label)

    def where(cond, x, y, label=None, ex=None):
        ex = ex or _ex2(lambda k: torch.where(cond.examples[k], x.examples[k],
                                              y.examples[k]))
        return ops._where_op(w, cond, x, y, ex, label)

    def full(v):  # v broadcast to the result's shape
        if [tuple(e.shape) for e in v.examples] == [tuple(e.shape)
                                                     for e in c.ex]:
            return v
        ex = _ex2(lambda k: v.examples[k].expand(c.ex[k].shape).clone())
        return HANDLERS[T.expand].fn(w, Call(T.expand, None, [
            v, _dims_like(w, c, (a, b))], {}, ex, False))
    a, b = full(a), full(b)
    mod = w.value("mod", _ex2(lambda k: torch.fmod(a.examples[k],
                                                   b.examples[k])),
                  f"arith.remf {a.name}, {b.name}", f"{a.type}")
    div = bin_("div", bin_("sub", a, mod), b)
    adjust = bin_("logical_and", bin_("ne", mod, 0.0), bin_(
        "logical_xor", bin_("lt", b, 0.0), bin_("lt", mod, 0.0)))
    div = where(adjust, bin_("sub", div, 1.0), div)
    fl = w.value("floor", tuple(torch.floor(e) for e in div.examples),
                 f"math.floor {div.name}")
    fl = where(bin_("gt", bin_("sub", div, fl), 0.5), bin_("add", fl, 1.0),
               fl)
    return where(bin_("eq", b, 0.0), bin_("div", a, b), fl, c.label, c.ex)


def _dims_like(w, c, operands):
    """The result's dims: its run-time ones as dims of `operands` with the
    same two values."""
    out = []
    for d in range(c.ex[0].dim()):
        ex = (c.ex[0].shape[d], c.ex[1].shape[d])
        same = [(v, i) for v in operands for i in range(v.rank)
                if (v.examples[0].shape[i], v.examples[1].shape[i]) == ex]
        out.append(int(ex[0]) if ex[0] == ex[1] else w.dim(*same[0])
                   if same else w._find_size(ex, None, None))
    return out


def _c(x, k):
    return x.examples[k] if isinstance(x, (Value, Size)) else x


def _ex2(fn):
    return tuple(fn(k) for k in range(2))


@_writes(aten.clone, aten.alias, aten.detach, aten.lift, aten.lift_fresh,
         aten.lift_fresh_copy, aten.contiguous, prims.view_of)
def _identity(w, c):
    x = c.args[0]
    if x.dtype != c.ex[0].dtype:
        return w.cast(x, c.ex[0].dtype, c.label)
    return x


@_writes(aten._reshape_alias, aten.squeeze, prims.squeeze,
         prims.collapse_view, prims.split_dim, _get(prims, "collapse"),
         aten.flatten,
         aten.unflatten)
def _reshape_like(w, c):
    """An op that only reshapes: the result's dims from its examples."""
    return w.reshape(c.args[0], c.ex, None, c.label, "view")


@_writes(aten.scalar_tensor, _get(prims, "scalar_tensor"))
def _scalar_tensor(w, c):
    v = c.args[0]
    if isinstance(v, (Size, Value)):
        raise w.error("scalar_tensor of a run-time value has no nnx form")
    return w.scalar(v, c.ex[0].dtype)


@_writes(aten.embedding)
def _embedding(w, c):
    weight, ids = c.args[0], c.args[1]
    return ops._take(w, weight, w.as_value(ids, torch.int64), 0, c.ex,
                     c.label)


@_writes(aten.reciprocal, prims.reciprocal)
def _reciprocal(w, c):
    dtype = c.ex[0].dtype
    return w.binary("div", w.scalar(1, dtype), w.cast(c.args[0], dtype),
                    c.ex, c.label)


@_writes(aten.leaky_relu)
def _leaky_relu(w, c):
    x = c.args[0]
    slope = c.arg(1, "negative_slope", 0.01)
    pos = w.binary("gt", x, w.scalar(0, x.dtype),
                   tuple(e > 0 for e in x.examples), None)
    neg = w.binary("mul", x, w.scalar(slope, x.dtype),
                   tuple(e * slope for e in x.examples), None)
    return ops._where_op(w, pos, x, neg, c.ex, c.label)


@_writes(aten.sign, aten.sgn, prims.sign)
def _sign(w, c):
    x = c.args[0]
    dtype = c.ex[0].dtype
    gt = w.binary("gt", x, w.scalar(0, x.dtype),
                  tuple(e > 0 for e in x.examples), None)
    lt = w.binary("lt", x, w.scalar(0, x.dtype),
                  tuple(e < 0 for e in x.examples), None)
    a, b = w.cast(gt, dtype), w.cast(lt, dtype)
    return w.binary("sub", a, b, c.ex, c.label)


def _reduced_count(w, x, dims):
    n = 1
    for d in dims:
        n = w.arith_size("mul", n, w.dim(x, d))
    return n


def _count_tensor(w, n, dtype):
    if isinstance(n, Size):
        return w.cast(w.size_tensor(n, torch.int64), dtype)
    return w.scalar(n, dtype)


def _var(w, x, dims, correction, keep, ex, label):
    """sum((x - mean)^2) / (N - correction) over `dims`."""
    mean = ops._reduce_op(w, "mean", x, dims, True, None)
    d = w.binary("sub", x, mean, _ex2(lambda k: x.examples[k] -
                                      mean.examples[k]), None)
    sq = w.binary("mul", d, d, tuple(e * e for e in d.examples), None)
    s = ops._reduce_op(w, "sum", sq, dims, keep, None)
    n = w.arith_size("sub", _reduced_count(w, x, dims), correction)
    return w.binary("div", s, _count_tensor(w, n, x.dtype), ex, label)


def _var_args(w, c):
    x = c.args[0]
    dims = ops._reduce_dims(w, c.arg(1, "dim"), x.rank) if \
        c.arg(1, "dim") not in ([], ()) else list(range(x.rank))
    corr = c.kwargs.get("correction", 1)
    if corr is None:
        corr = 1
    return x, dims, corr, bool(c.kwargs.get("keepdim", False))


@_writes(aten.var.correction, aten.std.correction)
def _var_correction(w, c):
    x, dims, corr, keep = _var_args(w, c)
    if c.func.overloadpacket is aten.var:
        return _var(w, x, dims, corr, keep, c.ex, c.label)
    vex = tuple(torch.var(e, dims, correction=corr, keepdim=keep)
                for e in x.examples)
    v = _var(w, x, dims, corr, keep, vex, None)
    return w.value("sqrt", c.ex, f"math.sqrt {v.name}", label=c.label)


@_writes(aten.var_mean.correction)
def _var_mean(w, c):
    x, dims, corr, keep = _var_args(w, c)
    var = _var(w, x, dims, corr, keep, tuple(e[0] for e in c.ex), c.label)
    mean = ops._reduce_op(w, "mean", x, dims, keep, None)
    return var, mean


@_writes(aten.linalg_vector_norm)
def _vector_norm(w, c):
    x = c.args[0]
    p = c.arg(1, "ord", 2)
    dim = c.arg(2, "dim")
    keep = bool(c.arg(3, "keepdim", False))
    if c.kwargs.get("dtype") is not None:
        x = w.cast(x, c.kwargs["dtype"])
    dims = list(range(x.rank)) if dim in (None, [], ()) else \
        ops._reduce_dims(w, dim, x.rank)
    if not x.examples[0].is_floating_point() or isinstance(p, (Size, Value)):
        raise w.error("vector_norm of a non-float tensor or with a run-time "
                      "ord has no nnx form")
    a = w.value("abs", tuple(e.abs() for e in x.examples),
                f"math.absf {x.name}")
    if math.isinf(p):
        return ops._reduce_op(w, "amax" if p > 0 else "amin", a, dims, keep,
                              c.label, c.ex)
    if p == 0:
        nz = w.cast(w.binary("ne", x, w.scalar(0, x.dtype), tuple(
            e != 0 for e in x.examples), None), x.dtype)
        return ops._reduce_op(w, "sum", nz, dims, keep, c.label, c.ex)
    if p == 1:
        return ops._reduce_op(w, "sum", a, dims, keep, c.label, c.ex)
    powd = w.binary("mul", a, a, tuple(e * e for e in a.examples), None) \
        if p == 2 else w.binary("pow", a, w.scalar(p, x.dtype), tuple(
            e ** p for e in a.examples), None)
    s = ops._reduce_op(w, "sum", powd, dims, keep, None)
    if p == 2:
        return w.value("sqrt", c.ex, f"math.sqrt {s.name}", label=c.label)
    return w.binary("pow", s, w.scalar(1.0 / p, x.dtype), c.ex, c.label)


# -----------------------------------------------------------------------------
# Views and indexing
# -----------------------------------------------------------------------------

_BIG = 1 << 62


@_writes(aten.slice.Tensor)
def _slice(w, c):
    x = c.args[0]
    d = _norm_dim(c.arg(1, "dim", 0), x.rank, w.where())
    start, end, step = c.arg(2, "start"), c.arg(3, "end"), c.arg(4, "step", 1)
    if isinstance(end, int) and end >= _BIG:
        end = None
    if isinstance(start, int) and start <= -_BIG:
        start = None
    items = [slice(None)] * x.rank
    items[d] = slice(start, end, step)
    return ops._basic_index(w, x, items, c.ex, c.label)


@_writes(aten.select.int)
def _select(w, c):
    x = c.args[0]
    d = _norm_dim(c.arg(1, "dim"), x.rank, w.where())
    items = [slice(None)] * x.rank
    items[d] = c.arg(2, "index")
    return ops._basic_index(w, x, items, c.ex, c.label)


def _index_values(w, indices):
    """The dims indexed by tensors and those tensors (int64 Values)."""
    pos = [d for d, t in enumerate(indices) if t is not None]
    idx = [w.as_value(indices[d], torch.int64) if not isinstance(
        indices[d], Value) else indices[d] for d in pos]
    return pos, idx


def _linear_index(w, x, pos, idx):
    """`x` with the dims `pos` (indexed by the int tensors `idx`) merged
    into one, at `start`, and the linear index sum(i_j * stride_j) into
    it, broadcast as the indices are. Where the indexed dims are not
    adjacent they are moved first (torch puts the indexed dims first);
    returns (merged x, linear index, start, that permutation or None, the
    permuted x)."""
    perm = None
    if pos != list(range(pos[0], pos[0] + len(pos))):
        perm = pos + [d for d in range(x.rank) if d not in pos]
        x = w.permute(x, perm, tuple(e.permute(perm) for e in x.examples),
                      None)
        pos = list(range(len(pos)))
    start, linear, stride = pos[0], None, 1
    for t, d in reversed(list(zip(idx, pos))):
        n = w.dim(x, d)
        t = ops._wrap_negative(w, w.cast(t, torch.int64), n)
        if stride != 1:
            st = _count_tensor(w, stride, torch.int64)
            t = w.binary("mul", t, st, _ex2(
                lambda k: t.examples[k] * st.examples[k]), None)
        if linear is not None:
            lin = linear
            linear = w.binary("add", t, lin, _ex2(
                lambda k: t.examples[k] + lin.examples[k]), None)
        else:
            linear = t
        stride = w.arith_size("mul", stride, n)
    dims = w.dims(x)
    merged = dims[:start] + [stride] + dims[start + len(pos):]
    mex = tuple(e.reshape(*e.shape[:start], -1, *e.shape[start + len(pos):])
                for e in x.examples)
    return w.reshape(x, mex, merged, None, "view"), linear, start, perm, x


@_writes(aten.index.Tensor)
def _index(w, c):
    """`x[i0, i1, ...]` with index tensors (None: a whole dim): the indexed
    dims merged into one, indexed by the linear index."""
    x, indices = c.args[0], list(c.args[1])
    pos, idx = _index_values(w, indices)
    if any(t.dtype == torch.bool for t in idx):
        raise w.error("indexing with a bool mask has no nnx form: its "
                      "result size depends on the data")
    xm, linear, start, _, _ = _linear_index(w, x, pos, idx)
    return ops._take(w, xm, linear, start, c.ex, c.label)


@_writes(aten.index_put, aten.index_put_)
def _index_put(w, c):
    """`x[i0, i1, ...] = v` (`+=` with accumulate): over the indexed dims
    merged into one (`_linear_index`), each element takes the value written
    last to it (or, accumulating, adds every value written to it): a
    compare of the linear index with an arange, then an `amax` that finds
    the last writer and a gather, or a masked sum. A bool mask index with
    one value for every selected element is a `where`."""
    x, indices = c.args[0], list(c.args[1])
    values, acc = c.arg(2, "values"), c.arg(3, "accumulate", False)
    pos, idx = _index_values(w, indices)
    if any(t.dtype == torch.bool for t in idx):
        return _masked_put(w, c, x, pos, idx, values, acc)
    xm, lin, start, perm, xp = _linear_index(w, x, pos, idx)
    dims = w.dims(xm)
    pre, post = dims[:start], dims[start + 1:]
    slot_ex = tuple(e[(slice(None),) * start + (lin.examples[k],)]
                    for k, e in enumerate(xm.examples))
    vals = w.as_value(values, x.dtype)
    if [tuple(e.shape) for e in vals.examples] != [tuple(e.shape)
                                                    for e in slot_ex]:
        sizes = w.sizes_for(slot_ex, pre + w.dims(lin) + post)
        vex = tuple(e.expand(s.shape).clone() for e, s in zip(
            vals.examples, slot_ex))
        vals = w.value("expand", vex, f"nnx.fn.expand {vals.name} "
                       f"{w.size_list(sizes)}", f"{vals.type} -> {{r}}")
    lf = w.reshape(lin, tuple(e.reshape(-1) for e in lin.examples), None,
                   None, "flat")
    k = w.dim(lf, 0)
    vf = w.reshape(vals, tuple(e.reshape(*e.shape[:start], -1,
                                         *e.shape[start + lin.rank:])
                               for e in vals.examples),
                   pre + [k] + post, None, "flat")
    hit = _hits(w, lf, w.dim(xm, start))  # [K, N]: lin[k] == n
    if acc:
        out = _put_sum(w, xm, vf, hit, start)
    else:
        out = _put_last(w, xm, vf, hit, start)
    out = w.reshape(out, xp.examples, w.dims(xp), None, "unview")
    if perm is None:
        return _check_put(w, out, c)
    inv = [perm.index(d) for d in range(len(perm))]
    return _check_put(w, w.permute(out, inv, c.ex, c.label), c)


def _check_put(w, out, c):
    """The put's result carries the call's examples (its own are made from
    examples an in-place call already overwrote)."""
    out.examples = tuple(c.ex)
    return out


def _hits(w, lf, n):
    """[K, N] bool: whether linear index k is n."""
    col = w.reshape(lf, tuple(e.reshape(-1, 1) for e in lf.examples),
                    [w.dim(lf, 0), 1], None, "col")
    ns = n.examples if isinstance(n, Size) else (n, n)
    ar = w.value("arange", tuple(torch.arange(m) for m in ns),
                 f"nnx.fn.arange {w.index(n)}")
    return w.binary("eq", col, ar, _ex2(
        lambda k: col.examples[k] == ar.examples[k]), None)


def _put_last(w, xm, vf, hit, start):
    """Each element of xm's dim `start` hit by some k takes vf's k-th
    slice, the last such k (index_put without accumulate, as torch's CPU
    kernel writes in order)."""
    ks = w.dims(hit)[0]
    kex = tuple(torch.arange(e.shape[0]).reshape(-1, 1)
                for e in hit.examples)
    ar = w.value("arange", tuple(e.reshape(-1) for e in kex),
                 f"nnx.fn.arange {w.index(ks)}")
    kcol = w.reshape(ar, kex, [ks, 1], None, "col")
    neg = w.scalar(-1, torch.int64)
    sel = ops._where_op(w, hit, kcol, neg, _ex2(lambda k: torch.where(
        hit.examples[k], kcol.examples[k], -1)), None)
    last = ops._reduce_op(w, "amax", sel, [0], False, None)
    zero = w.scalar(0, torch.int64)
    found = w.binary("ge", last, zero, _ex2(lambda k: last.examples[k] >= 0),
                     None)
    pick = w.binary("maximum", last, zero, _ex2(
        lambda k: last.examples[k].clamp(min=0)), None)
    src = ops._take(w, vf, pick, start, _ex2(lambda k: torch.index_select(
        vf.examples[k], start, pick.examples[k])), None)
    ones = [1] * (xm.rank - start - 1)
    mask = w.reshape(found, _ex2(lambda k: found.examples[k].reshape(
        [1] * start + [-1] + ones)), [1] * start + [w.dim(found, 0)] + ones,
        None, "mask")
    return ops._where_op(w, mask, src, xm, _ex2(lambda k: torch.where(
        mask.examples[k], src.examples[k], xm.examples[k])), None)


def _put_sum(w, xm, vf, hit, start):
    """xm plus, per element of its dim `start`, the sum of vf's slices k
    that hit it (index_put with accumulate): a masked sum over k."""
    dims = w.dims(vf)
    k, n = w.dims(hit)
    post = dims[start + 1:]
    v5 = w.reshape(vf, _ex2(lambda i: vf.examples[i].unsqueeze(start + 1)),
                   dims[:start + 1] + [1] + post, None, "col")
    ones = [1] * len(post)
    h5 = w.reshape(hit, _ex2(lambda i: hit.examples[i].reshape(
        [1] * start + list(hit.examples[i].shape) + ones)),
        [1] * start + [k, n] + ones, None, "hits")
    zero = w.scalar(0, vf.dtype)
    terms = ops._where_op(w, h5, v5, zero, _ex2(lambda i: torch.where(
        h5.examples[i], v5.examples[i], 0).to(vf.dtype)), None)
    total = ops._reduce_op(w, "sum", terms, [start], False, None)
    return w.binary("add", xm, total, _ex2(
        lambda i: xm.examples[i] + total.examples[i]), None)


def _masked_put(w, c, x, pos, idx, values, acc):
    """`x[mask] = v` with one value for every selected element (v has no
    dim for the selected elements, or one of size 1): `where(mask, v, x)`;
    any other bool-mask put depends on the number of selected elements."""
    vals = w.as_value(values, x.dtype)
    m = idx[0]
    lead = pos[0]
    trail = x.rank - lead - m.rank
    if len(idx) != 1 or acc or m.dtype != torch.bool or vals.rank > trail + 1 \
            or (vals.rank == trail + 1 and any(
                e.shape[0] != 1 for e in vals.examples)):
        raise w.error("a put through a bool mask index, other than one value "
                      "for every selected element, has no nnx form: it "
                      "depends on how many elements the mask selects")
    if vals.rank == trail + 1:
        vals = w.reshape(vals, _ex2(lambda k: vals.examples[k][0]),
                         w.dims(vals)[1:], None, "squeeze")
    mask = w.reshape(m, _ex2(lambda k: m.examples[k].reshape(
        list(m.examples[k].shape) + [1] * trail)),
        w.dims(m) + [1] * trail, None, "mask")
    return ops._where_op(w, mask, vals, x, c.ex, c.label)


def _box(w, x, d, item):
    """The extract_slice box of x that is `item` (a slice, or an int: the
    dim dropped) along dim `d` and the whole of every other dim."""
    offsets, sizes, strides = [0] * x.rank, w.dims(x), [1] * x.rank
    if isinstance(item, slice):
        offsets[d], sizes[d], strides[d] = w._slice_dim(item, w.dim(x, d))
    else:
        offsets[d], sizes[d] = w._bound(item, w.dim(x, d), 0), None
    return offsets, sizes, strides


@_writes(aten.slice_scatter, aten.select_scatter)
def _slice_scatter(w, c):
    """`x` with `src` written at a slice / an index of dim `dim`: an
    `insert_slice`."""
    x, src = c.args[0], w.as_value(c.arg(1, "src"), c.ex[0].dtype)
    d = _norm_dim(c.arg(2, "dim", 0), x.rank, w.where())
    if c.func.overloadpacket is aten.select_scatter:
        item = c.arg(3, "index")
    else:
        start, end = c.arg(3, "start"), c.arg(4, "end")
        if isinstance(end, int) and end >= _BIG:
            end = None
        if isinstance(start, int) and start <= -_BIG:
            start = None
        item = slice(start, end, c.arg(5, "step", 1))
    offsets, sizes, strides = _box(w, x, d, item)
    return insert_slice(w, x, offsets, sizes, strides, src, src.examples,
                        c.label)[0]


def _aten_name(target):
    return str(getattr(target, "overloadpacket", target)).split(".")[-1]


@_writes(aten.diagonal_scatter, aten.as_strided_scatter)
def _strided_scatter(w, c):
    """diagonal_scatter / as_strided_scatter (over a row-major `x` of
    static shape): the view run on an arange of `x` gives the elements
    written."""
    x, src = c.args[0], w.as_value(c.arg(1, "src"), c.ex[0].dtype)
    shape = tuple(x.examples[0].shape)
    if tuple(x.examples[1].shape) != shape:
        raise w.error(f"{_aten_name(c.func)} over run-time "
                      "sizes has no nnx form")
    probe = torch.arange(x.examples[0].numel()).reshape(shape)
    if c.func.overloadpacket is aten.diagonal_scatter:
        index = probe.diagonal(c.arg(2, "offset", 0), c.arg(3, "dim1", 0),
                               c.arg(4, "dim2", 1))
    else:
        index = probe.as_strided(c.arg(2, "size"), c.arg(3, "stride"),
                                 c.arg(4, "storage_offset") or 0)
    return probe_scatter(w, x, src, src.examples, index,
                         f"'{_aten_name(c.func)}'", c.label)[0]


# -----------------------------------------------------------------------------
# Data movement by probing
# -----------------------------------------------------------------------------

def _trailing_of_dims(key):
    def n(c):
        rank = c.args[0].rank
        ds = c.arg(*key)
        ds = list(ds) if isinstance(ds, (list, tuple)) else [ds]
        if not ds:
            return rank
        return rank - min(d % rank for d in ds)
    return n


_MOVEMENT = {
    aten.constant_pad_nd: lambda c: len(c.arg(1, "pad")) // 2,
    aten.pixel_shuffle: lambda c: 3,
    aten.pixel_unshuffle: lambda c: 3,
    aten.channel_shuffle: lambda c: c.args[0].rank - 1,
    aten.flip: _trailing_of_dims((1, "dims")),
    aten.roll: _trailing_of_dims((2, "dims")),
    aten.rot90: lambda c: c.args[0].rank - min(
        d % c.args[0].rank for d in (c.arg(2, "dims") or [0, 1])),
}
for _k in (1, 2, 3):
    for _n in (f"reflection_pad{_k}d", f"replication_pad{_k}d",
               f"upsample_nearest{_k}d", f"_upsample_nearest_exact{_k}d"):
        if _get(aten, _n) is not None:
            _MOVEMENT[getattr(aten, _n)] = (lambda k: lambda c: k)(_k)


def _movement(w, c):
    """An op that moves elements within the trailing dims it acts on: one
    constant index_select over those dims flattened (found by running the op
    on an arange), after a prepended fill value for a constant pad."""
    x = c.args[0]
    trailing = _MOVEMENT[c.func.overloadpacket](c)
    lead = x.rank - trailing
    what = f"'{c.func.overloadpacket.__name__}'"
    shapes = [tuple(e.shape) for e in x.examples]
    outs = [tuple(e.shape) for e in c.ex]
    if lead < 0 or shapes[0][lead:] != shapes[1][lead:] or \
            any(o[:lead] != s[:lead] for o, s in zip(outs, shapes)) or \
            outs[0][lead:] != outs[1][lead:]:
        raise w.error(f"{what} over run-time sizes has no nnx form (the "
                      "dims it moves data in must be static)")
    rest = list(c.args[1:])
    if any(isinstance(a, (Size, Value)) for a in _leaves(rest) + _leaves(
            list(c.kwargs.values()))):
        raise w.error(f"{what} with run-time arguments has no nnx form")
    fill = c.func.overloadpacket is aten.constant_pad_nd
    n = math.prod(shapes[0][lead:])
    probe = torch.arange(1 if fill else 0, n + (1 if fill else 0),
                         dtype=torch.float64).reshape(
        (1,) * lead + shapes[0][lead:])
    if fill:
        rest = [rest[0], 0.0]
    src = c.func(probe, *rest, **c.kwargs).reshape(-1)
    index = src.round().to(torch.int64)
    if not torch.equal(index.to(src.dtype), src) or index.numel() > 1 << 20:
        raise w.error(f"{what} is not a movement of elements")
    dims = w.dims(x)
    flat_ex = tuple(e.reshape(*e.shape[:lead], n) for e in x.examples)
    y = w.reshape(x, flat_ex, dims[:lead] + [n], None, "flat")
    if fill:
        value = c.arg(2, "value", 0)
        fex = tuple(torch.full((*e.shape[:lead], 1), value, dtype=e.dtype)
                    for e in x.examples)
        f = w.splat(value, fex, dims[:lead] + [1], None)
        cex = tuple(torch.cat([fex[k], flat_ex[k]], -1) for k in range(2))
        y = w.value("pad", cex, f"tensor.concat dim({lead}) {f.name}, "
                    f"{y.name}", f"({f.type}, {y.type}) -> {{r}}")
    iv = w.constant(index)
    sex = tuple(torch.index_select(y.examples[k], lead, index)
                for k in range(2))
    sel = w.value("index_select", sex, f"nnx.fn.index_select {y.name}, "
                  f"{iv.name}", f"{y.type}, {iv.type} -> {{r}}",
                  attrs=[f"dim = {lead} : i64"])
    return w.reshape(sel, c.ex, dims[:lead] + list(outs[0][lead:]), c.label,
                     what.strip("'"))


for _p in _MOVEMENT:
    ATEN[_p] = _movement


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [i for v in x for i in _leaves(v)]
    return [x]


@_writes(prims.broadcast_in_dim)
def _broadcast_in_dim(w, c):
    x, shape, bdims = c.args[0], list(c.args[1]), list(c.args[2])
    hints = [w.dim(x, bdims.index(d)) if d in bdims else 1
             for d in range(len(shape))]
    rex = tuple(e.reshape([e.shape[bdims.index(d)] if d in bdims else 1
                           for d in range(len(shape))]) for e in x.examples)
    y = w.reshape(x, rex, hints, None, "view") if rex[0].shape != \
        x.examples[0].shape else x
    if tuple(rex[0].shape) == tuple(c.ex[0].shape) and \
            tuple(rex[1].shape) == tuple(c.ex[1].shape):
        return y
    return HANDLERS[T.expand].fn(w, Call(T.expand, c.label, [y, shape], {},
                                         c.ex, False))


# -----------------------------------------------------------------------------
# The decomposition table
# -----------------------------------------------------------------------------

def _table():
    """torch's decompositions of every ATen op without a writer: the
    ATen-level ones (torch._decomp.decompositions) over the _refs ones."""
    core = set(ATEN)
    table = {}
    for op, fn in sorted(_decomp.decomposition_table.items(), key=lambda kv:
                         getattr(kv[1], "__module__", "") ==
                         "torch._decomp.decompositions"):
        if op in core or op.overloadpacket in core:
            continue
        table[op] = fn
    return table




def aten_op_names():
    """The ATen / prims ops written directly (the core set), by name."""
    return sorted({str(getattr(t, "overloadpacket", t)) for t in ATEN})


# -----------------------------------------------------------------------------
# Writing a call through its decomposition
# -----------------------------------------------------------------------------

def _out_of_place(func):
    """The functional form of an in-place callable (`hardswish_`)."""
    name = getattr(func, "__name__", "")
    if not name.endswith("_") or name.endswith("__"):
        return func
    base = name[:-1]
    qual = callable_name(func)
    spaces = [T] if qual.startswith("Tensor.") else (
        [torch._C._nn, F] if qual.startswith("F.") else [torch])
    for ns in spaces:
        f = getattr(ns, base, None)
        if f is not None:
            return f
    return func


def _eliminate_dead_code(graph, in_place):
    """Drops the ops whose results nothing reads (torch 1.13's fx counts
    in-place ATen ops as pure), but not an in-place op that writes a tensor
    the graph made or, for an in-place call (`in_place`), the call's
    target; a write into another input (`batch_norm`'s running stats) goes
    as before: the exported forward does not change its inputs."""
    first = next((n for n in graph.nodes if n.op == "placeholder"), None)
    for n in reversed(list(graph.nodes)):
        if n.op != "call_function" or n.users:
            continue
        if _in_place_name(n.target):
            root = _written_root(n)
            if root.op == "call_function" or (in_place and root is first):
                continue
        graph.erase_node(n)


def _written_root(node):
    """The node whose storage the in-place op `node` writes: its first
    argument, through the view ops (ATen schemas: a result that aliases
    the first argument, read-only) that made it."""
    cur = node.args[0]
    while cur.op == "call_function":
        if cur.target is not operator.getitem:
            schema = getattr(cur.target, "_schema", None)
            alias = schema.returns[0].alias_info if schema is not None and \
                schema.returns else None
            if alias is None or alias.is_write:
                break
        cur = cur.args[0]
    return cur


class _Graph:
    """The ATen graph of one call on the examples of run `k`."""

    def __init__(self, func, c, k):
        self.values = []  # the examples of run k given to make_fx
        self.operands = []  # their Values, in the same order
        self.copy = c.in_place  # make_fx runs the ops: on copies, if in place
        template = self._template(c.args, k), self._template(c.kwargs, k)

        def run(*ts):
            a, kw = self._fill(template, ts)
            out = func(*a, **kw)
            # `__setitem__` returns nothing: its result is its target.
            return a[0] if c.in_place and out is None else out
        gm = make_fx(run, decomposition_table=TABLE)(*self.values)
        _eliminate_dead_code(gm.graph, c.in_place)
        self.gm = gm
        self.nodes = [n for n in gm.graph.nodes]

    def _template(self, x, k):
        if isinstance(x, Value):
            self.values.append(x.examples[k].clone() if self.copy else
                               x.examples[k])
            self.operands.append(x)
            return ("__nnx_arg__", len(self.values) - 1)
        if isinstance(x, Size):
            return x.examples[k]
        if isinstance(x, tuple):
            return tuple(self._template(i, k) for i in x)
        if isinstance(x, list):
            return [self._template(i, k) for i in x]
        if isinstance(x, dict):
            return {n: self._template(i, k) for n, i in x.items()}
        if isinstance(x, slice):
            return slice(*(self._template(i, k) for i in (x.start, x.stop,
                                                          x.step)))
        return x

    def _fill(self, x, ts):
        if isinstance(x, tuple) and len(x) == 2 and x[0] == "__nnx_arg__":
            return ts[x[1]]
        if isinstance(x, tuple):
            return tuple(self._fill(i, ts) for i in x)
        if isinstance(x, list):
            return [self._fill(i, ts) for i in x]
        if isinstance(x, dict):
            return {n: self._fill(i, ts) for n, i in x.items()}
        if isinstance(x, slice):
            return slice(*(self._fill(i, ts) for i in (x.start, x.stop,
                                                       x.step)))
        return x


class _Writer:
    """Writes the paired graphs of one call into forward `w`."""

    def __init__(self, w, c, what, graphs):
        self.w, self.c, self.what = w, c, what
        self.g = graphs
        self.env = {}  # node of graph 0 -> IR value
        self.conc = ({}, {})  # node -> example of run k
        self.parents = {}  # node -> the node it is a view of
        self.stale = set()  # views of a storage written through another
        self.index = [{n: i for i, n in enumerate(g.nodes)} for g in graphs]
        self.inputs = [v for v in _all_leaves((c.args, c.kwargs))
                       if isinstance(v, (Value, Size))]

    def refuse(self, detail):
        return self.w.error(f"{self.what} has no nnx form ({detail}; "
                            "supported: docs/Python.md, 'What the exporter "
                            "supports')")

    def size(self, ex):
        """The run-time size with examples `ex` among the call's operands."""
        w = self.w
        for v in self.inputs:
            if isinstance(v, Size) and tuple(v.examples) == ex:
                return v
        values = [v for v in self.inputs if isinstance(v, Value)] + \
            [v for v in self.env.values() if isinstance(v, Value)]
        for v in values:
            for d in range(v.rank):
                if (v.examples[0].shape[d], v.examples[1].shape[d]) == ex:
                    return w.dim(v, d)
        for v in values:
            try:
                return w._find_size(ex, None, v)
            except ExportError:
                pass
        raise self.refuse(f"its decomposition uses a run-time size ({ex[0]} "
                          f"and {ex[1]} in the example runs) that is not a "
                          "dim of its operands")

    def pair(self, a0, a1, node):
        """The IR argument of a pair of node arguments."""
        Node = torch.fx.Node
        if isinstance(a0, Node):
            if not isinstance(a1, Node) or \
                    self.index[0][a0] != self.index[1][a1]:
                raise self.differs(node)
            return self.env[a0]
        if isinstance(a0, (list, tuple)):
            if type(a0) is not type(a1) or len(a0) != len(a1):
                raise self.differs(node)
            return type(a0)(self.pair(x, y, node) for x, y in zip(a0, a1))
        if isinstance(a0, dict):
            return {k: self.pair(v, a1[k], node) for k, v in a0.items()}
        if isinstance(a0, int) and not isinstance(a0, bool) and \
                isinstance(a1, int) and not isinstance(a1, bool) and a0 != a1:
            return self.size((a0, a1))
        same = a0 is a1 or (type(a0) is type(a1) and (
            a0 == a1 or (isinstance(a0, float) and math.isnan(a0) and
                         math.isnan(a1))))
        if not same:
            raise self.differs(node)
        return a0

    def differs(self, node):
        return self.refuse("its decomposition differs between the example "
                           f"runs at '{node.target}' (a value baked in from "
                           "an input size)")

    def chain(self, node):
        """The in-place op `node` of the graph is written as its functional
        form (nnx.functionalize): into a tensor the graph made, or into the
        call's own target, or into a view of one (the view chain up to that
        root, returned with the values before the write), never into
        another input."""
        dst = node.args[0]
        first = next(n for n in self.g[0].nodes if n.op == "placeholder")
        chain = [dst] if isinstance(dst, torch.fx.Node) else []
        while chain and chain[-1] in self.parents:
            chain.append(self.parents[chain[-1]])
        root = chain[-1] if chain else None
        if root is None or not (root.op == "call_function" or (
                self.c.in_place and root is first)):
            raise self.refuse(f"its decomposition writes in place "
                              f"('{node.target}') into an input")
        return [(n, self.env[n]) for n in chain]

    def link(self, n0, ex0):
        """Records `n0` as a view of the node argument whose example
        storage its result shares."""
        if not isinstance(ex0, torch.Tensor) or ex0.numel() == 0:
            return
        for a in _leaves(list(n0.args)):
            e = self.conc[0].get(a) if isinstance(a, torch.fx.Node) else None
            if isinstance(e, torch.Tensor) and e is not ex0 and e.numel() \
                    and e.storage().data_ptr() == ex0.storage().data_ptr():
                self.parents[n0] = a
                return

    def write(self, chain, n0, new, ex):
        """The write of `new` into the view chain[0]: scattered up to the
        root; every other view of the root goes stale."""
        val, _ = scatter_up(self.w, chain, new, ex, self.what)
        root = chain[-1][0]
        for n in self.parents:
            top = n
            while top in self.parents:
                top = self.parents[top]
            if top is root:
                self.stale.add(n)
        self.stale.discard(chain[0][0])
        self.env[root] = val
        self.env[chain[0][0]] = self.env[n0] = new

    def concrete(self, x, k):
        if isinstance(x, torch.fx.Node):
            return self.conc[k][x]
        if isinstance(x, (list, tuple)):
            return type(x)(self.concrete(i, k) for i in x)
        if isinstance(x, dict):
            return {n: self.concrete(i, k) for n, i in x.items()}
        return x

    def run(self):
        g0, g1 = self.g
        if len(g0.nodes) != len(g1.nodes):
            raise self.differs(g0.nodes[-1])
        outputs = set(_leaves(list(g0.nodes[-1].args)))
        placeholders = iter(g0.operands)
        for n0, n1 in zip(g0.nodes, g1.nodes):
            if n0.op != n1.op or n0.target != n1.target:
                raise self.differs(n0)
            if n0.op == "placeholder":
                v = next(placeholders)
                self.env[n0] = v
                # Copies: an in-place op of the graph writes them.
                self.conc[0][n0], self.conc[1][n1] = (e.clone() for e in
                                                      v.examples)
            elif n0.op == "get_attr":
                t0, t1 = getattr(g0.gm, n0.target), getattr(g1.gm, n1.target)
                if not torch.equal(t0, t1):
                    raise self.differs(n0)
                self.env[n0] = self.w.constant(t0)
                self.conc[0][n0], self.conc[1][n1] = t0, t1
            elif n0.op == "call_function":
                self.call(n0, n1, n0 in outputs)
            elif n0.op == "output":
                return self.pair(n0.args[0], n1.args[0], n0)
        raise self.refuse("its decomposition has no output")

    def call(self, n0, n1, is_output):
        ex = []
        for k, n in enumerate((n0, n1)):
            args = self.concrete(n.args, k)
            kwargs = self.concrete(n.kwargs, k)
            ex.append(n.target(*args, **kwargs))
            self.conc[k][n] = ex[-1]
        if n0.target is operator.getitem:
            got = self.env[n0.args[0]][n0.args[1]]
            if isinstance(got, _NoIndices):
                raise self.refuse("the indices of a max pool have no nnx "
                                  "form")
            self.env[n0] = got
            return
        target = n0.target
        fn = _writer_of(target)
        inplace = _in_place_name(target)
        if fn is None and inplace:  # e.g. aten.clamp_min_: clamp_min's
            fn = _writer_of(_get(_get(aten, inplace[:-1]),
                                 target._overloadname))
        chain = self.chain(n0) if inplace and fn is not None else None
        if any(a in self.stale for a in _leaves(list(n0.args))):
            raise self.refuse("its decomposition reads a view after a write "
                              f"into its base ('{n0.target}')")
        if fn is None:
            raise self.refuse(f"it reaches the ATen op '{target}', which has "
                              "neither an nnx form nor a decomposition")
        args = self.pair(list(n0.args), list(n1.args), n0)
        kwargs = {k: self.pair(v, n1.kwargs.get(k), n0)
                  for k, v in n0.kwargs.items()
                  if k not in ("device", "layout", "pin_memory",
                               "memory_format", "requires_grad")}
        if not _tensors(ex[0]):
            self.env[n0] = ex[0]  # a Python value (the same in both runs)
            return
        label = self.c.label if is_output else None
        c = Call(target, label, args, kwargs, tuple(ex), False)
        try:
            self.env[n0] = fn(self.w, c)
            if chain:  # later reads of the written tensor see the result
                self.write(chain, n0, self.env[n0], ex)
            else:
                self.link(n0, ex[0])
        except ExportError as e:
            raise self.refuse(f"its decomposition reaches '{target}': "
                              f"{_strip(str(e))}") from None


def _all_leaves(x):
    if isinstance(x, (list, tuple)):
        return [i for v in x for i in _all_leaves(v)]
    if isinstance(x, dict):
        return _all_leaves(list(x.values()))
    if isinstance(x, slice):
        return _all_leaves([x.start, x.stop, x.step])
    return [x]


def _writer_of(target):
    if target is None:
        return None
    return ATEN.get(target) or ATEN.get(getattr(target, "overloadpacket",
                                                None))


def _in_place_name(target):
    """The name of an in-place ATen op (`clamp_min_`), else None."""
    packet = getattr(target, "overloadpacket", None)
    name = str(packet).split(".")[-1] if packet is not None else ""
    if name.endswith("_") and not name.endswith("__"):
        return name
    return None


def _tensors(x):
    if isinstance(x, torch.Tensor):
        return True
    return isinstance(x, (list, tuple)) and any(_tensors(i) for i in x)


def _strip(msg):
    """An inner refusal's text without its module prefix and site."""
    if msg.startswith("module at '"):
        msg = msg.split(": ", 1)[-1]
    return msg.split(" (at /")[0]


def _check(w, what, got, want0, want1, values=True):
    """`got` (the written result) against the call's results on both runs
    (their shapes and dtypes only for an in-place call: its inputs were
    overwritten by the call)."""
    if isinstance(want0, torch.Tensor):
        ok = isinstance(got, Value) and all(
            g.shape == t.shape and g.dtype == t.dtype and (
                not values or torch.allclose(g, t, rtol=1e-5, atol=1e-6,
                                             equal_nan=True))
            for g, t in zip(got.examples, (want0, want1)))
        if not ok:
            raise w.error(f"{what} has no nnx form (its decomposition "
                          "disagrees with the call on the example inputs)")
        return got
    if not isinstance(got, (tuple, list)) or len(got) != len(want0):
        raise w.error(f"{what} has no nnx form (its decomposition gives "
                      "another structure than the call)")
    return tuple(_check(w, what, g, t0, t1, values) for g, t0, t1 in zip(
        got, want0, want1))


def write_decomposed(w, c):
    """Writes call `c` (a torch callable without a handler) through its
    ATen decomposition; returns its result as the callable does."""
    what = f"'{callable_name(c.func)}'"
    func = _out_of_place(c.func)
    try:
        graphs = [_Graph(func, c, k) for k in range(2)]
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - torch's own error, reworded
        raise w.error(f"{what} has no nnx form (its ATen decomposition "
                      f"failed: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:200] if str(e) else ''})"
                      ) from None
    out = _Writer(w, c, what, graphs).run()
    return _check(w, what, out, c.ex[0], c.ex[1], not c.in_place)


def write_call(h, w, c):
    """Writes call `c` into forward `w`: by its handler `h` if it has one,
    else (or where the handler refuses the call's arguments) through its
    ATen decomposition. A refusal is an ExportError that names the callable
    and (through the recorder) the model's source line, never an error from
    inside the exporter or torch."""
    from .recorder import _error
    try:
        if h is None:
            return write_decomposed(w, c)
        try:
            return h.fn(w, c)
        except ExportError as e:
            try:
                return write_decomposed(w, c)
            except ExportError:
                raise e from None
    except ExportError as e:
        msg = str(e)
        if " (at " in msg or "(at /" in msg:
            raise
        raise _error(msg) from None
    except Exception as e:  # noqa: BLE001 - an exporter bug, as a refusal
        raise _error(f"'{callable_name(c.func)}': the exporter failed on "
                     f"this call ({type(e).__name__}: {e})") from None


# -----------------------------------------------------------------------------
# Convolution as a gather and a matmul
# -----------------------------------------------------------------------------

def _flat_gather(w, x, lead, index, fill, hints_out, ex, label=None):
    """`x` with its dims after `lead` flattened and gathered by the constant
    1-based `index` (0: the `fill` value): its dims `lead` + index's."""
    dims = w.dims(x)
    n = math.prod(x.examples[0].shape[lead:])
    fex = tuple(e.reshape(*e.shape[:lead], n) for e in x.examples)
    y = w.reshape(x, fex, dims[:lead] + [n], None, "flat")
    pex = tuple(torch.full((*e.shape[:lead], 1), fill, dtype=e.dtype)
                for e in x.examples)
    f = w.splat(fill, pex, dims[:lead] + [1], None)
    cex = tuple(torch.cat([pex[k], fex[k]], -1) for k in range(2))
    y = w.value("ext", cex, f"tensor.concat dim({lead}) {f.name}, {y.name}",
                f"({f.type}, {y.type}) -> {{r}}")
    flat = index.reshape(-1)
    iv = w.constant(flat)
    sex = tuple(torch.index_select(y.examples[k], lead, flat)
                for k in range(2))
    sel = w.value("gather", sex, f"nnx.fn.index_select {y.name}, {iv.name}",
                  f"{y.type}, {iv.type} -> {{r}}",
                  attrs=[f"dim = {lead} : i64"])
    return w.reshape(sel, ex, dims[:lead] + list(hints_out), label, "view")


def _conv_index(base, kernel, stride, padding, dilation):
    """For a 1-based index map `base` (C, *S), the index of every
    (C * prod(K), prod(L)) column entry of the convolution's im2col (one
    channel, C = 1: the spatial index every channel shares)."""
    s = len(kernel)
    pads = [p for d in reversed(range(s)) for p in (padding[d], padding[d])]
    t = F.pad(base, pads) if any(pads) else base
    for d in range(s):
        k = dilation[d] * (kernel[d] - 1) + 1
        t = t.unfold(1 + d, k, stride[d])[..., ::dilation[d]]
    c = base.shape[0]
    # (C, L1..Ls, K1..Ks) -> (C, K1..Ks, L1..Ls)
    perm = [0] + list(range(1 + s, 1 + 2 * s)) + list(range(1, 1 + s))
    t = t.permute(perm)
    out = list(t.shape[1 + s:])
    return t.reshape(c * math.prod(kernel), -1), out


def _transposed_weight(w, weight, groups):
    """A transposed convolution's weight (C_in, C_out / G, *K) as the
    forward convolution's (C_out, C_in / G, *K) with the kernel flipped:
    a permute of its group dims, then one reversing index_select per
    spatial dim (indices of the kernel's size, not of the weight's)."""
    cin, og, *kernel = weight.examples[0].shape
    g, s = groups, len(kernel)
    sex = tuple(e.reshape(g, cin // g, og, *kernel) for e in weight.examples)
    v = w.reshape(weight, sex, [g, cin // g, og] + kernel, None, "view")
    perm = [0, 2, 1] + list(range(3, 3 + s))
    pex = tuple(e.permute(perm) for e in sex)
    v = w.value("permute", pex, f"nnx.fn.permute {v.name} {perm}",
                f"{v.type} -> {{r}}")
    ex = tuple(e.reshape(g * og, cin // g, *kernel) for e in pex)
    v = w.reshape(v, ex, [g * og, cin // g] + kernel, None, "view")
    for d in range(s):
        rev = torch.arange(kernel[d] - 1, -1, -1)
        iv = w.constant(rev)
        ex = tuple(torch.index_select(e, 2 + d, rev) for e in ex)
        v = w.value("flip", ex, f"nnx.fn.index_select {v.name}, {iv.name}",
                    f"{v.type}, {iv.type} -> {{r}}",
                    attrs=[f"dim = {2 + d} : i64"])
    return v


@_writes(aten.convolution)
def _convolution(w, c):
    """`aten.convolution` as im2col (a constant gather) and one batched
    matmul per group; a transposed one as the convolution of the
    zero-stuffed, padded input with the flipped kernel."""
    x, weight, bias = c.args[0], c.args[1], c.args[2]
    stride, padding, dilation = (list(c.args[i]) for i in (3, 4, 5))
    transposed, out_pad, groups = c.args[6], list(c.args[7]), c.args[8]
    if not isinstance(weight, Value) or any(
            isinstance(v, (Size, Value)) for v in stride + padding +
            dilation + out_pad) or isinstance(groups, (Size, Value)):
        raise w.error("a convolution with run-time arguments has no nnx form")
    shapes = [tuple(e.shape) for e in x.examples]
    if shapes[0][1:] != shapes[1][1:]:
        raise w.error("a convolution over run-time channel or spatial sizes "
                      "has no nnx form (only the batch may be dynamic)")
    cin, sp = shapes[0][1], shapes[0][2:]
    s = len(sp)
    # The index is spatial only, one row per tap, shared by every channel:
    # its size does not grow with the channels (a DCGAN generator's
    # transposed convs at 64 x 64 would need 2^21 entries otherwise).
    base = torch.arange(1, math.prod(sp) + 1,
                        dtype=torch.float64).reshape(1, *sp)
    wshape = tuple(weight.examples[0].shape)
    kernel = list(wshape[2:])
    if transposed:
        stuffed = torch.zeros(1, *[(n - 1) * st + 1 for n, st in
                                   zip(sp, stride)], dtype=torch.float64)
        stuffed[(slice(None),) + tuple(slice(None, None, st)
                                       for st in stride)] = base
        pads = []
        for d in reversed(range(s)):
            edge = dilation[d] * (kernel[d] - 1) - padding[d]
            pads += [edge, edge + out_pad[d]]
        base = F.pad(stuffed, pads)
        weight = _transposed_weight(w, weight, groups)
        wshape = tuple(weight.examples[0].shape)
        stride, padding = [1] * s, [0] * s
    index, out_sp = _conv_index(base, kernel, stride, padding, dilation)
    index = index.round().to(torch.int64)
    taps, nl = index.shape
    o, ck = wshape[0], cin // groups * taps
    if index.numel() > 1 << 20:
        raise w.error("a convolution whose im2col index has more than 2^20 "
                      "entries has no nnx form here (use an nn.Conv layer)")
    n = w.dim(x, 0)
    # (N, C, taps, L), then (N, G, C/G * taps, L): rows channel-major.
    tex = tuple(torch.cat([torch.zeros(*e.shape[:2], 1, dtype=e.dtype),
                           e.reshape(*e.shape[:2], -1)], 2)[:, :, index.reshape(
                               -1)].reshape(e.shape[0], cin, taps, nl)
                for e in x.examples)
    taken = _flat_gather(w, x, 2, index, 0.0, [taps, nl], tex)
    cols_ex = tuple(e.reshape(e.shape[0], groups, ck, nl) for e in tex)
    cols = w.reshape(taken, cols_ex, [n, groups, ck, nl], None, "cols")
    # (N, G, CK, L) -> (G, CK, N, L) -> (G, CK, N * L)
    pex = tuple(e.permute(1, 2, 0, 3) for e in cols_ex)
    p = w.value("permute", pex, f"nnx.fn.permute {cols.name} [1, 2, 0, 3]",
                f"{cols.type} -> {{r}}")
    nl_all = w.arith_size("mul", n, nl)
    bex = tuple(e.reshape(groups, ck, -1) for e in pex)
    b = w.reshape(p, bex, [groups, ck, nl_all], None, "view")
    wex = tuple(e.reshape(groups, o // groups, ck) for e in weight.examples)
    wm = w.reshape(weight, wex, [groups, o // groups, ck], None, "view")
    mex = tuple(wex[k] @ bex[k] for k in range(2))
    m = w.value("matmul", mex, f"nnx.fn.matmul {wm.name}, {b.name}",
                f"{wm.type}, {b.type} -> {{r}}")
    # (G, O/G, N * L) -> (G, O/G, N, L) -> (N, G, O/G, L) -> (N, O, *L)
    rex = tuple(e.reshape(groups, o // groups, -1, nl) for e in mex)
    r = w.reshape(m, rex, [groups, o // groups, n, nl], None, "view")
    qex = tuple(e.permute(2, 0, 1, 3) for e in rex)
    q = w.value("permute", qex, f"nnx.fn.permute {r.name} [2, 0, 1, 3]",
                f"{r.type} -> {{r}}")
    # The gather and matmul, run on the examples, must give the call's
    # results (else the index arithmetic above is wrong: refuse).
    for k in range(2):
        got = qex[k].reshape(c.ex[k].shape)
        if bias is not None:
            got = got + bias.examples[k].reshape(o, *[1] * s)
        if not torch.allclose(got, c.ex[k], rtol=1e-4, atol=1e-4):
            raise w.error("internal: the im2col form of this convolution "
                          "disagrees with torch")
    if bias is None:
        return w.reshape(q, c.ex, [n, o] + out_sp, c.label, "conv")
    yex = tuple(e.reshape(e.shape[0], o, *out_sp) for e in qex)
    y = w.reshape(q, yex, [n, o] + out_sp, None, "conv")
    bv = w.as_value(bias, c.ex[0].dtype)
    b2ex = tuple(e.reshape(o, *[1] * s) for e in bv.examples)
    b2 = w.reshape(bv, b2ex, [o] + [1] * s, None, "bias")
    return w.binary("add", y, b2, c.ex, c.label)


# -----------------------------------------------------------------------------
# More of the core set, from the ops above
# -----------------------------------------------------------------------------

@_writes(aten.argmax, aten.argmin)
def _argmax(w, c):
    fn = torch.argmax if c.func.overloadpacket is aten.argmax else \
        torch.argmin
    x = c.args[0]
    if x.rank == 0:
        return w.splat(0, c.ex, [], c.label)
    if c.arg(1, "dim") is not None or x.rank <= 1:
        args = list(c.args) + ([0] if c.arg(1, "dim") is None else [])
        keep = {"keepdim": c.arg(2, "keepdim", False)}
        return HANDLERS[fn].fn(w, Call(fn, c.label, args[:2], keep, c.ex,
                                       False))
    fex = tuple(e.reshape(-1) for e in x.examples)
    f = w.reshape(x, fex, None, None, "flat")
    keep = bool(c.arg(2, "keepdim", False))
    rex = tuple(fn(e, 0) for e in fex)
    r = HANDLERS[fn].fn(w, Call(fn, None if keep else c.label, [f, 0], {},
                                rex, False))
    return w.reshape(r, c.ex, [1] * x.rank, c.label, "view") if keep else r


@_writes(aten.round.decimals)
def _round_decimals(w, c):
    x, d = c.args[0], int(c.arg(1, "decimals", 0))
    scale = 10.0 ** abs(d)
    up = "mul" if d > 0 else "div"
    down = "div" if d > 0 else "mul"
    op = {"mul": torch.mul, "div": torch.div}
    s1 = w.binary(up, x, w.scalar(scale, x.dtype), tuple(
        op[up](e, scale) for e in x.examples), None)
    r = w.value("round", tuple(torch.round(e) for e in s1.examples),
                f"math.roundeven {s1.name}")
    return w.binary(down, r, w.scalar(scale, x.dtype), c.ex, c.label)


@_writes(aten.logaddexp)
def _logaddexp(w, c):
    a, b = c.args[0], c.args[1]
    dtype = c.ex[0].dtype
    a, b = w.as_value(a, dtype), w.as_value(b, dtype)
    m = w.binary("maximum", a, b, _ex2(lambda k: torch.maximum(
        a.examples[k], b.examples[k])), None)
    d = w.binary("sub", a, b, _ex2(lambda k: a.examples[k] - b.examples[k]),
                 None)
    ad = w.value("abs", tuple(e.abs() for e in d.examples),
                 f"math.absf {d.name}")
    nd = w.value("neg", tuple(-e for e in ad.examples), f"arith.negf "
                 f"{ad.name}")
    e = w.value("exp", tuple(torch.exp(t) for t in nd.examples),
                f"math.exp {nd.name}")
    lp = w.value("log1p", tuple(torch.log1p(t) for t in e.examples),
                 f"math.log1p {e.name}")
    return w.binary("add", m, lp, c.ex, c.label)


@_writes(prims.var)
def _prims_var(w, c):
    x, dims = c.args[0], list(c.args[1] or range(c.args[0].rank))
    corr = c.arg(2, "correction", 1)
    return _var(w, x, dims, 1 if corr is None else corr, False, c.ex,
                c.label)


@_writes(_get(prims, "isfinite"), aten.isfinite)
def _isfinite(w, c):
    """x - x is 0 exactly where x is finite (inf - inf and nan are nan)."""
    x = c.args[0]
    if not x.examples[0].is_floating_point():
        return w.splat(True, c.ex, w.dims(x), c.label)
    d = w.binary("sub", x, x, tuple(e - e for e in x.examples), None)
    return w.binary("eq", d, w.scalar(0, x.dtype), c.ex, c.label)


@_writes(aten.hypot, _get(prims, "hypot"))
def _hypot(w, c):
    dtype = c.ex[0].dtype
    a, b = w.as_value(c.args[0], dtype), w.as_value(c.args[1], dtype)
    aa = w.binary("mul", a, a, tuple(e * e for e in a.examples), None)
    bb = w.binary("mul", b, b, tuple(e * e for e in b.examples), None)
    s = w.binary("add", aa, bb, _ex2(lambda k: aa.examples[k] +
                                     bb.examples[k]), None)
    return w.value("sqrt", c.ex, f"math.sqrt {s.name}", label=c.label)


@_writes(aten.as_strided)
def _as_strided_gather(w, c):
    """The identity view; else, over a contiguous tensor of static shape,
    a constant gather of its elements."""
    x = c.args[0]
    size, stride = c.arg(1, "size"), c.arg(2, "stride")
    offset = c.arg(3, "storage_offset") or 0
    ident = True
    for k in range(2):
        t = x.examples[k]
        sz, st = _concrete(size, k), _concrete(stride, k)
        off = _concrete(offset, k)
        if list(sz) != list(t.shape) or list(st) != list(
                torch.empty(t.shape).stride()) or off:
            ident = False
    if ident:
        return x
    if any(isinstance(v, (Size, Value)) for v in _leaves([size, stride,
                                                          offset])) or \
            x.examples[0].shape != x.examples[1].shape or \
            not all(e.is_contiguous() and e.storage_offset() == 0
                    for e in x.examples):
        raise w.error("as_strided over run-time sizes or a strided view has "
                      "no nnx form")
    n = x.examples[0].numel()
    index = torch.as_strided(torch.arange(1, n + 1), list(size),
                             list(stride), offset)
    return _flat_gather(w, x, 0, index, 0.0, list(size), c.ex, c.label)


class _NoIndices:
    """The indices result of a max pool: no nnx form (a use refuses)."""


@_writes(aten.max_pool2d_with_indices)
def _max_pool2d_with_indices(w, c):
    ex = tuple(e[0] for e in c.ex)
    vals = HANDLERS[F.max_pool2d].fn(w, Call(F.max_pool2d, c.label,
                                             list(c.args[:6]), {}, ex, False))
    return vals, _NoIndices()


@_writes(aten.adaptive_max_pool2d)
def _adaptive_max_pool2d(w, c):
    """A max pool with kernel = stride = input / output, where the output
    size divides the input's."""
    x, out = c.args[0], list(c.args[1])
    sp = [tuple(e.shape[-2:]) for e in x.examples]
    if sp[0] != sp[1] or any(n % o for n, o in zip(sp[0], out)):
        raise w.error("adaptive_max_pool2d to an output size that does not "
                      "divide the (static) input size has no nnx form")
    k = [n // o for n, o in zip(sp[0], out)]
    ex = tuple(e[0] for e in c.ex)
    vals = HANDLERS[F.max_pool2d].fn(w, Call(F.max_pool2d, c.label,
                                             [x, k, k], {}, ex, False))
    return vals, _NoIndices()


@_writes(aten.take)
def _take_flat(w, c):
    x, index = c.args[0], w.as_value(c.args[1], torch.int64)
    fex = tuple(e.reshape(-1) for e in x.examples)
    f = w.reshape(x, fex, None, None, "flat")
    iv = ops._wrap_negative(w, index, w.dim(f, 0))
    return ops._take(w, f, iv, 0, c.ex, c.label)


_MOVEMENT[aten.unfold] = lambda c: c.args[0].rank - (
    c.arg(1, "dimension") % max(c.args[0].rank, 1))
ATEN[aten.unfold] = _movement


@_writes(aten.copy_, aten.copy)
def _copy(w, c):
    """`dst.copy_(src)`: src broadcast and cast to dst's shape and type."""
    src = w.as_value(c.args[1], c.ex[0].dtype)
    if [tuple(e.shape) for e in src.examples] == [tuple(e.shape)
                                                   for e in c.ex]:
        return src
    return HANDLERS[T.expand].fn(w, Call(T.expand, c.label, [src, w.dims(
        c.args[0])], {}, c.ex, False))


@_writes(aten.fill_, aten.fill, aten.zero_, aten.zero)
def _fill(w, c):
    value = c.arg(1, "value", 0)
    if isinstance(value, (Size, Value)):
        raise w.error("a fill value computed at run time has no nnx form")
    return w.splat(value, c.ex, w.dims(c.args[0]), c.label)


# -----------------------------------------------------------------------------
# Linear ops by probing: one constant matrix
# -----------------------------------------------------------------------------

def _linear_probe(w, c, trailing):
    """An op linear in its input over its static trailing dims (pooling,
    linear interpolation): `x` flattened over them times the constant
    matrix found by running the op on the identity; checked on the
    examples."""
    x = c.args[0]
    what = f"'{c.func.overloadpacket.__name__}'"
    lead = x.rank - trailing
    shapes = [tuple(e.shape) for e in x.examples]
    outs = [tuple(e.shape) for e in c.ex]
    if lead < 1 or shapes[0][lead:] != shapes[1][lead:] or \
            outs[0][lead:] != outs[1][lead:] or \
            any(o[:lead] != s[:lead] for o, s in zip(outs, shapes)):
        raise w.error(f"{what} over run-time sizes has no nnx form (the "
                      "dims it acts on must be static)")
    if any(isinstance(a, (Size, Value)) for a in _all_leaves(
            (c.args[1:], c.kwargs))):
        raise w.error(f"{what} with run-time arguments has no nnx form")
    n = math.prod(shapes[0][lead:])
    m = math.prod(outs[0][lead:])
    if n * m > 1 << 20:
        raise w.error(f"{what} as a matrix of {n} x {m} entries is too "
                      "large to write (at most 2^20)")
    eye = torch.eye(n, dtype=torch.float64).reshape(
        (n,) + (1,) * (lead - 1) + shapes[0][lead:])
    mat = c.func(eye, *c.args[1:], **c.kwargs).reshape(n, m)
    mat = mat.to(c.ex[0].dtype)
    for k in range(2):
        e = x.examples[k]
        got = (e.reshape(*e.shape[:lead], n).to(mat.dtype) @ mat).reshape(
            c.ex[k].shape)
        if not torch.allclose(got, c.ex[k], rtol=1e-4, atol=1e-5):
            raise w.error(f"{what} is not linear in its input here")
    dims = w.dims(x)
    fex = tuple(e.reshape(*e.shape[:lead], n) for e in x.examples)
    f = w.reshape(x, fex, dims[:lead] + [n], None, "flat")
    mv = w.constant(mat)
    pex = tuple(e @ mat for e in fex)
    p = _mm_const(w, f, mv, pex)
    return w.reshape(p, c.ex, dims[:lead] + list(outs[0][lead:]), c.label,
                     what.strip("'"))


def _mm_const(w, x, mat, ex):
    return w.value("matmul", ex, f"nnx.fn.matmul {x.name}, {mat.name}",
                   f"{x.type}, {mat.type} -> {{r}}")


_LINEAR = {}
for _n, _k in (("adaptive_avg_pool1d", 1), ("_adaptive_avg_pool2d", 2),
               ("adaptive_avg_pool2d", 2), ("_adaptive_avg_pool3d", 3),
               ("adaptive_avg_pool3d", 3), ("avg_pool1d", 1),
               ("avg_pool2d", 2), ("avg_pool3d", 3),
               ("upsample_linear1d", 1), ("upsample_bilinear2d", 2),
               ("upsample_trilinear3d", 3), ("upsample_bicubic2d", 2)):
    if _get(aten, _n) is not None:
        _LINEAR[_get(aten, _n)] = _k


def _linear_or_handler(previous, trailing):
    def write(w, c):
        if previous is not None:
            try:
                return previous(w, c)
            except ExportError as e:
                first = e
        try:
            return _linear_probe(w, c, trailing)
        except ExportError:
            if previous is not None:
                raise first from None
            raise
    return write


for _p, _k in _LINEAR.items():
    if _p in (aten.upsample_bilinear2d, aten.upsample_bicubic2d):
        continue  # decomposed by torch (gathers; any size)
    ATEN[_p] = _linear_or_handler(ATEN.get(_p), _k)


#: OpOverload -> decomposition, for the ops not in :data:`ATEN`.
TABLE = _table()
