"""In-place writes through views, as model code writes them, functionalized
by the exporter (python/nnx/functionalize.py): each pattern exported with
the batch dynamic, compiled, and run at two batch sizes against PyTorch
(atol = rtol = 1e-5); aliases read after a write see it; the regions
written may depend on run-time sizes. And the refusals: writes into the
model's parameters and buffers, and reads of a tensor written where the
recording cannot follow, each naming the model's line."""

import inspect
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import nnx  # noqa: E402
from nnx.testing import CONTRACT  # noqa: E402
from nnx.torch_export import ExportError, export  # noqa: E402

HERE = os.path.abspath(__file__)
SPEC = [(None, 6, 4)]
BATCHES = (1, 4)


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out]


def assert_matches(model, spec=SPEC, batches=BATCHES):
    """`model` exported (batch dynamic), compiled and run at each batch
    size: every output within the contract of PyTorch's."""
    model.eval()
    run = nnx.compile(model, spec, threads=1)
    for b in batches:
        x = torch.randn((b,) + spec[0][1:],
                        generator=torch.Generator().manual_seed(b))
        with torch.no_grad():
            want = _flat(model(x.clone()))  # the forward may write into x
        got = _flat(run(x)[0])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w.numpy(), **CONTRACT)


# -----------------------------------------------------------------------------
# The patterns
# -----------------------------------------------------------------------------

def _mask_prefix(x):  # mask[..., :k] = 0 through a transpose
    m = x.clone()
    v = m.transpose(1, 2)
    v[..., :2] = 0
    return m


def _getitem_iadd(x):  # x[idx] += y: an int, then a tensor index
    y = x * 1
    y[:, 2] += x[:, 0]
    y[:, torch.tensor([0, 5])] += 1.0
    return y


def _narrow_copy(x):
    y = x.clone()
    y.narrow(1, 1, 2).copy_(x[:, :2] * 5)
    return y


def _view_mul(x):  # a view by view(), then a strided slice of it
    y = x + 0
    y.view(-1, 24)[:, ::3].mul_(2)
    y.view(-1).add_(1)
    return y


def _loop_writes(x):  # out[:, i, :] = f(...) in a loop
    out = x.new_zeros(x.shape[0], 4, 6)
    for i in range(4):
        out[:, i, :] = torch.tanh(x[:, :, i]) * (i + 1)
    return out


def _masked_fill_slice(x):
    y = x.clone()
    y[:, 3:].masked_fill_(x[:, 3:] > 0, -1.0)
    return y


def _unsqueeze_write(x):  # x.unsqueeze(0), then written
    y = x.clone()
    u = y.unsqueeze(0)
    u[0, :, 1] = 3.0
    u.mul_(2)
    return y


def _chain(x):  # a slice of a select of a transpose; its region is run-time
    y = x.clone()
    a = y.transpose(0, 1)[2][1:]
    a.add_(10)
    return y


def _runtime_region(x):
    y = x.clone()
    n = x.shape[0]
    y[: n - 1, : x.shape[1] // 2].mul_(-1)
    v = y[1:n]
    v[:, -1] = v[:, 0]
    return y


def _aliases(x):  # views taken before and after a write all see it
    y = x * 1
    h = y[:, 0]
    t = y.transpose(1, 2)
    y[:, :, 1:3] = 0
    f = y.flatten(1)
    return h, t, f, y


def _base_write(x):  # a write into the base, read through an older view
    y = x * 1
    h = y[:, 0]
    y.mul_(2)
    return h + 0, y


def _stale_view_write(x):  # a view of a base written since, then written
    y = x * 1
    h = y[:, 0]
    y.mul_(2)
    h.add_(1)
    return y


def _nested_views(x):  # the views between the written one and the base
    y = x * 1
    b = y[:, 1:4]
    a = b[:, 0]
    s = y[:, :, 1:].unbind(2)[0]
    a.add_(1)
    s.mul_(-1)
    return b, a, y


def _metadata_in_place(x):  # a view reshaped in place, then written
    y = x.clone()
    v = y[:, 1]
    v.unsqueeze_(1)
    v.mul_(3)
    return y, v


def _chunks(x):
    y = x.clone()
    a, b = y.chunk(2, dim=-1)
    a.mul_(2)
    b.zero_()
    return y


def _diagonal(x):  # a view with no slice form: a probed scatter
    y = x.clone()
    y[0].diagonal().fill_(1.0)
    return y


def _index_puts(x):  # data-dependent indices, a bool mask, index_add_
    y = x.clone()
    y[torch.arange(x.shape[0]), x[:, :, 0].argmax(-1)] = -1.0
    y[x > 0.5] = 0.0
    y[0].index_add_(0, torch.tensor([1, 1, 3]), torch.ones(3, 4))
    return y


def _inplace_functions(x):  # inplace=True functions on views
    y = x.clone()
    F.hardtanh(y[:, :2], -0.1, 0.1, inplace=True)
    F.hardswish(y[:, 4:], inplace=True)
    y[:, 2:4].clamp_(min=0)
    return y


def _augmented(x):  # //= and |= through views
    m = x > 0
    y = x.clone()
    v = y[:, 1:3]
    v //= 0.5
    b = m[:, :2]
    b |= x[:, 2:4] < -0.5
    return y, m.float()


def _input_write(x):  # the forward writes into its own input
    x[:, :, 0] = 1.0
    x[:, 1].mul_(2)
    return x * 2


def _scatter_ops(x):
    a = torch.slice_scatter(x, x[:, :2] * 2, dim=1, start=2, end=4, step=1)
    b = torch.select_scatter(x, x[:, 0] + 1, 1, 3)
    c = torch.diagonal_scatter(x[0], x[0].diagonal() * 5)
    return a, b, c


PATTERNS = {f.__name__[1:]: f for f in (
    _mask_prefix, _getitem_iadd, _narrow_copy, _view_mul, _loop_writes,
    _masked_fill_slice, _unsqueeze_write, _chain, _runtime_region, _aliases,
    _base_write, _stale_view_write, _nested_views, _metadata_in_place,
    _chunks, _diagonal, _index_puts, _inplace_functions, _augmented,
    _input_write,
    _scatter_ops)}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_matches_pytorch(name):
    assert_matches(Lambda(PATTERNS[name]))


class ClsToken(nn.Module):
    """x[:, 0] = cls: a parameter written into a tensor of the forward."""

    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(4))

    def forward(self, x):
        y = x.new_zeros(x.shape[0], 7, 4)
        y[:, 1:] = x
        y[:, 0] = self.cls
        return y


