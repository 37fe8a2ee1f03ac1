"""Standard-gamma draws with a reparameterized gradient: ``x ~ Gamma(alpha, 1)`` drawn by NumPy's
generator (through graphgrad's, so ``gg.manual_seed`` reproduces it), and ``dx/dalpha`` by implicit
differentiation of the CDF, ``-(dP(alpha, x)/dalpha) / p(x; alpha)`` (Figurnov et al., 2018, as
PyTorch's ``_standard_gamma_grad``). ``dP/dalpha`` is a central difference of the regularized lower
incomplete gamma function, evaluated by its series (``x < alpha + 1``) or continued fraction."""
from __future__ import annotations

import math
from typing import Optional

import graphgrad as gg
from graphgrad.backend import np
from graphgrad.core.autograd import no_grad
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor

_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def gammainc(a, x, iters: int = 400):
    """The regularized lower incomplete gamma function ``P(a, x)`` on float64 NumPy arrays."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.zeros(a.shape)
    x = np.maximum(x, 0.0)
    log_front = a * np.log(np.where(x > 0, x, 1.0)) - x - _lgamma(a)
    ser = (x < a + 1.0) & (x > 0)
    if ser.any():
        aa, xx = a[ser], x[ser]
        ap, term = aa.copy(), 1.0 / aa
        total = term.copy()
        for i in range(iters * 4):
            ap = ap + 1.0
            term = term * xx / ap
            total = total + term
            if i % 16 == 15 and np.all(np.abs(term) < np.abs(total) * 1e-17):
                break
        out[ser] = total * np.exp(log_front[ser])
    cf = x >= a + 1.0
    if cf.any():
        aa, xx = a[cf], x[cf]
        tiny = 1e-300
        b = xx + 1.0 - aa
        c = np.full_like(b, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        for i in range(1, iters):
            an = -i * (i - aa)
            b = b + 2.0
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h = h * delta
            if i % 4 == 0 and np.all(np.abs(delta - 1.0) < 1e-15):
                break
        out[cf] = 1.0 - np.exp(log_front[cf]) * h
    return out


def standard_gamma_grad(alpha, x):
    """``dx/dalpha`` for ``x ~ Gamma(alpha, 1)`` at fixed CDF value (NumPy float64 arrays)."""
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    h = 1e-5 * np.maximum(alpha, 1e-2)
    dp = (gammainc(alpha + h, x) - gammainc(alpha - h, x)) / (2.0 * h)
    log_pdf = (alpha - 1.0) * np.log(x) - x - _lgamma(alpha)
    grad = -dp * np.exp(-log_pdf)
    return np.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)


def standard_gamma(alpha: Tensor, shape: tuple, generator: Optional[Generator] = None,
                   reparameterized: bool = True) -> Tensor:
    """Draws of shape ``shape`` (broadcast from ``alpha``) from ``Gamma(alpha, 1)``; with autograd on and
    ``reparameterized``, gradients reach ``alpha`` through the implicit reparameterization."""
    a = np.broadcast_to(np.asarray(alpha.detach().numpy(), np.float64), shape)
    draw = rng_of(generator).standard_gamma(a)
    dtype = alpha.dtype
    draw = np.maximum(draw, np.finfo(dtype).tiny)
    value = gg.tensor(draw.astype(dtype), device=alpha.device)
    if not reparameterized or not alpha.requires_grad or not gg.is_grad_enabled():
        return value
    grad = gg.tensor(standard_gamma_grad(a, draw).astype(dtype), device=alpha.device)
    with no_grad():
        alpha_const = alpha.detach()
    # value + (alpha - stop(alpha)) * dx/dalpha: equal to the draw, its gradient the implicit one
    return value + (alpha - alpha_const) * grad
