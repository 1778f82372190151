"""The forward of a custom module as nnx IR, read off a ``torch.fx`` trace.

Why torch.fx, and how: each custom module's ``forward`` is traced on its own
with every child module kept as a call (``call_module`` nodes become
``nnx.call``), so the module tree survives and dotted paths and tracing
work. The graph is then *interpreted* twice on concrete example inputs whose
dynamic dims (batch, sequence) have different sizes in the two runs: every
node's two example values give its type (a dim that differs between the runs
is ``?``) and say which integers are run-time sizes. Sizes that differ become
``index`` SSA values (``tensor.dim`` and ``arith`` on them), so one exported
forward serves any batch and sequence length.

Three quirks of torch 1.13's fx on Python 3.11 are handled in
:class:`_Tracer` (see ``shared/notes/torch-fx-facts.md``): unpacking a traced
shape (``b, t, d = x.shape``) finds the calling instruction by its byte
offset; factory functions given a traced size (``torch.arange(t)``,
``torch.ones(t, t)``) are recorded as calls while tracing; buffers read in a
forward (``self.inv_freq``) are traced as values.

Functions listed in ``functions=`` (e.g. HF's ``attention_interface``,
BLOOM's ``dropout_add``) are kept as calls too: each becomes a parameterless
child ``nnx.module @<function name>`` of the module whose forward calls it,
so ``source.attention_interface_0.source.softmax_0`` addresses the softmax
inside the call of *this* layer, as nnterp labels it.

Labels (``nnx.source``) follow nnterp's source labels: the called function's
or method's name and a per-name index (``matmul_0``, ``softmax_0``,
``view_1``, ``add_0``, ``self_attn_0`` for a child call,
``attention_interface_0`` for a kept function).
"""

import dis
import inspect
import math
import operator
import re

import torch
import torch.fx as fx
import torch.nn.functional as F

__all__ = ["ExportError", "Size", "Value", "FxForward", "trace_forward"]


class ExportError(ValueError):
    """A module (named by its path) or a forward op that nnx IR cannot
    describe."""

# -----------------------------------------------------------------------------
# Tracing
# -----------------------------------------------------------------------------

# Factory functions whose sizes may be traced values: recorded as calls.
_FACTORIES = ("arange", "ones", "zeros", "full", "empty")


class _Tracer(fx.Tracer):
    """Keeps every child module as a call and works around torch 1.13's fx
    quirks on Python 3.11."""

    def __init__(self, functions=()):
        super().__init__(autowrap_functions=tuple(functions))
        self.proxy_buffer_attributes = True

    def is_leaf_module(self, m, qualname):
        return True

    def trace_patched(self, root, concrete_args):
        originals = {name: getattr(torch, name) for name in _FACTORIES}

        def recorder(orig):
            def call(*args, **kwargs):
                flat = list(args) + list(kwargs.values())
                flat += [a for x in args if isinstance(x, (tuple, list))
                         for a in x]
                if any(isinstance(a, fx.Proxy) for a in flat):
                    return self.create_proxy("call_function", orig, args,
                                             kwargs)
                return orig(*args, **kwargs)
            return call

        saved = {m: fx.Proxy.__dict__.get(m) for m in ("__iter__",) +
                 tuple(_IN_PLACE)}
        try:
            for name, orig in originals.items():
                setattr(torch, name, recorder(orig))
            fx.Proxy.__iter__ = _proxy_iter
            for method, op in _IN_PLACE.items():
                setattr(fx.Proxy, method, _in_place_method(op))
            return self.trace(root, concrete_args=concrete_args)
        finally:
            for method, orig in saved.items():
                if orig is None:
                    delattr(fx.Proxy, method)
                else:
                    setattr(fx.Proxy, method, orig)
            for name, orig in originals.items():
                setattr(torch, name, orig)


# `a += b` on a Proxy falls back to `a = a + b`; recorded as the in-place
# operator instead (Falcon adds the attention into the MLP output in place).
_IN_PLACE = {"__iadd__": operator.iadd, "__isub__": operator.isub,
             "__imul__": operator.imul, "__itruediv__": operator.itruediv}


def _in_place_method(op):
    def method(self, other):
        return self.tracer.create_proxy("call_function", op, (self, other), {})
    return method


def _proxy_iter(self):
    """Proxy.__iter__ as torch 1.13 means it: torch indexes
    dis.get_instructions by f_lasti // 2, which Python 3.11's inline caches
    shift; the calling instruction is looked up by its offset instead."""
    frame = inspect.currentframe().f_back
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset == frame.f_lasti:
            if ins.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(ins.argval))
            break
    return self.tracer.iter(self)


def trace_forward(root, concrete_args, functions, where):
    """The fx graph of `root` (a module or a function), children kept as
    calls."""
    try:
        return _Tracer(functions).trace_patched(root, concrete_args or None)
    except Exception as e:  # fx raises many kinds on untraceable code
        raise ExportError(f"{where}: torch.fx could not trace the forward "
                    f"({type(e).__name__}: {e})") from None


# -----------------------------------------------------------------------------
# Values of the interpretation
# -----------------------------------------------------------------------------


class Value:
    """A tensor SSA value of a forward being built: its name, its two example
    tensors (one per example run) and its IR type."""

    def __init__(self, name, examples, type_str):
        self.name = name
        self.examples = tuple(examples)
        self.type = type_str

    @property
    def dtype(self):
        return self.examples[0].dtype

    @property
    def rank(self):
        return self.examples[0].dim()

    def dynamic(self, d):
        return self.examples[0].shape[d] != self.examples[1].shape[d]


