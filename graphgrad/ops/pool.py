"""Pooling and resampling over 1, 2 or 3 spatial axes: ``max_pool2d``, ``avg_pool2d``,
``adaptive_avg_pool2d``, ``interpolate`` (the 1-D and 3-D functions live in ``pool_nd.py``).

PyTorch semantics throughout (output sizes, ``ceil_mode``, the divisor of ``avg_pool2d``, the
source pixels of ``interpolate``). The number of spatial axes is the length of the op's
``kernel_size`` (or ``axes``). Each op pairs with a linear op that is its adjoint, so gradients of
gradients are ops too:

* ``MaxPool1d/2d/3d`` (values) / ``MaxPoolIndices`` (argmax, first max in a window as PyTorch);
  the gradient is ``MaxPoolBackward``, which finds each window's first maximum by comparing the
  windows with the pooled values (2-D float32: one pass of a native kernel that rescans ``x``,
  when native kernels are on); its own gradient (and the general path for NaN or infinite
  maxima) goes through ``TakeSpatial``/``ScatterSpatial``, adjoints of each other;
* ``AvgPool1d/2d/3d`` / ``AvgPoolBackward``: sums over kernel offsets (loops over the kernel, never
  over pixels);
* ``AdaptiveAvgPool1d/2d/3d`` and ``Interpolate``: separable, one small matrix per spatial axis
  (``y = A_h @ x @ A_w^T``); the adjoint multiplies by the transposed matrices.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from graphgrad.backend import native, np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, spec_of
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.conv import (_axes, _checked, _float_dtype, _ntuple, _offset_slices, _offsets, _padded,
                                _shape_of, _shown)
from graphgrad.ops.shape import take

IntOrTuple = Union[int, Sequence[int]]


# ---- geometry ---------------------------------------------------------------------------------------
def _pool_out_size(size, k: int, s: int, p: int, d: int, ceil_mode: bool):
    """PyTorch's ``pooling_output_shape``: the last window must start inside the input or its left
    padding when ``ceil_mode`` rounds up."""
    if size is None:
        return None
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_spatial_rank(fn: str, shape: tuple, nd: int) -> None:
    """``shape`` must be ``(C, *spatial)`` or ``(N, C, *spatial)`` with ``nd`` spatial axes."""
    if len(shape) not in (nd + 1, nd + 2):
        axes = _axes(nd)
        raise ShapeError(f"{fn}: expected a {nd + 1}-D (C, {axes}) or {nd + 2}-D (N, C, {axes}) input, "
                         f"got shape {_shown(shape)}")


def _pool_geometry(fn: str, shape: tuple, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    """Output spatial sizes of a pooling of ``shape`` (``(..., *spatial)``, ``len(kernel)`` spatial
    axes); ``ShapeError`` naming ``fn`` for a bad rank, a bad padding or an empty output."""
    nd = len(kernel)
    _check_spatial_rank(fn, shape, nd)
    for k, p in zip(kernel, padding):
        if p > k // 2:
            raise ShapeError(f"{fn}: padding should be at most half of the kernel size, got padding={padding} "
                             f"for kernel_size={kernel}")
    out = tuple(_pool_out_size(shape[len(shape) - nd + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                for i in range(nd))
    if any(o is not None and o < 1 for o in out):
        raise ShapeError(f"{fn}: input of shape {_shown(shape)} is too small for kernel_size={kernel}, "
                         f"padding={padding}, dilation={dilation}: the output would be {out}")
    return out


def _buffer_sizes(sizes, out, kernel, stride, padding, dilation) -> tuple:
    """Padded lengths holding the input and every window (ceil_mode windows may run past the padding)."""
    return tuple(max(p + n + p, (o - 1) * s + d * (k - 1) + 1)
                 for n, o, k, s, p, d in zip(sizes, out, kernel, stride, padding, dilation))


def _pool_args(fn: str, kernel_size, stride, padding, dilation, nd: int = 2) -> tuple:
    kernel = _ntuple(fn, "kernel_size", kernel_size, nd, 1)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(fn, "stride", stride, nd, 1)
    return kernel, stride, _ntuple(fn, "padding", padding, nd, 0), _ntuple(fn, "dilation", dilation, nd, 1)


def _broadcast_axis(xp, values, i: int, nd: int):
    """1-D ``values`` shaped to broadcast along spatial axis ``i`` of ``nd``."""
    return values.reshape(tuple(-1 if j == i else 1 for j in range(nd)))


class _Pool(Op):
    """What pooling ops share: ``nd`` (the number of spatial axes, ``len(kernel_size)``) and windows."""

    fn = "pool"

    @property
    def nd(self) -> int:
        return len(self.kernel_size)

    @property
    def _dilation(self) -> tuple:
        return getattr(self, "dilation", (1,) * self.nd)

    def _geometry(self, shape):
        return _pool_geometry(self.fn, shape, self.kernel_size, self.stride, self.padding, self._dilation,
                              self.ceil_mode)

    def _windows_of(self, xp, x, value):
        """(output sizes, padded buffer, list of (kernel offset, slices of the buffer))."""
        dilation = self._dilation
        out = self._geometry(x.shape)
        sizes = _buffer_sizes(x.shape[-self.nd:], out, self.kernel_size, self.stride, self.padding, dilation)
        buf = _padded(xp, x, tuple((p, p) for p in self.padding), sizes, value)
        views = [(o, (Ellipsis,) + _offset_slices(o, out, self.stride, dilation)) for o in _offsets(self.kernel_size)]
        return out, buf, views


# ---- max pooling -----------------------------------------------------------------------------------
def _native_max_pool2d(op, x, g=None):
    """Max pooling (``g is None``) or its gradient by the native float32 kernels (one pass over ``x``,
    backend/native/conv_pool.c), or ``None`` when they do not apply (not 2-D, not float32 NumPy arrays,
    native kernels off): the caller then takes its NumPy path."""
    if op.nd != 2:
        return None
    fn = native.kernel("max_pool2d_f32" if g is None else "max_pool2d_backward_f32")
    arrays = (x,) if g is None else (x, g)
    if fn is None or any(type(a) is not np.ndarray or a.dtype != np.float32 for a in arrays):
        return None
    out = op._geometry(x.shape)
    if out[1] > 4096 or x.shape[-2] * x.shape[-1] >= 2 ** 31:  # the kernels' row buffer, int32 positions
        return None
    planes = math.prod(x.shape[:-2])
    geometry = (planes,) + x.shape[-2:] + out + op.kernel_size + op.stride + op.padding + op.dilation
    x = np.ascontiguousarray(x)  # one copy of a strided input still beats the NumPy path's passes
    if g is None:
        y = np.empty(x.shape[:-2] + out, dtype=np.float32)
        fn(x, y, *geometry)
        return y
    gx = np.empty(x.shape, dtype=np.float32)
    fn(x, np.ascontiguousarray(g), gx, *geometry)
    return gx


class _MaxPool(_Pool):
    """Maximum over each (dilated) window; padding counts as ``-inf``. NaN propagates."""
    onnx = "MaxPool"

    def onnx_attributes(self, opset):
        return {"kernel_shape": self.kernel_size, "strides": self.stride, "pads": self.padding * 2,
                "dilations": self.dilation, "ceil_mode": int(self.ceil_mode)}

    fn = "max_pool2d"
    props = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def __init__(self, kernel_size: tuple, stride: tuple, padding: Optional[tuple] = None,
                 dilation: Optional[tuple] = None, ceil_mode: bool = False):
        nd = len(kernel_size)
        self.kernel_size, self.stride = tuple(kernel_size), tuple(stride)
        self.padding = (0,) * nd if padding is None else tuple(padding)
        self.dilation = (1,) * nd if dilation is None else tuple(dilation)
        self.ceil_mode = bool(ceil_mode)

    def infer(self, x):
        if x.dtype.kind not in "iuf":
            raise DTypeError(f"{self.fn}: expected a numeric input, got {x.dtype}")
        return TensorSpec(x.shape[:-self.nd] + self._geometry(x.shape), x.dtype)

    def forward(self, xp, x):
        y = _native_max_pool2d(self, x)
        if y is not None:
            return y
        low = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        out, buf, views = self._windows_of(xp, x, low)
        if len(views) == 1:
            return buf[views[0][1]].copy()
        result = xp.maximum(buf[views[0][1]], buf[views[1][1]])
        for _, view in views[2:]:
            xp.maximum(result, buf[view], out=result)
        return result

    def backward(self, inputs, out, g):
        return (MaxPoolBackward(*self._args()).apply(inputs[0], out, g),)

    def _args(self) -> tuple:
        return self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode


class MaxPool1d(_MaxPool):
    """1-D max pooling of ``(N, C, L)`` (or ``(C, L)``)."""

    fn = "max_pool1d"


class MaxPool2d(_MaxPool):
    """2-D max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``)."""

    fn = "max_pool2d"


class MaxPool3d(_MaxPool):
    """3-D max pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``)."""

    fn = "max_pool3d"


MAX_POOL = {1: MaxPool1d, 2: MaxPool2d, 3: MaxPool3d}


class MaxPoolIndices(_MaxPool):
    """Where each window's maximum is: the flat index into the input's spatial block (``h * W + w`` in
    2-D, PyTorch's ``return_indices``); the first maximum in row-major window order, the last NaN."""
    onnx = None  # ONNX indices count over N*C*H*W, not per plane

    def infer(self, x):
        spec = super().infer(x)
        return TensorSpec(spec.shape, np.int64)

    def forward(self, xp, x):
        nd = self.nd
        low = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        out, buf, views = self._windows_of(xp, x, low)
        sizes = x.shape[-nd:]
        starts = [_broadcast_axis(xp, xp.arange(out[i]) * self.stride[i] - self.padding[i], i, nd)
                  for i in range(nd)]  # first element of each window, per axis
        shape = x.shape[:-nd] + out
        best = xp.full(shape, low, dtype=x.dtype)
        local = xp.zeros(shape, dtype=xp.int32)  # the winning kernel offset, row-major
        seen, seen_all = xp.zeros(out, dtype=bool), False
        for k, (offset, view) in enumerate(views):
            v = buf[view]
            valid = True
            for i in range(nd):
                pos = starts[i] + offset[i] * self.dilation[i]
                valid = valid & (pos >= 0) & (pos < sizes[i])
            valid = None if bool(xp.all(valid)) else valid
            take = v > best if k else xp.ones(shape, dtype=bool)
            if x.dtype.kind == "f":
                take |= xp.isnan(v)
            if not (seen_all and valid is None):  # some window has no element yet, or padding here
                if valid is not None:
                    take &= valid
                take |= ~seen if valid is None else valid & ~seen
                seen = seen | (True if valid is None else valid)
                seen_all = bool(seen.all())
            # where take: best <- v (== max(best, v), NaN included), local <- k; arithmetic, not
            # masked copies (those branch per element and are ~10x slower on random masks)
            xp.maximum(best, v, out=best)
            local += take * (k - local).astype(xp.int32)
        steps = [math.prod(sizes[i + 1:]) for i in range(nd)]  # flat step of each spatial axis
        table = xp.asarray([sum(o[i] * self.dilation[i] * steps[i] for i in range(nd)) for o, _ in views],
                           dtype=xp.int64)
        flat = table[local]
        for i in range(nd):
            flat += starts[i] * steps[i]
        return xp.clip(flat, 0, math.prod(sizes) - 1, out=flat)  # (a window of padding only, impossible in PyTorch)

    def backward(self, inputs, out, g):
        return (None,)


class MaxPoolBackward(_MaxPool):
    """The gradient of max pooling: ``g`` (one value per window) routed to the first maximum of
    each window of ``x``, found by comparing the windows with their maxima ``out`` (the op's output)
    offset by offset; windows with a NaN or an infinite maximum take the general path
    (:class:`MaxPoolIndices`, then :class:`ScatterSpatial`)."""
    onnx = None

    def infer(self, x, out, g):
        return TensorSpec(x.shape, g.dtype)

    def forward(self, xp, x, out, g):
        gx = _native_max_pool2d(self, x, g)  # finds the same first maxima from x alone
        if gx is not None:
            return gx
        nd = self.nd
        size = x.shape[-nd:]
        if x.dtype.kind != "f" or not bool(xp.isfinite(out).all()):
            index = MaxPoolIndices(*self._args()).forward(xp, x)
            return ScatterSpatial(size).forward(xp, g, index)
        out_size, buf, views = self._windows_of(xp, x, -xp.inf)
        exact = not any(self.padding) and buf.shape[-nd:] == size  # no padding, no ceil_mode overhang
        overlap = any(s < d * (k - 1) + 1 for k, s, d in zip(self.kernel_size, self.stride, self.dilation))
        tiled = exact and not overlap and all(o * k == n for o, k, n in zip(out_size, self.kernel_size, size))
        shape = x.shape[:-nd] + buf.shape[-nd:]
        gx = xp.empty(shape, dtype=g.dtype) if tiled else xp.zeros(shape, dtype=g.dtype)
        found = None
        for i, (_, view) in enumerate(views):
            last = i + 1 == len(views)
            if last and exact and found is not None:  # every window has its maximum: here if not before
                first = xp.logical_not(found)
            else:
                equal = buf[view] == out
                if found is None:
                    first, found = equal, equal.copy()
                else:
                    first = xp.greater(equal, found)  # equal and not found before: the first maximum
                    if not last:
                        found |= equal
            if overlap:
                gx[view] += g * first
            else:
                xp.multiply(g, first, out=gx[view])
        if not exact:
            crop = tuple(slice(p, p + n) for p, n in zip(self.padding, size))
            gx = xp.ascontiguousarray(gx[(Ellipsis,) + crop])
        return gx

    def backward(self, inputs, out, g):
        x = inputs[0]
        index = MaxPoolIndices(*self._args()).apply(x)
        return None, None, TakeSpatial(self.nd).apply(g, index)


class TakeSpatial(Op):
    """``out[..., o] = x[..., index[..., o]]`` with ``index`` a flat position in the trailing ``nd``
    axes of ``x`` (a per-plane gather, as max pooling's values given its indices)."""

    props = ("nd",)

    def __init__(self, nd: int = 2):
        self.nd = int(nd)

    def infer(self, x, index):
        return TensorSpec(index.shape, x.dtype)

    def forward(self, xp, x, index):
        lead = x.shape[:x.ndim - self.nd]
        flat = x.reshape(lead + (-1,))
        gathered = xp.take_along_axis(flat, index.reshape(lead + (-1,)), axis=-1)
        return gathered.reshape(index.shape)

    def backward(self, inputs, out, g):
        x, index = inputs
        return ScatterSpatial(tuple(_shape_of(x)[-self.nd:])).apply(g, index), None


class ScatterSpatial(Op):
    """The adjoint of :class:`TakeSpatial`: a zero array whose trailing axes have shape ``size``, with
    ``g[..., o]`` added at flat position ``index[..., o]`` of its plane (repeated positions sum)."""

    props = ("size",)

    def __init__(self, size: tuple):
        self.size = tuple(size)

    def infer(self, g, index):
        nd = len(self.size)
        return TensorSpec(tuple(g.shape[:g.ndim - nd]) + self.size, g.dtype)

    def forward(self, xp, g, index):
        nd = len(self.size)
        lead = g.shape[:g.ndim - nd]
        planes, m = math.prod(lead), math.prod(self.size)
        flat = index.reshape(planes, -1) + (xp.arange(planes, dtype=index.dtype) * m)[:, None]
        out = xp.bincount(flat.ravel(), weights=g.reshape(-1), minlength=planes * m)
        return out.astype(g.dtype, copy=False).reshape(lead + self.size)

    def backward(self, inputs, out, g):
        return TakeSpatial(len(self.size)).apply(g, inputs[1]), None


def max_pool2d(input, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
               dilation: IntOrTuple = 1, ceil_mode: bool = False, return_indices: bool = False):
    """2-D max pooling, as PyTorch's ``F.max_pool2d``.

    Args:
        input: ``(N, C, H, W)`` (or ``(C, H, W)``).
        kernel_size: window size, int or ``(kH, kW)``.
        stride: window step (default: ``kernel_size``).
        padding: implicit ``-inf`` padding on both sides (at most half the kernel).
        dilation: spacing between window elements.
        ceil_mode: round the output size up (a last, partial window), as PyTorch.
        return_indices: also return the argmax of each window (flat ``h * W + w``, int64).

    Returns:
        ``(N, C, H_out, W_out)`` with ``H_out = (H + 2p - d(k-1) - 1) // s + 1`` (rounded up with
        ``ceil_mode``); with ``return_indices``, ``(values, indices)``. The gradient flows to the first
        maximum of each window.

    Examples:
        >>> gg.max_pool2d(gg.randn(8, 16, 28, 28), 2).shape
        (8, 16, 14, 14)
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool(fn: str, nd: int, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """``max_pool{nd}d``: values, or ``(values, indices)`` with ``return_indices``."""
    kernel, stride, padding, dilation = _pool_args(fn, kernel_size, stride, padding, dilation, nd)
    _pool_geometry(fn, _shape_of(input), kernel, stride, padding, dilation, ceil_mode)
    if return_indices:
        index = _checked(MaxPoolIndices(kernel, stride, padding, dilation, ceil_mode), input)
        return TakeSpatial(nd).apply(input, index), index
    return _checked(MAX_POOL[nd](kernel, stride, padding, dilation, ceil_mode), input)


# ---- average pooling -------------------------------------------------------------------------------
class _AvgPool(_Pool):
    """Mean over each window, with PyTorch's divisor (padding counted or not, ``divisor_override``)."""
    onnx = "AveragePool"

    def onnx_attributes(self, opset):
        if self.divisor_override is not None:
            raise ValueError("ONNX AveragePool has no divisor_override")
        if self.ceil_mode and not self.count_include_pad:
            raise ValueError("onnxruntime divides ceil_mode windows without padding differently from PyTorch")
        return {"kernel_shape": self.kernel_size, "strides": self.stride, "pads": self.padding * 2,
                "ceil_mode": int(self.ceil_mode), "count_include_pad": int(self.count_include_pad)}

    fn = "avg_pool2d"
    props = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")

    def __init__(self, kernel_size: tuple, stride: tuple, padding: Optional[tuple] = None, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Optional[int] = None):
        self.kernel_size, self.stride = tuple(kernel_size), tuple(stride)
        self.padding = (0,) * len(self.kernel_size) if padding is None else tuple(padding)
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = None if divisor_override is None else int(divisor_override)

    def infer(self, x):
        return TensorSpec(x.shape[:-self.nd] + self._geometry(x.shape), _float_dtype(self.fn, x))

    def _divisor(self, xp, dtype, sizes, out):
        """PyTorch's average-pooling divisor per output position (an array of shape ``out``, or a
        number): the product over axes of each window's length, clipped as PyTorch clips it."""
        if self.divisor_override is not None:
            return self.divisor_override
        total = None
        for i in range(self.nd):
            start = xp.arange(out[i]) * self.stride[i] - self.padding[i]
            end = xp.minimum(start + self.kernel_size[i], sizes[i] + self.padding[i])
            if self.count_include_pad:
                n = end - start
            else:
                n = xp.minimum(end, sizes[i]) - xp.maximum(start, 0)
            n = _broadcast_axis(xp, n, i, self.nd)
            total = n if total is None else total * n
        return total.astype(dtype)

    def forward(self, xp, x):
        out, buf, views = self._windows_of(xp, x, 0)
        total = None
        for _, view in views:
            total = buf[view].copy() if total is None else xp.add(total, buf[view], out=total)
        return total / self._divisor(xp, x.dtype, x.shape[-self.nd:], out)

    def _args(self) -> tuple:
        return (self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                self.divisor_override)

    def backward(self, inputs, out, g):
        size = tuple(_shape_of(inputs[0])[-self.nd:])
        return (AvgPoolBackward(size, *self._args()).apply(g),)


class AvgPool1d(_AvgPool):
    """1-D average pooling of ``(N, C, L)`` (or ``(C, L)``)."""

    fn = "avg_pool1d"


class AvgPool2d(_AvgPool):
    """2-D average pooling of ``(N, C, H, W)`` (or ``(C, H, W)``)."""

    fn = "avg_pool2d"


class AvgPool3d(_AvgPool):
    """3-D average pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``)."""

    fn = "avg_pool3d"


AVG_POOL = {1: AvgPool1d, 2: AvgPool2d, 3: AvgPool3d}


class AvgPoolBackward(_AvgPool):
    """The adjoint of average pooling for an input of spatial ``size``: spreads each gradient
    value, divided by its window's divisor, over the window."""
    onnx = None

    props = ("size",) + _AvgPool.props

    def __init__(self, size: tuple, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.size = tuple(size)

    def infer(self, g):
        return TensorSpec(tuple(g.shape[:-self.nd]) + self.size, _float_dtype(self.fn, g))

    def forward(self, xp, g):
        nd = self.nd
        out = tuple(g.shape[-nd:])
        sizes = _buffer_sizes(self.size, out, self.kernel_size, self.stride, self.padding, (1,) * nd)
        scaled = g / self._divisor(xp, g.dtype, self.size, out)
        buf = xp.zeros(g.shape[:-nd] + sizes, dtype=g.dtype)
        for offset in _offsets(self.kernel_size):
            buf[(Ellipsis,) + _offset_slices(offset, out, self.stride, (1,) * nd)] += scaled
        crop = tuple(slice(p, p + n) for p, n in zip(self.padding, self.size))
        return xp.ascontiguousarray(buf[(Ellipsis,) + crop])

    def backward(self, inputs, out, g):
        return (AVG_POOL[self.nd](*self._args()).apply(g),)


def avg_pool2d(input, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
    """2-D average pooling, as PyTorch's ``F.avg_pool2d``.

    Args:
        input: ``(N, C, H, W)`` (or ``(C, H, W)``).
        kernel_size, stride (default ``kernel_size``), padding: ints or pairs; zero padding, at most
            half the kernel.
        ceil_mode: round the output size up; a last window running past the padded edge divides by
            its size clipped to the padded input.
        count_include_pad: count padding zeros in the divisor (else only input elements).
        divisor_override: divide every window sum by this number instead.

    Returns:
        ``(N, C, H_out, W_out)``, ``H_out = (H + 2p - k) // s + 1`` (rounded up with ``ceil_mode``).

    Examples:
        >>> gg.avg_pool2d(gg.randn(2, 3, 8, 8), 2).shape
        (2, 3, 4, 4)
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _avg_pool(fn: str, nd: int, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override) -> Tensor:
    kernel, stride, padding, _ = _pool_args(fn, kernel_size, stride, padding, 1, nd)
    if divisor_override is not None and int(divisor_override) == 0:
        raise ValueError(f"{fn}: divisor_override must be non-zero")
    _pool_geometry(fn, _shape_of(input), kernel, stride, padding, (1,) * nd, ceil_mode)
    return _checked(AVG_POOL[nd](kernel, stride, padding, ceil_mode, count_include_pad, divisor_override), input)


# ---- separable resampling: adaptive average pooling, interpolation -----------------------------------
class _Resample(Op):
    """``y = A_1 x A_2^T`` on the trailing axes: one matrix per axis, built by ``_matrix`` from an
    entry of ``axes`` (which starts with the input and output lengths). ``transpose`` applies the
    transposed matrices instead (the adjoint, which is the gradient)."""

    fn = "resample"
    props = ("axes", "transpose")

    def __init__(self, axes: tuple, transpose: bool = False):
        self.axes = tuple(tuple(a) for a in axes)
        self.transpose = bool(transpose)

    def _matrix(self, xp, dtype, axis):
        raise NotImplementedError

    def infer(self, x):
        nd = len(self.axes)
        if x.ndim < nd + 1:
            raise ShapeError(f"{self.fn}: expected at least {nd + 1} dimensions, got shape {_shown(x.shape)}")
        src, dst = (0, 1) if not self.transpose else (1, 0)
        for i, axis in enumerate(self.axes):
            size = x.shape[x.ndim - nd + i]
            if size is not None and size != axis[src]:
                raise ShapeError(f"{self.fn}: expected spatial size {axis[src]} on axis {x.ndim - nd + i}, "
                                 f"got input shape {_shown(x.shape)}")
        out = tuple(axis[dst] for axis in self.axes)
        return TensorSpec(tuple(x.shape[:x.ndim - nd]) + out, _float_dtype(self.fn, x))

    def forward(self, xp, x):
        nd = len(self.axes)
        for i in reversed(range(nd)):  # 2-D matmuls only (stacked ones are slow in NumPy)
            a = self._matrix(xp, x.dtype, self.axes[i])  # (out, in)
            if self.transpose:
                a = a.T
            if i == nd - 1:
                x = (x.reshape(-1, x.shape[-1]) @ a.T).reshape(x.shape[:-1] + (a.shape[0],))
            else:  # an earlier axis: make it the last one, multiply, move it back
                axis = x.ndim - nd + i
                moved = xp.ascontiguousarray(xp.moveaxis(x, axis, -1))
                y = (moved.reshape(-1, moved.shape[-1]) @ a.T).reshape(moved.shape[:-1] + (a.shape[0],))
                x = xp.ascontiguousarray(xp.moveaxis(y, -1, axis))
        return x

    def backward(self, inputs, out, g):
        return (type(self)(self.axes, not self.transpose).apply(g),)


class AdaptiveAvgPool2d(_Resample):
    """Mean over PyTorch's adaptive windows ``[floor(i*in/out), ceil((i+1)*in/out))`` per axis;
    ``axes`` holds ``(in, out)`` per spatial axis (one, two or three of them)."""

    fn = "adaptive_avg_pool2d"

    def _matrix(self, xp, dtype, axis):
        n_in, n_out = axis
        i = xp.arange(n_out)
        start = (i * n_in) // n_out
        end = ((i + 1) * n_in + n_out - 1) // n_out
        cols = xp.arange(n_in)[None, :]
        inside = (cols >= start[:, None]) & (cols < end[:, None])
        return (inside / (end - start)[:, None]).astype(dtype)


class Interpolate(_Resample):
    """Nearest or linear resampling per axis, PyTorch's source pixels; ``axes`` holds
    ``(in, out, mode, align_corners, scale_factor or None)`` per spatial axis, ``mode`` one of
    ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'cubic'``."""

    fn = "interpolate"

    @staticmethod
    def nearest_source(xp, axis):
        """The source index of each output position along a nearest-mode axis."""
        n_in, n_out, mode, _, scale = axis
        if mode == "nearest" and n_out == n_in:
            return xp.arange(n_out)
        if mode == "nearest" and n_out == 2 * n_in:
            return xp.arange(n_out) // 2
        # PyTorch computes this in float32 whatever the input dtype
        f32 = xp.float32
        step = xp.asarray(1.0 / scale, dtype=f32) if scale else xp.asarray(n_in, f32) / xp.asarray(n_out, f32)
        dst = xp.arange(n_out, dtype=f32)
        if mode == "nearest-exact":
            dst = dst + f32(0.5)
        return xp.minimum(xp.floor(dst * step).astype(xp.int64), n_in - 1)

    def _matrix(self, xp, dtype, axis):
        n_in, n_out, mode, align_corners, scale = axis
        cols = xp.arange(n_in)[None, :]
        if mode in ("nearest", "nearest-exact"):
            return (self.nearest_source(xp, axis)[:, None] == cols).astype(dtype)
        # linear and cubic, in the input's float type (PyTorch's opmath type)
        if align_corners:
            step = xp.asarray((n_in - 1) if n_out > 1 else 0, dtype) / xp.asarray(max(n_out - 1, 1), dtype)
        elif scale:
            step = xp.asarray(1.0 / scale, dtype)
        else:
            step = xp.asarray(n_in, dtype) / xp.asarray(n_out, dtype)
        dst = xp.arange(n_out, dtype=dtype)
        real = step * dst if align_corners else step * (dst + 0.5) - 0.5
        if mode == "cubic":
            return self._cubic(xp, dtype, real, n_in)
        real = xp.maximum(real, 0)
        i0 = xp.minimum(xp.floor(real).astype(xp.int64), n_in - 1)
        lam = xp.clip(real - i0, 0, 1).astype(dtype)
        i1 = i0 + (i0 < n_in - 1)
        m = (1 - lam)[:, None] * (cols == i0[:, None]) + lam[:, None] * (cols == i1[:, None])
        return m.astype(dtype)

    @staticmethod
    def _cubic(xp, dtype, real, n_in: int):
        """Keys' cubic convolution (``A = -0.75``, as PyTorch) of the 4 source pixels around each
        position ``real``, the indices clamped to the edges (a clamped index adds its weight)."""
        a = -0.75
        i0 = xp.floor(real)
        t = (real - i0).astype(dtype)
        near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731  |x| <= 1
        far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731  1 < |x| < 2
        weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
        cols = xp.arange(n_in)[None, :]
        m = xp.zeros((real.shape[0], n_in), dtype=dtype)
        for k, w in enumerate(weights):
            index = xp.clip(i0.astype(xp.int64) - 1 + k, 0, n_in - 1)
            m += w[:, None] * (cols == index[:, None])
        return m


def _output_size(fn: str, output_size, sizes: tuple) -> tuple:
    nd = len(sizes)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        raise ShapeError(f"{fn}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
    out = tuple(n if o is None else int(o) for o, n in zip(output_size, sizes))
    if any(o is None or o < 1 for o in out):
        raise ShapeError(f"{fn}: output_size must be positive (and the input size known), got {out}")
    return out


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """:class:`AdaptiveAvgPool2d` over one spatial axis."""

    fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """:class:`AdaptiveAvgPool2d` over three spatial axes."""

    fn = "adaptive_avg_pool3d"


ADAPTIVE_AVG_POOL = {1: AdaptiveAvgPool1d, 2: AdaptiveAvgPool2d, 3: AdaptiveAvgPool3d}


def _known_spatial(fn: str, input, nd: int) -> tuple:
    """The ``nd`` trailing sizes of a ``(C, *S)`` or ``(N, C, *S)`` input; they must be known."""
    shape = _shape_of(input)
    _check_spatial_rank(fn, shape, nd)
    sizes = tuple(shape[-nd:])
    if None in sizes:
        raise ShapeError(f"{fn}: needs known spatial sizes, got input shape {_shown(shape)}")
    return sizes


def _adaptive_avg_pool(fn: str, nd: int, input, output_size) -> Tensor:
    sizes = _known_spatial(fn, input, nd)
    out = _output_size(fn, output_size, sizes)
    return _checked(ADAPTIVE_AVG_POOL[nd](tuple(zip(sizes, out))), input)


def adaptive_avg_pool2d(input, output_size: Union[int, Sequence[Optional[int]]]) -> Tensor:
    """Average pooling to a fixed output size, as PyTorch's ``F.adaptive_avg_pool2d``.

    Args:
        input: ``(N, C, H, W)`` (or ``(C, H, W)``).
        output_size: ``S`` or ``(S_h, S_w)``; a ``None`` entry keeps that input size.

    Returns:
        ``(N, C, S_h, S_w)``; output ``i`` averages input rows ``floor(i*H/S_h)`` to
        ``ceil((i+1)*H/S_h) - 1`` (likewise for columns).

    Examples:
        >>> gg.adaptive_avg_pool2d(gg.randn(2, 8, 7, 7), 1).shape   # global average pooling
        (2, 8, 1, 1)
    """
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


#: mode -> the input ranks it takes
_MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "linear": (3,), "bilinear": (4,), "bicubic": (4,),
          "trilinear": (5,), "area": (3, 4, 5)}


def interpolate(input, size: Optional[IntOrTuple] = None, scale_factor: Optional[Union[float, Sequence[float]]] = None,
                mode: str = "nearest", align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    """Resize ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)`` input, as PyTorch's ``F.interpolate``.

    Args:
        input: ``(N, C, *S)`` with 1 to 3 spatial axes; float, or any dtype for the nearest modes.
        size: output spatial size (int or tuple); or
        scale_factor: multiplier(s); the output size is ``floor(in * scale_factor)``, and, as in
            PyTorch, the source positions use ``1 / scale_factor`` (unless ``recompute_scale_factor``).
        mode: ``'nearest'`` (source ``floor(dst * in/out)``), ``'nearest-exact'`` (source
            ``floor((dst + 0.5) * in/out)``), ``'linear'`` (3-D input), ``'bilinear'`` (4-D),
            ``'trilinear'`` (5-D), ``'bicubic'`` (4-D; Keys' cubic with ``A = -0.75``, edges clamped, no
            clipping of the result, as PyTorch) or ``'area'`` (adaptive average pooling).
        align_corners: linear and cubic modes only: align the corner pixels' centers (default ``False``).
        antialias: only ``False`` is supported.

    Returns:
        ``(N, C, *size)``.

    Examples:
        >>> gg.interpolate(gg.randn(1, 3, 4, 4), scale_factor=2, mode="bilinear").shape
        (1, 3, 8, 8)
    """
    fn = "interpolate"
    if mode not in _MODES:
        raise ValueError(f"{fn}: mode must be one of {sorted(_MODES)}, got {mode!r}")
    if antialias:
        raise ValueError(f"{fn}: antialias=True is not supported")
    shape = _shape_of(input)
    if len(shape) not in _MODES[mode]:
        wanted = " or ".join(f"{n}-D" for n in _MODES[mode])
        raise ShapeError(f"{fn}: mode={mode!r} expects a {wanted} input, got shape {_shown(shape)}")
    linear = mode in ("linear", "bilinear", "bicubic", "trilinear")
    if align_corners is not None and not linear:
        raise ValueError(f"{fn}: align_corners can only be set with the linear and cubic modes, not mode={mode!r}")
    nd = len(shape) - 2
    sizes = tuple(shape[2:])
    if None in sizes:
        raise ShapeError(f"{fn}: needs known spatial sizes, got input shape {_shown(shape)}")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{fn}: give exactly one of size and scale_factor")
    if size is not None:
        out = _output_size(fn, size, sizes)
        scales = (None,) * nd
    else:
        scales = (scale_factor,) * nd if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        if len(scales) != nd or any(s <= 0 for s in scales):
            raise ValueError(f"{fn}: scale_factor must be a positive number or {nd} of them, got {scale_factor!r}")
        scales = tuple(float(s) for s in scales)
        out = tuple(int(math.floor(n * s)) for n, s in zip(sizes, scales))
        if any(o < 1 for o in out):
            raise ShapeError(f"{fn}: scale_factor={scale_factor!r} gives an empty output from {_shown(shape)}")
        if recompute_scale_factor:
            scales = (None,) * nd
    if mode == "area":
        return _checked(ADAPTIVE_AVG_POOL[nd](tuple(zip(sizes, out))), input)
    kind = "cubic" if mode == "bicubic" else "linear" if linear else mode
    axes = tuple((n, o, kind, bool(align_corners), s) for n, o, s in zip(sizes, out, scales))
    dtype = _dtype_of(input)
    if not linear and dtype is not None and dtype.kind in "iub":
        return _nearest_gather(input, axes)
    return _checked(Interpolate(axes), input)


def _dtype_of(x):
    spec = spec_of(x)
    return spec.dtype if isinstance(spec, TensorSpec) else np.asarray(x).dtype


def _nearest_gather(input, axes: tuple) -> Tensor:
    """Nearest resampling of a non-float input: a gather of the source positions along each axis."""
    nd = len(axes)
    for i, axis in enumerate(axes):
        input = take(input, Interpolate.nearest_source(np, axis), axis=i - nd)
    return input
