"""The typed emission path of the exporter: IR values, types and literals,
and :class:`ForwardWriter`, which writes the body of one ``nnx.forward``
(names, ``nnx.source`` labels, run-time sizes, constants and casts).

Every op of an exported forward goes through :meth:`ForwardWriter.value`
(or :meth:`ForwardWriter.emit` for several results): one place that names
the result, types it from its two example tensors and prints the op.
"""

import math
import operator
import re

import torch

__all__ = ["ExportError", "Value", "Size", "ForwardWriter",
           "mlir_element_type", "scalar_literal", "tensor_type"]


class ExportError(ValueError):
    """A module (named by its path) or a forward op that nnx IR cannot
    describe."""


class Value:
    """A tensor SSA value of a forward being built: its name, its two example
    tensors (one per example run) and its IR type.

    A value whose defining op is written only when first used (a module
    tensor read, a constant) is given `define`, called once, on the first
    read of `name`, to write that op.

    `alias` says how a value made by a view-like op was derived from its
    source: ``("slice", src, offsets, sizes, strides)`` (an
    ``extract_slice``; a size None drops the dim), ``("reshape", src)``,
    ``("permute", src, perm)`` or ``("expand", src)``; None for any other op.
    :mod:`nnx.functionalize` inverts these steps to write through a view."""

    def __init__(self, name, examples, type_str, define=None):
        self._name = name
        self._define = define
        self.examples = tuple(examples)
        self.type = type_str
        self.alias = None

    @property
    def name(self):
        if self._define is not None:
            define, self._define = self._define, None
            define(self)
        return self._name

    @property
    def dtype(self):
        return self.examples[0].dtype

    @property
    def rank(self):
        return self.examples[0].dim()


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



def is_empty(examples):
    """Whether both examples have no elements and a static shape (a slice
    of a 0-size dim, which `tensor.extract_slice` / `insert_slice` cannot
    address)."""
    a, b = examples
    return a.numel() == 0 and a.shape == b.shape


def _sym(key):
    key = str(key)
    if re.match(r"^[A-Za-z_][A-Za-z0-9_$]*$", key):
        return "@" + key
    return '@"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_sym(x):
    return isinstance(x, (Value, Size))


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



def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)




class ForwardWriter:
    """Writes the body (``lines``) of the ``nnx.forward`` of the module at
    `path`: `where()` says what is being written for error messages."""

    def __init__(self, path):
        self.path = path
        self.lines = []
        self._labels = {}
        self._names = set()
        self._consts = {}
        self._dims = {}
        self._sizes = []
        self._keep = []

    # -- naming and emission ------------------------------------------------
    def where(self):
        return f"module at '{self.path or '<root>'}'"

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
        """Dim `d` of `v`: an int if static, else a Size (tensor.dim). Never
        another size whose examples happen to agree: on the two example runs
        a derived length can equal the batch, and taken for it, the export
        would be wrong at every other size."""
        key = (id(v), d)
        if key not in self._dims:
            self._keep.append(v)  # its id stays its own
            ex = (v.examples[0].shape[d], v.examples[1].shape[d])
            if ex[0] == ex[1]:
                self._dims[key] = int(ex[0])
            else:
                hint = v.name[1:] + f"_d{d}"
                self._dims[key] = self.size(
                    hint, ex, f"tensor.dim {v.name}, {self.index(d)} : {v.type}")
        return self._dims[key]

    def dims(self, v):
        return [self.dim(v, d) for d in range(v.rank)]

    def arith_size(self, op, a, b):
        """`a <op> b` on ints / Sizes (op: add sub mul floordiv mod, the
        last two with Python's floor semantics)."""
        fn = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "floordiv": operator.floordiv, "mod": operator.mod}[op]
        if not _is_sym(a) and not _is_sym(b):
            return fn(a, b)
        unit = {"add": 0, "sub": 0, "mul": 1, "floordiv": 1, "mod": None}[op]
        if not _is_sym(b) and b == unit:
            return a
        if op in ("add", "mul") and not _is_sym(a) and a == unit:
            return b
        ex = tuple(fn(_concrete(a, k), _concrete(b, k)) for k in range(2))
        if ex[0] == ex[1]:
            return int(ex[0])
        s = Size(self.index_binop(op, self.index(a), self.index(b)), ex)
        self._sizes.append(s)
        return s

    def index_binop(self, op, a, b):
        """Emits `a <op> b` on the index SSA values `a` and `b` (op: add sub
        mul floordiv mod; Python's floor semantics, any signs); returns the
        result's SSA name."""
        if op == "mod":  # a - (a floordiv b) * b
            q = self.index_binop("floordiv", a, b)
            p = self.index_binop("mul", q, b)
            return self.index_binop("sub", a, p)
        mn = {"add": "addi", "sub": "subi", "mul": "muli",
              "floordiv": "floordivsi"}[op]
        name = self.name(op)
        self.lines.append(f"{name} = arith.{mn} {a}, {b} : index")
        return name

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


    def reshape(self, x, ex, hints, label, hint="view"):
        sizes = self.sizes_for(ex, hints, x)
        y = self.value(hint, ex, f"nnx.fn.reshape {x.name} "
                       f"{self.size_list(sizes)}", f"{x.type} -> {{r}}",
                       label=label)
        y.alias = ("reshape", x)
        return y

    def permute(self, x, perm, ex, label, hint="permute"):
        """`nnx.fn.permute` of `x` by `perm` (result dim i is x's dim
        perm[i])."""
        y = self.value(hint, ex, f"nnx.fn.permute {x.name} "
                       f"[{', '.join(map(str, perm))}]", f"{x.type} -> {{r}}",
                       label=label)
        y.alias = ("permute", x, list(perm))
        return y


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
        if is_empty(ex):  # tensor.extract_slice takes no offset in a 0 dim
            lit = scalar_literal(0, mlir_element_type(ex[0].dtype))
            y = self.value("slice", ex, f"arith.constant dense<{lit}>",
                           label=label)
            y.alias = ("slice", x, list(offsets), list(sizes), list(strides))
            return y
        y = self.value("slice", ex, f"tensor.extract_slice {x.name}"
                       f"{lst(offsets)}{lst(kept)}{lst(strides)}",
                       f"{x.type} to {{r}}", label=label)
        y.alias = ("slice", x, list(offsets), list(sizes), list(strides))
        return y