class Size:
    """A run-time integer (a dynamic dim, or arithmetic on one): its index SSA
    value and its values in the two example runs."""

    def __init__(self, name, examples):
        self.name = name
        self.examples = tuple(examples)

    type = "index"

    def __repr__(self):
        return f"Size({self.name}, {self.examples})"


_MLIR_TYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.int16: "i16", torch.int8: "i8", torch.bool: "i1",
}

_NONFINITE = {
    "f32": ("0x7F800000", "0xFF800000", "0x7FC00000"),
    "f64": ("0x7FF0000000000000", "0xFFF0000000000000", "0x7FF8000000000000"),
    "f16": ("0x7C00", "0xFC00", "0x7E00"),
    "bf16": ("0x7F80", "0xFF80", "0x7FC0"),
}


def mlir_element_type(dtype):
    try:
        return _MLIR_TYPES[dtype]
    except KeyError:
        raise ExportError(f"unsupported dtype {dtype}") from None


def scalar_literal(value, elt):
    """`value` as an MLIR literal of element type `elt`."""
    if elt == "i1":
        return "true" if value else "false"
    if elt.startswith("i"):
        return str(int(value))
    v = float(value)
    if math.isinf(v) or math.isnan(v):
        pos, neg, nan = _NONFINITE[elt]
        return nan if math.isnan(v) else (pos if v > 0 else neg)
    s = repr(v)
    if "e" in s and "." not in s.split("e")[0]:
        m, e = s.split("e")
        s = f"{m}.0e{e}"
    elif "." not in s and "e" not in s:
        s += ".0"
    return s


def tensor_type(examples, where):
    """The type of a value from its two example tensors."""
    a, b = examples
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise ExportError(f"{where}: produced a {type(a).__name__}, not a tensor")
    if a.dim() != b.dim():
        raise ExportError(f"{where}: its rank depends on the input sizes")
    dims = "".join(("?" if da != db else str(da)) + "x"
                   for da, db in zip(a.shape, b.shape))
    return f"tensor<{dims}{mlir_element_type(a.dtype)}>"


def target_name(node):
    """The name nnterp labels a call with: the function's or method's."""
    if node.op == "call_method":
        return node.target
    t = node.target
    name = getattr(t, "__name__", None) or str(t)
    return re.sub(r"[^A-Za-z0-9_]", "_", name.strip("_") or name)


def _sym(key):
    key = str(key)
    if re.match(r"^[A-Za-z_][A-Za-z0-9_$]*$", key):
        return "@" + key
    return '@"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_sym(x):
    return isinstance(x, (Value, Size))


def flat_values(x):
    if isinstance(x, (tuple, list)):
        for i in x:
            yield from flat_values(i)
    elif isinstance(x, dict):
        for i in x.values():
            yield from flat_values(i)
    elif isinstance(x, slice):
        yield from flat_values((x.start, x.stop, x.step))
    else:
        yield x


def _concrete(x, k):
    """`x` with every Value / Size replaced by its example of run `k`."""
    if _is_sym(x):
        return x.examples[k]
    if isinstance(x, tuple):
        return tuple(_concrete(i, k) for i in x)
    if isinstance(x, list):
        return [_concrete(i, k) for i in x]
    if isinstance(x, dict):
        return {n: _concrete(i, k) for n, i in x.items()}
    if isinstance(x, slice):
        return slice(_concrete(x.start, k), _concrete(x.stop, k),
                     _concrete(x.step, k))
    return x


def _norm_dim(d, rank, where):
    if not isinstance(d, int) or isinstance(d, bool):
        raise ExportError(f"{where}: dim {d!r} is not a constant int")
    if not -rank <= d < max(rank, 1):
        raise ExportError(f"{where}: dim {d} is out of range for rank {rank}")
    return d % rank if rank else 0


