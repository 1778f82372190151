"""The exporter's op handlers (python/nnx/export_ops.py), each exported from
a forward written as model code writes it, with its dims dynamic, and run
by nnx-run at two shapes against PyTorch (atol = rtol = 1e-5); and the
refusals of the recorder (python/nnx/recorder.py): each names the module,
the construct and the line of the model's source."""

import math
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnx import tools  # noqa: E402
from nnx.torch_export import ExportError, export  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _gather_top2(x):
    vals, idx = torch.topk(x.softmax(-1), 2, dim=-1)
    vals = vals / vals.sum(dim=-1, keepdim=True)
    return torch.gather(x, -1, idx) * vals, idx.float()


def _last_position(x):
    b, t, d = x.shape
    assert t >= 1, "empty sequence"
    return x[:, [-1], :], x[:, -1, :].unsqueeze(1)


def _masked(x):
    t = x.shape[-2]
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    att = x @ x.transpose(-1, -2)
    att = att.masked_fill(~mask, torch.finfo(att.dtype).min)
    return att.log_softmax(dim=-1)


def _einsum(x):
    w = torch.arange(24, dtype=x.dtype).reshape(4, 6) / 10
    y = torch.einsum("btd,de->bte", x, w)
    z = torch.einsum("bid,bjd->bij", x, x)
    return y, torch.einsum("bij->bj", z)


def _setitem(x):
    y = x.clone()
    y[:, 0] = 0.5
    y[..., 1:3] = x[..., :2] * 2
    return y


def _clamp_floor_erf(x):
    return (x.clamp(min=-0.5, max=0.75) + torch.floor(x * 3) +
            torch.erf(x) + torch.clamp_min(x, 0.1).log1p())


def _reductions(x):
    m, i = x.max(dim=-1)
    return m, i.float(), x.amin(dim=1), x.argmax(-1).float(), x.cumsum(1)


def _batched(x):
    s = torch.baddbmm(x @ x.transpose(1, 2), x, x.transpose(1, 2),
                      beta=0.5, alpha=2.0)
    return s, x.repeat(1, 2, 1), x.repeat_interleave(2, dim=2)


def _index_select(x):
    idx = torch.tensor([3, 0, 0, 2])
    rows = torch.arange(x.shape[1]).clamp(max=2)
    return x.index_select(-1, idx), x[:, rows, :], x[:, [0, -1, 1]]


def _logical(x):
    a, b = x > 0, x < 0.5
    return ((a & b) | (~a ^ b)).float(), torch.logical_not(a).float()


def _layer_norm(x):
    w = torch.linspace(0.5, 1.5, x.shape[-1])
    return F.layer_norm(x, (x.shape[-1],), w, w - 1.0, 1e-5)


def _hardtanh(x):
    y = F.relu6(x * 4)
    z = y - 3
    F.relu6(z, inplace=True)
    return F.hardtanh(x * 3, -0.5, 2.0) + nn.ReLU6(inplace=True)(x * 8) + z


def _pools(x):
    # (N, 1, T, 4) images, and x itself as one unbatched (C, H, W) image.
    img = x.unsqueeze(1)
    return (F.max_pool2d(img, 2, stride=1, padding=1),
            F.avg_pool2d(img, (2, 2), stride=(1, 2), ceil_mode=True,
                         count_include_pad=False),
            F.adaptive_avg_pool2d(img, (1, 2)),
            F.avg_pool2d(img, (img.size(2), img.size(3))),
            F.max_pool2d(x, 2))


CASES = {
    "hardtanh_relu6": _hardtanh,
    "pools": _pools,
    "topk_gather": _gather_top2,
    "last_position": _last_position,
    "masked_log_softmax": _masked,
    "einsum": _einsum,
    "setitem": _setitem,
    "clamp_floor_erf": _clamp_floor_erf,
    "reductions": _reductions,
    "baddbmm_repeat": _batched,
    "index_select": _index_select,
    "logical": _logical,
    "layer_norm": _layer_norm,
}


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out] if out is not None else []


