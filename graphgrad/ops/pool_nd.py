"""More pooling, as PyTorch's ``torch.nn.functional``: ``max_pool1d``/``3d``, ``avg_pool1d``/``3d``,
``max_unpool1d``/``2d``/``3d``, ``adaptive_avg_pool1d``/``3d``, ``adaptive_max_pool1d``/``2d``/``3d`` and
``lp_pool1d``/``2d``/``3d``.

The window ops themselves (``ops/pool.py``) work over any number of spatial axes; this module adds the
public functions, and two ops:

* ``MaxUnpool``: values written at flat per-plane indices into a zero block (the inverse of max pooling
  with ``return_indices``); its gradient gathers (``TakeSpatial``), as PyTorch's;
* ``AdaptiveMaxPoolIndices``: the argmax of each adaptive window; the values are then a
  ``TakeSpatial`` of the input, whose gradient routes each output to its maximum.
"""
from __future__ import annotations

import itertools
import math
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.conv import _checked, _ntuple, _shape_of, _shown
from graphgrad.ops.pool import (_adaptive_avg_pool, _avg_pool, _check_spatial_rank, _known_spatial,
                                _max_pool, _output_size, TakeSpatial)
from graphgrad.ops.unary import abs as _abs, relu, sign

IntOrTuple = Union[int, Sequence[int]]


