"""Guards: a decision the model's Python made on a run-time size (a branch,
an assertion, ``%``, ``min``) is checked by the compiled code on every
call. A call whose sizes take the way the examples took matches PyTorch
(1e-5); a call whose sizes would take the other way raises ``nnx.Error``
naming the model's source line and the condition; example runs that
disagree are refused at export. No case tolerates the other branch's
answer."""

import inspect
import math
import os
import re

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import nnx  # noqa: E402
from nnx.export_ir import ExportError  # noqa: E402
from nnx.torch_export import export  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
HERE = os.path.abspath(__file__)

# The exporter's example runs (torch_export.Exporter._example): the batch
# is 2 then 3, the first other dynamic dim 3 then 7.


def line_of(fn, text):
    """`file:line` of the line of `fn`'s source holding `text`."""
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return f"{HERE}:{first + i}"
    raise AssertionError(f"{text!r} not in {fn.__name__}")


class Scale(nn.Module):
    """A custom child whose own forward decides on the sequence length."""

    def forward(self, y):
        if y.shape[1] % 2 == 1:  # odd lengths (3, 7 in the example runs)
            return y + 1.0
        return y - 1.0


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = Scale()

    def forward(self, x):
        y = self.fc(x) if x.shape[0] > 3 else self.fc(x) * 2
        if x.shape[0] == 1:
            y = y - 5.0
        y = self.scale(y)
        assert x.shape[1] <= 9, "sequence too long"
        n = min(x.shape[1], 8)
        return y[:, :n]


@pytest.fixture(scope="module")
def branchy():
    torch.manual_seed(0)
    model = Branchy().eval()
    return model, nnx.compile(model, inputs=[(None, None, 4)], threads=1)


def test_each_decision_is_a_guard_in_the_forward_making_it():
    torch.manual_seed(0)
    text = export(Branchy().eval(), [(None, None, 4)], weights=False)
    # The child's forward is written inside its module, before the root's.
    child, root = text.split("nnx.forward @forward(")[1:]
    guards = re.findall(r"nnx\.fn\.guard (\w+), ", root)
    # x.shape[0] > 3: False; == 1: False; <= 9: True; min(T, 8): T > 8 is
    # False.
    assert guards == ["sle", "ne", "sle", "sle"], root
    # The child's decision is in the child's forward (with its % as index
    # arithmetic), not in its caller's.
    assert re.findall(r"nnx\.fn\.guard (\w+), ", child) == ["eq"], child
    assert "arith.floordivsi" in child and "arith.subi" in child
    assert line_of(Branchy.forward, "x.shape[0] > 3") in root
    assert line_of(Scale.forward, "% 2 == 1") in child


def test_calls_taking_the_exported_way_match_pytorch(branchy):
    model, run = branchy
    for batch, seq in [(2, 3), (3, 5), (2, 7), (3, 1)]:
        x = torch.randn(batch, seq, 4)
        y, _ = run(x)
        torch.testing.assert_close(y, model(x).detach(), **TOL)


@pytest.mark.parametrize("batch,seq,condition,text", [
    (5, 3, "`x.shape[0] > 3` is False", "x.shape[0] > 3"),
    (1, 3, "`x.shape[0] == 1` is False", "x.shape[0] == 1"),
    (2, 11, "`x.shape[1] <= 9` is True", "assert x.shape[1] <= 9"),
    (2, 4, "`y.shape[1] % 2 == 1` is True", "% 2 == 1"),
])
def test_a_call_taking_the_other_way_fails_with_the_source_line(
        branchy, batch, seq, condition, text):
    model, run = branchy
    x = torch.randn(batch, seq, 4)
    with pytest.raises(nnx.Error) as info:
        run(x)
    message = str(info.value)
    fn = Scale.forward if "%" in text else Branchy.forward
    assert line_of(fn, text) in message, message
    assert condition in message, message
    # The run-time values are in the message.
    assert f"this call has {batch if 'shape[0]' in text else seq}" in \
        message or "this call has 0 == 1" in message, message


