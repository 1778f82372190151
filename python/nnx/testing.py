"""Tolerances for nnx's numerical tests (the rule: test/README.md).

A numerical test compares with a reference whose own error is bounded:

- the end-to-end contract (function preservation, model outputs against
  PyTorch running the model): ``CONTRACT``, atol = rtol = 1e-5, never relaxed;
- a kernel or a reduction: a float64 reference and an elementwise bound that
  grows with the reduction length, ``gamma(K) * (|A| @ |B|)`` for a K-long dot
  product (any summation order, FMA or not: Higham, "Accuracy and Stability of
  Numerical Algorithms", 3.1), checked by ``assert_matmul`` / ``assert_sum`` /
  ``assert_within``;
- bf16 / f16 models (docs/Lowering.md, "Mixed precision"): each op computes
  in float32 and rounds its result once to the storage type, relative error
  at most its unit roundoff ``U_BF16`` / ``U_F16``. One op against a float64
  reference of the same rounded operands: ``narrow_matmul_bound`` (the f32
  accumulation plus one rounding) and ``mlp_bound`` (that error carried
  through a chain of Linears and activations, first order). A whole model:
  ``steps_bound``, one rounding per step on the model's longest path, each
  carried with unit gain to the largest output.

``NNX_TEST_REORDER=1`` makes every reference computed here (``matmul``,
``sum``) reduce in another legitimate order: the reduction axis in blocks of
``BLOCK``, the blocks summed last to first. A test that only passes in one
order compares at a tolerance tighter than the rounding of the reference.

Usable from pytest (python/tests) and from lit's Python tests (put
``<repo>/python`` on ``sys.path``); numpy only.
"""

import os

import numpy as np

#: The seeds' end-to-end contract (function preservation, logits vs PyTorch).
CONTRACT = dict(atol=1e-5, rtol=1e-5)
#: Unit roundoff of float32 (half its machine epsilon): fl(x) = x (1 + d), |d| <= U32.
U32 = float(np.finfo(np.float32).eps) / 2
#: Unit roundoff of bfloat16 (8 significant bits) and float16 (11).
U_BF16 = 2.0 ** -8
U_F16 = 2.0 ** -11
#: Half float16's smallest subnormal: the absolute rounding error of values
#: below its normal range (bf16 has float32's range: none to add).
F16_TINY = 2.0 ** -25

#: Block length of the reordered reductions.
BLOCK = 8


def reordered():
    """Whether references reduce in the other order (``NNX_TEST_REORDER=1``)."""
    return os.environ.get("NNX_TEST_REORDER", "") not in ("", "0")


def gamma(n, u=U32):
    """Higham's gamma_n = n u / (1 - n u): the relative bound of an n-term
    float sum or dot product, in any order."""
    n = np.asarray(n, np.float64)
    if np.any(n * u >= 1):
        raise ValueError("reduction too long for a float32 bound: %s" % n)
    return n * u / (1 - n * u)


def _blocks(k):
    """Slices of a length-k reduction axis, in the order they are summed."""
    starts = range(0, k, BLOCK)
    if reordered():
        starts = reversed(starts)
    return [slice(s, min(s + BLOCK, k)) for s in starts]


def matmul(a, b):
    """``a @ b`` (NumPy's matmul semantics, b of rank >= 2) in the dtype of
    the operands; under ``NNX_TEST_REORDER`` each K block separately, summed
    last block first."""
    a, b = np.asarray(a), np.asarray(b)
    if not reordered() or b.ndim < 2:
        return a @ b
    out = None
    for s in _blocks(a.shape[-1]):
        part = a[..., s] @ b[..., s, :]
        out = part if out is None else out + part
    return out


def sum(x, axis=None, keepdims=False):  # noqa: A001 - mirrors np.sum
    """``np.sum(x, axis)`` in x's dtype; under ``NNX_TEST_REORDER`` in
    blocks summed last to first (axis=None: over the flattened array)."""
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if not reordered():
        return np.sum(x, axis=axis, keepdims=keepdims)
    x = np.moveaxis(x, axis, -1)
    out = None
    for s in _blocks(x.shape[-1]):
        part = np.sum(x[..., s], axis=-1)
        out = part if out is None else out + part
    if out is None:
        out = np.zeros(x.shape[:-1], x.dtype)
    return np.expand_dims(out, axis) if keepdims else out


def printed_error(y, digits):
    """The rounding of ``y`` printed with ``digits`` significant decimal
    digits (printMemrefF32: 6): half a unit of the last digit printed."""
    y = np.abs(np.asarray(y, np.float64))
    return 0.5 * 10.0 ** (1 - digits) * y


