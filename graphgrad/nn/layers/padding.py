"""Padding layers, as PyTorch's: ConstantPad1d/2d/3d, ZeroPad1d/2d/3d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d, CircularPad1d/2d/3d: ``F.pad`` of the last 1, 2 or 3 axes with the module's
amounts. ``padding`` is an int (every side) or ``2 * nd`` ints ``(left, right, top, bottom, front,
back)``, the last axis first."""
from __future__ import annotations

from typing import Sequence, Union

from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.functional import pad
from graphgrad.nn.module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    nd = 1
    mode = "constant"

    def __init__(self, padding: Union[int, Sequence[int]], value: float = 0.0) -> None:
        super().__init__()
        n = 2 * self.nd
        if isinstance(padding, int):
            padding = (padding,) * n
        padding = tuple(int(p) for p in padding)
        if len(padding) != n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {n} ints, got {padding}")
        self.padding, self.value = padding, float(value)

    def forward(self, input: Tensor) -> Tensor:
        if self.mode != "constant" and input.ndim not in (self.nd + 1, self.nd + 2):
            raise ShapeError(f"{type(self).__name__}: expected a {self.nd + 1}-D or {self.nd + 2}-D input, got "
                             f"shape {tuple(input.shape)}")
        return pad(input, self.padding, self.mode, self.value)

    def extra_repr(self) -> str:
        return f"{self.padding}, value={self.value}" if self.mode == "constant" else f"{self.padding}"


class _ZeroPadNd(_PadNd):
    def __init__(self, padding: Union[int, Sequence[int]]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ModePadNd(_PadNd):
    def __init__(self, padding: Union[int, Sequence[int]]) -> None:
        super().__init__(padding)


class ConstantPad1d(_PadNd):
    """Pad the last axis with ``value``: ``padding`` int or ``(left, right)``.

    Shapes: (*, W) -> (*, W + left + right).

    Examples:
        >>> gg.nn.ConstantPad1d((1, 2), 3.5)(gg.zeros(1, 2, 4)).shape
        (1, 2, 7)
    """

    nd = 1


class ConstantPad2d(_PadNd):
    """Pad the last two axes with ``value``: ``padding`` int or ``(left, right, top, bottom)``.

    Shapes: (*, H, W) -> (*, H + top + bottom, W + left + right).

    Examples:
        >>> gg.nn.ConstantPad2d(1, -1.0)(gg.zeros(1, 2, 3, 3)).shape
        (1, 2, 5, 5)
    """

    nd = 2


class ConstantPad3d(_PadNd):
    """Pad the last three axes with ``value``: ``padding`` int or ``(left, right, top, bottom, front, back)``.

    Shapes: (*, D, H, W) -> (*, D + front + back, H + top + bottom, W + left + right).
    """

    nd = 3


class ZeroPad1d(_ZeroPadNd):
    """Zero padding of the last axis (``padding`` int or ``(left, right)``). Shapes: (*, W) -> (*, W_out)."""

    nd = 1


class ZeroPad2d(_ZeroPadNd):
    """Zero padding of the last two axes (``padding`` int or ``(left, right, top, bottom)``).

    Examples:
        >>> gg.nn.ZeroPad2d((1, 1, 2, 0))(gg.ones(1, 1, 3, 3)).shape
        (1, 1, 5, 5)
    """

    nd = 2


class ZeroPad3d(_ZeroPadNd):
    """Zero padding of the last three axes (``padding`` int or 6 ints, the last axis first)."""

    nd = 3


class ReflectionPad1d(_ModePadNd):
    """Reflection padding of the last axis (the edge not repeated: ``[1, 2, 3]`` padded by 2 on the left
    gives ``[3, 2, 1, 2, 3]``); each amount must be smaller than the axis. Shapes: (C, W) or (N, C, W).

    Examples:
        >>> gg.nn.ReflectionPad1d(2)(gg.arange(4.0).reshape(1, 1, 4)).shape
        (1, 1, 8)
    """

    nd, mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    """Reflection padding of the last two axes. Shapes: (C, H, W) or (N, C, H, W)."""

    nd, mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    """Reflection padding of the last three axes. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    nd, mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    """Edge-value padding of the last axis. Shapes: (C, W) or (N, C, W).

    Examples:
        >>> gg.nn.ReplicationPad1d((0, 2))(gg.tensor([[[1.0, 2.0]]])).tolist()
        [[[1.0, 2.0, 2.0, 2.0]]]
    """

    nd, mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    """Edge-value padding of the last two axes. Shapes: (C, H, W) or (N, C, H, W)."""

    nd, mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    """Edge-value padding of the last three axes. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    nd, mode = 3, "replicate"


class CircularPad1d(_ModePadNd):
    """Wrap-around padding of the last axis (the left pad is the axis's end). Shapes: (C, W) or (N, C, W).

    Examples:
        >>> gg.nn.CircularPad1d(1)(gg.tensor([[[1.0, 2.0, 3.0]]])).tolist()
        [[[3.0, 1.0, 2.0, 3.0, 1.0]]]
    """

    nd, mode = 1, "circular"


class CircularPad2d(_ModePadNd):
    """Wrap-around padding of the last two axes. Shapes: (C, H, W) or (N, C, H, W)."""

    nd, mode = 2, "circular"


class CircularPad3d(_ModePadNd):
    """Wrap-around padding of the last three axes. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    nd, mode = 3, "circular"
