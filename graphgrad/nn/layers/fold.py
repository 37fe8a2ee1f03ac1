"""Sliding-window layers, as PyTorch's: Unfold (im2col) and Fold (col2im), ``F.unfold`` and ``F.fold``
with the arguments kept on the module."""
from __future__ import annotations

from typing import Sequence, Union

from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops.im2col import fold, unfold

__all__ = ["Unfold", "Fold"]

IntOrPair = Union[int, Sequence[int]]


class Unfold(Module):
    """The sliding ``kernel_size`` windows of ``(N, C, H, W)`` images as columns (see ``F.unfold``).

    Shapes: (N, C, H, W) -> (N, C * kh * kw, L), L the number of windows.

    Examples:
        >>> gg.nn.Unfold(kernel_size=(2, 3))(gg.randn(2, 5, 3, 4)).shape
        (2, 30, 4)
    """

    def __init__(self, kernel_size: IntOrPair, dilation: IntOrPair = 1, padding: IntOrPair = 0,
                 stride: IntOrPair = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Columns of windows summed back into ``(N, C, *output_size)`` images, the inverse arrangement of
    Unfold (see ``F.fold``).

    Shapes: (N, C * kh * kw, L) -> (N, C, H, W) with (H, W) = ``output_size``.

    Examples:
        >>> gg.nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(gg.randn(1, 12, 12)).shape
        (1, 3, 4, 5)
    """

    def __init__(self, output_size: IntOrPair, kernel_size: IntOrPair, dilation: IntOrPair = 1,
                 padding: IntOrPair = 0, stride: IntOrPair = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
