"""Sliding-window patches as columns (im2col) and back (col2im): PyTorch's ``F.unfold`` and
``F.fold``. Both are composed from strided slices, pads, stacks and sums, so they get gradients,
graph mode and ONNX export from those ops."""
from __future__ import annotations

from typing import Union

from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.conv import _ntuple
from graphgrad.ops.shape import pad, reshape, stack

IntOrPair = Union[int, tuple]


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _blocks(fn: str, size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    """The number of window positions along each spatial dim."""
    blocks = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                   for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))
    if any(b <= 0 for b in blocks):
        raise ShapeError(f"{fn}: a kernel of {kernel} (dilation {dilation}) does not fit the padded size "
                         f"{tuple(n + 2 * p for n, p in zip(size, padding))}")
    return blocks


def _args(fn: str, kernel_size, dilation, padding, stride) -> tuple:
    return (_ntuple(fn, "kernel_size", kernel_size, 2, 1), _ntuple(fn, "dilation", dilation, 2, 1),
            _ntuple(fn, "padding", padding, 2), _ntuple(fn, "stride", stride, 2, 1))


def unfold(input, kernel_size: IntOrPair, dilation: IntOrPair = 1, padding: IntOrPair = 0,
           stride: IntOrPair = 1) -> Tensor:
    """The sliding ``kernel_size`` windows of a batch of images as columns (PyTorch's ``F.unfold``):
    column ``l`` holds window ``l`` (row-major over window positions), its rows run over channels then
    kernel positions. Shapes: (N, C, H, W) -> (N, C * kh * kw, L), L the number of windows."""
    x = _tensor(input)
    if x.ndim != 4:
        raise ShapeError(f"unfold: expects a 4-D (N, C, H, W) input, got shape {x.shape}")
    kernel, dilation, padding, stride = _args("unfold", kernel_size, dilation, padding, stride)
    c, h, w = x.shape[1:]
    if None in (c, h, w):
        raise ShapeError(f"unfold: the channel and spatial sizes of {x.shape} must be known when the graph is built")
    oh, ow = _blocks("unfold", (h, w), kernel, dilation, padding, stride)
    if padding != (0, 0):
        x = pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    windows = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            top, left = i * dilation[0], j * dilation[1]
            windows.append(x[:, :, top:top + stride[0] * (oh - 1) + 1:stride[0],
                             left:left + stride[1] * (ow - 1) + 1:stride[1]])
    cols = stack(windows, 2)  # (N, C, kh * kw, oh, ow)
    return reshape(cols, (-1, c * kernel[0] * kernel[1], oh * ow))


def _spread(v: Tensor, axis: int, step: int) -> Tensor:
    """``v`` with ``step - 1`` zeros after each element along ``axis`` (the last ones dropped)."""
    if step == 1:
        return v
    n = v.shape[axis]
    widths = [(0, 0)] * (v.ndim + 1)
    widths[axis + 1] = (0, step - 1)
    spread = pad(v.unsqueeze(axis + 1), widths)  # (..., n, step, ...)
    shape = tuple(-1 if d is None else d for d in v.shape[:axis]) + (n * step,) + tuple(v.shape[axis + 1:])
    return reshape(spread, shape)[(slice(None),) * axis + (slice(0, step * (n - 1) + 1),)]


def fold(input, output_size: IntOrPair, kernel_size: IntOrPair, dilation: IntOrPair = 1, padding: IntOrPair = 0,
         stride: IntOrPair = 1) -> Tensor:
    """The inverse arrangement of ``unfold`` (PyTorch's ``F.fold``, col2im): each column is put back
    at its window's place and overlapping values are summed. Shapes: (N, C * kh * kw, L) ->
    (N, C, H, W) with (H, W) = ``output_size``."""
    x = _tensor(input)
    if x.ndim != 3:
        raise ShapeError(f"fold: expects a 3-D (N, C * kh * kw, L) input, got shape {x.shape}")
    kernel, dilation, padding, stride = _args("fold", kernel_size, dilation, padding, stride)
    h, w = _ntuple("fold", "output_size", output_size, 2, 1)
    oh, ow = _blocks("fold", (h, w), kernel, dilation, padding, stride)
    rows, length = x.shape[1:]
    k = kernel[0] * kernel[1]
    if rows is None or rows % k:
        raise ShapeError(f"fold: the size {rows} of dim 1 must be known and divisible by the kernel's {k} positions")
    if length != oh * ow:
        raise ShapeError(f"fold: {length} columns given, but output_size {(h, w)} with kernel {kernel}, dilation "
                         f"{dilation}, padding {padding} and stride {stride} has {oh * ow} windows")
    c = rows // k
    cols = reshape(x, (-1, c, kernel[0], kernel[1], oh, ow))
    ph, pw = h + 2 * padding[0], w + 2 * padding[1]
    out = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            block = _spread(_spread(cols[:, :, i, j], 2, stride[0]), 3, stride[1])
            top, left = i * dilation[0], j * dilation[1]
            placed = pad(block, ((0, 0), (0, 0), (top, ph - top - block.shape[2]),
                                 (left, pw - left - block.shape[3])))
            out = placed if out is None else out + placed
    if padding != (0, 0):  # a negative pad crops the padding away
        out = pad(out, ((0, 0), (0, 0), (-padding[0], -padding[0]), (-padding[1], -padding[1])))
    return out
