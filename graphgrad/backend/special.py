"""Special functions NumPy lacks (lgamma, digamma, polygamma, erfc, erfinv), for the ``numpy`` backend.

Each is computed in float64 and rounded once to the input's float dtype (integers give the default
float, as NumPy's ufuncs give float64 for them and the op's dtype rule decides the rest). SciPy is not
needed: the formulas below are the classic ones (Lanczos' series for the log-gamma function, the
asymptotic series of the polygamma functions after shifting the argument up with their recurrence,
Newton's method on erf/erfc for the inverse error function), each accurate to about 1e-14 relative.
"""
from __future__ import annotations

import math

import numpy as np

# Lanczos' approximation with g = 7 and nine terms: Gamma(z + 1) = sqrt(2 pi) t^(z + 1/2) e^-t A(z),
# t = z + g + 1/2, A(z) = c0 + sum_k c_k / (z + k). Relative error below 1e-15 for Re z >= 0.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
# Bernoulli numbers B_2, B_4, ..., B_14 for the asymptotic series of the polygamma functions
_BERNOULLI = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6)
_SHIFT_TO = 16.0  # the argument is shifted up to at least this before the asymptotic series


def _as_float64(x):
    x = np.asarray(x)
    return x.astype(np.float64), np.result_type(x.dtype, np.float16)


def _lgamma_positive(x):
    """log Gamma(x) for x >= 0.5 (float64 array)."""
    z = x - 1.0
    series = np.full_like(z, _LANCZOS[0])
    for k, c in enumerate(_LANCZOS[1:], start=1):
        series += c / (z + k)
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(series)


def lgamma(x):
    """``log |Gamma(x)|`` elementwise (+inf at 0 and the negative integers, as PyTorch's ``lgamma``)."""
    x, dtype = _as_float64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = x < 0.5
        reflected = np.where(small, 1.0 - x, x)
        out = _lgamma_positive(np.where(np.isfinite(reflected), reflected, 1.0))
        # Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        sine = np.abs(np.sin(math.pi * np.where(small, x, 0.5)))
        out = np.where(small, np.log(math.pi / sine) - out, out)
        out = np.where(small & (x == np.floor(x)), np.inf, out)
        out = np.where(np.isinf(x), np.inf, out)
        out = np.where(np.isnan(x), np.nan, out)
    return out.astype(dtype, copy=False)


def _shift_up(x, n: int):
    """``(y, total)``: ``y = x + k >= _SHIFT_TO`` and the recurrence's sum ``sum_j 1 / (x + j)^(n + 1)``
    over the ``k`` steps (float64 arrays)."""
    y = x.copy()
    total = np.zeros_like(x)
    while True:
        low = y < _SHIFT_TO
        if not low.any():
            return y, total
        total += np.where(low, 1.0 / np.where(low, y, 1.0) ** (n + 1), 0.0)
        y = np.where(low, y + 1.0, y)


def digamma(x):
    """The digamma function ``d/dx log Gamma(x)`` elementwise (``-inf`` at 0, NaN at the negative
    integers, as PyTorch)."""
    x, dtype = _as_float64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        negative = x < 0.5
        y = np.where(negative, 1.0 - x, x)  # psi(1 - x) - psi(x) = pi / tan(pi x)
        y = np.where(np.isfinite(y), y, _SHIFT_TO)
        y, total = _shift_up(y, 0)
        inv2 = 1.0 / (y * y)
        tail = sum(b / (2 * (k + 1)) * inv2 ** (k + 1) for k, b in enumerate(_BERNOULLI))
        out = np.log(y) - 0.5 / y - tail - total
        out = np.where(negative, out - math.pi / np.tan(math.pi * np.where(negative, x, 0.25)), out)
        integer = x == np.floor(x)
        out = np.where(negative & integer, np.nan, out)
        out = np.where(x == 0, np.copysign(np.inf, -x), out)  # -inf at +0, +inf at -0 (as PyTorch)
        out = np.where(x == np.inf, np.inf, out)
        out = np.where(np.isnan(x) | (x == -np.inf), np.nan, out)
    return out.astype(dtype, copy=False)


def polygamma(n: int, x):
    """The ``n``-th derivative of the digamma function (``n >= 0``) elementwise."""
    if n == 0:
        return digamma(x)
    x, dtype = _as_float64(x)
    sign = 1.0 if n % 2 else -1.0  # (-1)^(n + 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y, total = _shift_up(np.where(np.isfinite(x), x, _SHIFT_TO), n)
        # psi_n(y) ~ (-1)^(n+1) [ (n-1)!/y^n + n!/(2 y^(n+1)) + sum_k B_2k (2k+n-1)!/((2k)! y^(2k+n)) ]
        series = math.factorial(n - 1) / y ** n + math.factorial(n) / (2.0 * y ** (n + 1))
        for k, b in enumerate(_BERNOULLI, start=1):
            series += b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / y ** (2 * k + n)
        out = sign * (series + math.factorial(n) * total)
        out = np.where((x <= 0) & (x == np.floor(x)), np.inf if n % 2 else np.nan, out)
        out = np.where(x == np.inf, 0.0, out)
        out = np.where(np.isnan(x) | (x == -np.inf), np.nan, out)
    return out.astype(dtype, copy=False)


def erfc(x, erf):
    """``1 - erf(x)``, accurate in the tail (a continued fraction beyond 2.5); ``erf`` is the backend's."""
    from graphgrad.backend.numpy_backend import _erfc_continued_fraction

    x, dtype = _as_float64(x)
    out = 1.0 - erf(x)
    tail = np.isfinite(x) & (x >= 2.5)
    if tail.any():
        out[tail] = _erfc_continued_fraction(x[tail])
    out = np.where(x == np.inf, 0.0, out)
    return out.astype(dtype, copy=False)


def erfinv(y, erf):
    """The inverse error function on ``[-1, 1]`` (+-inf at +-1, NaN outside): Winitzki's closed form
    as the start, then Newton steps on ``erf`` (``erfc`` in the tails, where ``erf`` saturates)."""
    y, dtype = _as_float64(y)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = np.abs(y)
        inside = a < 1.0
        w = np.log1p(-np.where(inside, a * a, 0.0))  # ln(1 - y^2)
        k = 0.147
        b = 2.0 / (math.pi * k) + 0.5 * w
        x = np.sqrt(np.sqrt(b * b - w / k) - b)
        tail = a > 0.9
        rest = 1.0 - a  # exact for a >= 0.5
        for _ in range(5):
            slope = 2.0 / math.sqrt(math.pi) * np.exp(-x * x)
            residual = np.where(tail, rest - erfc(x, erf), erf(x) - a)  # d/dx erf = slope, d/dx erfc = -slope
            x = x - np.where(inside, residual / np.where(slope > 0, slope, 1.0), 0.0)
        out = np.copysign(x, y)
        out = np.where(a == 1.0, np.copysign(np.inf, y), out)
        out = np.where((a > 1.0) | np.isnan(y), np.nan, out)
    return out.astype(dtype, copy=False)
