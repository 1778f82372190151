"""Tolerances for nnx's numerical tests (the rule: test/README.md).

A numerical test compares with a reference whose own error is bounded:

- the end-to-end contract (function preservation, model outputs against
  PyTorch running the model): ``CONTRACT``, atol = rtol = 1e-5, never relaxed;
- a kernel or a reduction: a float64 reference and an elementwise bound that
  grows with the reduction length, ``gamma(K) * (|A| @ |B|)`` for a K-long dot
  product (any summation order, FMA or not: Higham, "Accuracy and Stability of
  Numerical Algorithms", 3.1), checked by ``assert_matmul`` / ``assert_sum`` /
  ``assert_within``.

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
