"""bf16 and f16 models end to end (docs/Lowering.md, "Mixed precision").

nnx computes a bf16 / f16 model as PyTorch's CPU kernels do: each op reads
its narrow operands, computes (and accumulates) in float32 and rounds its
result once. The bounds (nnx.testing) follow from that rule:

* one Linear against a float64 reference of the same rounded operands: the
  float32 accumulation (gamma(K) |x| |W|) plus one rounding (u |y|), where
  the vdpbf16ps tiles and the f32 tiles (NNX_JIT_MAX_ISA=avx2, a host
  without AVX512_BF16) must both land; an MLP: that error carried through
  the chain (mlp_bound);
* a whole model: one rounding of relative size u per step on its longest
  path, carried to the largest logit (steps_bound), against the float64
  reference and against PyTorch bf16 (which rounds too: twice that);
* surgery on a bf16 model computes in float64 and rounds once into bf16:
  the edited model's outputs are within the same MLP bound of the float64
  function of the original weights.

f16 models come from the bf16 export through nnx-convert-float (PyTorch
1.13 runs no float16 Linear on the CPU); their reference is float64 on the
converted weights.
"""

import copy
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import FAMILIES, build  # noqa: E402
from models.common import attention_interface, dropout_add  # noqa: E402

import nnx  # noqa: E402
from nnx import testing, tools  # noqa: E402
from nnx.torch_export import export  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
SHAPES = [(1, 5), (3, 9)]


def narrow(x, dtype):
    """A float64 copy of `x` rounded to `dtype` (a torch tensor)."""
    return torch.as_tensor(x).to(DTYPES[dtype]).double().numpy()


def compiled(model, in_features, threads=1):
    return nnx.compile(model, inputs=[(None, in_features)], threads=threads)


def run(c, x, dtype):
    """The compiled model on `x` (float64 values exact in `dtype`), as
    float64."""
    out, _ = c(torch.from_numpy(x).to(DTYPES[dtype]))
    return out.double().numpy()


def mlp_layers(model):
    """nnx.testing.mlp_bound's description of a Sequential MLP."""
    layers = []
    for m in model:
        if isinstance(m, torch.nn.Linear):
            b = None if m.bias is None else m.bias.detach().double().numpy()
            layers.append(("linear", m.weight.detach().double().numpy(), b))
        elif isinstance(m, torch.nn.GELU):
            layers.append(("gelu",))
        else:
            layers.append(("relu",))
    return layers


def random_mlp(dims, dtype, seed, act=torch.nn.GELU):
    torch.manual_seed(seed)
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i + 2 < len(dims):
            layers.append(act())
    return torch.nn.Sequential(*layers).eval().to(DTYPES[dtype])


def inputs(rows, k, dtype, seed):
    x = np.random.default_rng(seed).standard_normal((rows, k))
    return narrow(x, dtype)


# -- one Linear: the accumulation rule, on both tile paths ---------------------

# M rows x K x N: row remainders (1, 5, 7, 13 rows against 6-row tiles),
# N tails (72 = 64 + 8 masked, 130 = 2 x 64 + 2, 16), K in two cache blocks
# of pairs (1088 = 512 + 32 pairs), an odd K (no pairs: the f32 tiles).
LINEARS = [(1, 64, 72), (5, 64, 72), (7, 512, 130), (13, 1088, 16),
           (6, 66, 64), (3, 7, 5)]


