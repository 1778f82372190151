"""Guards: the decisions the model's Python made on run-time sizes.

A branch or an assertion on a batch or sequence length (``if x.shape[0] >
3:``, ``assert t <= block_size``, ``if x.size(1) % 8 == 0:``) is taken once
while the exporter records the forward. When both example runs take the
same way, the exported forward holds only that way, so it records the
condition as an ``nnx.fn.guard`` (as torch.export and TorchDynamo record
guards): the compiled code checks it on every call, and a call whose sizes
would take the other way fails with the model's source line and the
condition, never computing what that way would not have computed. When the
example runs disagree, the export is refused (:class:`SymInt` does that).

A run-time integer that has one value in both example runs (``T // 100``
for sequences of 16 and 24) and that Python computes with (a static size,
``range()``, a list index, ``int()``: :meth:`nnx.recorder.SymInt.decide`)
is *pinned*: the forward is written for that value, and a guard checks that
the call computes it too. One whose runs differ is refused there.

Guards are written into the forward being recorded where the decision is
made (the innermost custom module's, or a kept function's), from the
SymInt's recipe, as ``index`` arithmetic.
"""

import linecache
import math

from .export_ir import ExportError, Size

__all__ = ["record_comparison", "pin"]

# Python's comparison -> (arith.cmpi predicate, its negation).
_PREDICATES = {"==": ("eq", "ne"), "!=": ("ne", "eq"), "<": ("slt", "sge"),
               "<=": ("sle", "sgt"), ">": ("sgt", "sle"), ">=": ("sge", "slt")}

_ARITH = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


def _current_frame():
    """The frame writing the forward where the decision is made: the
    innermost recording frame (containers write no IR)."""
    from .recorder import _ACTIVE
    if not _ACTIVE:
        return None
    for frame in reversed(_ACTIVE[-1].frames):
        if not frame.silent:
            return frame
    return None


def _plain(frame):
    """Writing IR from user code: torch calls (`.shape`) are not recorded."""
    return frame.rec.plain()


