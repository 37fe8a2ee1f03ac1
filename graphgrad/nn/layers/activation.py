"""Activation layers: modules over the activation ops (no parameters). Shapes: (*) -> (*).

``inplace=True`` writes the result into the input, as PyTorch: the input tensor itself becomes the
result (recorded by autograd when it is in the autograd graph; see graphgrad/ops/inplace.py).
"""
from __future__ import annotations

from graphgrad.core.tensor import Tensor
from graphgrad.nn import functional as F
from graphgrad.nn.module import Module
from graphgrad.ops.composite import elu, hardtanh, leaky_relu, mish, selu, silu, softplus
from graphgrad.ops.unary import gelu
from graphgrad.ops.nn import log_softmax, softmax
from graphgrad.ops.unary import relu, sigmoid, tanh

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Sigmoid",
           "Tanh", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """``max(x, 0)``.

    Examples:
        >>> gg.nn.ReLU()(gg.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=True) if self.inplace else relu(input)


class ReLU6(Module):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, 0.0, 6.0, inplace=True) if self.inplace else hardtanh(input, 0.0, 6.0)


class LeakyReLU(Module):
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    Examples:
        >>> gg.nn.LeakyReLU(0.1)(gg.tensor([-1.0, 2.0]))
        tensor([-0.1,  2. ])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = float(negative_slope)
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        if self.inplace:
            return F.leaky_relu(input, self.negative_slope, inplace=True)
        return leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = float(alpha)
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, inplace=True) if self.inplace else elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class SELU(Module):
    """Scaled ELU with the self-normalizing constants."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, inplace=True) if self.inplace else selu(input)


class GELU(Module):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` (swish)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=True) if self.inplace else silu(input)


class Mish(Module):
    """``x * tanh(softplus(x))``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=True) if self.inplace else mish(input)


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = float(beta), float(threshold)

    def forward(self, input: Tensor) -> Tensor:
        return softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if not min_val < max_val:
            raise ValueError(f"Hardtanh: min_val must be below max_val, got {min_val}, {max_val}")
        self.min_val, self.max_val = float(min_val), float(max_val)
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        if self.inplace:
            return F.hardtanh(input, self.min_val, self.max_val, inplace=True)
        return hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return tanh(input)


class Softmax(Module):
    """Softmax along ``dim``: non-negative, sums to 1 along ``dim``.

    ``dim`` defaults to -1 (the last axis); PyTorch's legacy implicit choice for ``dim=None`` is
    not reproduced.

    Examples:
        >>> gg.nn.Softmax(dim=1)(gg.randn(2, 3)).sum(axis=1)
        tensor([1., 1.])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = -1 if dim is None else int(dim)

    def forward(self, input: Tensor) -> Tensor:
        return softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim`` (default -1), computed stably."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = -1 if dim is None else int(dim)

    def forward(self, input: Tensor) -> Tensor:
        return log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