def assert_within(got, want, bound, what="result"):
    """|got - want| <= bound elementwise (shapes must agree); the message
    names the worst element, its error and its bound."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    bound = np.broadcast_to(np.asarray(bound, np.float64), want.shape)
    assert got.shape == want.shape, "%s: shape %s, want %s" % (what, got.shape, want.shape)
    err = np.abs(got - want)
    bad = ~(err <= bound)  # NaN fails too
    if bad.any():
        ratio = np.where(bad, err / np.maximum(bound, np.finfo(np.float64).tiny), 0)
        i = np.unravel_index(np.nanargmax(np.where(np.isnan(ratio), np.inf, ratio)), err.shape)
        raise AssertionError(
            "%s: %d of %d elements out of bound; worst at %s: got %r, want %r, "
            "error %.3g > bound %.3g" % (what, bad.sum(), bad.size, tuple(map(int, i)),
                                         got[i], want[i], err[i], bound[i]))


def matmul_bound(a, b, bias=None, printed_digits=None, got=None):
    """The float64 reference of ``a @ b (+ bias)`` and the elementwise bound
    of a float32 computation of it: gamma(K') (|a| @ |b| + |bias|), K' = K
    (+ 1 with a bias), plus the printing's rounding of ``got`` when the result
    was read back from text with ``printed_digits`` significant digits."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    k = a.shape[-1] + (bias is not None)
    ref = matmul(a, b)
    mag = np.abs(a) @ np.abs(b)
    if bias is not None:
        bias = np.asarray(bias, np.float64)
        ref = ref + bias
        mag = mag + np.abs(bias)
    bound = gamma(k) * mag
    if printed_digits is not None:
        bound = bound + printed_error(ref if got is None else got, printed_digits)
    return ref, bound


def assert_matmul(got, a, b, bias=None, printed_digits=None, what="matmul"):
    """``got`` is a float32 computation of ``a @ b (+ bias)``: within
    ``matmul_bound`` of the float64 reference."""
    ref, bound = matmul_bound(a, b, bias, printed_digits, got)
    assert_within(got, ref, bound, what)


def assert_sum(got, x, axis=-1, want=None, what="sum"):
    """``got`` is a float32 sum of ``x`` along ``axis``: within gamma(n) *
    sum |x| of the float64 sum (or of ``want``, an exact value of it)."""
    x = np.asarray(x, np.float64)
    ref = sum(x, axis=axis) if want is None else np.broadcast_to(want, np.shape(got))
    assert_within(got, ref, gamma(x.shape[axis]) * np.sum(np.abs(x), axis=axis), what)


def unit_roundoff(dtype):
    """The unit roundoff of "bf16" / "f16" (numpy float16 too)."""
    name = str(dtype)
    if "bf16" in name or "bfloat16" in name:
        return U_BF16
    if "f16" in name or "float16" in name:
        return U_F16
    raise ValueError("not a narrow float type: %r" % (dtype,))


def round_to(x, dtype):
    """``x`` rounded to nearest even in "bf16" or "f16" (as float64)."""
    x = np.asarray(x, np.float64)
    if unit_roundoff(dtype) == U_F16:
        return x.astype(np.float16).astype(np.float64)
    # Through float32 (exact for the bf16 results of one f32 rounding):
    # add half an ulp of bf16 minus one, plus the kept lowest bit; truncate.
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    nan = np.isnan(x)
    out = rounded.view(np.float32).astype(np.float64)
    out[nan] = np.nan
    return out


def rounding_bound(ref, u, tiny=0.0):
    """The error of rounding a value within ``ref``'s magnitude once with
    unit roundoff ``u`` (plus ``tiny`` below the normal range)."""
    return u * np.abs(np.asarray(ref, np.float64)) + tiny


def narrow_matmul_bound(a, b, bias=None, u=U_BF16, tiny=0.0):
    """``a @ b (+ bias)`` of narrow-float operands computed as nnx computes
    a bf16 / f16 Linear: products and sums in float32 (``matmul_bound``),
    the result rounded once. The float64 reference and the elementwise
    bound: e32 + u (|ref| + e32) (+ tiny)."""
    ref, e32 = matmul_bound(a, b, bias)
    return ref, e32 + u * (np.abs(ref) + e32) + tiny


#: Lipschitz constants of the activations mlp_bound carries errors
#: through (GELU's derivative is at most 1.129).
LIPSCHITZ = {"relu": 1.0, "gelu": 1.13, "identity": 1.0}


def mlp_bound(x, layers, u=U_BF16, tiny=0.0):
    """The float64 reference of a chain of Linears and activations on the
    narrow-float values ``x`` (``layers``: ("linear", W, b) with W stored
    out x in as PyTorch does, b or None; ("relu",) / ("gelu",)) and the
    first-order elementwise bound of nnx's narrow computation of it: each
    op's own error (f32 accumulation and one rounding, or one rounding of an
    activation computed in f32 to 1e-6), plus the error of its input carried
    through it (|W| for a Linear, the Lipschitz constant for an
    activation)."""
    ref = np.asarray(x, np.float64)
    err = np.zeros_like(ref)
    for layer in layers:
        if layer[0] == "linear":
            w = np.asarray(layer[1], np.float64)
            ref, own = narrow_matmul_bound(ref, w.T, layer[2], u, tiny)
            err = err @ np.abs(w.T) + own
        else:
            lip = LIPSCHITZ[layer[0]]
            ref = (np.maximum(ref, 0) if layer[0] == "relu" else
                   0.5 * ref * (1 + _erf(ref / np.sqrt(2))))
            err = lip * err + 1e-6 * np.abs(ref) + u * np.abs(ref) + tiny
    return ref, err


def _erf(x):
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def steps_bound(ref, steps, u=U_BF16, implementations=1):
    """A whole narrow-float model against a reference: ``steps`` roundings
    on its longest path, each of relative size at most u (times
    ``implementations``: 2 against another narrow computation, which rounds
    too), carried with unit gain to the largest output."""
    return steps * implementations * u * float(np.max(np.abs(ref)))
