"""Functions composed from primitives: no gradient code of their own, so they get autograd, graph
mode and export for free (DESIGN principle 2)."""
from __future__ import annotations

from graphgrad.core.tensor import Tensor
from graphgrad.ops.elementwise import greater, greater_equal, less_equal, where
from graphgrad.ops.unary import exp, expm1, log1p, sigmoid, sqrt, tanh

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def square(x) -> Tensor:
    """``x * x``. Shapes: (...) -> (...)."""
    return x * x


def rsqrt(x) -> Tensor:
    """``1 / sqrt(x)``. Shapes: (...) -> (...)."""
    return 1.0 / sqrt(x)


def leaky_relu(x, negative_slope: float = 0.01) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``."""
    return where(greater(x, 0), x, x * negative_slope)


def elu(x, alpha: float = 1.0) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (gradient ``alpha`` at 0, as PyTorch)."""
    positive = greater(x, 0)
    # expm1 of x clamped to <= 0: the unused branch stays finite, so its masked gradient is not NaN
    return where(positive, x, expm1(where(positive, 0.0, x)) * alpha)


def selu(x) -> Tensor:
    """Scaled ELU with the self-normalizing constants (Klambauer et al., 2017)."""
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


def silu(x) -> Tensor:
    """``x * sigmoid(x)`` (also called swish)."""
    return x * sigmoid(x)


swish = silu


def softplus(x, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` like PyTorch; stable for any ``x``
    (float16 is computed in float32, as PyTorch does: ``exp(threshold)`` does not fit in float16)."""
    if getattr(x, "dtype", None) == "float16":
        return softplus(x.astype("float32"), beta, threshold).astype("float16")
    bx = x * beta if beta != 1.0 else x
    linear = greater(bx, threshold)
    # exp of bx clamped to <= threshold: no overflow, so the masked branch's gradient is not NaN
    out = where(linear, bx, log1p(exp(where(linear, threshold, bx))))
    return out / beta if beta != 1.0 else out


def mish(x) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    return x * tanh(softplus(x))


def hardtanh(x, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]``; unlike ``clip`` the gradient is 0 at the bounds
    themselves (PyTorch's rule)."""
    return where(less_equal(x, min_val), min_val, where(greater_equal(x, max_val), max_val, x))


__all__ = ["square", "rsqrt", "leaky_relu", "elu", "selu", "silu", "swish", "softplus", "mish",
           "hardtanh"]