def _shape_args(args):
    """`view(2, 3)` and `view((2, 3))` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def _dtype_kind(dtype):
    if dtype == torch.bool:
        return "bool"
    return "float" if dtype.is_floating_point else "int"


_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 1, "i8": 8,
         "i16": 16, "i32": 32, "i64": 64}


def target_name_module(target):
    return "self_" + re.sub(r"[^A-Za-z0-9_]", "_", target)


def fn_is_factory(fn):
    return getattr(fn, "__name__", None) in _FACTORIES + ("tril", "triu")


_OUT_OF_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub,
                 operator.imul: operator.mul, operator.itruediv: operator.truediv}

# fx call targets by the handler that lowers them (op_<kind>); "_" marks an
# in-place variant. Methods are looked up by name, functions by object.
_KINDS = {
    "binary": ["add", "sub", "mul", "div", "truediv", "pow", "maximum",
               "minimum", "rsub"],
    "compare": ["eq", "ne", "lt", "le", "gt", "ge"],
    "where": ["where"], "masked_fill": ["masked_fill"],
    "math": ["exp", "sqrt", "rsqrt", "cos", "sin", "tanh", "abs", "log"],
    "neg": ["neg"],
    "activation": ["relu", "silu", "sigmoid", "gelu"],
    "softmax": ["softmax"], "dropout": ["dropout"],
    "reduce": ["mean", "sum"], "matmul": ["matmul", "bmm"],
    "reshape": ["view", "reshape", "flatten", "unsqueeze", "squeeze"],
    "expand": ["expand", "expand_as", "broadcast_to"],
    "permute": ["transpose", "permute", "t", "swapaxes"],
    "identity": ["contiguous", "clone", "detach"],
    "to": ["to", "type", "type_as", "float", "double", "half", "bfloat16",
           "long", "int", "bool"],
    "getitem": ["getitem"], "split": ["split", "chunk"],
    "cat": ["cat", "concat", "stack"], "arange": ["arange"],
    "full": ["ones", "zeros", "full", "empty", "ones_like", "zeros_like",
             "full_like", "empty_like"],
    "tril": ["tril", "triu"], "outer": ["outer"],
    "size": ["size", "dim", "getattr"],
}
_KIND_OF = {name: kind for kind, names in _KINDS.items() for name in names}
_IN_PLACE_OPERATORS = {"iadd": "add", "isub": "sub", "imul": "mul",
                       "itruediv": "truediv"}


def canonical_op(node):
    """(handler kind, in place) of a call_function / call_method node."""
    name = target_name(node)
    if node.op == "call_function":
        module = getattr(node.target, "__module__", "") or ""
        if name in _IN_PLACE_OPERATORS:
            return _KIND_OF[_IN_PLACE_OPERATORS[name]], True
        if not (module.startswith("torch") or module in ("_operator",
                                                         "operator")
                or node.target in (getattr, ) or module == "builtins"
                or getattr(node.target, "__self__", None) in (torch,)):
            return None, False
        return _KIND_OF.get(name), False
    in_place = name.endswith("_") and not name.startswith("_")
    base = name[:-1] if in_place else name
    return _KIND_OF.get(base), in_place


_ALIASES = {"iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "div",
            "truediv": "div", "rsub": "sub", "divide": "div",
            "multiply": "mul", "subtract": "sub", "bmm": "matmul"}


def kind_name(label):
    """The nnx op a call lowers to, from its label base (`add_` -> add)."""
    base = label[:-1] if label.endswith("_") else label
    return _ALIASES.get(base, base)


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


class _Ops:
    """The tensor-op handlers of FxForward: op_<kind>(kind, label, args,
    kwargs, examples, in_place) emits the op(s) and returns the result."""

    # -- elementwise ----------------------------------------------------------
    def op_binary(self, kind, label, args, kwargs, ex, in_place):
        a, b = args[0], _arg(args, kwargs, 1, "other")
        if kwargs.get("alpha", 1) != 1:
            raise self.error("'alpha' is not supported")
        op = kind_name(label)
        if label.rstrip("_") == "rsub":
            a, b = b, a
        dtype = ex[0].dtype
        attrs = ["nnx.in_place = 0"] if in_place else []
        if op == "pow" and not _is_sym(b) and b == 2:
            x = self.as_value(a, dtype)
            return self.binary("mul", x, x, ex, label, attrs)
        return self.binary(op, self.as_value(a, dtype), self.as_value(b, dtype),
                           ex, label, attrs)

    def op_compare(self, kind, label, args, kwargs, ex, in_place):
        a, b = args[0], _arg(args, kwargs, 1, "other")
        c = lambda x: _concrete(x, 0)  # noqa: E731
        dtype = torch.result_type(c(a), c(b))
        return self.binary(kind_name(label), self.as_value(a, dtype),
                           self.as_value(b, dtype), ex, label)

    def op_where(self, kind, label, args, kwargs, ex, in_place):
        if len(args) + len(kwargs) != 3:
            raise self.error("torch.where with one argument (nonzero) has no "
                             "nnx form")
        c, a, b = args[0], _arg(args, kwargs, 1, "input"), \
            _arg(args, kwargs, 2, "other")
        return self._where(c, a, b, ex, label)

    def op_masked_fill(self, kind, label, args, kwargs, ex, in_place):
        x, mask, v = args[0], _arg(args, kwargs, 1, "mask"), \
            _arg(args, kwargs, 2, "value")
        return self._where(mask, v, x, ex, label)

    def _where(self, c, a, b, ex, label):
        cond = self.as_value(c, torch.bool)
        a, b = self.as_value(a, ex[0].dtype), self.as_value(b, ex[0].dtype)
        return self.value("where", ex, f"nnx.fn.where {cond.name}, {a.name}, "
                          f"{b.name}", f"{cond.type}, {a.type}, {b.type} -> {{r}}",
                          label=label)

    def op_math(self, kind, label, args, kwargs, ex, in_place):
        x = self.as_value(args[0], ex[0].dtype)
        name = kind_name(label)
        op = {"abs": "absf"}.get(name, name)
        return self.value(name, ex, f"math.{op} {x.name}", label=label)

    def op_neg(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        if ex[0].is_floating_point():
            return self.value("neg", ex, f"arith.negf {x.name}", label=label)
        zero = self.scalar(0, x.dtype)
        return self.binary("sub", zero, x, ex, label)

    def op_activation(self, kind, label, args, kwargs, ex, in_place):
        x = self.as_value(args[0], ex[0].dtype)
        name = kind_name(label)
        attrs = []
        if name == "gelu":
            approx = _arg(args, kwargs, 1, "approximate", "none")
            attrs.append(f"approximate = #nnx.gelu_approximation<{approx}>")
        return self.value(name, ex, f"nnx.fn.{name} {x.name}", attrs=attrs,
                          label=label)

    def op_softmax(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        dim = _arg(args, kwargs, 1, "dim")
        dtype = _arg(args, kwargs, 2, "dtype") if "dtype" in kwargs or \
            len(args) > 2 and isinstance(args[2], torch.dtype) else None
        if dim is None:
            raise self.error("softmax needs an explicit dim")
        x = self.cast(x, dtype or x.dtype)
        d = _norm_dim(dim, x.rank, self.where()) - x.rank
        return self.value("softmax", ex, f"nnx.fn.softmax {x.name}",
                          attrs=[f"dim = {d} : i64"], label=label)

    def op_dropout(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        p = float(_arg(args, kwargs, 1, "p", 0.5))
        training = bool(_arg(args, kwargs, 2, "training", True))
        attrs = [f"p = {scalar_literal(p, 'f64')} : f64"]
        if training:
            attrs.append("train")
        return self.value("dropout", ex,
                          f"nnx.fn.dropout {x.name}", attrs=attrs, label=label)

    def op_reduce(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        dim = _arg(args, kwargs, 1, "dim")
        keep = bool(_arg(args, kwargs, 2, "keepdim", False))
        if kwargs.get("dtype") is not None:
            x = self.cast(x, kwargs["dtype"])
        dims = list(range(x.rank)) if dim is None else (
            list(dim) if isinstance(dim, (tuple, list)) else [dim])
        dims = [_norm_dim(d, x.rank, self.where()) for d in dims]
        attrs = ["dims = array<i64: " + ", ".join(map(str, dims)) + ">"]
        if keep:
            attrs.append("keepdim")
        name = kind_name(label)
        return self.value(name, ex, f"nnx.fn.{name} {x.name}",
                          f"{x.type} -> {{r}}", attrs, label)

    def op_matmul(self, kind, label, args, kwargs, ex, in_place):
        a, b = args[0], _arg(args, kwargs, 1, "other")
        if a.rank < 2 or b.rank < 2:
            raise self.error("matmul of a rank-1 operand has no nnx form "
                             "(unsqueeze it)")
        a, b = self.cast(a, ex[0].dtype), self.cast(b, ex[0].dtype)
        return self.value("matmul", ex, f"nnx.fn.matmul {a.name}, {b.name}",
                          f"{a.type}, {b.type} -> {{r}}", label=label)

    # -- shapes ---------------------------------------------------------------
    def reshape(self, x, ex, hints, label, hint="view"):
        sizes = self.sizes_for(ex, hints, x)
        return self.value(hint, ex, f"nnx.fn.reshape {x.name} "
                          f"{self.size_list(sizes)}", f"{x.type} -> {{r}}",
                          label=label)

    def op_reshape(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        hints = None
        if label in ("view", "reshape"):
            if len(args) == 2 and isinstance(args[1], torch.dtype):
                raise self.error("view(dtype) has no nnx form")
            hints = _shape_args(args[1:] or [kwargs.get("shape")])
        return self.reshape(x, ex, hints, label, label)

    def op_expand(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        if label == "expand_as":
            hints = self.dims(args[1])
        else:
            hints = _shape_args(args[1:] or [kwargs.get("size")])
            lead = len(hints) - x.rank
            hints = [self.dim(x, i - lead) if h == -1 else h
                     for i, h in enumerate(hints)]
        sizes = self.sizes_for(ex, hints, x)
        return self.value("expand", ex, f"nnx.fn.expand {x.name} "
                          f"{self.size_list(sizes)}", f"{x.type} -> {{r}}",
                          label=label)

    def op_permute(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        r = x.rank
        if label in ("transpose", "swapaxes"):
            i = _norm_dim(_arg(args, kwargs, 1, "dim0"), r, self.where())
            j = _norm_dim(_arg(args, kwargs, 2, "dim1"), r, self.where())
            perm = list(range(r))
            perm[i], perm[j] = perm[j], perm[i]
        elif label == "t":
            perm = list(range(r))[::-1]
        else:
            perm = [_norm_dim(d, r, self.where())
                    for d in _shape_args(args[1:] or [kwargs.get("dims")])]
        if perm == list(range(r)):
            return x
        return self.value("transpose" if label != "permute" else "permute", ex,
                          f"nnx.fn.permute {x.name} [{', '.join(map(str, perm))}]",
                          f"{x.type} -> {{r}}", label=label)

    def op_identity(self, kind, label, args, kwargs, ex, in_place):
        return args[0]

    def op_to(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        if ex[0].dtype == x.dtype:
            return x
        return self.cast(x, ex[0].dtype, label)

    def op_size(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        if label == "dim":
            return x.rank
        if label == "getattr":
            attr = args[1]
            if attr == "shape":
                return tuple(self.dims(x))
            if attr == "ndim":
                return x.rank
            if attr in ("dtype", "device", "is_cuda", "requires_grad"):
                return getattr(x.examples[0], attr)
            if attr == "T":
                perm = list(range(x.rank))[::-1]
                return self.value("T", ex, f"nnx.fn.permute {x.name} "
                                  f"[{', '.join(map(str, perm))}]",
                                  f"{x.type} -> {{r}}", label="T")
            raise self.error(f"attribute '{attr}' of a tensor has no nnx form")
        d = _arg(args, kwargs, 1, "dim")
        if d is None:
            return tuple(self.dims(x))
        return self.dim(x, _norm_dim(d, x.rank, self.where()))

    # -- slicing --------------------------------------------------------------
    def _bound(self, v, dim, default):
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, Size)):
            raise self.error(f"slice bound {v!r} is not an int or a size")
        if isinstance(v, int) and v < 0:
            if isinstance(dim, int):
                return max(dim + v, 0)
            return self.arith_size("add", dim, v)
        if isinstance(v, int) and isinstance(dim, int):
            return min(v, dim)
        return v

    def _slice_dim(self, it, dim):
        """(offset, size, stride) of slice `it` over a dim of size `dim`."""
        step = 1 if it.step is None else it.step
        if not isinstance(step, int) or step < 1:
            raise self.error(f"slice step {step!r} must be a positive int")
        start = self._bound(it.start, dim, 0)
        stop = self._bound(it.stop, dim, dim)
        size = self.arith_size("sub", stop, start)
        if isinstance(size, int):
            size = max(size, 0)
        if step > 1:
            size = self.arith_size("floordiv",
                                   self.arith_size("add", size, step - 1), step)
        return start, size, step

    def extract_slice(self, x, offsets, sizes, strides, ex, label):
        """`tensor.extract_slice`; dims with size None are dropped."""
        full = all(o == 0 and st == 1 and (s is not None and
                   (s is self.dim(x, d) or s == self.dim(x, d)))
                   for d, (o, s, st) in enumerate(zip(offsets, sizes, strides)))
        if full:
            return x
        lst = lambda vs: self.size_list(vs)  # noqa: E731
        kept = [1 if s is None else s for s in sizes]
        return self.value("slice", ex, f"tensor.extract_slice {x.name}"
                          f"{lst(offsets)}{lst(kept)}{lst(strides)}",
                          f"{x.type} to {{r}}", label=label)

    def op_getitem(self, kind, label, args, kwargs, ex, in_place):
        x, idx = args
        items = list(idx) if isinstance(idx, tuple) else [idx]
        if any(isinstance(i, Value) or isinstance(i, (list, torch.Tensor))
               for i in items):
            raise self.error("indexing with a tensor or a list (gather) has "
                             "no nnx form; use slices and ints")
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        if items.count(Ellipsis) > 1 or used > x.rank:
            raise self.error(f"index {idx!r} does not fit rank {x.rank}")
        if Ellipsis in items:
            e = items.index(Ellipsis)
            items[e:e + 1] = [slice(None)] * (x.rank - used)
        else:
            items += [slice(None)] * (x.rank - used)
        offsets, sizes, strides, d = [], [], [], 0
        for it in items:
            if it is None:
                continue
            dim = self.dim(x, d)
            if isinstance(it, slice):
                o, s, st = self._slice_dim(it, dim)
            else:
                o, s, st = self._bound(it, dim, 0), None, 1
            offsets.append(o)
            sizes.append(s)
            strides.append(st)
            d += 1
        plain = tuple(i for i in items if i is not None)
        sex = tuple(e[_concrete(plain, k)] for k, e in enumerate(x.examples))
        has_new = any(i is None for i in items)
        y = self.extract_slice(x, offsets, sizes, strides, sex,
                               None if has_new else label)
        if not has_new:
            return y
        hints = iter(self.dims(y))
        return self.reshape(y, ex, [1 if i is None else next(hints)
                                    for i in items
                                    if i is None or isinstance(i, slice)],
                            label)

    def op_split(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        d = _norm_dim(_arg(args, kwargs, 2, "dim", 0), x.rank, self.where())
        pieces = list(zip(ex[0], ex[1]))
        offset, out = 0, []
        for p0, p1 in pieces:
            if p0.shape[d] != p1.shape[d]:
                raise self.error("a split into pieces of run-time size has no "
                                 "nnx form")
            offsets = [0] * x.rank
            offsets[d] = offset
            sizes = self.dims(x)
            sizes[d] = int(p0.shape[d])
            out.append(self.extract_slice(x, offsets, sizes, [1] * x.rank,
                                          (p0, p1), None))
            offset += int(p0.shape[d])
        return tuple(out)

    def op_cat(self, kind, label, args, kwargs, ex, in_place):
        ts = list(_arg(args, kwargs, 0, "tensors"))
        dim = _arg(args, kwargs, 1, "dim", 0)
        if not all(isinstance(t, Value) for t in ts):
            raise self.error("cat of something that is not a tensor")
        ts = [self.cast(t, ex[0].dtype) for t in ts]
        if label == "stack":
            d = _norm_dim(dim, ts[0].rank + 1, self.where())
            parts = []
            for t in ts:
                uex = tuple(e.unsqueeze(d) for e in t.examples)
                dims = self.dims(t)
                parts.append(self.reshape(t, uex, dims[:d] + [1] + dims[d:],
                                          None, "unsqueeze"))
            ts = parts
        else:
            d = _norm_dim(dim, ts[0].rank, self.where())
        if len(ts) == 1:
            return ts[0]
        return self.value(label, ex, f"tensor.concat dim({d}) "
                          + ", ".join(t.name for t in ts),
                          "(" + ", ".join(t.type for t in ts) + ") -> {r}",
                          label=label)

    # -- factories ------------------------------------------------------------
    def op_arange(self, kind, label, args, kwargs, ex, in_place):
        pos = [a for a in args]
        if len(pos) == 1:
            start, end, step = 0, pos[0], 1
        else:
            start, end = pos[0], pos[1]
            step = pos[2] if len(pos) > 2 else kwargs.get("step", 1)
        if step != 1:
            raise self.error("arange with a step other than 1 has no nnx form")
        n = self.arith_size("sub", end, start)
        dtype = ex[0].dtype
        if start == 0:
            return self.value("arange", ex, f"nnx.fn.arange {self.index(n)}",
                              label=label)
        base = tuple(torch.arange(_concrete(n, k), dtype=dtype)
                     for k in range(2))
        r = self.value("arange", base, f"nnx.fn.arange {self.index(n)}")
        return self.binary("add", r, self.as_value(start, dtype), ex, label)

    def op_full(self, kind, label, args, kwargs, ex, in_place):
        name = label
        if name.endswith("_like"):
            hints = self.dims(args[0])
            fill = _arg(args, kwargs, 1, "fill_value") if name == "full_like" \
                else None
        else:
            if name == "full":
                hints = list(_arg(args, kwargs, 0, "size"))
                fill = _arg(args, kwargs, 1, "fill_value")
            else:
                hints = _shape_args(args or [kwargs.get("size")])
                fill = None
        if fill is None:
            fill = 1 if name.startswith("ones") else 0
        if _is_sym(fill):
            raise self.error("a fill value computed at run time has no nnx form")
        sizes = self.sizes_for(ex, hints)
        elt = mlir_element_type(ex[0].dtype)
        lit = scalar_literal(fill, elt)
        if not any(isinstance(s, Size) for s in sizes):
            return self.value(name, ex, f"arith.constant dense<{lit}>",
                              label=None)
        c = self.name("fill")
        typed = lit if elt == "i1" else f"{lit} : {elt}"  # `true`: already i1
        self.lines.append(f"{c} = arith.constant {typed}")
        dyn = [s.name for s in sizes if isinstance(s, Size)]
        return self.value(name, ex, f"tensor.splat {c}[{', '.join(dyn)}]",
                          label=label)

    def op_tril(self, kind, label, args, kwargs, ex, in_place):
        x = args[0]
        diag = _arg(args, kwargs, 1, "diagonal", 0)
        if _is_sym(diag):
            raise self.error("a diagonal computed at run time has no nnx form")
        return self.value(label, ex, f"nnx.fn.{label} {x.name}",
                          attrs=[f"diagonal = {int(diag)} : i64"], label=label)

    def op_outer(self, kind, label, args, kwargs, ex, in_place):
        a, b = args[0], _arg(args, kwargs, 1, "vec2")
        dtype = ex[0].dtype
        a, b = self.cast(a, dtype), self.cast(b, dtype)
        ca = tuple(e.unsqueeze(1) for e in a.examples)
        rb = tuple(e.unsqueeze(0) for e in b.examples)
        a2 = self.reshape(a, ca, [self.dim(a, 0), 1], None, "col")
        b2 = self.reshape(b, rb, [1, self.dim(b, 0)], None, "row")
        return self.binary("mul", a2, b2, ex, label)


class FxForward(_Ops):
    """Interprets the fx graph of one forward on its two example runs and
    writes the ``nnx.forward`` body (``lines``).

    `call_module(target, node, args, kwargs)` and the kept `functions` are
    the exporter's: a call to a child records that child's example inputs.
    """

    def __init__(self, module, path, functions, on_call):
        self.module = module
        self.path = path
        self.functions = {f: f.__name__ for f in functions}
        self.on_call = on_call
        self.lines = []
        self.kept = {}  # function name -> (function, examples, concrete)
        self._labels = {}
        self._names = set()
        self._consts = {}
        self._dims = {}
        self._sizes = []
        self._node = None

    # -- naming and emission ------------------------------------------------
    def where(self):
        w = f"module at '{self.path or '<root>'}'"
        if self._node is not None:
            w += f", node '{self._node.name}' ({self._node.op} " \
                 f"{target_name(self._node)})"
        return w

    def error(self, msg):
        return ExportError(f"{self.where()}: {msg}")

    def name(self, hint):
        base = "%" + (re.sub(r"[^A-Za-z0-9_]", "_", str(hint)) or "v")
        if base[1].isdigit():
            base = "%v" + base[1:]
        n, i = base, 0
        while n in self._names:
            i += 1
            n = f"{base}_{i}"
        self._names.add(n)
        return n

    def label(self, base):
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
        i = self._labels.get(base, 0)
        self._labels[base] = i + 1
        return f"{base}_{i}"

    def emit(self, results, text, types, attrs=(), label=None):
        attrs = list(attrs)
        if label is not None:
            attrs.insert(0, f'nnx.source = "{self.label(label)}"')
        attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
        lhs = f"{', '.join(results)} = " if results else ""
        self.lines.append(f"{lhs}{text}{attr_text} : {types}")

    def value(self, hint, examples, text, types=None, attrs=(), label=None):
        """Emits a one-result op `text`; `types` is formatted with `{r}`,
        the result type (default: just the result type)."""
        t = tensor_type(examples, self.where())
        v = Value(self.name(hint), examples, t)
        self.emit([v.name], text, (types or "{r}").format(r=t), attrs, label)
        return v

    # -- sizes ----------------------------------------------------------------
    def known_sizes(self, sizes):
        """Run-time sizes given as forward arguments."""
        self._sizes.extend(sizes)

    def index(self, s):
        """The index SSA value of `s` (an int or a Size)."""
        if isinstance(s, Size):
            return s.name
        s = int(s)
        if s not in self._consts:
            name = self.name(f"c{s}" if s >= 0 else f"cm{-s}")
            self.lines.append(f"{name} = arith.constant {s} : index")
            self._consts[s] = name
        return self._consts[s]

    def size(self, name_hint, examples, text):
        """A new Size computed by `text` (an op on index values)."""
        if examples[0] == examples[1]:
            return int(examples[0])
        s = Size(self.name(name_hint), examples)
        self.lines.append(f"{s.name} = {text}")
        self._sizes.append(s)
        return s

    def dim(self, v, d):
        """Dim `d` of `v`: an int if static, else a Size (tensor.dim)."""
        key = (v.name, d)
        if key not in self._dims:
            ex = (v.examples[0].shape[d], v.examples[1].shape[d])
            known = [s for s in self._sizes if s.examples == ex]
            if ex[0] == ex[1]:
                self._dims[key] = int(ex[0])
            elif known:  # the same run-time size (e.g. the batch) seen before
                self._dims[key] = known[0]
            else:
                hint = v.name[1:] + f"_d{d}"
                self._dims[key] = self.size(
                    hint, ex, f"tensor.dim {v.name}, {self.index(d)} : {v.type}")
        return self._dims[key]

    def dims(self, v):
        return [self.dim(v, d) for d in range(v.rank)]

    def arith_size(self, op, a, b):
        """`a <op> b` on ints / Sizes (op: add sub mul floordiv)."""
        fn = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "floordiv": operator.floordiv}[op]
        if not _is_sym(a) and not _is_sym(b):
            return fn(a, b)
        unit = {"add": 0, "sub": 0, "mul": 1, "floordiv": 1}[op]
        if not _is_sym(b) and b == unit:
            return a
        if op in ("add", "mul") and not _is_sym(a) and a == unit:
            return b
        ex = tuple(fn(_concrete(a, k), _concrete(b, k)) for k in range(2))
        mn = {"add": "addi", "sub": "subi", "mul": "muli",
              "floordiv": "floordivsi"}[op]
        return self.size(op, ex, f"arith.{mn} {self.index(a)}, "
                                 f"{self.index(b)} : index")

    def sizes_for(self, examples, hints, source=None):
        """Sizes of a result with example tensors `examples`: static dims as
        ints, dynamic ones as Sizes from `hints` (aligned to the dims), else
        a known Size with the same examples, else a dim or a product of
        contiguous dims of `source`."""
        out = []
        for d in range(examples[0].dim()):
            ex = (examples[0].shape[d], examples[1].shape[d])
            if ex[0] == ex[1]:
                out.append(int(ex[0]))
                continue
            out.append(self._find_size(ex, hints[d] if hints and
                                       d < len(hints) else None, source))
        return out

    def _find_size(self, ex, hint, source):
        if isinstance(hint, Size) and hint.examples == ex:
            return hint
        for s in self._sizes:
            if s.examples == ex:
                return s
        if source is not None:
            shapes = [source.examples[k].shape for k in range(2)]
            for i in range(source.rank):
                for j in range(i, source.rank):
                    got = tuple(math.prod(shapes[k][i:j + 1]) for k in range(2))
                    if got != ex:
                        continue
                    acc = self.dim(source, i)
                    for d in range(i + 1, j + 1):
                        acc = self.arith_size("mul", acc, self.dim(source, d))
                    return acc
        raise self.error(f"cannot express a run-time size (examples "
                         f"{ex[0]} and {ex[1]}) from the sizes in scope")

    def size_list(self, sizes):
        return "[" + ", ".join(s.name if isinstance(s, Size) else str(s)
                               for s in sizes) + "]"

    # -- constants and casts --------------------------------------------------
    def scalar(self, v, dtype):
        """A rank-0 tensor constant `v` of `dtype`."""
        elt = mlir_element_type(dtype)
        ex = torch.tensor(v, dtype=dtype)
        key = ("scalar", elt, repr(float(v)) if elt != "i1" else bool(v))
        if key in self._consts:
            return self._consts[key]
        t = f"tensor<{elt}>"
        val = Value(self.name("cst"), (ex, ex), t)
        self.lines.append(f"{val.name} = arith.constant "
                          f"dense<{scalar_literal(v, elt)}> : {t}")
        self._consts[key] = val
        return val

    def cast(self, v, dtype, label=None):
        """`v` converted to `dtype` (as torch's .to(dtype) does)."""
        if v.dtype == dtype:
            return v
        src, dst = mlir_element_type(v.dtype), mlir_element_type(dtype)
        sk, dk = _dtype_kind(v.dtype), _dtype_kind(dtype)
        ex = tuple(e.to(dtype) for e in v.examples)
        if dk == "bool":
            zero = self.scalar(0, v.dtype)
            return self.binary("ne", v, zero, ex, label)
        if sk == "float" and dk == "float":
            if _BITS[src] == _BITS[dst]:  # f16 <-> bf16: through f32
                return self.cast(self.cast(v, torch.float32), dtype, label)
            op = "extf" if _BITS[dst] > _BITS[src] else "truncf"
        elif dk == "float":
            op = "uitofp" if sk == "bool" else "sitofp"
        elif sk == "float":
            op = "fptosi"
        else:
            op = "extui" if sk == "bool" else (
                "extsi" if _BITS[dst] > _BITS[src] else "trunci")
        return self.value("to", ex, f"arith.{op} {v.name}",
                          f"{v.type} to {{r}}", label=label)

    def as_value(self, x, dtype):
        """A tensor operand: a Value cast to `dtype`, or a scalar constant."""
        if isinstance(x, Value):
            return self.cast(x, dtype)
        if isinstance(x, Size):
            raise self.error("a run-time size used as a tensor operand is not "
                             "supported")
        if isinstance(x, (bool, int, float)):
            return self.scalar(x, dtype)
        raise self.error(f"operand {x!r} is not a tensor or a number")

    # -- elementwise ----------------------------------------------------------
    def binary(self, kind, a, b, ex, label, attrs=()):
        return self.value(kind, ex, f"nnx.fn.{kind} {a.name}, {b.name}",
                          f"{a.type}, {b.type} -> {{r}}", attrs, label)

    # -- interpretation -------------------------------------------------------
    def run(self, graph, params, inputs, concrete):
        """Interprets `graph`: `params` are the forward's parameter names in
        order, `inputs` the Values of the non-constant ones, `concrete` the
        constant ones by name. Returns the list of result Values."""
        env = {}
        inputs = list(inputs)
        params = list(params)
        for node in graph.nodes:
            self._node = node
            if node.op == "placeholder":
                env[node] = self._placeholder(node, params, inputs, concrete)
            elif node.op == "output":
                return self._outputs(self._map(node.args[0], env))
            else:
                env[node] = self._eval(node, env)
        raise self.error("the forward has no output")

    def _placeholder(self, node, params, inputs, concrete):
        if not params:
            raise self.error("more placeholders than forward parameters")
        p = params.pop(0)
        if p in concrete:
            return concrete[p]
        if inputs:
            return inputs.pop(0)
        if node.args:
            return node.args[0]  # the parameter's default
        raise self.error(f"no value for forward parameter '{p}'")

    def _outputs(self, out):
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for o in outs:
            if not isinstance(o, Value):
                raise self.error(f"the forward returns a {type(o).__name__}; "
                                 "only tensors (or a tuple of tensors) can be "
                                 "returned")
        return outs

    def _map(self, x, env):
        return fx.node.map_aggregate(
            x, lambda a: env[a] if isinstance(a, fx.Node) else a)

    def _eval(self, node, env):
        args = self._map(node.args, env)
        kwargs = self._map(node.kwargs, env)
        if node.op == "get_attr":
            return self._get_attr(node.target)
        if node.op == "call_module":
            return self.on_call(self, node.target, None, args, kwargs,
                                target_name_module(node.target))
        fn = node.target
        if node.op == "call_function" and fn in self.functions:
            return self.on_call(self, None, fn, args, kwargs, fn.__name__)
        symbolic = [a for a in flat_values((args, kwargs)) if _is_sym(a)]
        if node.op == "call_function" and fn is operator.getitem and \
                isinstance(args[0], (tuple, list)):
            return args[0][args[1]]
        if not symbolic:
            if node.op == "call_method":
                return getattr(args[0], fn)(*args[1:], **kwargs)
            return fn(*args, **kwargs)
        if not any(isinstance(a, Value) for a in symbolic):
            return self._size_op(node, args, kwargs)
        return self._tensor_op(node, args, kwargs)

    def _get_attr(self, target):
        t = self.module
        for seg in target.split("."):
            t = getattr(t, seg, None)
        if "." in target or not isinstance(t, torch.Tensor):
            raise self.error(f"reads '{target}', which is not a tensor of this "
                             "module itself (a child's tensor must be read "
                             "through a call of the child)")
        ex = t.detach()
        typ = tensor_type((ex, ex), self.where())
        v = Value(self.name(target), (ex, ex), typ)
        self.lines.append(f'{v.name} = nnx.state "{target}" : {typ}')
        return v

    def _size_op(self, node, args, kwargs):
        name = target_name(node)
        if node.op == "call_function" and name in ("add", "sub", "mul",
                                                   "floordiv") and not kwargs:
            return self.arith_size(name, args[0], args[1])
        if node.op == "call_function" and name == "neg":
            return self.arith_size("sub", 0, args[0])
        if node.op == "call_function" and fn_is_factory(node.target):
            return self._tensor_op(node, args, kwargs)
        raise self.error("this use of a run-time size (batch or sequence "
                         "length) has no nnx form: sizes support + - * // "
                         "and use as shapes, not control flow or float math")

    def _tensor_op(self, node, args, kwargs):
        kind, in_place = canonical_op(node)
        if kind is None:
            raise self.error("has no nnx form (supported: see docs/Python.md, "
                             "'What the exporter supports')")
        ex = self._examples(node, args, kwargs, in_place)
        handler = getattr(self, "op_" + kind)
        return handler(kind, target_name(node), args, kwargs, ex, in_place)

    def _examples(self, node, args, kwargs, in_place):
        fn = node.target
        if node.op == "call_method":
            name = fn[:-1] if in_place else fn
            call = lambda s, *a, **k: getattr(s, name)(*a, **k)  # noqa: E731
        else:
            call = _OUT_OF_PLACE.get(fn, fn)
        try:
            return tuple(call(*_concrete(args, k), **_concrete(kwargs, k))
                         for k in range(2))
        except Exception as e:
            raise self.error(f"failed on the example inputs: {e}") from None
