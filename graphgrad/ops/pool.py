"""Pooling and resampling: ``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d``, ``interpolate``.

PyTorch semantics throughout (output sizes, ``ceil_mode``, the divisor of ``avg_pool2d``, the
source pixels of ``interpolate``). Each op pairs with a linear op that is its adjoint, so
gradients of gradients are ops too:

* ``MaxPool2d`` (values) / ``MaxPool2dIndices`` (argmax, first max in a window as PyTorch);
  the gradient is ``MaxPool2dBackward``, which finds each window's first maximum by comparing the
  windows with the pooled values; its own gradient (and the general path for NaN or infinite
  maxima) goes through ``TakeSpatial``/``ScatterSpatial``, adjoints of each other;
* ``AvgPool2d`` / ``AvgPool2dBackward``: sums over kernel offsets (loops over the kernel, never
  over pixels);
* ``AdaptiveAvgPool2d`` and ``Interpolate``: separable, one small matrix per spatial axis
  (``y = A_h @ x @ A_w^T``); the adjoint multiplies by the transposed matrices.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.conv import (_checked, _float_dtype, _ntuple, _offset_slices, _offsets, _padded, _shape_of,
                                _shown)

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


def _pool_geometry(fn: str, shape: tuple, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    """Output spatial sizes of a 2-D pooling of ``shape`` (``(..., H, W)``); ``ShapeError`` naming
    ``fn`` for a bad padding or an empty output."""
    if len(shape) not in (3, 4):
        raise ShapeError(f"{fn}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape {_shown(shape)}")
    for k, p in zip(kernel, padding):
        if p > k // 2:
            raise ShapeError(f"{fn}: padding should be at most half of the kernel size, got padding={padding} "
                             f"for kernel_size={kernel}")
    out = tuple(_pool_out_size(shape[-2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                for i in range(2))
    if any(o is not None and o < 1 for o in out):
        raise ShapeError(f"{fn}: input of shape {_shown(shape)} is too small for kernel_size={kernel}, "
                         f"padding={padding}, dilation={dilation}: the output would be {out}")
    return out


def _buffer_sizes(sizes, out, kernel, stride, padding, dilation) -> tuple:
    """Padded lengths holding the input and every window (ceil_mode windows may run past the padding)."""
    return tuple(max(p + n + p, (o - 1) * s + d * (k - 1) + 1)
                 for n, o, k, s, p, d in zip(sizes, out, kernel, stride, padding, dilation))


def _pool_args(fn: str, kernel_size, stride, padding, dilation) -> tuple:
    kernel = _ntuple(fn, "kernel_size", kernel_size, 2, 1)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(fn, "stride", stride, 2, 1)
    return kernel, stride, _ntuple(fn, "padding", padding, 2, 0), _ntuple(fn, "dilation", dilation, 2, 1)


class _Pool2d(Op):
    fn = "pool2d"

    def _geometry(self, shape):
        return _pool_geometry(self.fn, shape, self.kernel_size, self.stride, self.padding,
                              getattr(self, "dilation", (1, 1)), self.ceil_mode)

    def _windows_of(self, xp, x, value):
        """(output sizes, padded buffer, list of (kernel offset, slices of the buffer))."""
        dilation = getattr(self, "dilation", (1, 1))
        out = self._geometry(x.shape)
        sizes = _buffer_sizes(x.shape[-2:], out, self.kernel_size, self.stride, self.padding, dilation)
        buf = _padded(xp, x, tuple((p, p) for p in self.padding), sizes, value)
        views = [(o, (Ellipsis,) + _offset_slices(o, out, self.stride, dilation)) for o in _offsets(self.kernel_size)]
        return out, buf, views


# ---- max pooling -----------------------------------------------------------------------------------
class MaxPool2d(_Pool2d):
    """Maximum over each (dilated) window; padding counts as ``-inf``. NaN propagates."""
    onnx = "MaxPool"

    def onnx_attributes(self, opset):
        return {"kernel_shape": self.kernel_size, "strides": self.stride, "pads": self.padding * 2,
                "dilations": self.dilation, "ceil_mode": int(self.ceil_mode)}

    fn = "max_pool2d"
    props = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def __init__(self, kernel_size: tuple, stride: tuple, padding: tuple = (0, 0), dilation: tuple = (1, 1),
                 ceil_mode: bool = False):
        self.kernel_size, self.stride = tuple(kernel_size), tuple(stride)
        self.padding, self.dilation, self.ceil_mode = tuple(padding), tuple(dilation), bool(ceil_mode)

    def infer(self, x):
        if x.dtype.kind not in "iuf":
            raise DTypeError(f"{self.fn}: expected a numeric input, got {x.dtype}")
        return TensorSpec(x.shape[:-2] + self._geometry(x.shape), x.dtype)

    def forward(self, xp, x):
        low = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        out, buf, views = self._windows_of(xp, x, low)
        if len(views) == 1:
            return buf[views[0][1]].copy()
        result = xp.maximum(buf[views[0][1]], buf[views[1][1]])
        for _, view in views[2:]:
            xp.maximum(result, buf[view], out=result)
        return result

    def backward(self, inputs, out, g):
        return (MaxPool2dBackward(*self._args()).apply(inputs[0], out, g),)

    def _args(self) -> tuple:
        return self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode


class MaxPool2dIndices(MaxPool2d):
    """Where each window's maximum is: the flat index ``h * W + w`` into the input's ``H x W`` plane
    (PyTorch's ``return_indices``); the first maximum in row-major window order, the last NaN."""
    onnx = None  # ONNX indices count over N*C*H*W, not per plane

    fn = "max_pool2d"

    def infer(self, x):
        spec = super().infer(x)
        return TensorSpec(spec.shape, np.int64)

    def forward(self, xp, x):
        low = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        out, buf, views = self._windows_of(xp, x, low)
        (h, w), (sh, sw), (ph, pw), (dh, dw) = x.shape[-2:], self.stride, self.padding, self.dilation
        rows = xp.arange(out[0]).reshape(-1, 1) * sh - ph  # first row/column of each window
        cols = xp.arange(out[1]).reshape(1, -1) * sw - pw
        shape = x.shape[:-2] + out
        best = xp.full(shape, low, dtype=x.dtype)
        local = xp.zeros(shape, dtype=xp.int32)  # the winning kernel offset, row-major
        seen, seen_all = xp.zeros(out, dtype=bool), False
        for k, (offset, view) in enumerate(views):
            v = buf[view]
            r, c = rows + offset[0] * dh, cols + offset[1] * dw
            valid = (r >= 0) & (r < h) & (c >= 0) & (c < w)
            valid = None if bool(valid.all()) else valid
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
        kw = self.kernel_size[1]
        table = xp.asarray([(k // kw) * dh * w + (k % kw) * dw for k in range(len(views))], dtype=xp.int64)
        flat = (rows * w + cols) + table[local]
        return xp.clip(flat, 0, h * w - 1, out=flat)  # (a window of padding only, impossible in PyTorch)

    def backward(self, inputs, out, g):
        return (None,)


class MaxPool2dBackward(MaxPool2d):
    """The gradient of :class:`MaxPool2d`: ``g`` (one value per window) routed to the first maximum of
    each window of ``x``, found by comparing the windows with their maxima ``out`` (the op's output)
    offset by offset; windows with a NaN or an infinite maximum take the general path
    (:class:`MaxPool2dIndices`, then :class:`ScatterSpatial`)."""
    onnx = None

    def infer(self, x, out, g):
        return TensorSpec(x.shape, g.dtype)

    def forward(self, xp, x, out, g):
        size = x.shape[-2:]
        if x.dtype.kind != "f" or not bool(xp.isfinite(out).all()):
            index = MaxPool2dIndices(*self._args()).forward(xp, x)
            return ScatterSpatial(size).forward(xp, g, index)
        out_size, buf, views = self._windows_of(xp, x, -xp.inf)
        exact = self.padding == (0, 0) and buf.shape[-2:] == size  # no padding, no ceil_mode overhang
        overlap = any(s < d * (k - 1) + 1 for k, s, d in zip(self.kernel_size, self.stride, self.dilation))
        tiled = exact and not overlap and all(o * k == n for o, k, n in zip(out_size, self.kernel_size, size))
        shape = x.shape[:-2] + buf.shape[-2:]
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
            (ph, pw), (h, w) = self.padding, size
            gx = xp.ascontiguousarray(gx[..., ph:ph + h, pw:pw + w])
        return gx

    def backward(self, inputs, out, g):
        x = inputs[0]
        index = MaxPool2dIndices(*self._args()).apply(x)
        return None, None, TakeSpatial(2).apply(g, index)


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

    Example:
        >>> gg.max_pool2d(gg.randn(8, 16, 28, 28), 2).shape
        (8, 16, 14, 14)
    """
    kernel, stride, padding, dilation = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    _pool_geometry("max_pool2d", _shape_of(input), kernel, stride, padding, dilation, ceil_mode)
    if return_indices:
        index = MaxPool2dIndices(kernel, stride, padding, dilation, ceil_mode).apply(input)
        return TakeSpatial(2).apply(input, index), index
    return _checked(MaxPool2d(kernel, stride, padding, dilation, ceil_mode), input)


# ---- average pooling -------------------------------------------------------------------------------
class AvgPool2d(_Pool2d):
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

    def __init__(self, kernel_size: tuple, stride: tuple, padding: tuple = (0, 0), ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Optional[int] = None):
        self.kernel_size, self.stride, self.padding = tuple(kernel_size), tuple(stride), tuple(padding)
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = None if divisor_override is None else int(divisor_override)

    def infer(self, x):
        return TensorSpec(x.shape[:-2] + self._geometry(x.shape), _float_dtype(self.fn, x))

    def _divisor(self, xp, dtype, sizes, out):
        """PyTorch's ``avg_pool2d`` divisor per output position (``(H_out, W_out)``, or a number)."""
        if self.divisor_override is not None:
            return self.divisor_override
        counts = []
        for i in range(2):
            start = xp.arange(out[i]) * self.stride[i] - self.padding[i]
            end = xp.minimum(start + self.kernel_size[i], sizes[i] + self.padding[i])
            if self.count_include_pad:
                n = end - start
            else:
                n = xp.minimum(end, sizes[i]) - xp.maximum(start, 0)
            counts.append(n.reshape((-1, 1) if i == 0 else (1, -1)))
        return (counts[0] * counts[1]).astype(dtype)

    def forward(self, xp, x):
        out, buf, views = self._windows_of(xp, x, 0)
        total = None
        for _, view in views:
            total = buf[view].copy() if total is None else xp.add(total, buf[view], out=total)
        return total / self._divisor(xp, x.dtype, x.shape[-2:], out)

    def backward(self, inputs, out, g):
        size = tuple(_shape_of(inputs[0])[-2:])
        return (AvgPool2dBackward(size, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                  self.count_include_pad, self.divisor_override).apply(g),)


class AvgPool2dBackward(AvgPool2d):
    """The adjoint of :class:`AvgPool2d` for an input of spatial ``size``: spreads each gradient
    value, divided by its window's divisor, over the window."""
    onnx = None

    props = ("size",) + AvgPool2d.props

    def __init__(self, size: tuple, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.size = tuple(size)

    def infer(self, g):
        return TensorSpec(tuple(g.shape[:-2]) + self.size, _float_dtype(self.fn, g))

    def forward(self, xp, g):
        out = tuple(g.shape[-2:])
        sizes = _buffer_sizes(self.size, out, self.kernel_size, self.stride, self.padding, (1, 1))
        scaled = g / self._divisor(xp, g.dtype, self.size, out)
        buf = xp.zeros(g.shape[:-2] + sizes, dtype=g.dtype)
        for offset in _offsets(self.kernel_size):
            buf[(Ellipsis,) + _offset_slices(offset, out, self.stride, (1, 1))] += scaled
        crop = tuple(slice(p, p + n) for p, n in zip(self.padding, self.size))
        return xp.ascontiguousarray(buf[(Ellipsis,) + crop])

    def backward(self, inputs, out, g):
        return (AvgPool2d(self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                          self.divisor_override).apply(g),)


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

    Example:
        >>> gg.avg_pool2d(gg.randn(2, 3, 8, 8), 2).shape
        (2, 3, 4, 4)
    """
    kernel, stride, padding, _ = _pool_args("avg_pool2d", kernel_size, stride, padding, 1)
    if divisor_override is not None and int(divisor_override) == 0:
        raise ValueError("avg_pool2d: divisor_override must be non-zero")
    _pool_geometry("avg_pool2d", _shape_of(input), kernel, stride, padding, (1, 1), ceil_mode)
    return _checked(AvgPool2d(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override), input)


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
            else:  # axis -2: make it the last one, multiply, move it back
                lead, rest = x.shape[:-2], x.shape[-1]
                moved = xp.ascontiguousarray(x.swapaxes(-1, -2)).reshape(-1, x.shape[-2])
                x = xp.ascontiguousarray((moved @ a.T).reshape(lead + (rest, a.shape[0])).swapaxes(-1, -2))
        return x

    def backward(self, inputs, out, g):
        return (type(self)(self.axes, not self.transpose).apply(g),)


class AdaptiveAvgPool2d(_Resample):
    """Mean over PyTorch's adaptive windows ``[floor(i*in/out), ceil((i+1)*in/out))`` per axis;
    ``axes`` holds ``(in, out)`` per spatial axis."""

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
    ``(in, out, mode, align_corners, scale_factor or None)`` per spatial axis."""

    fn = "interpolate"

    def _matrix(self, xp, dtype, axis):
        n_in, n_out, mode, align_corners, scale = axis
        cols = xp.arange(n_in)[None, :]
        if mode == "nearest":
            if n_out == n_in:
                src = xp.arange(n_out)
            elif n_out == 2 * n_in:
                src = xp.arange(n_out) // 2
            else:  # PyTorch computes this in float32 whatever the input dtype
                f32 = xp.float32
                step = xp.asarray(1.0 / scale, dtype=f32) if scale else xp.asarray(n_in, f32) / xp.asarray(n_out, f32)
                src = xp.minimum(xp.floor(xp.arange(n_out, dtype=f32) * step).astype(xp.int64), n_in - 1)
            return (src[:, None] == cols).astype(dtype)
        # linear, in the input's float type (PyTorch's opmath type)
        if align_corners:
            step = xp.asarray((n_in - 1) if n_out > 1 else 0, dtype) / xp.asarray(max(n_out - 1, 1), dtype)
        elif scale:
            step = xp.asarray(1.0 / scale, dtype)
        else:
            step = xp.asarray(n_in, dtype) / xp.asarray(n_out, dtype)
        dst = xp.arange(n_out, dtype=dtype)
        real = step * dst if align_corners else xp.maximum(step * (dst + 0.5) - 0.5, 0)
        i0 = xp.minimum(xp.floor(real).astype(xp.int64), n_in - 1)
        lam = xp.clip(real - i0, 0, 1).astype(dtype)
        i1 = i0 + (i0 < n_in - 1)
        m = (1 - lam)[:, None] * (cols == i0[:, None]) + lam[:, None] * (cols == i1[:, None])
        return m.astype(dtype)


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


def adaptive_avg_pool2d(input, output_size: Union[int, Sequence[Optional[int]]]) -> Tensor:
    """Average pooling to a fixed output size, as PyTorch's ``F.adaptive_avg_pool2d``.

    Args:
        input: ``(N, C, H, W)`` (or ``(C, H, W)``).
        output_size: ``S`` or ``(S_h, S_w)``; a ``None`` entry keeps that input size.

    Returns:
        ``(N, C, S_h, S_w)``; output ``i`` averages input rows ``floor(i*H/S_h)`` to
        ``ceil((i+1)*H/S_h) - 1`` (likewise for columns).

    Example:
        >>> gg.adaptive_avg_pool2d(gg.randn(2, 8, 7, 7), 1).shape   # global average pooling
        (2, 8, 1, 1)
    """
    shape = _shape_of(input)
    if len(shape) not in (3, 4):
        raise ShapeError(f"adaptive_avg_pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, "
                         f"got shape {_shown(shape)}")
    sizes = tuple(shape[-2:])
    if None in sizes:
        raise ShapeError(f"adaptive_avg_pool2d: needs known spatial sizes, got input shape {_shown(shape)}")
    out = _output_size("adaptive_avg_pool2d", output_size, sizes)
    return _checked(AdaptiveAvgPool2d(tuple(zip(sizes, out))), input)


_MODES = {"nearest": (3, 4), "linear": (3,), "bilinear": (4,), "area": (3, 4)}


def interpolate(input, size: Optional[IntOrTuple] = None, scale_factor: Optional[Union[float, Sequence[float]]] = None,
                mode: str = "nearest", align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None) -> Tensor:
    """Resize ``(N, C, H, W)`` (or ``(N, C, L)``) input, matching PyTorch's ``F.interpolate``.

    Args:
        input: ``(N, C, L)`` for ``'nearest'``/``'linear'``/``'area'``, ``(N, C, H, W)`` for
            ``'nearest'``/``'bilinear'``/``'area'``.
        size: output spatial size (int or tuple); or
        scale_factor: multiplier(s); the output size is ``floor(in * scale_factor)``, and, as in
            PyTorch, the source positions use ``1 / scale_factor`` (unless ``recompute_scale_factor``).
        mode: ``'nearest'`` (source ``floor(dst * in/out)``), ``'linear'``/``'bilinear'``, or
            ``'area'`` (adaptive average pooling).
        align_corners: linear modes only: align the corner pixels' centers (default ``False``).

    Returns:
        ``(N, C, *size)``.

    Example:
        >>> gg.interpolate(gg.randn(1, 3, 4, 4), scale_factor=2, mode="bilinear").shape
        (1, 3, 8, 8)
    """
    fn = "interpolate"
    if mode not in _MODES:
        raise ValueError(f"{fn}: mode must be one of {sorted(_MODES)}, got {mode!r}")
    shape = _shape_of(input)
    if len(shape) not in _MODES[mode]:
        wanted = " or ".join(f"{n}-D" for n in _MODES[mode])
        raise ShapeError(f"{fn}: mode={mode!r} expects a {wanted} input, got shape {_shown(shape)}")
    if align_corners is not None and mode not in ("linear", "bilinear"):
        raise ValueError(f"{fn}: align_corners can only be set with the linear modes, not mode={mode!r}")
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
        return _checked(AdaptiveAvgPool2d(tuple(zip(sizes, out))), input)
    kind = "nearest" if mode == "nearest" else "linear"
    align = bool(align_corners)
    return _checked(Interpolate(tuple((n, o, kind, align, s) for n, o, s in zip(sizes, out, scales))), input)
