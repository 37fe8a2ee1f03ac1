"""Lazy convolution layers, as PyTorch's: LazyConv1d/2d/3d and LazyConvTranspose1d/2d/3d take no
``in_channels``; the weight is created (and the weight and bias initialized, as PyTorch) from the
channel count of the first input. They are then ordinary Conv / ConvTranspose layers (subclasses)."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from graphgrad.core.creation import empty
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.layers.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from graphgrad.nn.parameter import Parameter

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]

IntOrTuple = Union[int, Sequence[int]]


class _LazyConv:
    """The lazy part: built with ``in_channels = groups`` (the smallest valid count), its weight an
    empty placeholder (which ``to(dtype)`` / ``to(device)`` convert, as PyTorch's uninitialized
    parameters) until the first call sets ``in_channels`` from the input."""

    def _lazy_init(self, dtype, device) -> None:
        self.in_channels = 0
        self._set_weight(Parameter(empty(0, dtype=dtype, device=device)))

    def _set_weight(self, weight: Parameter) -> None:
        self.weight = weight
        self._parameters.move_to_end("bias")  # PyTorch's order: weight, bias

    @property
    def is_lazy(self) -> bool:
        """Whether the weight is still waiting for the first input."""
        return self.in_channels == 0

    def reset_parameters(self) -> None:
        if self.in_channels:
            super().reset_parameters()

    def _materialize(self, input: Tensor) -> None:
        shape = tuple(input.shape)
        if len(shape) not in (self.nd + 1, self.nd + 2) or shape[-self.nd - 1] is None:
            raise ShapeError(f"{type(self).__name__}: the first input must be {self.nd + 1}-D or {self.nd + 2}-D with "
                             f"a known channel count, got shape {shape}")
        channels = int(shape[-self.nd - 1])
        if channels % self.groups:
            raise ShapeError(f"{type(self).__name__}: the input's {channels} channels are not divisible by "
                             f"groups={self.groups}")
        self.in_channels = channels
        if self.transposed:
            weight_shape = (channels, self.out_channels // self.groups) + self.kernel_size
        else:
            weight_shape = (self.out_channels, channels // self.groups) + self.kernel_size
        placeholder = self.weight
        self._set_weight(Parameter(empty(*weight_shape, dtype=placeholder.dtype, device=placeholder.device)))
        self.reset_parameters()

    def forward(self, input: Tensor, *args, **kwargs) -> Tensor:
        if self.is_lazy:
            self._materialize(input)
        return super().forward(input, *args, **kwargs)


class _LazyConvNd(_LazyConv):
    def __init__(self, out_channels: int, kernel_size: IntOrTuple, stride: IntOrTuple = 1,
                 padding: Union[IntOrTuple, str] = 0, dilation: IntOrTuple = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", dtype=None, device: Optional[str] = None,
                 generator: Optional[Generator] = None) -> None:
        super().__init__(groups, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         dtype, device, generator)
        self._lazy_init(dtype, device)


class _LazyConvTransposeNd(_LazyConv):
    def __init__(self, out_channels: int, kernel_size: IntOrTuple, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                 output_padding: IntOrTuple = 0, groups: int = 1, bias: bool = True, dilation: IntOrTuple = 1,
                 padding_mode: str = "zeros", dtype=None, device: Optional[str] = None,
                 generator: Optional[Generator] = None) -> None:
        super().__init__(groups, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation,
                         padding_mode, dtype, device, generator)
        self._lazy_init(dtype, device)


class LazyConv1d(_LazyConvNd, Conv1d):
    """Conv1d whose ``in_channels`` is read from the first input (see Conv1d for the arguments).

    Examples:
        >>> conv = gg.nn.LazyConv1d(8, 3)
        >>> conv(gg.randn(2, 5, 10)).shape, conv.weight.shape
        ((2, 8, 8), (8, 5, 3))
    """


class LazyConv2d(_LazyConvNd, Conv2d):
    """Conv2d whose ``in_channels`` is read from the first input (see Conv2d for the arguments).

    Examples:
        >>> gg.nn.LazyConv2d(16, 3, padding=1)(gg.randn(1, 3, 8, 8)).shape
        (1, 16, 8, 8)
    """


class LazyConv3d(_LazyConvNd, Conv3d):
    """Conv3d whose ``in_channels`` is read from the first input (see Conv3d for the arguments)."""


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    """ConvTranspose1d whose ``in_channels`` is read from the first input."""


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    """ConvTranspose2d whose ``in_channels`` is read from the first input.

    Examples:
        >>> gg.nn.LazyConvTranspose2d(4, 2, stride=2)(gg.randn(1, 6, 3, 3)).shape
        (1, 4, 6, 6)
    """


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    """ConvTranspose3d whose ``in_channels`` is read from the first input."""