@pytest.mark.parametrize("isa", ["host", "avx2"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("shape", LINEARS, ids=lambda s: "x".join(map(str, s)))
def test_linear_accumulates_in_f32_and_rounds_once(shape, dtype, threads, isa,
                                                    monkeypatch):
    if isa == "avx2":  # the f32 tiles, as on a host without AVX512_BF16
        monkeypatch.setenv("NNX_JIT_MAX_ISA", "avx2")
    m, k, n = shape
    model = random_mlp([k, n], dtype, seed=k + n)
    c = compiled(model, k, threads)
    x = inputs(m, k, dtype, seed=m)
    u = testing.unit_roundoff(dtype)
    tiny = testing.F16_TINY if dtype == "f16" else 0.0
    lin = model[0]
    ref, bound = testing.narrow_matmul_bound(
        x, lin.weight.detach().double().numpy().T,
        lin.bias.detach().double().numpy(), u, tiny)
    testing.assert_within(run(c, x, dtype), ref, bound, f"{dtype} Linear {shape}")


# -- convolutions and pools: the taps on packed weights, pools in f32 ----------

# (C, F, kernel, stride, padding, groups): a 3 x 3 conv on its stride-1
# taps, one at stride 2 in two groups (each group's taps slice the packed
# weight from an even offset of C), a 1 x 1 conv, and a stem's odd C = 3
# (no pairs: the f32 tiles).
CONVS = [(16, 32, 3, 1, 1, 1), (16, 32, 3, 2, 1, 2), (32, 48, 1, 1, 0, 1),
         (3, 16, 7, 2, 3, 1)]


@pytest.mark.parametrize("isa", ["host", "avx2"])
@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "c{}f{}k{}s{}p{}g{}".format(*c))
def test_conv_accumulates_in_f32_and_rounds_once(conv, isa, monkeypatch):
    """A bf16 Conv2d is a matmul of its windows (one per group) by the
    weight: within the f32 accumulation bound plus one rounding of the
    float64 function of the same rounded operands, on the vdpbf16ps tiles
    (each conv's weight packed once, its taps slices of it) and on the f32
    tiles (NNX_JIT_MAX_ISA=avx2)."""
    if isa == "avx2":
        monkeypatch.setenv("NNX_JIT_MAX_ISA", "avx2")
    c, f, k, stride, pad, groups = conv
    torch.manual_seed(c + f + k)
    layer = torch.nn.Conv2d(c, f, k, stride, pad, groups=groups)
    model = torch.nn.Sequential(layer).eval().to(torch.bfloat16)
    x = narrow(np.random.default_rng(k).standard_normal((3, c, 12, 12)), "bf16")
    compiled_conv = nnx.compile(model, inputs=[(None, c, 12, 12)], threads=1)
    got = run(compiled_conv, x, "bf16")
    w = layer.weight.detach().double()
    windows = torch.nn.functional.unfold(torch.from_numpy(x), k, padding=pad,
                                         stride=stride)  # N x (C k k) x L
    n, _, spots = windows.shape
    cg, fg = c // groups, f // groups
    ref = np.empty((n, f, spots))
    bound = np.empty_like(ref)
    for g in range(groups):
        a = windows[:, g * cg * k * k:(g + 1) * cg * k * k, :]
        a = a.permute(0, 2, 1).reshape(n * spots, cg * k * k).numpy()
        b = w[g * fg:(g + 1) * fg].reshape(fg, -1).numpy().T
        r, e = testing.narrow_matmul_bound(
            a, b, layer.bias.detach().double().numpy()[g * fg:(g + 1) * fg])
        ref[:, g * fg:(g + 1) * fg] = r.reshape(n, spots, fg).transpose(0, 2, 1)
        bound[:, g * fg:(g + 1) * fg] = e.reshape(n, spots, fg).transpose(0, 2, 1)
    testing.assert_within(got.reshape(n, f, spots), ref, bound,
                          f"bf16 conv {conv} ({isa})")


@pytest.mark.parametrize("isa", ["host", "avx2"])
def test_max_pool_is_exact(isa, monkeypatch):
    """A bf16 max pool (its taps folded in f32, the loop vectorized) picks
    elements: bit-identical to PyTorch's, NaN propagated."""
    if isa == "avx2":
        monkeypatch.setenv("NNX_JIT_MAX_ISA", "avx2")
    model = torch.nn.Sequential(torch.nn.MaxPool2d(3, 2, 1)).to(torch.bfloat16)
    x = torch.randn(2, 32, 15, 15).to(torch.bfloat16)
    x[1, 5, 7, 7] = float("nan")
    pool = nnx.compile(model, inputs=[((None, 32, 15, 15), torch.bfloat16)],
                       threads=1)
    got, _ = pool(x)
    want = model(x)
    assert got.dtype == torch.bfloat16
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.isnan(want).any()
    same = ~torch.isnan(want)
    assert torch.equal(got[same], want[same])


def test_linear_bound_catches_a_bf16_accumulator():
    """The bound is tight enough to tell f32 accumulation from bf16: a sum
    rounded to bf16 at every step breaks it on a 1024-long dot product."""
    k = 1024
    x = inputs(4, k, "bf16", seed=1)
    w = narrow(np.random.default_rng(2).standard_normal((k, 8)) / 32, "bf16")
    ref, bound = testing.narrow_matmul_bound(x, w)
    acc = np.zeros((4, 8))
    for i in range(k):
        acc = testing.round_to(acc + x[:, i:i + 1] * w[i], "bf16")
    with pytest.raises(AssertionError, match="out of bound"):
        testing.assert_within(acc, ref, bound)


# -- MLPs ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("batch", [1, 16])
@pytest.mark.parametrize("act", [torch.nn.GELU, torch.nn.ReLU],
                         ids=["gelu", "relu"])
def test_mlp_within_the_carried_bound(dtype, batch, act):
    model = random_mlp([64, 96, 96, 10], dtype, seed=3, act=act)
    x = inputs(batch, 64, dtype, seed=batch)
    u = testing.unit_roundoff(dtype)
    tiny = testing.F16_TINY if dtype == "f16" else 0.0
    ref, bound = testing.mlp_bound(x, mlp_layers(model), u, tiny)
    got = run(compiled(model, 64), x, dtype)
    testing.assert_within(got, ref, bound, f"{dtype} MLP")


@pytest.mark.parametrize("batch", [1, 16])
def test_mlp_matches_pytorch_bf16(batch):
    """PyTorch bf16 follows the same rule: both are within the carried
    bound of the float64 function, so within twice it of each other."""
    model = random_mlp([64, 96, 96, 10], "bf16", seed=4)
    x = inputs(batch, 64, "bf16", seed=batch)
    _, bound = testing.mlp_bound(x, mlp_layers(model))
    with torch.no_grad():
        want = model(torch.from_numpy(x).to(torch.bfloat16)).double().numpy()
    got = run(compiled(model, 64), x, "bf16")
    testing.assert_within(got, want, 2 * bound, "bf16 MLP vs PyTorch")


def test_bf16_outputs_come_back_as_torch_bf16():
    model = random_mlp([8, 4], "bf16", seed=5)
    c = compiled(model, 8)
    out, _ = c(torch.ones(2, 8, dtype=torch.bfloat16))
    assert out.dtype == torch.bfloat16 and out.shape == (2, 4)
    bits, _ = c(np.ones((2, 8), np.float32).astype(np.float32).view(np.uint32)
                .__rshift__(16).astype(np.uint16))
    assert bits.dtype == np.uint16  # numpy callers get the bits
    np.testing.assert_array_equal(bits, out.view(torch.int16).numpy().view(np.uint16))


# -- surgery on bf16 models --------------------------------------------------------

def edited_within_bound(original, edited, x):
    """`edited` (nnx surgery of `original`, a bf16 MLP) computes the float64
    function of `original`'s weights within the carried bf16 bound of its
    own layers."""
    ref, _ = testing.mlp_bound(x, mlp_layers(original))
    _, bound = testing.mlp_bound(x, mlp_layers(edited))
    got = run(compiled(edited, x.shape[1]), x, "bf16")
    testing.assert_within(got, ref, bound, "edited bf16 MLP")
    for p in edited.parameters():
        assert p.dtype == torch.bfloat16


def test_widen_a_bf16_model_preserves_its_function():
    model = random_mlp([16, 24, 8], "bf16", seed=6, act=torch.nn.ReLU)
    wide = nnx.widen(model, layer_name="0", new_width=40)
    assert wide[0].out_features == 40
    edited_within_bound(model, wide, inputs(5, 16, "bf16", seed=7))


def test_deepen_a_bf16_model_preserves_its_function():
    model = random_mlp([16, 24, 8], "bf16", seed=8, act=torch.nn.ReLU)
    deep = nnx.deepen(model, after_layer_name="1")
    assert len(deep) == len(model) + 2
    edited_within_bound(model, deep, inputs(5, 16, "bf16", seed=9))


def test_low_rank_of_a_bf16_linear_at_full_rank():
    """SVD in float64, each factor rounded once into bf16: the factored
    pair computes the original Linear within the pair's own carried bound
    plus the factors' rounding, |x| (2u |U S^1/2| |S^1/2 V|)."""
    lin = random_mlp([16, 8], "bf16", seed=10)[0]
    pair = nnx.low_rank_factorize(lin, rank=8)
    a, b = pair[0], pair[1]
    assert a.weight.dtype == b.weight.dtype == torch.bfloat16
    x = inputs(5, 16, "bf16", seed=11)
    ref, _ = testing.mlp_bound(x, mlp_layers(torch.nn.Sequential(lin)))
    _, own = testing.mlp_bound(x, mlp_layers(pair))
    fa = np.abs(a.weight.detach().double().numpy())
    fb = np.abs(b.weight.detach().double().numpy())
    rounding = np.abs(x) @ (2 * testing.U_BF16 * (fb @ fa)).T
    got = run(compiled(pair, 16), x, "bf16")
    testing.assert_within(got, ref, own + rounding, "bf16 low rank")


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_checkpoint_weights_of_their_own_dtype(dtype, tmp_path):
    """A model whose weights are a BF16 / F16 safetensors file runs as the
    inline one does, bit for bit, and binds another such checkpoint."""
    from nnx.torch_export import write
    model = random_mlp([32, 24, 4], dtype, seed=12)
    path = tmp_path / "m.mlir"
    write(model, str(path), [(None, 32)], name="m", weights=True)
    x = inputs(3, 32, dtype, seed=13)
    c = nnx.compile(str(path), threads=1)
    np.testing.assert_array_equal(run(c, x, dtype), run(compiled(model, 32), x, dtype))
    other = random_mlp([32, 24, 4], dtype, seed=14)
    c.bind_weights(other.state_dict())
    np.testing.assert_array_equal(run(c, x, dtype), run(compiled(other, 32), x, dtype))


# -- the six families ------------------------------------------------------------

def family_steps(model):
    """Rounding steps on a family's longest path: the embeddings and the
    final norm and head, and per block its norms, q/k/v, scores, scale,
    mask, softmax, context, output projection, residual adds and the MLP's
    three steps (14)."""
    blocks = sum(1 for _ in model.modules()
                 if isinstance(_, torch.nn.ModuleList) for _ in _)
    return 4 + 14 * blocks


@pytest.fixture(scope="module", params=list(FAMILIES))
def bf16_family(request, tmp_path_factory):
    """(name, bf16 model, path of its export)."""
    model = build(request.param).to(torch.bfloat16)
    path = tmp_path_factory.mktemp(request.param) / "bf16.mlir"
    path.write_text(export(model, [((None, None), torch.int64)],
                           name=request.param,
                           functions=[attention_interface, dropout_add]))
    return request.param, model, path


def logits_of(out):
    return (out[0] if isinstance(out, tuple) else out).double().numpy()


def token_ids(model, batch, seq):
    vocab = model.lm_head.out_features
    return torch.from_numpy(np.random.default_rng(seq).integers(
        0, vocab, size=(batch, seq)).astype(np.int64))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"b{s[0]}xt{s[1]}")
