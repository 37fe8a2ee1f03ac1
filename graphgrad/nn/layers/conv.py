"""Convolution layers: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d.
Parameter names, shapes and default initialization follow PyTorch. (Pooling layers: pooling.py.)"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from graphgrad.core.creation import empty
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError, check_count
from graphgrad.nn import init
from graphgrad.nn.functional import pad
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

IntOrTuple = Union[int, Sequence[int]]
_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, nd: int, what: str, layer: str) -> tuple:
    if isinstance(value, int):
        return (int(value),) * nd
    value = tuple(int(v) for v in value)
    if len(value) != nd:
        raise ValueError(f"{layer}: {what} must be an int or a {nd}-tuple, got {value}")
    return value


class _ConvNd(Module):
    """What Conv1d/Conv2d and their transposes share: parameters, initialization, repr."""

    nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrTuple, stride: IntOrTuple,
                 padding: Union[IntOrTuple, str], dilation: IntOrTuple, groups: int, bias: bool,
                 padding_mode: str, output_padding: IntOrTuple = 0, dtype=None, device: Optional[str] = None,
                 generator: Optional[Generator] = None) -> None:
        super().__init__()
        layer, nd = type(self).__name__, self.nd
        in_channels, out_channels = check_count(layer, "in_channels", in_channels), check_count(layer, "out_channels",
                                                                                                 out_channels)
        groups = check_count(layer, "groups", groups, least=1)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{layer}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{layer}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
        if self.transposed and padding_mode != "zeros":
            raise ValueError(f"{layer}: only padding_mode='zeros' is supported, got {padding_mode!r}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", layer)
        self.stride = _tuple(stride, nd, "stride", layer)
        self.dilation = _tuple(dilation, nd, "dilation", layer)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{layer}: padding must be an int, a tuple, 'same' or 'valid', got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{layer}: padding='same' is not supported for strided convolutions "
                                 f"(stride={self.stride})")
            self.padding = padding
        else:
            self.padding = _tuple(padding, nd, "padding", layer)
        self.output_padding = _tuple(output_padding, nd, "output_padding", layer)
        self.groups, self.padding_mode = int(groups), padding_mode
        self._generator = generator
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(self.out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming uniform with a = sqrt(5) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the
        bias (``fan_in`` from the weight's shape), as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=self._generator)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound, generator=self._generator)

    def _padding_pairs(self) -> list:
        """Explicit (before, after) padding per spatial axis, for non-zero padding modes."""
        if self.padding == "valid":
            return [(0, 0)] * self.nd
        if self.padding == "same":
            pairs = []
            for k, d in zip(self.kernel_size, self.dilation):
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
            return pairs
        return [(p, p) for p in self.padding]

    def _prepare(self, input: Tensor):
        """The input padded by ``padding_mode`` (if not zeros) and the padding left for the op."""
        if self.padding_mode == "zeros":
            return input, self.padding
        flat = []
        for before, after in reversed(self._padding_pairs()):
            flat += [before, after]
        return pad(input, tuple(flat), mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.nd:
            s += f", padding={self.padding!r}"
        if self.dilation != (1,) * self.nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode!r}"
        return s


class _Conv(_ConvNd):
    """Conv1d and Conv2d: PyTorch's constructor, and a forward through the functional ``function``."""

    function = staticmethod(conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrTuple, stride: IntOrTuple = 1,
                 padding: Union[IntOrTuple, str] = 0, dilation: IntOrTuple = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", dtype=None, device: Optional[str] = None,
                 generator: Optional[Generator] = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 0, dtype, device, generator)

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._prepare(input)
        return self.function(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)`` inputs.

    Args:
        in_channels, out_channels: channels of the input and output.
        kernel_size, stride, dilation: int or 1-tuple.
        padding: int, 1-tuple, ``'valid'`` or ``'same'`` (stride 1 only).
        groups: split the channels into independent groups.
        bias: learn a per-channel bias.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Shapes: input (N, C_in, L) -> (N, C_out, L_out), ``L_out = (L + 2p - d(k-1) - 1) // s + 1``.
    Parameters: ``weight`` (C_out, C_in / groups, k), ``bias`` (C_out,).

    Examples:
        >>> gg.nn.Conv1d(16, 33, 3, stride=2)(gg.randn(20, 16, 50)).shape
        (20, 33, 24)
    """

    nd = 1

    function = staticmethod(conv1d)


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)`` inputs (cross-correlation, as PyTorch).

    Args:
        in_channels, out_channels: channels of the input and output.
        kernel_size, stride, dilation: int or pair.
        padding: int, pair, ``'valid'`` or ``'same'`` (stride 1 only).
        groups: split the channels into independent groups (``groups == in_channels``: depthwise).
        bias: learn a per-channel bias.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Shapes: input (N, C_in, H, W) -> (N, C_out, H_out, W_out),
    ``H_out = (H + 2 pH - dH (kH - 1) - 1) // sH + 1`` (same for W).
    Parameters: ``weight`` (C_out, C_in / groups, kH, kW), ``bias`` (C_out,).

    Examples:
        >>> gg.nn.Conv2d(3, 8, 3, padding=1)(gg.randn(2, 3, 16, 16)).shape
        (2, 8, 16, 16)
    """

    nd = 2

    function = staticmethod(conv2d)


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)`` inputs (cross-correlation, as PyTorch).

    Args:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode:
            as Conv2d, with triples for the spatial arguments.

    Shapes: input (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out),
    ``D_out = (D + 2 pD - dD (kD - 1) - 1) // sD + 1`` (same for H, W).
    Parameters: ``weight`` (C_out, C_in / groups, kD, kH, kW), ``bias`` (C_out,).

    Examples:
        >>> gg.nn.Conv3d(2, 4, 3, padding=1)(gg.randn(1, 2, 5, 6, 6)).shape
        (1, 4, 5, 6, 6)
    """

    nd = 3

    function = staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    transposed = True
    function = staticmethod(conv_transpose2d)  # the functional op (conv_transpose1d / 2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrTuple, stride: IntOrTuple = 1,
                 padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1, bias: bool = True,
                 dilation: IntOrTuple = 1, padding_mode: str = "zeros", dtype=None, device: Optional[str] = None,
                 generator: Optional[Generator] = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, dtype, device, generator)

    def forward(self, input: Tensor, output_size: Optional[Sequence[int]] = None) -> Tensor:
        return self.function(input, self.weight, self.bias, self.stride, self.padding,
                             self._output_padding(input, output_size), self.groups, self.dilation)

    def _output_padding(self, input: Tensor, output_size: Optional[Sequence[int]]) -> tuple:
        """The output padding giving ``output_size`` (PyTorch's ``forward(input, output_size)``)."""
        if output_size is None:
            return self.output_padding
        output_size = tuple(int(s) for s in output_size)[-self.nd:]
        if len(output_size) != self.nd:
            raise ValueError(f"{type(self).__name__}: output_size must have {self.nd} spatial sizes, "
                             f"got {output_size}")
        spatial = tuple(input.shape[-self.nd:])
        result = []
        for i, (size, want) in enumerate(zip(spatial, output_size)):
            if size is None:
                raise ShapeError(f"{type(self).__name__}: output_size needs known spatial input sizes, got "
                                 f"input shape {tuple(input.shape)}")
            smallest = ((size - 1) * self.stride[i] - 2 * self.padding[i] +
                        self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            if not smallest <= want < smallest + self.stride[i]:
                raise ShapeError(f"{type(self).__name__}: requested output size {output_size} is not reachable "
                                 f"from input shape {tuple(input.shape)}: spatial size {i} must lie in "
                                 f"[{smallest}, {smallest + self.stride[i] - 1}]")
            result.append(want - smallest)
        return tuple(result)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of Conv1d with respect to its input).

    Shapes: input (N, C_in, L) -> (N, C_out, (L - 1) s - 2p + d(k - 1) + output_padding + 1).
    Parameters: ``weight`` (C_in, C_out / groups, k), ``bias`` (C_out,).
    """

    nd = 1
    function = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution ("deconvolution"), as PyTorch's.

    Args:
        in_channels, out_channels, kernel_size, stride, dilation, groups, bias: as Conv2d.
        padding: int or pair: the full output is cropped by ``padding`` on each side.
        output_padding: extra size added at the bottom/right (smaller than the stride).

    Shapes: input (N, C_in, H, W) -> (N, C_out, H_out, W_out),
    ``H_out = (H - 1) sH - 2 pH + dH (kH - 1) + output_padding + 1``; ``forward(input, output_size)``
    picks the output padding that gives ``output_size``.
    Parameters: ``weight`` (C_in, C_out / groups, kH, kW), ``bias`` (C_out,).

    Examples:
        >>> up = gg.nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1)
        >>> up(gg.randn(1, 16, 12, 12), output_size=(24, 24)).shape
        (1, 8, 24, 24)
    """

    nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution, as PyTorch's.

    Args: as ConvTranspose2d, with triples for the spatial arguments.

    Shapes: input (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out),
    ``D_out = (D - 1) sD - 2 pD + dD (kD - 1) + output_padding + 1`` (same for H, W).
    Parameters: ``weight`` (C_in, C_out / groups, kD, kH, kW), ``bias`` (C_out,).

    Examples:
        >>> gg.nn.ConvTranspose3d(4, 2, 2, stride=2)(gg.randn(1, 4, 3, 3, 3)).shape
        (1, 2, 6, 6, 6)
    """

    nd = 3
    function = staticmethod(conv_transpose3d)