class SwinBias(nn.Module):
    """torchvision's ShiftedWindowAttentionV2: a copy of the qkv bias with
    its key third zeroed through a slice."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(4, 12)

    def forward(self, x):
        qkv_bias = self.qkv.bias.clone()
        length = qkv_bias.numel() // 3
        qkv_bias[length:2 * length].zero_()
        return F.linear(x, self.qkv.weight, qkv_bias)


class ReluOnView(nn.Module):
    """A layer that writes into its input (ReLU(inplace=True)) given a
    view: the base sees the write."""

    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = x * 1
        self.act(y[:, 2:])
        return y


class IdentityOnViews(nn.Module):
    """timm's ViT: `q, k = self.q_norm(q), self.k_norm(k)` with Identity
    norms on the pieces of an unbind (not a write), then a write into the
    base through another view, which q and k see."""

    def __init__(self):
        super().__init__()
        self.q_norm, self.k_norm = nn.Identity(), nn.Identity()

    def forward(self, x):
        qkv = (x * 1).reshape(x.shape[0], 6, 2, 2).permute(2, 0, 1, 3)
        q, k = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        qkv[0, :, 1:].add_(1)
        return q + k, qkv


@pytest.mark.parametrize("make", [ClsToken, SwinBias, ReluOnView,
                                  IdentityOnViews])
def test_module_pattern_matches_pytorch(make):
    torch.manual_seed(0)
    model = make()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    assert_matches(model)
    for k, v in model.state_dict().items():  # the model is left unchanged
        assert torch.equal(v, state[k]), k


def test_the_scatter_is_in_the_ir():
    """The write through the slice is an insert_slice into the copy of the
    bias (not a refusal, not a constant)."""
    text = export(SwinBias().eval(), SPEC, name="m")
    assert "tensor.insert_slice" in text
    assert 'nnx.state "bias"' in text


# -----------------------------------------------------------------------------
# Refusals
# -----------------------------------------------------------------------------

def line_of(cls, text):
    """`HERE:<line>` of the line of cls.forward that contains `text`."""
    src, start = inspect.getsourcelines(cls.forward)
    for i, line in enumerate(src):
        if text in line:
            return f"{HERE}:{start + i}"
    raise AssertionError(text)


class ParamWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x):
        self.w.mul_(2)
        return x * self.w


class BufferViewWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4))

    def forward(self, x):
        self.buf[1:].zero_()
        return x * self.buf


class ParamSetitem(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(6, 4))

    def forward(self, x):
        self.w[0] = x[0, 0]
        return x * self.w


class WritesItsArgument(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class ReadsAfterChildWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = WritesItsArgument()

    def forward(self, x):
        h = x * 1
        y = self.child(h)
        return h + y


class ConstantViewWrite(nn.Module):
    def forward(self, x):
        c = torch.tensor([1.0, 2.0, 3.0, 4.0])
        c[1:].mul_(x.sum())
        return x * c


class BaseReshapedInPlace(nn.Module):
    def forward(self, x):
        y = x.clone()
        v = y[0]
        y.unsqueeze_(0)
        v.add_(1)
        return y


@pytest.mark.parametrize("cls,line,pattern", [
    (ParamWrite, "self.w.mul_(2)",
     r"the in-place 'mul_' writes into 'w', a parameter or buffer"),
    (BufferViewWrite, "self.buf[1:].zero_()",
     r"the in-place 'zero_' writes into 'buf', a parameter or buffer"),
    (ParamSetitem, "self.w[0] = x[0, 0]",
     r"the in-place '__setitem__' writes into 'w'"),
    (ReadsAfterChildWrite, "return h + y",
     r"reads a tensor that was written in place where the recording cannot "
     r"follow the write"),
    (ConstantViewWrite, "c[1:].mul_(x.sum())",
     r"writes into a view of a constant tensor made in the forward"),
    (BaseReshapedInPlace, "v.add_(1)",
     r"a view made by 'Tensor.__getitem__' of a tensor whose shape changed "
     r"in place since"),
])
def test_refusal_names_the_line(cls, line, pattern):
    import re
    model = cls().eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(ExportError) as e:
        export(model, SPEC, name="m")
    msg = str(e.value)
    assert re.search(pattern, msg), msg
    assert f"(at {line_of(cls, line)})" in msg, msg
    for k, v in model.state_dict().items():  # refused before it ran
        assert torch.equal(v, state[k]), k
