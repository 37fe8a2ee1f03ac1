"""Channel dropout and alpha dropout, as PyTorch's ``F.dropout1d``/``2d``/``3d``, ``F.alpha_dropout`` and
``F.feature_alpha_dropout``: a random keep mask (``DropoutMask``, drawn anew on every run) times the
input, so gradients, graph mode and tracing come from those ops.

Channel ("feature") dropout draws one mask value per (sample, channel) and broadcasts it over the
spatial axes; alpha dropout keeps the mean and variance of SELU activations by sending dropped elements
to SELU's negative saturation value and rescaling (``a * x + b``)."""
from __future__ import annotations

import math
from typing import Optional

from graphgrad.core.op import as_tensor_args
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.nn import DropoutMask

#: SELU's ``scale * alpha``: the value ``-SELU(-inf)``, where alpha dropout sends dropped elements
_SELU_SATURATION = 1.7580993408473766


def _check_p(fn: str, p: float) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: p must be in [0, 1], got {p}")
    return float(p)


def _keep_mask(x: Tensor, p: float, channel_axis: Optional[int], generator) -> Tensor:
    """1 (kept, probability ``1 - p``) or 0 per element, or per channel (the same for every spatial
    position) when ``channel_axis`` is given: shape ``x.shape[:channel_axis + 1] + (1, ...)``."""
    like = x
    if channel_axis is not None:
        like = x[(slice(None),) * (channel_axis + 1) + (slice(0, 1),) * (x.ndim - channel_axis - 1)]
    return DropoutMask(p, generator).apply(like) * (1.0 - p)


def _feature_dropout(fn: str, x, p: float, training: bool, channel_axis: int, generator) -> Tensor:
    p = _check_p(fn, p)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    return x * (_keep_mask(x, p, channel_axis, generator) * (1.0 / (1.0 - p)))


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False,
              generator: Optional[Generator] = None) -> Tensor:
    """Channel dropout of ``(N, C, L)`` (or unbatched ``(C, L)``): each channel of each sample is zeroed
    with probability ``p`` as a whole, the rest scaled by ``1 / (1 - p)``; the identity when not
    ``training``. (``inplace`` is accepted and ignored.)

    Examples:
        >>> y = gg.dropout1d(gg.ones(2, 4, 5), 0.5, generator=gg.Generator(0))   # rows all 0 or all 2
    """
    (input,) = as_tensor_args(input)
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape {tuple(input.shape)}")
    return _feature_dropout("dropout1d", input, p, training, input.ndim - 2, generator)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False,
              generator: Optional[Generator] = None) -> Tensor:
    """Channel dropout of ``(N, C, H, W)``: whole channels zeroed with probability ``p``, the rest scaled
    by ``1 / (1 - p)``. As PyTorch, a 3-D input is read as ``(N, C, L)`` (axis 1 is the channel axis
    whatever the rank).

    Examples:
        >>> y = gg.dropout2d(gg.ones(2, 4, 3, 3), 0.25, generator=gg.Generator(0))
    """
    (input,) = as_tensor_args(input)
    if input.ndim < 2:
        raise ShapeError(f"dropout2d: expected at least a 2-D input, got shape {tuple(input.shape)}")
    return _feature_dropout("dropout2d", input, p, training, 1, generator)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False,
              generator: Optional[Generator] = None) -> Tensor:
    """Channel dropout of ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``): whole channels zeroed with
    probability ``p``, the rest scaled by ``1 / (1 - p)``.

    Examples:
        >>> y = gg.dropout3d(gg.ones(2, 4, 2, 3, 3), 0.5, generator=gg.Generator(0))
    """
    (input,) = as_tensor_args(input)
    if input.ndim < 2:
        raise ShapeError(f"dropout3d: expected at least a 2-D input, got shape {tuple(input.shape)}")
    return _feature_dropout("dropout3d", input, p, training, 0 if input.ndim == 4 else 1, generator)


def _alpha_dropout(fn: str, x, p: float, training: bool, channel_axis: Optional[int], generator) -> Tensor:
    p = _check_p(fn, p)
    (x,) = as_tensor_args(x)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    a = 1.0 / math.sqrt((_SELU_SATURATION ** 2 * p + 1.0) * (1.0 - p))
    keep = _keep_mask(x, p, channel_axis, generator)
    # kept: a * x + a * s * p; dropped: a * s * (p - 1), with s the saturation value
    return x * (keep * a) + (keep - 1.0) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False,
                  generator: Optional[Generator] = None) -> Tensor:
    """Alpha dropout (for SELU networks), as PyTorch's ``F.alpha_dropout``: each element is dropped with
    probability ``p`` to SELU's saturation value, then all are rescaled so that zero-mean unit-variance
    inputs keep their mean and variance. The identity when not ``training`` (PyTorch's default here).

    Examples:
        >>> y = gg.alpha_dropout(gg.randn(4, 5), 0.2, training=True, generator=gg.Generator(0))
    """
    return _alpha_dropout("alpha_dropout", input, p, training, None, generator)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False,
                          generator: Optional[Generator] = None) -> Tensor:
    """Alpha dropout of whole channels of ``(N, C, *)`` (one draw per sample and channel), as PyTorch's
    ``F.feature_alpha_dropout``.

    Examples:
        >>> y = gg.feature_alpha_dropout(gg.randn(2, 4, 3), 0.2, training=True)
    """
    (input,) = as_tensor_args(input)
    if input.ndim < 2:
        raise ShapeError(f"feature_alpha_dropout: expected at least a 2-D input, got shape {tuple(input.shape)}")
    return _alpha_dropout("feature_alpha_dropout", input, p, training, 1, generator)