def _mlir_string(text):
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend(f"\\{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def _site():
    """('file:line', the source line's text) of the user's code running."""
    from .recorder import user_site
    site = user_site()
    if site is None:
        return "<unknown>", ""
    path, _, line = site.rpartition(":")
    code = linecache.getline(path, int(line)).strip() if line.isdigit() \
        else ""
    # The runtime formats "{0}" and "{1}" in messages.
    return site, code.replace("{0}", "{ 0}").replace("{1}", "{ 1}")


def describe(x, frame=None):
    """`x` (an int or a SymInt) as the model's Python wrote it, as far as
    the recipe says: ``x.shape[1] % 8``."""
    from .recorder import SymInt
    if not isinstance(x, SymInt):
        return repr(x)
    r = x.recipe
    if r[0] == "dim":
        v = frame.values.get(id(r[1])) if frame is not None else None
        if v is not None:
            return f"{v.name[1:]}.shape[{r[2]}]"
        # A size the forward was given (an argument), by its name.
        size = frame.syms.get(id(x)) if frame is not None else None
        if isinstance(size, Size):
            return size.name[1:]
        return f"<tensor>.shape[{r[2]}]"
    if r[0] in _ARITH:
        def part(y):
            text = describe(y, frame)
            return f"({text})" if isinstance(y, SymInt) and \
                y.recipe[0] in ("add", "sub") else text
        return f"{part(r[1])} {_ARITH[r[0]]} {part(r[2])}"
    return f"<size {x.ex[0]}/{x.ex[1]}>"


def index_of(frame, x):
    """The index SSA value of `x` (an int or a SymInt) in `frame`'s
    forward, computed even where both example runs give one value."""
    from .recorder import SymInt
    if not isinstance(x, SymInt):
        return frame.index(int(x))
    if x.ex[0] != x.ex[1]:
        got = frame.size_of(x)
        return got.name if isinstance(got, Size) else frame.index(got)
    cache = frame.__dict__.setdefault("_pinned_index", {})
    name = cache.get(id(x))
    if name is not None:
        return name
    op, a, b = x.recipe
    if op not in _ARITH:
        raise frame.error(f"cannot compute the run-time size {describe(x)} "
                          "in this forward")
    a_name, b_name = index_of(frame, a), index_of(frame, b)
    if op in ("floordiv", "mod"):
        check_divisor(frame, b, b_name)
    name = frame.index_binop(op, a_name, b_name)
    cache[id(x)] = name
    frame._keep.append(x)
    return name


def check_divisor(frame, b, b_name):
    """A guard that the run-time divisor `b` is not 0 (Python raises where
    the compiled code would divide by zero)."""
    from .recorder import SymInt
    if not isinstance(b, SymInt):
        return
    site, code = _site()
    zero = frame.index(0)
    msg = (f"{site}: the run-time size `{describe(b, frame)}` is a divisor, "
           "and this call has {0}" + (f", at `{code}`" if code else ""))
    frame.lines.append(f'nnx.fn.guard ne, {b_name}, {zero}, '
                       f'"{_mlir_string(msg)}" : index')


def _int_operand(sym, c):
    """`sym <sym> c` for a float `c` as a comparison with an int: (sym,
    int) pairs for `<`, `<=`, `>`, `>=`, or None where the outcome does not
    depend on the int (c is inf, nan, or not integral under == / !=)."""
    if math.isnan(c) or math.isinf(c):
        return None
    if c == int(c):
        return {s: int(c) for s in _PREDICATES}
    return {"<": math.ceil(c), "<=": math.floor(c), ">": math.floor(c),
            ">=": math.ceil(c)}


def record_comparison(lhs, sym, rhs, outcome):
    """Records that `lhs sym rhs` (a SymInt against an int, a float or a
    SymInt) was `outcome` in both example runs: a guard in the forward
    being written. Returns `outcome`."""
    from .recorder import SymInt
    if isinstance(rhs, float) and not isinstance(rhs, SymInt):
        bounds = _int_operand(lhs, rhs)
        if bounds is None or sym not in bounds:
            return outcome  # the same for every int
        shown, rhs = repr(rhs), bounds[sym]
    else:
        shown = None
    frame = _current_frame()
    if frame is None:
        raise ExportError(f"a decision on a run-time size ({describe(lhs)} "
                          f"{sym} {describe(rhs)}) outside a recorded "
                          "forward cannot be checked at run time")
    site, code = _site()
    with _plain(frame):
        a, b = index_of(frame, lhs), index_of(frame, rhs)
    if a == b:  # one value: the outcome is the predicate's, in every run
        return outcome
    pred = _PREDICATES[sym][0 if outcome else 1]
    cond = f"{describe(lhs, frame)} {sym} {shown or describe(rhs, frame)}"
    runs = ", ".join(f"{_val(lhs, k)} {sym} {shown or _val(rhs, k)}"
                     for k in range(2))
    now = "{0} " + sym + " " + (shown if shown is not None else "{1}")
    msg = (f"{site}: the exported forward assumed `{cond}` is {outcome} "
           f"(as in both example runs: {runs}), but this call has {now}, "
           "which takes the other way" + (f" at `{code}`" if code else ""))
    frame.lines.append(f'nnx.fn.guard {pred}, {a}, {b}, '
                       f'"{_mlir_string(msg)}" : index')
    return outcome


def _val(x, k):
    return x.ex[k] if hasattr(x, "ex") else x


def pin(frame, sym):
    """The value of `sym`, a SymInt both example runs gave one value, used
    as a plain int in `frame`'s forward: a guard checks each call computes
    it too."""
    value = sym.ex[0]
    site, code = _site()
    with _plain(frame):
        a, b = index_of(frame, sym), frame.index(value)
    msg = (f"{site}: the exported forward was written for "
           f"`{describe(sym, frame)}` = {value} (its value in both example "
           "runs), but this call has {0}" + (f", at `{code}`" if code else ""))
    frame.lines.append(f'nnx.fn.guard eq, {a}, {b}, '
                       f'"{_mlir_string(msg)}" : index')
    return value
