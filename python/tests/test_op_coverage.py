"""Op-by-op coverage of the exporter: every op of torch's OpInfo database
(``op_db``: the torch.* functions and Tensor methods with float32 CPU
kernels) and every ``torch.nn.functional`` function, each exported from a
one-op module (dim 0 dynamic where the op allows it), compiled, run on its
sample input and compared with PyTorch (atol = rtol = 1e-5).

Prints ``op coverage: N of M``. Fails if an op listed as passing in
op_coverage.txt no longer passes, if a refusal does not name the op and the
model's source line (or leaks an error from inside torch), or if a compiled
op gives a wrong answer. ``NNX_UPDATE_OP_COVERAGE=1`` rewrites
op_coverage.txt (docs/Python.md's coverage table is generated from it:
utils/nnx-export-support.py --write).
"""

import inspect
import os
import re
import sys
import tempfile
import types
import unittest

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnx.torch_export import ExportError, export  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "op_coverage.txt")
TOL = dict(atol=1e-5, rtol=1e-5)
BATCH = 24  # ops per compile


def _op_db():
    """torch's OpInfo database (its test utilities import `expecttest`,
    a test-only package Debian does not ship; a stand-in suffices)."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        m = types.ModuleType("expecttest")
        m.TestCase = unittest.TestCase
        m.ACCEPT = False
        sys.modules["expecttest"] = m
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


class Sample:
    def __init__(self, input, args=(), kwargs=None):
        self.input = input
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})


def _r(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(5))


# torch.nn.functional functions op_db has no entry for.
_EXTRA = {
    "channel_shuffle": lambda: Sample(_r(2, 6, 3, 3), (3,)),
    "native_channel_shuffle": lambda: Sample(_r(2, 6, 3, 3), (3,)),
    "alpha_dropout": lambda: Sample(_r(2, 5), (), {"training": False}),
    "dropout1d": lambda: Sample(_r(2, 3, 4), (), {"training": False}),
    "celu_": lambda: Sample(_r(2, 5)),
    "elu_": lambda: Sample(_r(2, 5)),
    "hardtanh_": lambda: Sample(_r(2, 5)),
    "leaky_relu_": lambda: Sample(_r(2, 5)),
    "relu_": lambda: Sample(_r(2, 5)),
    "selu_": lambda: Sample(_r(2, 5)),
    "rrelu_": lambda: Sample(_r(2, 5), (), {"training": False}),
    "threshold_": lambda: Sample(_r(2, 5), (0.5, 0.0)),
    "upsample": lambda: Sample(_r(2, 3, 4, 4), (), {"scale_factor": 2}),
    "lp_pool1d": lambda: Sample(_r(2, 3, 8).abs(), (2.0, 2)),
    "lp_pool2d": lambda: Sample(_r(2, 3, 4, 4).abs(), (2.0, 2)),
    "conv3d": lambda: Sample(_r(1, 2, 4, 4, 4), (_r(3, 2, 2, 2, 2),)),
    "conv_tbc": lambda: Sample(_r(5, 2, 3), (_r(3, 3, 4), _r(4), 1)),
    "fold": lambda: Sample(_r(1, 12, 9), (), {"output_size": (4, 4),
                                              "kernel_size": 2}),
    "affine_grid": lambda: Sample(_r(2, 2, 3), ((2, 1, 4, 4),),
                                  {"align_corners": False}),
    "max_pool1d_with_indices": lambda: Sample(_r(2, 3, 8), (2,)),
    "max_pool2d_with_indices": lambda: Sample(_r(2, 3, 4, 4), (2,)),
    "max_pool3d_with_indices": lambda: Sample(_r(1, 2, 4, 4, 4), (2,)),
    "adaptive_max_pool1d_with_indices": lambda: Sample(_r(2, 3, 8), (4,)),
    "adaptive_max_pool2d_with_indices": lambda: Sample(_r(2, 3, 4, 4), (2,)),
    "adaptive_max_pool3d_with_indices": lambda: Sample(_r(1, 2, 4, 4, 4),
                                                       (2,)),
}


def _functional_names():
    """The public functions of torch.nn.functional."""
    out = []
    for n in dir(F):
        f = getattr(F, n)
        if n.startswith("_") or inspect.isclass(f) or not callable(f) or \
                inspect.ismodule(f):
            continue
        mod = getattr(f, "__module__", None) or ""
        if mod.startswith(("typing", "torch.overrides", "torch._jit")) or \
                n in ("boolean_dispatch", "handle_torch_function",
                      "has_torch_function", "has_torch_function_unary",
                      "has_torch_function_variadic", "assert_int_or_pair"):
            continue
        out.append(n)
    return out


def _first_sample(op):
    """The op's first sample with tensor input(s), preferring one whose
    input is not a scalar (model tensors rarely are)."""
    found = []
    try:
        for s in op.sample_inputs("cpu", torch.float32, requires_grad=False):
            inp = s.input
            if isinstance(inp, torch.Tensor) or (
                    isinstance(inp, (list, tuple)) and inp and all(
                        isinstance(t, torch.Tensor) for t in inp)):
                if all(t.dim() for t in _tensors(inp)):
                    return s
                found.append(s)
            if len(found) > 8:
                break
    except Exception:  # noqa: BLE001 - a sample generator torch cannot run
        pass
    return found[0] if found else None


def cases():
    """name -> (callable, Sample or None): every op the test covers."""
    out = {}
    db = _op_db()
    covered = set()
    for op in db:
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        name = op.name.replace("nn.functional.", "F.")
        if op.variant_test_name:
            name += "." + op.variant_test_name
        covered.add(op.name.replace("nn.functional.", ""))
        out[name] = (op.op, lambda op=op: _first_sample(op))
    for n in _functional_names():
        if n in covered or n.rstrip("_") in covered and n not in _EXTRA:
            continue
        make = _EXTRA.get(n)
        out["F." + n] = (getattr(F, n), make)
    return out


class OpModule(nn.Module):
    """One op applied to its sample (its tensor input(s) as the
    forward's arguments, the other arguments as constants)."""

    def __init__(self, fn, sample):
        super().__init__()
        self.fn = fn
        self.many = isinstance(sample.input, (list, tuple))
        self.args = sample.args
        self.kwargs = sample.kwargs

    def forward(self, *xs):
        inp = list(xs) if self.many else xs[0]
        return self.fn(inp, *self.args, **self.kwargs)


CALL_LINE = OpModule.forward.__code__.co_firstlineno + 2


class Batch(nn.Module):
    """Several op modules compiled as one model (one compile)."""

    def __init__(self, mods, counts):
        super().__init__()
        self.ops = nn.ModuleList(mods)
        self.counts = counts

    def forward(self, *xs):
        out, i = [], 0
        for m, n in zip(self.ops, self.counts):
            out += _tensors(m(*xs[i:i + n]))
            i += n
        return tuple(out)


def _tensors(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    return []


def _inputs(sample):
    """Copies of the sample's input tensor(s) (an in-place op writes them)."""
    xs = list(sample.input) if isinstance(sample.input, (list, tuple)) \
        else [sample.input]
    return [x.clone() for x in xs]


def _rows(x, n):
    return x[torch.arange(n) % x.shape[0]] if x.dim() else x


def _dynamic(fn, sample):
    """Whether the op runs with dim 0 of its inputs at other sizes (then
    it is exported with that dim dynamic)."""
    xs = _inputs(sample)
    if any(x.dim() == 0 or x.shape[0] == 0 for x in xs):
        return False
    try:
        outs = []
        for n in (2, 3):
            m = OpModule(fn, Sample([_rows(x, n) for x in xs] if isinstance(
                sample.input, (list, tuple)) else _rows(xs[0], n),
                sample.args, sample.kwargs))
            got = _tensors(m(*[_rows(x, n) for x in xs]))
            outs.append([(t.dim(), t.dtype) for t in got])
        return outs[0] == outs[1] and bool(outs[0])
    except Exception:  # noqa: BLE001 - the op needs these sizes
        return False


def _spec(sample, symbol, dynamic):
    specs = []
    for x in _inputs(sample):
        shape = tuple(x.shape)
        if dynamic:
            shape = (symbol,) + shape[1:]
        specs.append((shape, x.dtype))
    return specs


def _refusal_problem(msg):
    """What a refusal message lacks: the op named, and the line."""
    if f"test_op_coverage.py:{CALL_LINE})" not in msg and \
            "test_op_coverage.py:" not in msg:
        return "does not name the model's source line"
    if not re.search(r"'[^']+'", msg) and "has no nnx form" not in msg:
        return "does not name the op"
    if "Traceback" in msg or 'File "' in msg:
        return "leaks torch internals"
    return None


def _evaluate():
    """name -> (status, detail)."""
    import nnx
    results, ready = {}, []
    for name, (fn, make) in sorted(cases().items()):
        sample = make() if make is not None else None
        if sample is None:
            results[name] = ("no-sample", "no float32 sample input")
            continue
        try:
            with torch.no_grad():
                want = _tensors(OpModule(fn, sample)(*_inputs(sample)))
        except Exception as e:  # noqa: BLE001
            results[name] = ("no-sample", f"PyTorch fails: {type(e).__name__}")
            continue
        skip = _not_applicable(name, fn, sample, want)
        if skip:
            results[name] = ("n/a", skip)
            continue
        mod = OpModule(fn, sample).eval()
        got = _export(mod, sample, _dynamic(fn, sample))
        if isinstance(got, tuple):
            results[name] = got
            continue
        ready.append((name, mod, sample, got, want))
    for i in range(0, len(ready), BATCH):
        _compile_and_run(nnx, ready[i:i + BATCH], results)
    return results


def _not_applicable(name, fn, sample, want):
    """Why the op is outside what an export can reproduce, or None."""
    if not want:
        return "no tensor result"
    if "empty" in name or "resize" in name:
        return "uninitialized memory"
    ts = [t for t in _tensors([sample.input, list(sample.args),
                               list(sample.kwargs.values())])]
    if any(t.layout != torch.strided or t.is_complex() for t in ts + want):
        return "sparse or complex tensors"
    with torch.no_grad():
        again = _tensors(OpModule(fn, sample)(*_inputs(sample)))
    if any(not torch.equal(a, b) and not (a.is_floating_point() and
                                         torch.allclose(a, b, equal_nan=True))
           for a, b in zip(want, again)):
        return "nondeterministic (random or uninitialized)"
    return None


def _export(mod, sample, dynamic):
    """Whether `mod` exports (dim 0 dynamic if `dynamic`, else, or where
    the op needs that dim static, static): the `dynamic` used, or the
    (status, detail) of the refusal."""
    for dyn in ([True, False] if dynamic else [False]):
        try:
            export(mod, _spec(sample, "b", dyn), name="m")
            return dyn
        except ExportError as e:
            msg = str(e)
            bad = _refusal_problem(msg)
            res = ("bad-refusal" if bad else "refused",
                   f"{bad}: {msg}" if bad else msg)
        except Exception as e:  # noqa: BLE001
            res = ("leak", f"{type(e).__name__}: {e}")
    return res


def _compile_and_run(nnx, group, results):
    mods = [m for _, m, _, _, _ in group]
    counts = [len(_inputs(s)) for _, _, s, _, _ in group]
    spec = [sp for j, (_, _, s, d, _) in enumerate(group)
            for sp in _spec(s, f"b{j}", d)]
    try:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "batch.mlir")
            with open(path, "w") as f:
                f.write(export(Batch(mods, counts).eval(), spec, name="ops"))
            run = nnx.compile(path)
            outs, _ = run(*[x.detach().numpy().copy() for _, _, s, _, _
                            in group for x in _inputs(s)])
    except Exception as e:  # noqa: BLE001 - split to find the op
        if len(group) == 1:
            results[group[0][0]] = ("compile-error", f"{type(e).__name__}: "
                                    f"{str(e).splitlines()[0][:300]}")
            return
        h = len(group) // 2
        _compile_and_run(nnx, group[:h], results)
        _compile_and_run(nnx, group[h:], results)
        return
    outs = _outputs(outs)
    i = 0
    for name, _, _, _, want in group:
        got = outs[i:i + len(want)]
        i += len(want)
        try:
            for g, w in zip(got, want):
                g, wn = _comparable(g, w)
                assert g.shape == wn.shape, f"shape {g.shape} != {wn.shape}"
                np.testing.assert_allclose(g.astype(wn.dtype), wn,
                                           equal_nan=True, **TOL)
            results[name] = ("pass", "")
        except (AssertionError, TypeError, ValueError) as e:
            results[name] = ("mismatch", str(e).strip().splitlines()[0][:300])


def _comparable(got, want):
    """numpy arrays of a compiled output and PyTorch's (a bf16 output
    comes back as the uint16 array of its bits)."""
    got = np.asarray(got)
    if want.dtype == torch.bfloat16:
        if got.dtype == np.uint16:
            got = torch.from_numpy(got.view(np.int16)).view(
                torch.bfloat16).float().numpy()
        return got, want.detach().float().numpy()
    if want.dtype == torch.float16:
        return got.astype(np.float32), want.detach().float().numpy()
    return got, want.detach().numpy()


def _outputs(got):
    """A compiled model's outputs as a list (one output: the array)."""
    if isinstance(got, dict):
        return list(got.values())
    if isinstance(got, (list, tuple)):
        return list(got)
    return [got]


def _read(path):
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, status, _ = (line.rstrip("\n").split("\t") + ["", ""])[:3]
            out[name] = status
    return out


def _write(path, results):
    n = sum(1 for s, _ in results.values() if s == "pass")
    with open(path, "w") as f:
        f.write(f"# op coverage: {n} of {len(results)} (written by "
                "python/tests/test_op_coverage.py with "
                "NNX_UPDATE_OP_COVERAGE=1)\n")
        for name in sorted(results):
            status, detail = results[name]
            detail = re.sub(r" \(at [^)]*\)", "", detail).replace(
                "\t", " ").replace("\n", " ")[:200]
            f.write(f"{name}\t{status}\t{detail}\n")


@pytest.fixture(scope="module")
def results():
    if not os.environ.get("NNX_BUILD_DIR"):
        pytest.skip("needs the build (NNX_BUILD_DIR) for nnx.compile")
    res = _evaluate()
    if os.environ.get("NNX_UPDATE_OP_COVERAGE"):
        _write(RESULTS, res)
    out = os.environ.get("NNX_BUILD_DIR")
    if out and os.path.isdir(out):
        _write(os.path.join(out, "op-coverage.txt"), res)
    return res


def test_op_coverage_does_not_regress(results, capsys):
    expected = [n for n, s in _read(RESULTS).items() if s == "pass"]
    lost = [f"{n}: {results.get(n, ('missing', ''))}" for n in expected
            if results.get(n, ("missing",))[0] != "pass"]
    n = sum(1 for s, _ in results.values() if s == "pass")
    with capsys.disabled():  # shown in `make test`'s log, pass or fail
        print(f"\nop coverage: {n} of {len(results)} (expected at least "
              f"{len(expected)})")
    assert not lost, "ops that passed no longer do:\n" + "\n".join(lost)


def test_refusals_name_the_op_and_the_line(results):
    bad = [f"{n}: {d}" for n, (s, d) in results.items()
           if s in ("bad-refusal", "leak")]
    assert not bad, "\n".join(bad)


def test_no_wrong_answers(results):
    bad = [f"{n}: {d}" for n, (s, d) in results.items() if s == "mismatch"]
    assert not bad, "compiled ops that differ from PyTorch:\n" + "\n".join(
        bad)


# --- the functions new models call, in model code ---------------------------

class SqueezeExcite(nn.Module):
    """MobileNetV3's block: hardswish, and a hardsigmoid gate."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Conv2d(8, 4, 1)
        self.fc2 = nn.Conv2d(4, 8, 1)

    def forward(self, x):
        x = F.hardswish(x)
        s = F.adaptive_avg_pool2d(x, 1)
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(s))), inplace=True)
        return x * s


class WindowPad(nn.Module):
    """Swin's window partition: pad (B, H, W, C) to whole windows."""

    def forward(self, x):
        b, h, w, c = x.shape
        ws = 4
        pad_r, pad_b = (ws - w % ws) % ws, (ws - h % ws) % ws
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        hp, wp = h + pad_b, w + pad_r
        x = x.view(b, hp // ws, ws, wp // ws, ws, c)
        return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c)


class SegHead(nn.Module):
    """A segmentation head: upsampled logits (bilinear, nearest,
    bicubic), pixel shuffle and a transposed convolution."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 3, 2, 2) * 0.1)

    def forward(self, x):
        size = (x.shape[-2] * 2, x.shape[-1] * 2)
        a = F.interpolate(x, size=size, mode="bilinear", align_corners=False)
        b = F.interpolate(x, scale_factor=2, mode="nearest")
        c = F.interpolate(x, size=size, mode="bicubic", align_corners=True)
        d = F.pixel_shuffle(torch.cat([x, x, x, x], 1), 2)
        e = F.conv_transpose2d(x, self.w, stride=2)
        return a + b + c + d, e


class Norms(nn.Module):
    """Functional batch / group / instance norm, torch.norm, addcmul."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.linspace(-0.5, 0.5, 8))
        self.register_buffer("var", torch.linspace(0.5, 1.5, 8))
        self.weight = nn.Parameter(torch.linspace(0.8, 1.2, 8))
        self.bias = nn.Parameter(torch.linspace(-0.1, 0.1, 8))

    def forward(self, x):
        a = F.batch_norm(x, self.mean, self.var, self.weight, self.bias,
                         training=False, eps=1e-3)
        b = F.group_norm(x, 4, self.weight, self.bias)
        c = F.instance_norm(x)
        n = torch.norm(x, dim=1, keepdim=True)
        return torch.addcmul(a, b, c, value=0.5), n


class LastToken(nn.Module):
    """The usual "gather the EOS token": two index tensors, and a repeat
    by a run-time count."""

    def forward(self, h, scores):
        eos = scores.argmax(dim=-1)
        pooled = h[torch.arange(h.shape[0]), eos]
        return pooled, pooled.repeat(1, h.shape[0])


MODELS = {
    "mobilenetv3_se": (SqueezeExcite, [(None, 8, 5, 5)]),
    "swin_window_pad": (WindowPad, [(None, 7, 6, 3)]),
    "segmentation_head": (SegHead, [(None, 2, 3, 4)]),
    "norms": (Norms, [(None, 8, 3, 4)]),
    "last_token": (LastToken, [(None, 5, 4), (None, 5)]),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_functions_new_models_call(name):
    if not os.environ.get("NNX_BUILD_DIR"):
        pytest.skip("needs the build (NNX_BUILD_DIR) for nnx.compile")
    import nnx
    cls, spec = MODELS[name]
    model = cls().eval()
    run = nnx.compile(model, inputs=spec)
    gen = torch.Generator().manual_seed(3)
    for batch in (1, 3):
        xs = []
        for s in spec:
            shape, dtype = (s if isinstance(s[0], tuple) else (s, None))
            shape = [batch if d is None else d for d in shape]
            xs.append(torch.randn(*shape, generator=gen) if dtype is None
                      else torch.randint(0, 5, shape, generator=gen))
        with torch.no_grad():
            want = _tensors(model(*xs))
        got, _ = run(*[x.numpy() for x in xs])
        got = _outputs(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w.numpy(), **TOL)


# --- refusals of the decomposition path -------------------------------------

class _Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("fn,pattern", [
    # fftshift over the dynamic dim rolls by a size the decomposition bakes
    # in as a constant (b // 2): refused, not fixed to the example's.
    (lambda x: torch.fft.fftshift(x, dim=0),
     r"'torch.fft_fftshift' has no nnx form \(its decomposition uses a "
     r"run-time size \(1 and 1|'torch.fft_fftshift' has no nnx form \(.*"
     r"run-time"),
    (lambda x: x.sort(-1).values,
     r"'Tensor.sort' has no nnx form \(it reaches the ATen op "
     r"'aten.sort.default'"),
    (lambda x: x[x > 0],
     r"bool mask has no nnx form"),
    (lambda x: torch.cumprod(x, 1),
     r"'torch.cumprod' has no nnx form \(it reaches the ATen op "
     r"'aten.cumprod.default'"),
])
def test_decomposition_refusals_name_the_op_and_the_line(fn, pattern):
    with pytest.raises(ExportError) as e:
        export(_Lambda(fn), [(None, 4)], name="m")
    msg = str(e.value)
    assert re.search(pattern, msg), msg
    assert msg.startswith("module at '<root>': "), msg
    # The line of the user's call (here the lambda's).
    line = fn.__code__.co_firstlineno
    assert msg.endswith(f"test_op_coverage.py:{line})"), msg
    assert "Traceback" not in msg and 'File "' not in msg, msg


def test_dynamic_size_in_a_decomposition_is_a_runtime_size():
    """F.group_norm's decomposition views x as (b, groups, -1): the batch
    it bakes in differs between the example runs, so it is written as the
    input's dim 0, not as the examples' constant."""
    text = export(_Lambda(lambda x: F.group_norm(x, 2)), [(None, 4, 3)],
                  name="m")
    assert "tensor<?x4x3xf32>" in text
    views = re.findall(r"nnx.fn.reshape %\S+ \[([^\]]*)\]", text)
    assert views and all(v.split(",")[0].strip().startswith("%")
                         for v in views), views


def test_floor_division_is_torchs():
    """Floor division as ATen computes it (from fmod): at quotients just
    below an integer, by a negative divisor and by zero."""
    if not os.environ.get("NNX_BUILD_DIR"):
        pytest.skip("needs the build (NNX_BUILD_DIR) for nnx.compile")
    import nnx

    class Div(nn.Module):
        def forward(self, a, b):
            return (torch.div(a, b, rounding_mode="floor"),
                    torch.div(a, b, rounding_mode="trunc"),
                    torch.floor_divide(a, 0.1), a // b)
    m = Div()
    run = nnx.compile(m, inputs=[(None, 5), (None, 5)])
    a = torch.tensor([[0.3, -0.3, 1.7, 5.0, 1.0], [2.0, -7.5, 0.0, 3.3, 0.7]])
    b = torch.tensor([[0.1, 0.1, -0.4, 0.0, 0.1], [0.5, 2.0, 1.0, -1.1, 0.1]])
    got, _ = run(a.numpy(), b.numpy())
    for g, w in zip(_outputs(got), m(a, b)):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), **TOL)