# ---- max and average pooling over 1 and 3 axes -------------------------------------------------------
def max_pool1d(input, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
               dilation: IntOrTuple = 1, ceil_mode: bool = False, return_indices: bool = False):
    """1-D max pooling, as PyTorch's ``F.max_pool1d``.

    Args:
        input: ``(N, C, L)`` (or ``(C, L)``).
        kernel_size, stride, padding, dilation: ints (stride defaults to ``kernel_size``; padding
            with ``-inf``, at most half the kernel).
        ceil_mode: round the output length up.
        return_indices: also return the position ``l`` of each window's (first) maximum, int64.

    Returns:
        ``(N, C, L_out)``, ``L_out = (L + 2p - d(k-1) - 1) // s + 1``; with ``return_indices``,
        ``(values, indices)``.

    Examples:
        >>> gg.max_pool1d(gg.randn(2, 3, 8), 2).shape
        (2, 3, 4)
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
               dilation: IntOrTuple = 1, ceil_mode: bool = False, return_indices: bool = False):
    """3-D max pooling, as PyTorch's ``F.max_pool3d``.

    Args:
        input: ``(N, C, D, H, W)`` (or ``(C, D, H, W)``); the other arguments as :func:`max_pool1d`
            (ints or triples). Indices are flat ``d * H * W + h * W + w``.

    Returns:
        ``(N, C, D_out, H_out, W_out)`` (or ``(values, indices)``).

    Examples:
        >>> gg.max_pool3d(gg.randn(1, 2, 4, 4, 4), 2).shape
        (1, 2, 2, 2, 2)
    """
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool1d(input, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling, as PyTorch's ``F.avg_pool1d``.

    Args:
        input: ``(N, C, L)`` (or ``(C, L)``); kernel_size, stride (default ``kernel_size``), padding
        (zeros, at most half the kernel); ceil_mode; count_include_pad: count padding in the divisor.

    Returns:
        ``(N, C, L_out)``, ``L_out = (L + 2p - k) // s + 1``.

    Examples:
        >>> gg.avg_pool1d(gg.randn(2, 3, 8), 2).shape
        (2, 3, 4)
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool3d(input, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
    """3-D average pooling, as PyTorch's ``F.avg_pool3d``.

    Args:
        input: ``(N, C, D, H, W)`` (or ``(C, D, H, W)``); as :func:`avg_pool2d` with triples;
        divisor_override: divide every window sum by this number instead.

    Returns:
        ``(N, C, D_out, H_out, W_out)``.

    Examples:
        >>> gg.avg_pool3d(gg.randn(1, 2, 4, 4, 4), 2).shape
        (1, 2, 2, 2, 2)
    """
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# ---- unpooling -----------------------------------------------------------------------------------------
class MaxUnpool(Op):
    """``out[..., index[..., i]] = x[..., i]`` per plane, in a zero block whose trailing axes have shape
    ``size`` (the inverse of max pooling with indices; a repeated index keeps one of its values)."""

    props = ("size",)

    def __init__(self, size: tuple):
        self.size = tuple(size)

    def infer(self, x, index):
        nd = len(self.size)
        if index.dtype.kind not in "iu":
            raise DTypeError(f"max_unpool{nd}d: indices must be integers, got {index.dtype}")
        if x.ndim != index.ndim or any(a is not None and b is not None and a != b for a, b in zip(x.shape, index.shape)):
            raise ShapeError(f"max_unpool{nd}d: input {_shown(x.shape)} and indices {_shown(index.shape)} must have "
                             f"the same shape")
        return TensorSpec(tuple(x.shape[:x.ndim - nd]) + self.size, x.dtype)

    def forward(self, xp, x, index):
        nd = len(self.size)
        lead = x.shape[:x.ndim - nd]
        planes, m = math.prod(lead), math.prod(self.size)
        flat = index.reshape(planes, -1)
        if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= m):
            raise ShapeError(f"max_unpool{nd}d: indices must lie in [0, {m}) for an output of spatial size "
                             f"{self.size}, got values in [{int(flat.min())}, {int(flat.max())}]")
        out = xp.zeros((planes, m), dtype=x.dtype)
        rows = xp.arange(planes)[:, None]
        out[rows, flat] = x.reshape(planes, -1)
        return out.reshape(lead + self.size)

    def backward(self, inputs, out, g):
        return TakeSpatial(len(self.size)).apply(g, inputs[1]), None


def _max_unpool(fn: str, nd: int, input, indices, kernel_size, stride, padding, output_size) -> Tensor:
    shape = _shape_of(input)
    _check_spatial_rank(fn, shape, nd)
    kernel = _ntuple(fn, "kernel_size", kernel_size, nd, 1)
    stride = kernel if stride is None else _ntuple(fn, "stride", stride, nd, 1)
    padding = _ntuple(fn, "padding", padding, nd, 0)
    sizes = tuple(shape[-nd:])
    if None in sizes:
        raise ShapeError(f"{fn}: needs known spatial sizes, got input shape {_shown(shape)}")
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(sizes, stride, padding, kernel))
    out = default
    if output_size is not None:
        out = tuple(int(v) for v in output_size)
        if len(out) == len(shape):  # (N, C, *S) or (C, *S) given: its spatial sizes
            out = out[-nd:]
        if len(out) != nd:
            raise ShapeError(f"{fn}: output_size must have {nd} spatial sizes, got {tuple(output_size)}")
        for o, d, s in zip(out, default, stride):
            if not d - s < o < d + s:  # PyTorch's check: a size max pooling could have come from
                raise ShapeError(f"{fn}: output_size {out} is not reachable from input shape {_shown(shape)}: "
                                 f"each size must lie strictly between (default - stride) and (default + stride), "
                                 f"default {default}, stride {stride}")
    if any(o < 1 for o in out):
        raise ShapeError(f"{fn}: the output size {out} must be positive")
    return _checked(MaxUnpool(out), input, indices)


def max_unpool1d(input, indices, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
                 padding: IntOrTuple = 0, output_size: Optional[Sequence[int]] = None) -> Tensor:
    """The partial inverse of ``max_pool1d``, as PyTorch's ``F.max_unpool1d``: every value written at
    its index, zeros elsewhere.

    Args:
        input, indices: ``(N, C, L)`` (or ``(C, L)``), the values and indices of ``max_pool1d(...,
        return_indices=True)``; kernel_size, stride (default ``kernel_size``), padding: the pooling's.
        output_size: the output length (default ``(L - 1) * stride - 2 * padding + kernel_size``).

    Returns:
        ``(N, C, L_out)``.

    Examples:
        >>> y, i = gg.max_pool1d(x, 2, return_indices=True)
        >>> gg.max_unpool1d(y, i, 2).shape == x.shape
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
                 padding: IntOrTuple = 0, output_size: Optional[Sequence[int]] = None) -> Tensor:
    """The partial inverse of ``max_pool2d`` (``(N, C, H, W)`` values and flat ``h * W + w`` indices),
    as PyTorch's ``F.max_unpool2d``; see :func:`max_unpool1d`.

    Examples:
        >>> y, i = gg.max_pool2d(gg.randn(1, 2, 4, 4), 2, return_indices=True)
        >>> gg.max_unpool2d(y, i, 2).shape
        (1, 2, 4, 4)
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
                 padding: IntOrTuple = 0, output_size: Optional[Sequence[int]] = None) -> Tensor:
    """The partial inverse of ``max_pool3d`` (``(N, C, D, H, W)``), as PyTorch's ``F.max_unpool3d``;
    see :func:`max_unpool1d`."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# ---- adaptive pooling ----------------------------------------------------------------------------------
