"""Elementwise functions and activations PyTorch programs call, composed from the primitives.

Each is a few primitive ops (DESIGN principle 2), so it has its gradient, graph mode and ONNX export
for free; the compositions are chosen to stay finite where the naive formula overflows
(``logaddexp`` shifts by the maximum, ``logsigmoid`` goes through the stable ``softplus``).
"""
from __future__ import annotations

import math
from typing import Any

from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.composite import softplus
from graphgrad.backend import np
from graphgrad.ops.elementwise import (clip, equal, greater, less, less_equal, logical_and, logical_or, maximum, minimum,
                                       not_equal, pow, remainder, where)
from graphgrad.ops.unary import abs as _abs, exp, isnan, log, log1p, sigmoid, trunc
from graphgrad.ops.linalg import matmul
from graphgrad.ops.nn import softmax
from graphgrad.ops.shape import chunk, flip, swapaxes

_LN2, _LN10 = math.log(2.0), math.log(10.0)
finfo = np.finfo


def exp2(x) -> Tensor:
    """``2 ** x``. Shapes: (...) -> (...)."""
    return pow(2.0, x)


def log10(x) -> Tensor:
    """Base-10 logarithm. Shapes: (...) -> (...)."""
    return log(x) * (1.0 / _LN10)


def logaddexp(a, b) -> Tensor:
    """``log(exp(a) + exp(b))`` without overflow: ``max(a, b) + log1p(exp(-|a - b|))``. Broadcasts."""
    return maximum(a, b) + log1p(exp(-_abs(a - b)))


def logaddexp2(a, b) -> Tensor:
    """``log2(2**a + 2**b)`` without overflow. Broadcasts."""
    return logaddexp(a * _LN2, b * _LN2) * (1.0 / _LN2)


def lerp(start, end, weight) -> Tensor:
    """``start + weight * (end - start)`` (``weight`` a number or a tensor). Broadcasts."""
    return start + weight * (end - start)


def softsign(x) -> Tensor:
    """``x / (1 + |x|)``. Shapes: (...) -> (...)."""
    return x / (1.0 + _abs(x))


def logsigmoid(x) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for any ``x``. Shapes: (...) -> (...)."""
    return -softplus(-x)


def hardsigmoid(x) -> Tensor:
    """``clip(x / 6 + 1/2, 0, 1)``. Shapes: (...) -> (...)."""
    return clip(x / 6.0 + 0.5, 0.0, 1.0)


def hardswish(x) -> Tensor:
    """``x * hardsigmoid(x)`` (MobileNetV3). Shapes: (...) -> (...)."""
    return x * hardsigmoid(x)


def softmin(x, dim: int = -1) -> Tensor:
    """``softmax(-x)`` along ``dim``. Shapes: (...) -> (...)."""
    return softmax(-x, dim)


def celu(x, alpha: float = 1.0) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``. Shapes: (...) -> (...)."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0")
    return maximum(x, 0.0) + minimum(alpha * (exp(minimum(x, 0.0) * (1.0 / alpha)) - 1.0), 0.0)


def glu(x, dim: int = -1) -> Tensor:
    """Gated linear unit: the halves ``a, b`` of ``x`` along ``dim`` give ``a * sigmoid(b)``.
    Shapes: (..., 2n, ...) -> (..., n, ...)."""
    if x.shape[dim] is not None and x.shape[dim] % 2:
        raise ShapeError(f"glu: dim {dim} of shape {tuple(x.shape)} must have an even size")
    a, b = chunk(x, 2, axis=dim)
    return a * sigmoid(b)


def threshold(x, threshold: float, value: Any) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``. Shapes: (...) -> (...)."""
    return where(greater(x, threshold), x, value)


def fmod(a, b) -> Tensor:
    """The remainder of ``a / b`` rounded towards zero (C's ``fmod``: the sign of ``a``). Broadcasts;
    integers give integers."""
    if _integral(a) and _integral(b):
        r = remainder(a, b)  # the sign of b: step back by b where it differs from a's
        return where(logical_and(not_equal(r, 0), not_equal(less(r, 0), less(a, 0))), r - b, r)
    return a - b * trunc(a / b)


def _integral(v: Any) -> bool:
    return v.dtype.kind in "iub" if isinstance(v, Tensor) else isinstance(v, int)


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities are close; NaN only with
    ``equal_nan``). Broadcasts; a bool tensor."""
    close = logical_or(equal(a, b), less_equal(_abs(a - b), atol + rtol * _abs(b)))
    return logical_or(close, logical_and(isnan(a), isnan(b))) if equal_nan else close


def nan_to_num(x, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
    """``x`` with NaN, +inf and -inf replaced (by default with 0 and the dtype's largest and smallest
    finite values); the gradient is zero at the replaced elements. Shapes: (...) -> (...)."""
    big = float(finfo(x.dtype).max)
    out = where(isnan(x), nan, x)
    out = where(equal(x, math.inf), big if posinf is None else posinf, out)
    return where(equal(x, -math.inf), -big if neginf is None else neginf, out)


def mm(a, b) -> Tensor:
    """Matrix product of two matrices (PyTorch's ``mm``). Shapes: (n, k), (k, m) -> (n, m)."""
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ShapeError(f"mm: expects two matrices, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def bmm(a, b) -> Tensor:
    """Batched matrix product (PyTorch's ``bmm``). Shapes: (B, n, k), (B, k, m) -> (B, n, m)."""
    if len(a.shape) != 3 or len(b.shape) != 3:
        raise ShapeError(f"bmm: expects two 3-d tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def addmm(input, mat1, mat2, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``. Shapes: input broadcastable to (n, m)."""
    return _scaled(input, beta) + _scaled(mm(mat1, mat2), alpha)


def baddbmm(input, batch1, batch2, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``, batched. Shapes: input broadcastable to (B, n, m)."""
    return _scaled(input, beta) + _scaled(bmm(batch1, batch2), alpha)


def _scaled(x, factor: float):
    return x if factor == 1 else x * factor


def rot90(x, k: int = 1, dims: tuple = (0, 1)) -> Tensor:
    """``x`` rotated by ``k`` quarter turns in the plane of ``dims`` (from the first towards the second).
    Shapes: (...) -> the two dims swapped when ``k`` is odd."""
    d0, d1 = dims
    k %= 4
    if k == 1:
        return swapaxes(flip(x, d1), d0, d1)
    if k == 2:
        return flip(flip(x, d0), d1)
    if k == 3:
        return flip(swapaxes(x, d0, d1), d1)
    return x


__all__ = ["exp2", "log10", "logaddexp", "logaddexp2", "lerp", "softsign", "logsigmoid", "hardsigmoid", "hardswish",
           "softmin", "celu", "glu", "threshold", "fmod", "isclose", "nan_to_num", "mm", "bmm", "addmm", "baddbmm", "rot90"]