def test_min_with_a_run_time_size_is_guarded(branchy):
    # min(T, 8) was T in both example runs (3, 7): at T = 9 it is 8, which
    # the exported forward does not compute.
    model, run = branchy
    with pytest.raises(nnx.Error, match=r"`8 < x\.shape\[1\]` is False|"
                       r"`x\.shape\[1\] > 8` is False"):
        run(torch.randn(2, 9, 4))


class Disagree(nn.Module):
    def forward(self, x):
        if x.shape[0] > 2:  # 2 > 2 is False, 3 > 2 True
            return x * 2
        return x


def test_example_runs_taking_different_ways_are_refused():
    with pytest.raises(ExportError) as info:
        export(Disagree(), [(None, 4)], weights=False)
    assert line_of(Disagree.forward, "x.shape[0] > 2") in str(info.value)
    assert "depends on the input size" in str(info.value)


class Static(nn.Module):
    def forward(self, x):
        if x.shape[1] > 3 and x.shape[1] % 4 == 0:  # static: 4
            return x * 2
        return x


def test_static_sizes_make_no_guard():
    text = export(Static(), [(None, 4)], weights=False)
    assert "nnx.fn.guard" not in text, text


class Pinned(nn.Module):
    """`x.shape[1] // 100` is 0 in both example runs (3, 7): the forward is
    written for 0 and a guard checks each call computes 0."""

    def forward(self, x):
        n = x.shape[1] // 100
        return x[:, n:] * 2


def test_a_size_both_runs_agree_on_is_pinned_by_a_guard():
    model = Pinned()
    run = nnx.compile(model, inputs=[(None, None)], threads=1)
    x = torch.randn(2, 50)
    torch.testing.assert_close(run(x)[0], model(x), **TOL)
    with pytest.raises(nnx.Error) as info:
        run(torch.randn(2, 250))
    message = str(info.value)
    assert line_of(Pinned.forward, "return x[:, n:]") in message, message
    assert "`x.shape[1] // 100` = 0" in message and "this call has 2" in \
        message, message


class Truthy(nn.Module):
    def forward(self, x):
        if x.shape[0]:  # bool(): batch != 0
            return x + 1
        return x


def test_bool_of_a_run_time_size_is_a_guard():
    text = export(Truthy(), [(None, 4)], weights=False)
    assert re.search(r"nnx\.fn\.guard ne, %\w+, %c0, \"[^\"]*"
                     r"`x\.shape\[0\] != 0` is True", text), text


class Length(nn.Module):
    def forward(self, x):
        if len(x) >= 2:  # the batch: 2, 3 in the example runs
            return x * 3
        return x


def test_len_of_a_dynamic_dim_is_a_guard():
    """len(x) is the run-time batch, like x.size(0): a call of batch 1
    takes the other way and fails with the line; batch 5 matches."""
    text = export(Length(), [(None, 4)], weights=False)
    assert "nnx.fn.guard sge" in text, text
    run = nnx.compile(Length(), inputs=[(None, 4)], threads=1)
    x = torch.randn(5, 4)
    torch.testing.assert_close(run(x)[0], Length()(x), atol=1e-5, rtol=1e-5)
    with pytest.raises(nnx.Error) as info:
        run(torch.randn(1, 4))
    assert "test_guards.py" in str(info.value), str(info.value)


def test_to_torch_keeps_the_guards():
    _nnx = pytest.importorskip("nnx._nnx", reason="nnx._nnx is not built")
    torch.manual_seed(0)
    model = Branchy().eval()
    net = nnx.to_torch(_nnx.Model.parse(export(model, [(None, None, 4)],
                                               weights=False)))
    x = torch.randn(3, 5, 4)
    torch.testing.assert_close(net(x), model(x), **TOL)
    with pytest.raises(RuntimeError) as info:
        net(torch.randn(5, 3, 4))
    assert line_of(Branchy.forward, "x.shape[0] > 3") in str(info.value)
    assert "this call has 5 > 3" in str(info.value)


# -----------------------------------------------------------------------------
# Python computing with a run-time size: range(), subscripts, int(), floats
# -----------------------------------------------------------------------------

