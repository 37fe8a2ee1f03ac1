"""Activation and distance modules over ``graphgrad.ops.activations_more`` (PyTorch's names and
constructor arguments): Hardshrink, Softshrink, Tanhshrink, RReLU, PReLU, Softmax2d,
CosineSimilarity, PairwiseDistance. Shapes: (*) -> (*) unless noted."""
from __future__ import annotations

from graphgrad.core.creation import full
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.activations_more import (cosine_similarity, hardshrink, pairwise_distance, prelu, rrelu,
                                            softshrink, tanhshrink)
from graphgrad.ops.nn import softmax


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)


class Softshrink(Module):
    """Shrink towards 0 by ``lambd`` (0 within ``[-lambd, lambd]``)."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(input)


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes in ``[lower, upper]`` in training, their mean in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training)


class PReLU(Module):
    """Leaky ReLU with learned slopes: one (``num_parameters=1``) or one per channel (dimension 1),
    initialized to ``init``. Parameter ``weight`` (num_parameters,)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype))

    def forward(self, input: Tensor) -> Tensor:
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels of each location. Shapes: (N, C, H, W) or (C, H, W) -> same."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: expects a 3-D or 4-D input, got shape {input.shape}")
        return softmax(input, -3)


class CosineSimilarity(Module):
    """Cosine similarity along ``dim``. Shapes: (..., D, ...) twice -> without ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``p``-norm distance of ``x1 - x2 + eps`` over the last dimension. Shapes: (N, D) twice -> (N,)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["Hardshrink", "Softshrink", "Tanhshrink", "RReLU", "PReLU", "Softmax2d", "CosineSimilarity",
           "PairwiseDistance"]
