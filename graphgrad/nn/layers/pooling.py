"""Pooling layers, as PyTorch's: MaxPool1d/2d/3d, AvgPool1d/2d/3d, MaxUnpool1d/2d/3d,
AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, LPPool1d/2d/3d. Each is its functional form
(``F.max_pool2d``...) with the arguments kept on the module."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from graphgrad.ops.pool_fractional import fractional_max_pool2d, fractional_max_pool3d
from graphgrad.ops.pool_nd import (adaptive_avg_pool1d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
                                   adaptive_max_pool3d, avg_pool1d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                                   max_pool1d, max_pool3d, max_unpool1d, max_unpool2d, max_unpool3d)

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d",
           "MaxUnpool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]

IntOrTuple = Union[int, Sequence[int]]


# ---- max pooling ------------------------------------------------------------------------------------
class _MaxPoolNd(Module):
    function = staticmethod(max_pool2d)

    def __init__(self, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
                 dilation: IntOrTuple = 1, return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = bool(return_indices), bool(ceil_mode)

    def forward(self, input: Tensor):
        return self.function(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                             self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling (see ``F.max_pool1d``).

    Args:
        kernel_size; stride (default ``kernel_size``); padding (``-inf``); dilation; return_indices:
        also return the position of each window's maximum; ceil_mode: round the output length up.

    Shapes: (N, C, L) or (C, L) -> (N, C, L_out), ``L_out = (L + 2p - d(k-1) - 1) // s + 1``.

    Examples:
        >>> gg.nn.MaxPool1d(2)(gg.randn(1, 3, 8)).shape
        (1, 3, 4)
    """

    function = staticmethod(max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (see ``F.max_pool2d``).

    Args:
        kernel_size: window size; stride: window step (default ``kernel_size``); padding: implicit
        ``-inf`` padding; dilation; return_indices: also return the flat argmax of each window;
        ceil_mode: round the output size up.

    Shapes: (N, C, H, W) -> (N, C, H_out, W_out), ``H_out = (H + 2p - d(k-1) - 1) // s + 1``.

    Examples:
        >>> gg.nn.MaxPool2d(2)(gg.randn(1, 3, 8, 8)).shape
        (1, 3, 4, 4)
    """


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling (see ``F.max_pool3d``); arguments as MaxPool2d, with triples.

    Shapes: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Examples:
        >>> gg.nn.MaxPool3d(2)(gg.randn(1, 3, 4, 4, 4)).shape
        (1, 3, 2, 2, 2)
    """

    function = staticmethod(max_pool3d)


# ---- average pooling --------------------------------------------------------------------------------
class AvgPool1d(Module):
    """1-D average pooling (see ``F.avg_pool1d``).

    Args:
        kernel_size, stride (default ``kernel_size``), padding (zeros); ceil_mode; count_include_pad:
            count padding zeros in the divisor.

    Shapes: (N, C, L) -> (N, C, L_out), ``L_out = (L + 2p - k) // s + 1``.

    Examples:
        >>> gg.nn.AvgPool1d(2)(gg.randn(1, 3, 8)).shape
        (1, 3, 4)
    """

    def __init__(self, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode, self.count_include_pad = padding, bool(ceil_mode), bool(count_include_pad)

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    function = staticmethod(avg_pool2d)

    def __init__(self, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: Optional[int] = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, bool(ceil_mode)
        self.count_include_pad, self.divisor_override = bool(count_include_pad), divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling (see ``F.avg_pool2d``).

    Args:
        kernel_size, stride (default ``kernel_size``), padding (zeros); ceil_mode; count_include_pad:
            count padding zeros in the divisor; divisor_override: divide by this instead.

    Shapes: (N, C, H, W) -> (N, C, H_out, W_out), ``H_out = (H + 2p - k) // s + 1``.

    Examples:
        >>> gg.nn.AvgPool2d(2)(gg.randn(1, 3, 8, 8)).shape
        (1, 3, 4, 4)
    """


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling (see ``F.avg_pool3d``); arguments as AvgPool2d, with triples.

    Shapes: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out).

    Examples:
        >>> gg.nn.AvgPool3d(2)(gg.randn(1, 3, 4, 4, 4)).shape
        (1, 3, 2, 2, 2)
    """

    function = staticmethod(avg_pool3d)


class _FractionalMaxPoolNd(Module):
    function = staticmethod(fractional_max_pool2d)

    def __init__(self, kernel_size: IntOrTuple, output_size: Optional[IntOrTuple] = None,
                 output_ratio: Optional[Union[float, Sequence[float]]] = None, return_indices: bool = False,
                 _random_samples=None) -> None:
        super().__init__()
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{type(self).__name__}: give exactly one of output_size and output_ratio")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices, self._random_samples = bool(return_indices), _random_samples

    def forward(self, input: Tensor):
        return self.function(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                             self._random_samples)

    def extra_repr(self) -> str:
        what = f"output_size={self.output_size}" if self.output_size is not None else f"output_ratio={self.output_ratio}"
        return f"kernel_size={self.kernel_size}, {what}"


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling (see ``F.fractional_max_pool2d``): ``kernel_size`` windows whose starts
    advance by a random non-integer step, to ``output_size`` or ``output_ratio`` of the input; a new draw
    per (sample, channel) on every call unless ``_random_samples`` is given.

    Shapes: (N, C, H, W) -> (N, C, H_out, W_out).

    Examples:
        >>> gg.nn.FractionalMaxPool2d(3, output_ratio=0.5)(gg.randn(2, 4, 10, 10)).shape
        (2, 4, 5, 5)
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (see ``F.fractional_max_pool3d``).

    Shapes: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out).
    """

    function = staticmethod(fractional_max_pool3d)


# ---- unpooling --------------------------------------------------------------------------------------
class _MaxUnpoolNd(Module):
    function = staticmethod(max_unpool2d)

    def __init__(self, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Optional[Sequence[int]] = None) -> Tensor:
        return self.function(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d (see ``F.max_unpool1d``): ``forward(input, indices,
    output_size=None)`` writes each value at its index, zeros elsewhere.

    Shapes: (N, C, L_in) -> (N, C, (L_in - 1) * stride - 2 * padding + kernel_size) (or ``output_size``).

    Examples:
        >>> y, i = gg.nn.MaxPool1d(2, return_indices=True)(x)
        >>> gg.nn.MaxUnpool1d(2)(y, i).shape == x.shape
    """

    function = staticmethod(max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d (see ``F.max_unpool2d``; indices flat ``h * W + w``).

    Shapes: (N, C, H_in, W_in) -> (N, C, H_out, W_out), ``H_out = (H_in - 1) * sH - 2 pH + kH``.

    Examples:
        >>> y, i = gg.nn.MaxPool2d(2, return_indices=True)(gg.randn(1, 2, 4, 4))
        >>> gg.nn.MaxUnpool2d(2)(y, i).shape
        (1, 2, 4, 4)
    """


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d (see ``F.max_unpool3d``).

    Shapes: (N, C, D_in, H_in, W_in) -> (N, C, D_out, H_out, W_out).
    """

    function = staticmethod(max_unpool3d)


# ---- adaptive pooling -------------------------------------------------------------------------------
class _AdaptiveAvgPoolNd(Module):
    function = staticmethod(adaptive_avg_pool2d)

    def __init__(self, output_size: Union[int, Sequence[Optional[int]]]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed length ``S`` (see ``F.adaptive_avg_pool1d``).

    Shapes: (N, C, L) -> (N, C, S).

    Examples:
        >>> gg.nn.AdaptiveAvgPool1d(4)(gg.randn(2, 3, 10)).shape
        (2, 3, 4)
    """

    function = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size ``S`` or ``(S_h, S_w)`` (``None`` keeps that input size).

    Shapes: (N, C, H, W) -> (N, C, S_h, S_w).

    Examples:
        >>> gg.nn.AdaptiveAvgPool2d(1)(gg.randn(2, 8, 7, 7)).shape   # global average pooling
        (2, 8, 1, 1)
    """


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size ``S`` or ``(S_d, S_h, S_w)`` (see ``F.adaptive_avg_pool3d``).

    Shapes: (N, C, D, H, W) -> (N, C, S_d, S_h, S_w).
    """

    function = staticmethod(adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    function = staticmethod(adaptive_max_pool2d)

    def __init__(self, output_size: Union[int, Sequence[Optional[int]]], return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, bool(return_indices)

    def forward(self, input: Tensor):
        return self.function(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed length ``S`` (see ``F.adaptive_max_pool1d``); ``return_indices``: also
    the position of each maximum.

    Shapes: (N, C, L) -> (N, C, S).

    Examples:
        >>> gg.nn.AdaptiveMaxPool1d(4)(gg.randn(2, 3, 10)).shape
        (2, 3, 4)
    """

    function = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size ``S`` or ``(S_h, S_w)`` (see ``F.adaptive_max_pool2d``).

    Shapes: (N, C, H, W) -> (N, C, S_h, S_w).

    Examples:
        >>> gg.nn.AdaptiveMaxPool2d(1)(gg.randn(2, 8, 7, 7)).shape   # global max pooling
        (2, 8, 1, 1)
    """


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size ``S`` or ``(S_d, S_h, S_w)`` (see ``F.adaptive_max_pool3d``).

    Shapes: (N, C, D, H, W) -> (N, C, S_d, S_h, S_w).
    """

    function = staticmethod(adaptive_max_pool3d)


# ---- power-average pooling --------------------------------------------------------------------------
class _LPPoolNd(Module):
    function = staticmethod(lp_pool2d)

    def __init__(self, norm_type: float, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, bool(ceil_mode)

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum over the window of x^p)^(1/p)`` (see ``F.lp_pool1d``).

    Args: norm_type (``p``), kernel_size, stride (default ``kernel_size``), ceil_mode.

    Shapes: (N, C, L) -> (N, C, L_out), ``L_out = (L - k) // s + 1``.

    Examples:
        >>> gg.nn.LPPool1d(2, 3, stride=2)(gg.rand(1, 4, 9)).shape
        (1, 4, 4)
    """

    function = staticmethod(lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling (see ``F.lp_pool2d``).

    Shapes: (N, C, H, W) -> (N, C, H_out, W_out).

    Examples:
        >>> gg.nn.LPPool2d(2, 2)(gg.rand(1, 4, 8, 8)).shape
        (1, 4, 4, 4)
    """


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling (see ``F.lp_pool3d``).

    Shapes: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out).
    """

    function = staticmethod(lp_pool3d)