def adaptive_avg_pool1d(input, output_size: Union[int, Sequence[int]]) -> Tensor:
    """Average pooling of ``(N, C, L)`` (or ``(C, L)``) to length ``output_size``, as PyTorch's
    ``F.adaptive_avg_pool1d``: output ``i`` averages ``[floor(i*L/S), ceil((i+1)*L/S))``.

    Examples:
        >>> gg.adaptive_avg_pool1d(gg.randn(2, 3, 10), 4).shape
        (2, 3, 4)
    """
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool3d(input, output_size: Union[int, Sequence[Optional[int]]]) -> Tensor:
    """Average pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to ``output_size`` (``S`` or
    ``(S_d, S_h, S_w)``, ``None`` keeps that size), as PyTorch's ``F.adaptive_avg_pool3d``.

    Examples:
        >>> gg.adaptive_avg_pool3d(gg.randn(1, 2, 5, 6, 7), 1).shape
        (1, 2, 1, 1, 1)
    """
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def _window_argmax(xp, x, sizes: tuple, out: tuple, windows) -> object:
    """The flat per-plane index of the maximum of every window of ``x`` (spatial ``sizes``, ``out``
    windows per axis): ``windows`` yields, per kernel offset, one array of input positions per spatial
    axis, shaped ``(*lead or broadcastable, out_i)``. The first maximum in that order wins, or the last
    NaN, as PyTorch's max pooling kernels."""
    nd = len(sizes)
    lead = x.shape[:x.ndim - nd]
    steps = [math.prod(sizes[i + 1:]) for i in range(nd)]
    flat_x = x.reshape(lead + (-1,))
    best_value = best = None
    for positions in windows:
        flat = 0
        for i, pos in enumerate(positions):
            flat = flat + pos.reshape(pos.shape[:-1] + tuple(-1 if j == i else 1 for j in range(nd))) * steps[i]
        flat = xp.broadcast_to(flat, lead + out).reshape(lead + (-1,))
        v = xp.take_along_axis(flat_x, flat, axis=-1)
        if best is None:
            best_value, best = v.copy(), flat.copy()
            continue
        take = v > best_value
        if x.dtype.kind == "f":
            take |= xp.isnan(v)
        best_value = xp.where(take, v, best_value)
        best = xp.where(take, flat, best)
    return best.reshape(lead + out).astype(xp.int64)