def _store(n):
    v = [1.0, 2.0, 3.0, 4.0]
    v[n] = 5.0  # a subscript assignment
    return sum(v)


#: Python computing with a run-time size `n`: each reads its value (a
#: decision), at the line of its lambda (or of _store's subscript).
USES = {
    "range": lambda n: float(len([i for i in range(n + 1)])),
    "range(start, stop)": lambda n: float(sum(range(1, n + 2))),
    "list index": lambda n: [1.0, 2.0, 3.0, 4.0, 5.0][n],
    "list slice": lambda n: sum([1.0, 2.0, 3.0, 4.0][:n + 1]),
    "tuple slice": lambda n: sum((1.0, 2.0, 3.0, 4.0)[n:]),
    "list store": _store,
    "int()": lambda n: int(n) + 0.5,
    "float()": lambda n: float(n) + 0.5,
    "float arithmetic": lambda n: n * 1.0 + 0.5,
    "true division": lambda n: n / 2 + 0.5,
    "power": lambda n: 2 ** n + 0.5,
    "abs()": lambda n: abs(n) + 0.5,
    "bitwise and": lambda n: (n & 1) + 0.5,
    "round()": lambda n: round(n) + 0.5,
    "math.floor()": lambda n: math.floor(n) + 0.5,
}


def _use_line(use):
    if use is _store:
        return line_of(_store, "v[n] = 5.0")
    return f"{HERE}:{use.__code__.co_firstlineno}"


class Decides(nn.Module):
    """Scales x by `use(n)`, n a run-time size: the batch (2 and 3 in the
    example runs), len(x) - 1 (1 and 2), or x.shape[1] // 100 (0 in both:
    pinned)."""

    SIZES = {"batch": lambda x: x.size(0), "len": lambda x: len(x) - 1,
             "agreed": lambda x: x.shape[1] // 100}

    def __init__(self, use, size):
        super().__init__()
        self.use, self.size = use, size

    def forward(self, x):
        return x * self.use(self.SIZES[self.size](x))


@pytest.mark.parametrize("size", ["batch", "len"])
@pytest.mark.parametrize("use", sorted(USES))
def test_python_reading_a_dynamic_size_is_refused_with_the_line(use, size):
    """The exported forward would hold the first run's value at every
    size: refused, naming the line that reads it."""
    with pytest.raises(ExportError) as info:
        export(Decides(USES[use], size), [(None, None)], weights=False)
    message = str(info.value)
    assert _use_line(USES[use]) in message, message
    assert re.search(r"a run-time size \(\d+ and \d+ in the example runs\) "
                     r"used", message), message


@pytest.mark.parametrize("use", sorted(USES))
def test_python_reading_a_size_both_runs_agree_on_is_a_guard(use):
    """x.shape[1] // 100 is 0 in both runs: the forward is written for 0,
    and a call where it is 2 fails with the line that read it."""
    model = Decides(USES[use], "agreed")
    run = nnx.compile(model, inputs=[(None, None)], threads=1)
    x = torch.randn(2, 50)
    torch.testing.assert_close(run(x)[0], model(x), **TOL)
    with pytest.raises(nnx.Error) as info:
        run(torch.randn(2, 250))
    message = str(info.value)
    assert _use_line(USES[use]) in message, message
    assert re.search(r"written for `x\.shape\[1\] // 100( \+ \d)?` = \d "
                     r"\(its value in both example runs\), but this call "
                     r"has \d", message), message


class Unrolled(nn.Module):
    def forward(self, x):
        y = x[0] * 0
        for i in range(x.size(0)):  # unrolled by Python
            y = y + x[i] * (i + 1)
        return y


def test_a_loop_over_a_dynamic_size_is_refused_and_a_static_one_runs():
    with pytest.raises(ExportError) as info:
        export(Unrolled(), [(None, 4)], weights=False)
    assert line_of(Unrolled.forward, "for i in range") in str(info.value)
    assert "as a range() bound" in str(info.value)
    run = nnx.compile(Unrolled(), inputs=[(3, None)], threads=1)
    x = torch.randn(3, 5)
    torch.testing.assert_close(run(x)[0], Unrolled()(x), **TOL)
