"""Dropout layer."""
from __future__ import annotations

from typing import Optional

from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops.nn import dropout

__all__ = ["Dropout"]


class Dropout(Module):
    """Inverted dropout: in training mode zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; the identity in eval mode.

    Args:
        p: probability of zeroing an element, in [0, 1].
        inplace: accepted for PyTorch compatibility and ignored.
        generator: random source of the masks (default: the global generator, ``gg.manual_seed``).

    Shapes: (*) -> (*).

    Example:
        >>> drop = gg.nn.Dropout(0.2, generator=gg.Generator(0))
        >>> drop(gg.ones(4, 5)).shape
        (4, 5)
        >>> drop.eval()(x) is x      # identity in eval mode
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, generator: Optional[Generator] = None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p, self.inplace, self.generator = float(p), inplace, generator

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, training=self.training, generator=self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
