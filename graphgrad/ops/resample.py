"""Rearranging channels and pixels, as PyTorch's ``F.pixel_shuffle``, ``F.pixel_unshuffle`` and
``F.channel_shuffle``. The pixel shuffles are ops (each the other's adjoint; ``PixelShuffle`` is ONNX's
``DepthToSpace``); the channel shuffle is a reshape, a transpose and a reshape."""
from __future__ import annotations

from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.conv import _checked, _shape_of, _shown
from graphgrad.ops.shape import reshape, transpose


def _lead(fn: str, shape: tuple, known: int) -> tuple:
    """The leading (batch) sizes of ``shape`` before its last ``known`` axes, with one unknown size as
    ``-1`` for reshape; the last ``known`` sizes must be known."""
    if None in shape[-known:]:
        raise ShapeError(f"{fn}: needs known channel and spatial sizes, got input shape {_shown(shape)}")
    lead = shape[:-known]
    if sum(s is None for s in lead) > 1:
        raise ShapeError(f"{fn}: at most one unknown leading dimension, got input shape {_shown(shape)}")
    return tuple(-1 if s is None else s for s in lead)


class PixelShuffle(Op):
    """``(*, C * r^2, H, W) -> (*, C, H * r, W * r)``: ``out[..., c, h*r + i, w*r + j] =
    x[..., c*r^2 + i*r + j, h, w]`` (ONNX ``DepthToSpace`` in CRD mode); its adjoint is
    :class:`PixelUnshuffle`."""

    props = ("factor",)

    def __init__(self, factor: int):
        self.factor = int(factor)

    def infer(self, x):
        r = self.factor
        c, h, w = x.shape[-3:]
        return TensorSpec(tuple(x.shape[:-3]) + (c // (r * r), _times(h, r), _times(w, r)), x.dtype)

    def forward(self, xp, x):
        r = self.factor
        *lead, c, h, w = x.shape
        y = x.reshape((-1, c // (r * r), r, r, h, w)).transpose(0, 1, 4, 2, 5, 3)
        return xp.ascontiguousarray(y).reshape(tuple(lead) + (c // (r * r), h * r, w * r))

    def backward(self, inputs, out, g):
        return (PixelUnshuffle(self.factor).apply(g),)


class PixelUnshuffle(Op):
    """``(*, C, H * r, W * r) -> (*, C * r^2, H, W)``, the inverse (and adjoint) of :class:`PixelShuffle`."""

    props = ("factor",)

    def __init__(self, factor: int):
        self.factor = int(factor)

    def infer(self, x):
        r = self.factor
        c, h, w = x.shape[-3:]
        return TensorSpec(tuple(x.shape[:-3]) + (c * r * r, h // r, w // r), x.dtype)

    def forward(self, xp, x):
        r = self.factor
        *lead, c, h, w = x.shape
        y = x.reshape((-1, c, h // r, r, w // r, r)).transpose(0, 1, 3, 5, 2, 4)
        return xp.ascontiguousarray(y).reshape(tuple(lead) + (c * r * r, h // r, w // r))

    def backward(self, inputs, out, g):
        return (PixelShuffle(self.factor).apply(g),)


def _times(size, r: int):
    return None if size is None else size * r


def _check_shuffle(fn: str, input, factor: int, what: str) -> tuple:
    shape = _shape_of(input)
    if len(shape) < 3:
        raise ShapeError(f"{fn}: expected at least 3 dimensions (*, C, H, W), got shape {_shown(shape)}")
    if int(factor) < 1:
        raise ValueError(f"{fn}: {what} must be positive, got {factor}")
    if None in shape[-3:]:
        raise ShapeError(f"{fn}: needs known channel and spatial sizes, got input shape {_shown(shape)}")
    return shape


def pixel_shuffle(input, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)``, as PyTorch's ``F.pixel_shuffle``:
    ``out[..., c, h * r + i, w * r + j] = input[..., c * r^2 + i * r + j, h, w]``.

    Examples:
        >>> gg.pixel_shuffle(gg.randn(1, 8, 3, 3), 2).shape
        (1, 2, 6, 6)
    """
    fn, r = "pixel_shuffle", int(upscale_factor)
    shape = _check_shuffle(fn, input, upscale_factor, "upscale_factor")
    if shape[-3] % (r * r):
        raise ShapeError(f"{fn}: the channel count {shape[-3]} of input {_shown(shape)} is not divisible by "
                         f"upscale_factor**2 = {r * r}")
    return _checked(PixelShuffle(r), input)


def pixel_unshuffle(input, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)``, the inverse of
    :func:`pixel_shuffle`, as PyTorch's ``F.pixel_unshuffle``.

    Examples:
        >>> gg.pixel_unshuffle(gg.randn(1, 2, 6, 6), 2).shape
        (1, 8, 3, 3)
    """
    fn, r = "pixel_unshuffle", int(downscale_factor)
    shape = _check_shuffle(fn, input, downscale_factor, "downscale_factor")
    if shape[-2] % r or shape[-1] % r:
        raise ShapeError(f"{fn}: the spatial size of input {_shown(shape)} is not divisible by "
                         f"downscale_factor = {r}")
    return _checked(PixelUnshuffle(r), input)


def channel_shuffle(input, groups: int) -> Tensor:
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups, as PyTorch's
    ``F.channel_shuffle`` (ShuffleNet): channel ``g * (C / groups) + k`` moves to ``k * groups + g``.

    Examples:
        >>> gg.channel_shuffle(gg.arange(6.0).reshape(1, 6, 1), 2).reshape(-1).tolist()
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    fn, g = "channel_shuffle", int(groups)
    shape = _shape_of(input)
    if len(shape) < 3:
        raise ShapeError(f"{fn}: expected at least 3 dimensions (N, C, *), got shape {_shown(shape)}")
    if g < 1:
        raise ValueError(f"{fn}: groups must be positive, got {groups}")
    lead = _lead(fn, shape, len(shape) - 1)
    c, rest = shape[1], tuple(shape[2:])
    if c % g:
        raise ShapeError(f"{fn}: the channel count {c} of input {_shown(shape)} is not divisible by groups = {g}")
    x = reshape(input, lead + (g, c // g) + rest)
    x = transpose(x, (0, 2, 1) + tuple(range(3, 3 + len(rest))))
    return reshape(x, lead + (c,) + rest)
