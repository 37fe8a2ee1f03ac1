"""Dropout layers: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout, FeatureAlphaDropout."""
from __future__ import annotations

from typing import Optional

from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops.dropout_more import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from graphgrad.ops.nn import dropout

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout(Module):
    """Inverted dropout: in training mode zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; the identity in eval mode.

    Args:
        p: probability of zeroing an element, in [0, 1].
        inplace: accepted for PyTorch compatibility and ignored.
        generator: random source of the masks (default: the global generator, ``gg.manual_seed``).

    Shapes: (*) -> (*).

    Examples:
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


class _DropoutVariant(Dropout):
    """Dropout's constructor with another functional form (``function(input, p, training, ...)``)."""

    function = staticmethod(dropout1d)

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.p, self.training, generator=self.generator)


class Dropout1d(_DropoutVariant):
    """Channel dropout of ``(N, C, L)`` or ``(C, L)``: in training mode each channel is zeroed as a whole
    with probability ``p``, the others scaled by ``1 / (1 - p)``; the identity in eval mode.

    Examples:
        >>> gg.nn.Dropout1d(0.5)(gg.ones(2, 4, 3)).shape
        (2, 4, 3)
    """

    function = staticmethod(dropout1d)


class Dropout2d(_DropoutVariant):
    """Channel dropout of ``(N, C, H, W)`` (a 3-D input is read as ``(N, C, L)``, as PyTorch); see Dropout1d.

    Examples:
        >>> gg.nn.Dropout2d(0.2)(gg.ones(2, 4, 3, 3)).shape
        (2, 4, 3, 3)
    """

    function = staticmethod(dropout2d)


class Dropout3d(_DropoutVariant):
    """Channel dropout of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see Dropout1d."""

    function = staticmethod(dropout3d)


class AlphaDropout(_DropoutVariant):
    """Alpha dropout for SELU networks (see ``F.alpha_dropout``): keeps zero mean and unit variance;
    the identity in eval mode.

    Examples:
        >>> gg.nn.AlphaDropout(0.2)(gg.randn(4, 5)).shape
        (4, 5)
    """

    function = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_DropoutVariant):
    """Alpha dropout of whole channels of ``(N, C, *)`` (see ``F.feature_alpha_dropout``)."""

    function = staticmethod(feature_alpha_dropout)
