"""More activation modules (PyTorch's names): each wraps a function of ``graphgrad.ops.pointwise``.
Shapes: (*) -> (*), except ``GLU``: (..., 2n, ...) -> (..., n, ...) along ``dim``."""
from __future__ import annotations

from typing import Any

from graphgrad.core.tensor import Tensor
from graphgrad.nn import functional as F
from graphgrad.nn.module import Module
from graphgrad.ops.pointwise import celu, glu, hardsigmoid, hardswish, logsigmoid, softmin, softsign, threshold


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return softsign(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, finite for any ``x``."""

    def forward(self, input: Tensor) -> Tensor:
        return logsigmoid(input)


class Hardsigmoid(Module):
    """``clip(x / 6 + 1/2, 0, 1)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, inplace=True) if self.inplace else hardsigmoid(input)


class Hardswish(Module):
    """``x * hardsigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, inplace=True) if self.inplace else hardswish(input)


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = -1 if dim is None else int(dim)

    def forward(self, input: Tensor) -> Tensor:
        return softmin(input, self.dim)


class CELU(Module):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = float(alpha)

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha)


class GLU(Module):
    """Gated linear unit along ``dim``: ``a * sigmoid(b)`` of the two halves."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = int(dim)

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold: float, value: Any, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value = float(threshold), value

    def forward(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value)


__all__ = ["Softsign", "LogSigmoid", "Hardsigmoid", "Hardswish", "Softmin", "CELU", "GLU", "Threshold"]