class AdaptiveMaxPoolIndices(Op):
    """The flat per-plane index of the maximum of each adaptive window ``[floor(i*in/out),
    ceil((i+1)*in/out))`` per axis (first maximum in row-major order, the last NaN, as PyTorch);
    ``axes`` holds ``(in, out)`` per spatial axis."""

    props = ("axes",)

    def __init__(self, axes: tuple):
        self.axes = tuple(tuple(a) for a in axes)

    def infer(self, x):
        nd = len(self.axes)
        if x.dtype.kind not in "iuf":
            raise DTypeError(f"adaptive_max_pool{nd}d: expected a numeric input, got {x.dtype}")
        return TensorSpec(tuple(x.shape[:x.ndim - nd]) + tuple(o for _, o in self.axes), np.int64)

    def forward(self, xp, x):
        starts, ends = [], []
        for n_in, n_out in self.axes:
            i = xp.arange(n_out)
            starts.append((i * n_in) // n_out)
            ends.append(((i + 1) * n_in + n_out - 1) // n_out)
        reach = [int((e - s).max()) for s, e in zip(starts, ends)]  # the longest window per axis
        # a window shorter than the longest repeats its last element (which changes no maximum)
        windows = ([xp.minimum(s + k, e - 1) for s, e, k in zip(starts, ends, offset)]
                   for offset in itertools.product(*[range(r) for r in reach]))
        return _window_argmax(xp, x, tuple(n for n, _ in self.axes), tuple(o for _, o in self.axes), windows)

    def backward(self, inputs, out, g):
        return (None,)


def _adaptive_max_pool(fn: str, nd: int, input, output_size, return_indices: bool):
    sizes = _known_spatial(fn, input, nd)
    out = _output_size(fn, output_size, sizes)
    index = _checked(AdaptiveMaxPoolIndices(tuple(zip(sizes, out))), input)
    values = TakeSpatial(nd).apply(input, index)
    return (values, index) if return_indices else values


def adaptive_max_pool1d(input, output_size: Union[int, Sequence[int]], return_indices: bool = False):
    """Max pooling of ``(N, C, L)`` (or ``(C, L)``) to length ``output_size``, as PyTorch's
    ``F.adaptive_max_pool1d``; with ``return_indices`` also the position of each maximum.

    Examples:
        >>> gg.adaptive_max_pool1d(gg.randn(2, 3, 10), 4).shape
        (2, 3, 4)
    """
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size: Union[int, Sequence[Optional[int]]], return_indices: bool = False):
    """Max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) to ``output_size`` (``S`` or ``(S_h, S_w)``,
    ``None`` keeps that size), as PyTorch's ``F.adaptive_max_pool2d``; indices are flat ``h * W + w``.

    Examples:
        >>> gg.adaptive_max_pool2d(gg.randn(2, 3, 7, 7), 1).shape   # global max pooling
        (2, 3, 1, 1)
    """
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size: Union[int, Sequence[Optional[int]]], return_indices: bool = False):
    """Max pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to ``output_size``, as PyTorch's
    ``F.adaptive_max_pool3d``; indices are flat ``d * H * W + h * W + w``.

    Examples:
        >>> gg.adaptive_max_pool3d(gg.randn(1, 2, 4, 5, 6), (2, 2, 3)).shape
        (1, 2, 2, 2, 3)
    """
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


# ---- power-average pooling -----------------------------------------------------------------------------
def _lp_pool(fn: str, nd: int, input, norm_type: float, kernel_size, stride, ceil_mode: bool) -> Tensor:
    kernel = _ntuple(fn, "kernel_size", kernel_size, nd, 1)
    out = _avg_pool(fn, nd, input ** norm_type, kernel, stride, 0, ceil_mode, True, None)
    # sign * relu(abs) is the identity with PyTorch's gradient at zero
    return (sign(out) * relu(_abs(out)) * math.prod(kernel)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type: float, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling, as PyTorch's ``F.lp_pool1d``: ``(sum over the window of x^p)^(1/p)``.

    Args:
        input: ``(N, C, L)`` (or ``(C, L)``); norm_type: ``p``; kernel_size; stride (default
            ``kernel_size``); ceil_mode. (As in PyTorch, ``x^p`` is not taken of ``|x|``.)

    Examples:
        >>> gg.lp_pool1d(gg.rand(2, 3, 8), 2, 2).shape
        (2, 3, 4)
    """
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type: float, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
              ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling of ``(N, C, H, W)``, as PyTorch's ``F.lp_pool2d``; see :func:`lp_pool1d`.

    Examples:
        >>> gg.lp_pool2d(gg.rand(2, 3, 8, 8), 2, 2).shape
        (2, 3, 4, 4)
    """
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type: float, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
              ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling of ``(N, C, D, H, W)``, as PyTorch's ``F.lp_pool3d``; see :func:`lp_pool1d`."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)
