"""Resampling layers, as PyTorch's: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d (``F.interpolate``),
PixelShuffle, PixelUnshuffle and ChannelShuffle."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops.pool import interpolate
from graphgrad.ops.resample import channel_shuffle, pixel_shuffle, pixel_unshuffle

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
           "ChannelShuffle"]

Size = Optional[Union[int, Sequence[int]]]
Scale = Optional[Union[float, Sequence[float]]]


class Upsample(Module):
    """Resize 1-, 2- or 3-D maps: ``F.interpolate`` with the module's arguments.

    Args:
        size: output spatial size; or scale_factor: multiplier(s).
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``, ``'bicubic'``, ``'trilinear'``
            or ``'area'``.
        align_corners: linear modes only. recompute_scale_factor: as ``F.interpolate``.

    Shapes: (N, C, *S) -> (N, C, *S_out).

    Examples:
        >>> gg.nn.Upsample(scale_factor=2, mode="bilinear")(gg.randn(1, 3, 4, 4)).shape
        (1, 3, 8, 8)
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None, mode: str = "nearest",
                 align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None) -> None:
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)``: ``Upsample(size, scale_factor, 'nearest')``.

    Examples:
        >>> gg.nn.UpsamplingNearest2d(scale_factor=2)(gg.randn(1, 1, 2, 2)).shape
        (1, 1, 4, 4)
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` with aligned corners, as PyTorch's
    ``Upsample(size, scale_factor, 'bilinear', align_corners=True)``.

    Examples:
        >>> gg.nn.UpsamplingBilinear2d(scale_factor=2)(gg.randn(1, 1, 2, 2)).shape
        (1, 1, 4, 4)
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """``(*, C * r^2, H, W) -> (*, C, H * r, W * r)`` (see ``F.pixel_shuffle``; sub-pixel convolution).

    Examples:
        >>> gg.nn.PixelShuffle(3)(gg.randn(1, 9, 4, 4)).shape
        (1, 1, 12, 12)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = int(upscale_factor)

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r) -> (*, C * r^2, H, W)``, the inverse of PixelShuffle (see ``F.pixel_unshuffle``).

    Examples:
        >>> gg.nn.PixelUnshuffle(3)(gg.randn(1, 1, 12, 12)).shape
        (1, 9, 4, 4)
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = int(downscale_factor)

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups (see ``F.channel_shuffle``).

    Examples:
        >>> gg.nn.ChannelShuffle(2)(gg.randn(1, 4, 2, 2)).shape
        (1, 4, 2, 2)
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = int(groups)

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
