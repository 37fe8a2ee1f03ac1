"""``torch.special``: PyTorch's names for graphgrad's special functions."""
from __future__ import annotations

from typing import Any

import graphgrad as _gg

expit = _gg.sigmoid
logit = _gg.logit
erf = _gg.erf
erfc = _gg.erfc
erfinv = _gg.erfinv
gammaln = _gg.lgamma
digamma = psi = _gg.digamma
polygamma = _gg.polygamma
multigammaln = _gg.mvlgamma
xlogy = _gg.xlogy
xlog1py = _gg.xlog1py
sinc = _gg.sinc
exp2 = _gg.exp2
expm1 = _gg.expm1
log1p = _gg.log1p
round = _gg.round  # noqa: A001
logsumexp = _gg.logsumexp


def softmax(input, dim: int, *, dtype: Any = None):
    out = _gg.softmax(input, dim)
    return out if dtype is None else out.astype(dtype)


def log_softmax(input, dim: int, *, dtype: Any = None):
    out = _gg.log_softmax(input, dim)
    return out if dtype is None else out.astype(dtype)


def erfcx(x):
    """``exp(x**2) * erfc(x)``."""
    return _gg.exp(x * x) * _gg.erfc(x)


def ndtr(x):
    """The standard normal CDF."""
    return 0.5 * _gg.erfc(-x * 0.7071067811865476)


def ndtri(p):
    """The inverse of :func:`ndtr`."""
    return 1.4142135623730951 * _gg.erfinv(2 * p - 1)


def log_ndtr(x):
    """``log(ndtr(x))``."""
    return _gg.log(ndtr(x))


def entr(x):
    """``-x log(x)`` (0 at 0, -inf below 0)."""
    return -_gg.xlogy(x, x) + _gg.where(x < 0, -float("inf"), 0.0)