def _run_all(text, x, n):
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "m.mlir")
        with open(model, "w") as f:
            f.write(text)
        inp = os.path.join(d, "x.npy")
        np.save(inp, x)
        outs = [os.path.join(d, f"y{i}.npy") for i in range(n)]
        args = [model, "--input", inp]
        for o in outs:
            args += ["--output", o]
        subprocess.run([tools.tool_path("nnx-run")] + args, check=True,
                       capture_output=True, text=True)
        return [np.load(o) for o in outs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_handler_matches_pytorch(name):
    model = Lambda(CASES[name]).eval()
    text = export(model, [(None, None, 4)], name="m")
    for shape in [(1, 4, 4), (3, 6, 4)]:
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(7))
        want = [w.numpy() for w in _flat(model(x))]
        got = _run_all(text, x.numpy(), len(want))
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, **TOL)


# --- refusals ---------------------------------------------------------------

def _line(fn, offset):
    return fn.__code__.co_firstlineno + offset


def _size_branch(x):
    if x.shape[0] > 2:
        return x * 2
    return x


def _data_branch(x):
    if (x > 100).any():
        return x * 2
    return x


def _data_value(x):
    return x * x.max().item()


def _random(x):
    return x + torch.randn(x.shape[-1])


def _sort(x):
    return x.sort(-1).values


def _range_over_size(x):
    return torch.stack([x[i] for i in range(x.shape[0])])


@pytest.mark.parametrize("fn,offset,pattern", [
    (_size_branch, 1, r"branch or assertion on a run-time size \(2 > 2 is "
     r"False, but 3 > 2 is True"),
    (_data_branch, 1, r"'Tensor.__bool__' reads the value of a tensor "
     r"computed from the inputs"),
    (_data_value, 1, r"'Tensor.item' reads the value of a tensor"),
    (_random, 1, r"randn: random numbers made in a forward"),
    (_sort, 1, r"'Tensor.sort' has no nnx form"),
    (_range_over_size, 1, r"a run-time size \(2 and 3 in the example "
     r"runs\) used as a range\(\) bound"),
])
def test_refusal_names_module_construct_and_line(fn, offset, pattern):
    with pytest.raises(ExportError) as e:
        export(Lambda(fn), [(None, 4)], name="m")
    msg = str(e.value)
    assert msg.startswith("module at '<root>': "), msg
    assert f"test_export_ops.py:{_line(fn, offset)})" in msg, msg
    import re
    assert re.search(pattern, msg), msg


def test_branch_on_the_same_outcome_is_taken():
    """Asserts and branches whose outcome is the same in both example runs
    are ordinary Python: taken, not recorded."""
    def fn(x, targets=None):
        b, t = x.shape
        assert t == 4 and b >= 1
        logits = x * 2 if math.isfinite(float(t)) else x
        if targets is not None:
            return logits, (logits - targets).pow(2).mean()
        return logits, None
    model = Lambda(fn).eval()
    text = export(model, [(None, 4)], name="m")
    assert 'nnx.output_names = ["0"]' in text
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    got = _run_all(text, x, 1)[0]
    np.testing.assert_allclose(got, x * 2, **TOL)


def test_tied_weights_are_one_tensor():
    """One Parameter in two modules (nanoGPT's wte / lm_head) is one tensor
    in the IR, not two copies."""
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(11, 4)
            self.lm_head = nn.Linear(4, 11, bias=False)
            self.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            logits = self.lm_head(self.wte(idx))
            loss = None if targets is None else logits.sum()
            return logits, loss

    model = Tied().eval()
    text = export(model, [((None, None), torch.int64)], name="t")
    blobs = [ln for ln in text.splitlines() if ln.strip().startswith("t_")]
    assert len(blobs) == 1, blobs
    ids = np.array([[1, 5, 10]], dtype=np.int64)
    got = _run_all(text, ids, 1)[0]
    want = model(torch.from_numpy(ids))[0].detach().numpy()
    np.testing.assert_allclose(got, want, **TOL)