def test_family_in_bf16(bf16_family, shape):
    check_family_in_bf16(bf16_family, shape)


def test_family_in_bf16_on_the_f32_tiles(bf16_family, monkeypatch):
    """A host without AVX512_BF16 (NNX_JIT_MAX_ISA=avx2 on any host): the
    f32 tiles on extended operands, bf16 conversions as integer ops."""
    monkeypatch.setenv("NNX_JIT_MAX_ISA", "avx2")
    check_family_in_bf16(bf16_family, SHAPES[-1])


def check_family_in_bf16(bf16_family, shape):
    name, model, path = bf16_family
    ids = token_ids(model, *shape)
    got = logits_of(nnx.compile(str(path), threads=1)(ids)[0])
    with torch.no_grad():
        want = logits_of(model(ids))
        ref = logits_of(copy.deepcopy(model).double()(ids))
    steps = family_steps(model)
    testing.assert_within(got, ref, testing.steps_bound(ref, steps),
                          f"{name} bf16 vs float64")
    testing.assert_within(got, want,
                          testing.steps_bound(want, steps, implementations=2),
                          f"{name} bf16 vs PyTorch bf16")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"b{s[0]}xt{s[1]}")
def test_family_in_f16(bf16_family, shape, tmp_path):
    name, model, path = bf16_family
    f16 = tmp_path / "f16.mlir"
    f16.write_text(tools.nnx_opt(path.read_text(),
                                 ["--nnx-convert-float=from=bf16 to=f16"]))
    assert "bf16" not in f16.read_text().split("{-#")[0]
    ids = token_ids(model, *shape)
    got = logits_of(nnx.compile(str(f16), threads=1)(ids)[0])
    ref_model = copy.deepcopy(model).double()
    with torch.no_grad():
        for t in list(ref_model.parameters()) + list(ref_model.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().double())  # the converted values
        ref = logits_of(ref_model(ids))
    testing.assert_within(
        got, ref, testing.steps_bound(ref, family_steps(model), testing.U_F16),
        f"{name} f16 vs float64")
