"""Where Python reads a run-time size's value without asking it.

A :class:`nnx.recorder.SymInt` is an ``int`` subclass (torch's argument
parser takes nothing else for an int). CPython calls its methods wherever
it converts one (``int()``, ``float()``, ``bool()``, comparisons,
arithmetic: the recorder decides there), but it reads an ``int``
subclass's value directly in two places, calling nothing:

- ``range()``: replaced while recording by :func:`recording_range`;
- subscripts of sequences (``lst[n]``, ``lst[:n]``, ``t[n] = v``,
  ``del t[n]``): CPython 3.11's ``BINARY_SUBSCR`` / ``STORE_SUBSCR`` /
  ``DELETE_SUBSCR`` read it through ``PyNumber_AsSsize_t``, so
  :func:`observe_subscripts` looks at the operands of each one that the
  model's code runs (``sys.settrace`` opcode events and the frame's value
  stack) before it runs.

Both hand each size to `decide(size, what)`, which returns the int Python
is to use or raises.
"""

import builtins
import contextlib
import ctypes
import dis
import sys

__all__ = ["recording_range", "observe_subscripts"]

_range = builtins.range


class _RangeType(type):
    def __instancecheck__(cls, x):
        return isinstance(x, _range)

    def __subclasscheck__(cls, c):
        return issubclass(c, _range)


def recording_range(is_size, decide):
    """A stand-in for ``range`` whose bounds that are sizes (`is_size`) are
    decided first; it makes real ranges, and ``isinstance(r, range)`` holds
    for them."""
    def new(cls, *args):
        return _range(*(decide(a, "as a range() bound") if is_size(a) else a
                        for a in args))
    return _RangeType("range", (), {"__new__": new, "__doc__": _range.__doc__})


# -- subscripts ---------------------------------------------------------------

# The subscript ops (their container and key on top of the stack) and what
# each does to its container.
_SUBSCRIPTS = {dis.opmap["BINARY_SUBSCR"]: "index",
               dis.opmap["STORE_SUBSCR"]: "assign to an item of",
               dis.opmap["DELETE_SUBSCR"]: "delete an item of"}
_PTR = ctypes.sizeof(ctypes.c_void_p)
# CPython 3.11's frames: PyFrameObject {ob_refcnt, ob_type, f_back,
# f_frame, ...}; _PyInterpreterFrame {f_func, f_globals, f_builtins,
# f_locals, f_code, frame_obj, previous, prev_instr, int stacktop, bool
# is_entry, char owner, PyObject *localsplus[]}.
_F_FRAME, _F_CODE, _FRAME_OBJ, _STACKTOP, _LOCALSPLUS = (
    3 * _PTR, 4 * _PTR, 5 * _PTR, 8 * _PTR, 9 * _PTR)
# (A Py_TRACE_REFS build, which has sys.getobjects, has a longer header.)
SUPPORTED = sys.implementation.name == "cpython" and \
    sys.version_info[:2] == (3, 11) and not hasattr(sys, "getobjects")


def _stack_top(frame, n):
    """The top `n` values of `frame`'s value stack (deepest first), or None
    where the frame does not have the layout this module reads."""
    iframe = ctypes.c_void_p.from_address(id(frame) + _F_FRAME).value
    if not iframe or ctypes.c_void_p.from_address(
            iframe + _F_CODE).value != id(frame.f_code) or \
            ctypes.c_void_p.from_address(iframe + _FRAME_OBJ).value != \
            id(frame):
        return None
    top = ctypes.c_int.from_address(iframe + _STACKTOP).value
    base = iframe + _LOCALSPLUS
    code = frame.f_code
    first = len(set(code.co_varnames + code.co_cellvars)) + \
        len(code.co_freevars)  # the value stack's first slot
    if top - n < first:
        return None
    out = []
    for i in _range(top - n, top):
        p = ctypes.c_void_p.from_address(base + i * _PTR).value
        if not p:
            return None
        out.append(ctypes.cast(p, ctypes.py_object).value)
    return out


def _sizes_in(key, is_size):
    """The sizes in a subscript: the key, a slice's bounds, a tuple's
    items."""
    if is_size(key):
        return [key]
    if isinstance(key, slice):
        return [k for k in (key.start, key.stop, key.step) if is_size(k)]
    if isinstance(key, tuple):
        return [s for k in key for s in _sizes_in(k, is_size)]
    return []


@contextlib.contextmanager
def observe_subscripts(is_user_code, is_size, reads_value, decide):
    """While active, a subscript in code that `is_user_code(code)` whose
    key holds a size (`is_size`) on a container that reads its value
    (`reads_value(container)`: a list, not a tensor) has each such size
    decided before it runs. Nothing on an interpreter other than CPython
    3.11, or while another tracer (a debugger, coverage) is set."""
    if not SUPPORTED or sys.gettrace() is not None:
        yield
        return
    ops = {}  # code -> {offset: what} of its subscripts; {}: not watched

    def subscripts(code):
        found = ops.get(code)
        if found is None:
            found = ops[code] = {
                i.offset: _SUBSCRIPTS[i.opcode] for i in dis.get_instructions(
                    code) if i.opcode in _SUBSCRIPTS} if is_user_code(
                        code) else {}
        return found

    def local(frame, event, arg):
        what = event == "opcode" and subscripts(frame.f_code).get(
            frame.f_lasti)
        if not what:
            return local
        stack = _stack_top(frame, 2)
        if stack is not None and reads_value(stack[0]):
            for size in _sizes_in(stack[1], is_size):
                decide(size, f"to {what} a {type(stack[0]).__name__}")
        return local

    def call(frame, event, arg):
        if not subscripts(frame.f_code):
            return None
        frame.f_trace_lines = False
        frame.f_trace_opcodes = True
        return local

    sys.settrace(call)
    try:
        yield
    finally:
        sys.settrace(None)
