"""Convolutions: ``conv1d``/``conv2d``/``conv3d`` and ``conv_transpose1d``/``2d``/``3d`` (NCL / NCHW / NCDHW).

Three primitives, closed under differentiation, so every gradient (and gradient of a gradient) is
itself a convolution:

* ``Conv1d``/``Conv2d``/``Conv3d`` (``y = conv(x, w)``): im2col through a strided view of the padded input and
  matmuls stacked over groups (and samples; see the kernels section);
* ``ConvTranspose1d``/``2d``/``3d`` (``conv``'s adjoint in ``x``): one matmul, then col2im
  by a loop over the kernel offsets (never over pixels);
* ``ConvWeightGrad`` (``conv``'s adjoint in ``w``): the correlation of the input with the upstream
  gradient, again im2col plus one matmul.

For 2-D float32 NumPy arrays, when native kernels are on, im2col and col2im are one pass each of a
C kernel (``backend/native/conv_pool.c``) and run a few samples at a time, each chunk's cols
multiplied while still in cache (see "native kernels" below); the matmuls stay NumPy's.

Depthwise 1-D and 2-D convolutions (one input channel per group) compute the same three by shift-and-add over
the kernel offsets instead (``ops/depthwise.py``).

With ``<., .>`` the sum of elementwise products, ``<g, conv(x, w)> = <convT(g, w), x> =
<wgrad(x, g), w>``; every backward below is one of these three identities.

Padding is stored as ``(low, high)`` pairs per spatial axis, so torch's ``padding='same'`` with an
even effective kernel (more padding at the end) is an ordinary convolution.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from graphgrad.backend import blas, native, np
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec, spec_of
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import check_same_float
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops import depthwise
from graphgrad.ops.shape import expand_dims, reshape, squeeze

IntOrTuple = Union[int, Sequence[int]]


# ---- argument and shape helpers (shared with pool.py) ----------------------------------------------
def _ntuple(fn: str, what: str, value, nd: int, minimum: int = 0) -> tuple:
    """``value`` (an int or a sequence of ``nd`` ints) as a tuple of ``nd`` ints ``>= minimum``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        out = (int(value),) * nd
    else:
        try:
            out = tuple(int(v) for v in value)
        except TypeError:
            raise TypeError(f"{fn}: {what} must be an int or a tuple of {nd} ints, got {value!r}") from None
        if len(out) == 1:
            out = out * nd
        if len(out) != nd:
            raise ShapeError(f"{fn}: {what} must be an int or a tuple of {nd} ints, got {value!r}")
    if any(v < minimum for v in out):
        raise ShapeError(f"{fn}: {what} must be >= {minimum}, got {value!r}")
    return out


def _shape_of(x) -> tuple:
    """The (possibly partly unknown) shape of a Tensor, array or spec."""
    s = spec_of(x)
    return tuple(s.shape) if isinstance(s, TensorSpec) else tuple(np.shape(x))


def _float_dtype(fn: str, *specs) -> np.dtype:
    """The promoted dtype of tensor specs; ``DTypeError`` unless it is a float dtype (one float dtype:
    a float64 input into a float32 convolution is refused, as PyTorch does)."""
    check_same_float(fn, *[s.dtype for s in specs])
    dtype = np.result_type(*[s.dtype for s in specs])
    if dtype.kind != "f":
        shown = ", ".join(str(s.dtype) for s in specs)
        raise DTypeError(f"{fn}: expected floating-point inputs, got {shown}")
    return dtype


def _padded(xp, x, pads: tuple, sizes: Optional[tuple] = None, value=0):
    """``x`` with its trailing ``len(pads)`` axes padded by ``(low, high)`` pairs and filled with
    ``value``; ``sizes`` (optional) overrides the padded lengths (the extra room stays ``value``)."""
    nd = len(pads)
    lead = x.shape[:x.ndim - nd]
    if sizes is None:
        sizes = tuple(x.shape[x.ndim - nd + i] + lo + hi for i, (lo, hi) in enumerate(pads))
    if all(lo == 0 for lo, _ in pads) and tuple(sizes) == x.shape[x.ndim - nd:]:
        return x
    out = xp.full(lead + tuple(sizes), value, dtype=x.dtype)
    inner = tuple(slice(lo, lo + x.shape[x.ndim - nd + i]) for i, (lo, _) in enumerate(pads))
    out[(Ellipsis,) + inner] = x
    return out


def _windows(xp, x, out_size: tuple, kernel: tuple, stride: tuple, dilation: tuple):
    """Strided view (never written to) of shape ``lead + out_size + kernel``: window ``o`` of the trailing
    ``nd`` axes of ``x``, element ``k`` at ``o * stride + k * dilation``."""
    nd = len(kernel)
    lead = x.ndim - nd
    st = x.strides
    strides = st[:lead] + tuple(st[lead + i] * stride[i] for i in range(nd)) \
        + tuple(st[lead + i] * dilation[i] for i in range(nd))
    return xp.lib.stride_tricks.as_strided(x, x.shape[:lead] + tuple(out_size) + tuple(kernel), strides)


def _offset_slices(offset: tuple, out_size: tuple, stride: tuple, dilation: tuple) -> tuple:
    """Slices of the trailing axes selecting the elements at kernel ``offset`` of every window."""
    return tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, o, s, d in zip(offset, out_size, stride, dilation))


def _conv_out_size(size, k: int, s: int, d: int, lo: int, hi: int):
    """Output length of a convolution along one axis (``None`` when ``size`` is unknown)."""
    return None if size is None else (size + lo + hi - d * (k - 1) - 1) // s + 1


def _shown(shape) -> str:
    return str(tuple(shape))


def _checked(op: Op, *inputs) -> Tensor:
    """``op.apply(*inputs)`` after running its shape/dtype rule, so eager calls get the same errors as
    graph mode (forward alone would accept, say, integer inputs or produce an empty output)."""
    if not any(isinstance(x, Tensor) and x._data is None for x in inputs):  # graph mode checks it itself
        op.infer(*[spec_of(x) for x in inputs])
    return op.apply(*inputs)


# ---- kernels (backend arrays) ----------------------------------------------------------------------
# Every window of the padded input is copied once into "cols", in an order whose inner axis is a
# row of output positions (contiguous reads and writes), and each product is a matmul stacked over
# groups (no Python loop over groups) in one of two layouts:
# * per sample, cols (N, G, C/G * prod(kernel), prod(out)): N GEMMs per group, whose results are
#   already in (N, C, *out) order, so nothing is transposed;
# * whole batch, cols (G, C/G * prod(kernel), N * prod(out)): one GEMM per group, at the price of
#   transposing the output (or the incoming gradient) between (N, C, ...) and (C, N, ...).
# Per-sample GEMMs are thin when images are small (a 7x7 output is 49 columns) and BLAS then runs
# far below its peak; above _PER_SAMPLE output positions they are as fast as one big GEMM, and the
# transposing copies decide (measured on the W2 layers and 8x8 / 14x14 maps).
# Depthwise convolutions (one input channel per group) have no useful GEMM: see ops/depthwise.py.
_PER_SAMPLE = 256
_PER_SAMPLE_WEIGHT_GRAD = 128  # its per-sample form skips a transpose of the gradient, so wins sooner


def _per_sample(n: int, out: tuple, threshold: int = _PER_SAMPLE) -> bool:
    return n > 1 and math.prod(out) >= threshold


def _im2col(xp, x, out, kernel, stride, padding, dilation, groups, per_sample: bool):
    """Every window of the padded input, copied once: (N, G, C/G * prod(kernel), prod(out)) per
    sample, else (G, C/G * prod(kernel), N * prod(out))."""
    nd = len(kernel)
    n, c = x.shape[:2]
    win = _windows(xp, _padded(xp, x, padding), out, kernel, stride, dilation)  # (n, c, *out, *k)
    win = win.reshape((n, groups, c // groups) + tuple(out) + tuple(kernel))
    k_axes, out_axes = tuple(range(3 + nd, 3 + 2 * nd)), tuple(range(3, 3 + nd))
    rows = (c // groups) * math.prod(kernel)
    if per_sample:
        return win.transpose((0, 1, 2) + k_axes + out_axes).reshape(n, groups, rows, math.prod(out))
    return win.transpose((1, 2) + k_axes + (0,) + out_axes).reshape(groups, rows, n * math.prod(out))


def _channels_first(xp, y, groups):
    """(N, G*C, *S) -> (G, C, N * prod(S)) (a copy unless N == 1)."""
    n, c = y.shape[:2]
    if n == 1:
        return y.reshape(groups, c // groups, -1)
    size = math.prod(y.shape[2:])  # (not -1: an empty batch leaves it undetermined)
    return xp.ascontiguousarray(y.reshape(n, groups, c // groups, size).transpose(1, 2, 0, 3)) \
        .reshape(groups, c // groups, n * size)


def _batch_first(xp, y, n, size):
    """(C, N * prod(size)) -> (N, C, *size) (a copy unless N == 1)."""
    c = y.shape[0]
    if n == 1:
        return y.reshape((1, c) + tuple(size))
    return xp.ascontiguousarray(y.reshape(c, n, math.prod(size)).swapaxes(0, 1)).reshape((n, c) + tuple(size))


def _scatter_range(size_in: int, size_out: int, k: int, s: int, d: int, lo: int):
    """(source slice, destination slice) along one axis for kernel offset ``k``: input position ``i``
    lands on output position ``i * s + k * d - lo`` when that is inside ``[0, size_out)``; ``None``
    when no position does."""
    shift = k * d - lo
    first = max(0, -(shift // s))  # ceil(-shift / s)
    last = min(size_in - 1, (size_out - 1 - shift) // s)
    if last < first:
        return None
    return slice(first, last + 1), slice(first * s + shift, last * s + shift + 1, s)


def _col2im(xp, cols, out_size: tuple, stride, padding, dilation):
    """The adjoint of im2col: ``cols`` of shape (N, C, *kernel, *size_in) summed into a zero
    (N, C, *out_size) array, offset by offset (a loop over the kernel, never over pixels)."""
    nd = len(out_size)
    kernel, size_in = cols.shape[2:2 + nd], cols.shape[2 + nd:]
    parts = []  # (source, destination) index tuples
    for offset in _offsets(kernel):
        ranges = [_scatter_range(size_in[i], out_size[i], offset[i], stride[i], dilation[i], padding[i][0])
                  for i in range(nd)]
        if None not in ranges:
            parts.append(((slice(None),) * 2 + offset + tuple(src for src, _ in ranges),
                          (Ellipsis,) + tuple(dst for _, dst in ranges)))
    whole = (Ellipsis,) + tuple(slice(0, o, 1) for o in out_size)
    first = next((i for i, (_, dst) in enumerate(parts) if dst == whole), None)
    if first is None:  # no offset covers the whole output: start from zeros
        out = xp.zeros(cols.shape[:2] + tuple(out_size), dtype=cols.dtype)
    else:  # (the centre of a 'same' convolution) start from a copy of it
        out = xp.ascontiguousarray(cols[parts.pop(first)[0]])
    for src, dst in parts:
        out[dst] += cols[src]
    return out


# ---- native kernels (2-D, float32 NumPy arrays): im2col and col2im in C, a few samples at a time ----
# The cols of a chunk of samples (about _CHUNK_BYTES) are made and multiplied while they are still in
# the CPU's cache, instead of the whole batch's cols going through memory twice (W2's layers, 2 BLAS
# threads: forward 1.4-1.6x, weight gradient 1.1-1.3x faster than whole-batch cols). Per-sample
# GEMMs write (N, C, *out) directly, so nothing is transposed. Same windows and sums as the NumPy
# path; only the GEMMs' blocking differs, by float32 rounding.
_CHUNK_BYTES = 1 << 20
# Below this many output positions a chunk's cols go in the whole-chunk layout (rows, k * p), one
# GEMM per group: per-sample GEMMs of so few columns run far below BLAS's peak.
_NATIVE_PER_SAMPLE = 128


def _native_windows(name: str, *arrays):
    """The native float32 kernel ``name`` of 2-D im2col/col2im (backend/native/conv_pool.c) when
    ``arrays`` are float32 NumPy arrays and native kernels are on, else ``None`` (the NumPy path)."""
    fn = native.kernel(name)
    if fn is None or any(type(a) is not np.ndarray or a.dtype != np.float32 for a in arrays):
        return None
    return fn


def _native_im2col_pays(x_shape, out, stride) -> bool:
    """Whether the native im2col beats NumPy's strided copy: its rows are long runs ('same' stride-1
    convolutions) or at least 16 wide (narrower strided or 'valid' rows: 0.85-0.95x, measured)."""
    return (tuple(stride) == (1, 1) and out[1] == x_shape[3]) or out[1] >= 16


def _chunk(n: int, rows: int, positions: int) -> int:
    """Samples per chunk: cols of (rows, positions) float32 each, about _CHUNK_BYTES in all."""
    return max(1, min(n, _CHUNK_BYTES // max(1, 4 * rows * positions)))


def _window_args(x_shape, out, kernel, stride, padding, dilation) -> tuple:
    """The geometry arguments of the im2col/col2im kernels after the sample count and channels."""
    return (*x_shape[2:], *out, *kernel, *stride, padding[0][0], padding[1][0], *dilation)


def _native_conv_forward(fn, x, w, out, stride, padding, dilation, groups):
    """Conv2d forward: im2col (``fn``) and the GEMMs per chunk of samples."""
    x = np.ascontiguousarray(x)
    n, c = x.shape[:2]
    co, kernel = w.shape[0], tuple(w.shape[2:])
    rows, positions = c * math.prod(kernel), math.prod(out)
    m = _chunk(n, rows, positions)
    buf = np.empty(m * rows * positions, dtype=np.float32)
    y = np.empty((n, groups, co // groups, positions), dtype=np.float32)
    wg = w.reshape(groups, co // groups, rows // groups)
    geometry = _window_args(x.shape, out, kernel, stride, padding, dilation)
    per_sample = positions >= _NATIVE_PER_SAMPLE
    for s in range(0, n, m):
        k = min(m, n - s)
        cols = buf[:k * rows * positions]
        if per_sample:  # (k, rows, p): k stacked GEMMs writing y's samples in place
            fn(x[s:s + k], cols, k, c, *geometry, rows * positions, positions)
            blas.matmul(wg, cols.reshape(k, groups, rows // groups, positions), out=y[s:s + k])
        else:  # (rows, k * p): one GEMM per group, its (co, k, p) result moved to (k, co, p)
            fn(x[s:s + k], cols, k, c, *geometry, positions, k * positions)
            yk = blas.matmul(wg, cols.reshape(groups, rows // groups, k * positions))
            y[s:s + k] = yk.reshape(groups, co // groups, k, positions).transpose(2, 0, 1, 3)
    return y.reshape((n, co) + tuple(out))


def _native_conv_weight_grad(fn, x, gy, kernel, stride, padding, dilation, groups):
    """ConvWeightGrad: im2col (``fn``) per chunk of samples, multiplied by the chunk's gradient and
    summed over the chunks."""
    x = np.ascontiguousarray(x)
    n, c = x.shape[:2]
    co, out = gy.shape[1], tuple(gy.shape[2:])
    rows, positions = c * math.prod(kernel), math.prod(out)
    m = _chunk(n, rows, positions)
    buf = np.empty(m * rows * positions, dtype=np.float32)
    gyg = gy.reshape(n, groups, co // groups, positions)
    geometry = _window_args(x.shape, out, kernel, stride, padding, dilation)
    if positions >= _NATIVE_PER_SAMPLE:  # each sample's cols (rows/g, p) times its gradient transposed
        gwt = np.zeros((groups, rows // groups, co // groups), dtype=np.float32)  # (faster than gw's order)
        for s in range(0, n, m):
            k = min(m, n - s)
            cols = buf[:k * rows * positions]
            fn(x[s:s + k], cols, k, c, *geometry, rows * positions, positions)
            gwt += blas.matmul(cols.reshape(k, groups, rows // groups, positions),
                             gyg[s:s + k].swapaxes(-1, -2)).sum(axis=0)
        gw = gwt.swapaxes(-1, -2)
    else:  # one GEMM per group and chunk: the chunk's gradient moved to (g, co/g, k * p)
        gw = np.zeros((groups, co // groups, rows // groups), dtype=np.float32)
        for s in range(0, n, m):
            k = min(m, n - s)
            cols = buf[:k * rows * positions]
            fn(x[s:s + k], cols, k, c, *geometry, positions, k * positions)
            gk = np.ascontiguousarray(gyg[s:s + k].transpose(1, 2, 0, 3)).reshape(groups, co // groups, k * positions)
            gw += blas.matmul(gk, cols.reshape(groups, rows // groups, k * positions).swapaxes(-1, -2))
    return gw.reshape((co, c // groups) + tuple(kernel))


def _native_conv_transpose(fn, x, wm, out, cg, kernel, stride, padding, dilation, groups):
    """ConvTranspose2d: per chunk of samples, the stacked GEMM ``wm`` (g, cg*kk, ci/g) times the input,
    then col2im (``fn``) into the output."""
    x = np.ascontiguousarray(x)
    n, ci = x.shape[:2]
    size_in = tuple(x.shape[2:])
    rows, positions = groups * cg * math.prod(kernel), math.prod(size_in)
    m = _chunk(n, rows, positions)
    cols = np.empty((m, groups, rows // groups, positions), dtype=np.float32)
    xg = x.reshape(n, groups, ci // groups, positions)
    y = np.empty((n, groups * cg) + tuple(out), dtype=np.float32)
    geometry = _window_args(y.shape, size_in, kernel, stride, padding, dilation)
    for s in range(0, n, m):
        k = min(m, n - s)
        blas.matmul(wm, xg[s:s + k], out=cols[:k])
        fn(cols[:k], y[s:s + k], k, groups * cg, *geometry, rows * positions, positions)
    return y


# ---- direct stride-1 kernels (backend/native/conv_direct.c): no im2col, split over threads -----------
# Below this many multiply-adds a call runs on one thread (a thread costs tens of microseconds).
_DIRECT_SPLIT_MULTIPLY_ADDS = 1 << 21


def _direct_threads(multiply_adds: int) -> int:
    return native.threads() if multiply_adds >= _DIRECT_SPLIT_MULTIPLY_ADDS else 1


def _direct_usable(x, other, stride, padding, groups, c: int, co: int, kernel: tuple, strided: bool = False) -> bool:
    """Whether the direct kernels take a 2-D convolution of ``c`` input and ``co`` output channels:
    float32 NumPy arrays, stride 1 (any stride for a forward: ``strided``), one group, no negative
    padding, at most 64 kernel offsets. They beat im2col and a BLAS product from 16 to 256 channels,
    7x7 to 56x56 maps (docs/performance.md), except with very few channels on large maps at stride 1
    (a 3-channel 112x112 input), where their memory traffic dominates, and strided forwards of narrow
    outputs."""
    if not (len(stride) == 2 and (strided or stride == (1, 1)) and groups == 1 and type(x) is np.ndarray
            and type(other) is np.ndarray and x.dtype == np.float32 and other.dtype == np.float32
            and all(lo >= 0 and hi >= 0 for lo, hi in padding) and math.prod(kernel) <= 64):
        return False
    if stride != (1, 1):  # (strided: a row at a time in blocks of 48 outputs, so only wide rows pay)
        out_width = (x.shape[3] + sum(padding[1]) - (kernel[1] - 1) - 1) // stride[1] + 1
        return out_width >= _DIRECT_MIN_STRIDED_WIDTH and native.kernel("conv2d_direct_f32") is not None
    thin = min(c, co) * math.prod(kernel) < 32 and math.prod(x.shape[2:]) > 4096
    return not thin and native.kernel("conv2d_direct_f32") is not None


# Output rows from which a strided forward goes direct: a 224x224 stem to 112 columns (3x3: 0.8x, 7x7:
# 0.5x of im2col and MKL on one thread); at 28 columns (64 -> 128 channels) it was 3x slower.
_DIRECT_MIN_STRIDED_WIDTH = 64


def _direct_forward(x, w, stride, padding, dilation, out):
    """Conv2d with one group: ``gg_conv2d_direct_f32``; ``None`` when the kernel declines."""
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    y = np.empty((n, co) + tuple(out), dtype=np.float32)
    ok = np.zeros(1, dtype=np.int64)
    threads = _direct_threads(n * co * c * kh * kw * math.prod(out))
    native.kernel("conv2d_direct_f32")(x, w, y, n, c, h, wd, co, kh, kw, *stride, padding[0][0], padding[1][0],
                                       padding[0][1], padding[1][1], *dilation, threads, ok)
    return y if ok[0] else None


def _direct_weight_grad(x, gy, kernel, padding, dilation):
    """ConvWeightGrad, stride 1, one group: ``gg_conv2d_s1_weight_grad_f32``; ``None`` when it declines."""
    x, gy = np.ascontiguousarray(x), np.ascontiguousarray(gy)
    n, c, h, wd = x.shape
    co = gy.shape[1]
    gw = np.empty((co, c) + tuple(kernel), dtype=np.float32)
    ok = np.zeros(1, dtype=np.int64)
    threads = _direct_threads(n * co * c * math.prod(kernel) * math.prod(gy.shape[2:]))
    native.kernel("conv2d_s1_weight_grad_f32")(x, gy, gw, n, c, h, wd, co, *kernel, padding[0][0], padding[1][0],
                                               padding[0][1], padding[1][1], *dilation, threads, ok)
    return gw if ok[0] else None


def _direct_transpose(x, w, padding, dilation, out):
    """ConvTranspose2d, stride 1, one group, as the forward kernel: the convolution of ``x`` by the
    flipped weight with its channel axes swapped, padded by ``d * (k - 1) - p`` on each side (``None``
    when a side would need cropping instead, or the kernel declines)."""
    kernel = tuple(w.shape[2:])
    pads = tuple((d * (k - 1) - lo, d * (k - 1) - hi) for k, d, (lo, hi) in zip(kernel, dilation, padding))
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        return None
    flipped = np.ascontiguousarray(w[:, :, ::-1, ::-1].swapaxes(0, 1))
    return _direct_forward(x, flipped, (1, 1), pads, dilation, out)


def _conv_forward(xp, x, w, stride, padding, dilation, groups):
    nd = len(stride)
    n = x.shape[0]
    co = w.shape[0]
    kernel = tuple(w.shape[2:])
    out = tuple(_conv_out_size(x.shape[2 + i], kernel[i], stride[i], dilation[i], *padding[i]) for i in range(nd))
    if nd == 2 and w.shape[1] == 1 and groups == x.shape[1] > 1:  # depthwise: the native kernel, any stride
        y = depthwise.native_forward(xp, x, w, out, stride, padding, dilation)
        if y is not None:
            return y
    if nd <= 2 and w.shape[1] == 1 and groups > 1 and depthwise.usable(stride, out, co, x, w):
        return depthwise.forward(xp, x, w, out, stride, padding, dilation)
    if groups == 1 and _pointwise(kernel, stride, padding):
        return _pointwise_forward(xp, x, w, out)
    if _direct_usable(x, w, stride, padding, groups, x.shape[1], co, kernel, strided=True):
        y = _direct_forward(x, w, stride, padding, dilation, out)
        if y is not None:
            return y
    fn = _native_windows("im2col2d_f32", x, w) if nd == 2 and _native_im2col_pays(x.shape, out, stride) else None
    if fn is not None:
        return _native_conv_forward(fn, x, w, out, stride, padding, dilation, groups)
    per_sample = _per_sample(n, out)
    cols = _im2col(xp, x, out, kernel, stride, padding, dilation, groups, per_sample)
    y = blas.xp_matmul(xp, w.reshape(groups, co // groups, -1), cols)
    if per_sample:  # (n, g, co/g, p)
        return y.reshape((n, co) + out)
    return _batch_first(xp, y.reshape(co, -1), n, out)  # from (g, co/g, n*p)


def _pointwise(kernel: tuple, stride: tuple, padding: tuple) -> bool:
    """A 1x1 convolution with stride 1 and no padding: a matrix product over the channels."""
    return all(k == 1 for k in kernel) and all(s == 1 for s in stride) and not any(lo or hi for lo, hi in padding)


def _pointwise_forward(xp, x, w, out):
    """y (N, C_out, *S) = w (C_out, C_in) times each sample's (C_in, prod(S)), no window copies; a 1x1
    map (squeeze-excitation) is one (N, C_in) x (C_in, C_out) product."""
    n, c = x.shape[:2]
    co = w.shape[0]
    w2 = w.reshape(co, c)
    if math.prod(out) == 1:
        return blas.xp_matmul(xp, x.reshape(n, c), w2.T).reshape((n, co) + out)
    if n == 1:  # one 2-D product (a stack of one costs the batched path's setup: 1.4x on MobileNet's 7x7 layers)
        return blas.xp_matmul(xp, w2, x.reshape(c, -1)).reshape((n, co) + out)
    return blas.xp_matmul(xp, w2, x.reshape(n, c, -1)).reshape((n, co) + out)


def _conv_weight_grad(xp, x, gy, kernel, stride, padding, dilation, groups):
    n, c = x.shape[:2]
    co, out = gy.shape[1], tuple(gy.shape[2:])
    if len(kernel) <= 2 and c == groups > 1 and depthwise.usable(stride, out, co, x, gy):
        return depthwise.weight_grad(xp, x, gy, kernel, stride, padding, dilation)
    if _direct_usable(x, gy, stride, padding, groups, c, co, kernel):
        gw = _direct_weight_grad(x, gy, kernel, padding, dilation)
        if gw is not None:
            return gw
    fn = _native_windows("im2col2d_f32", x, gy) if len(kernel) == 2 and _native_im2col_pays(x.shape, out, stride) \
        else None
    if fn is not None:
        return _native_conv_weight_grad(fn, x, gy, kernel, stride, padding, dilation, groups)
    per_sample = _per_sample(n, out, _PER_SAMPLE_WEIGHT_GRAD)
    cols = _im2col(xp, x, out, kernel, stride, padding, dilation, groups, per_sample)
    if per_sample:
        gyg = gy.reshape(n, groups, co // groups, -1)
        gw = blas.xp_matmul(xp, cols, gyg.swapaxes(-1, -2)).sum(axis=0).swapaxes(-1, -2)  # (g, co/g, c/g * kk)
    else:
        gw = blas.xp_matmul(xp, _channels_first(xp, gy, groups), cols.swapaxes(1, 2))
    return gw.reshape((co, c // groups) + tuple(kernel))


def _conv_transpose_forward(xp, x, w, stride, padding, output_padding, dilation, groups):
    nd = len(stride)
    n, ci = x.shape[:2]
    cg = w.shape[1]
    kernel = tuple(w.shape[2:])
    size_in = tuple(x.shape[2:])
    out = tuple((size_in[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + output_padding[i]
                - padding[i][0] - padding[i][1] for i in range(nd))
    if nd <= 2 and ci == groups > 1 and depthwise.transpose_usable(stride, x, w):
        return depthwise.transpose(xp, x, w, out, stride, padding, dilation)
    if not any(output_padding) and _direct_usable(x, w, stride, ((0, 0),) * nd, groups, ci, cg, kernel):
        y = _direct_transpose(x, w, padding, dilation, out)
        if y is not None:
            return y
    wm = w.reshape(groups, ci // groups, -1).swapaxes(1, 2)  # (g, cg*kk, ci/g)
    fn = _native_windows("col2im2d_f32", x, w) if nd == 2 else None
    if fn is not None:
        return _native_conv_transpose(fn, x, wm, out, cg, kernel, stride, padding, dilation, groups)
    if _per_sample(n, size_in):
        cols = blas.xp_matmul(xp, wm, x.reshape(n, groups, ci // groups, -1))  # (n, g, cg*kk, p_in)
        cols = cols.reshape((n, groups * cg) + kernel + size_in)
    else:
        cols = blas.xp_matmul(xp, wm, _channels_first(xp, x, groups))  # (g, cg*kk, n*p_in)
        cols = xp.moveaxis(cols.reshape((groups * cg,) + kernel + (n,) + size_in), 1 + nd, 0)
    return _col2im(xp, cols, out, stride, padding, dilation)


def _offsets(kernel: tuple):
    """Every kernel offset (a tuple of ints), in row-major order."""
    if len(kernel) == 1:
        return [(i,) for i in range(kernel[0])]
    out = [()]
    for k in kernel:
        out = [o + (i,) for o in out for i in range(k)]
    return out


def _output_padding(x_shape: tuple, gy_shape: tuple, kernel: tuple, stride, padding, dilation) -> tuple:
    """The ``output_padding`` that makes the transposed convolution of ``gy`` give ``x``'s size."""
    out = []
    for i, (lo, hi) in enumerate(padding):
        size, o = x_shape[2 + i], gy_shape[2 + i]
        if size is None or o is None:
            raise ShapeError("conv gradient: needs known spatial sizes in graph mode, got input "
                             f"{_shown(x_shape)} and gradient {_shown(gy_shape)}")
        out.append(size + lo + hi - dilation[i] * (kernel[i] - 1) - 1 - (o - 1) * stride[i])
    return tuple(out)


# ---- ops -------------------------------------------------------------------------------------------
def _check_ranks(nd: int, fn: str, x, w, weight_layout: str):
    """Both operands must be ``nd + 2``-D tensors; returns their common float dtype."""
    if not isinstance(x, TensorSpec) or x.ndim != nd + 2:
        raise ShapeError(f"{fn}: expected a {nd + 2}-D input (batch, channels, {_axes(nd)}), "
                         f"got shape {_shown(_shape_of(x))}")
    if not isinstance(w, TensorSpec) or w.ndim != nd + 2:
        raise ShapeError(f"{fn}: expected a {nd + 2}-D weight ({weight_layout}, {_axes(nd, 'k')}), "
                         f"got shape {_shown(_shape_of(w))}")
    return _float_dtype(fn, x, w)


class _Conv(Op):
    """``y[n, o] = sum_{c,k} x_pad[n, c, o*stride + k*dilation] * w[o_channel, c, k]`` per group."""
    onnx = "Conv"

    def onnx_attributes(self, opset):
        pads = [lo for lo, _ in self.padding] + [hi for _, hi in self.padding]
        return {"strides": self.stride, "pads": pads, "dilations": self.dilation, "group": self.groups}

    nd = 2
    fn = "conv2d"
    props = ("stride", "padding", "dilation", "groups")

    def __init__(self, stride: tuple, padding: tuple, dilation: tuple, groups: int = 1):
        self.stride = tuple(stride)
        self.padding = tuple(tuple(p) for p in padding)
        self.dilation = tuple(dilation)
        self.groups = int(groups)

    def infer(self, x, w):
        nd, fn = self.nd, self.fn
        dtype = _check_ranks(nd, fn, x, w, "out_channels, in_channels/groups")
        c, (co, cg), kernel = x.shape[1], w.shape[:2], w.shape[2:]
        if None in kernel or co is None or cg is None:
            raise ShapeError(f"{fn}: the weight shape must be known, got {_shown(w.shape)}")
        g = self.groups
        if co % g:
            raise ShapeError(f"{fn}: weight of shape {_shown(w.shape)} has {co} output channels, "
                             f"not divisible by groups={g}")
        if c is not None and c != cg * g:
            raise ShapeError(f"{fn}: input of shape {_shown(x.shape)} has {c} channels but weight of shape "
                             f"{_shown(w.shape)} expects {cg * g} (in_channels/groups={cg} * groups={g})")
        out = []
        for i in range(nd):
            size = x.shape[2 + i]
            o = _conv_out_size(size, kernel[i], self.stride[i], self.dilation[i], *self.padding[i])
            if o is not None and o < 1:
                raise ShapeError(f"{fn}: input of shape {_shown(x.shape)} padded by {self.padding} is smaller "
                                 f"than the dilated kernel of weight {_shown(w.shape)} "
                                 f"(dilation={self.dilation}): the output would be empty")
            out.append(o)
        return TensorSpec((x.shape[0], co) + tuple(out), dtype)

    def forward(self, xp, x, w):
        return _conv_forward(xp, x, w, self.stride, self.padding, self.dilation, self.groups)

    def backward(self, inputs, out, g):
        x, w = inputs
        kernel = tuple(_shape_of(w)[2:])
        gx = gw = None
        if needs_grad(x):
            op = _output_padding(_shape_of(x), _shape_of(g), kernel, self.stride, self.padding, self.dilation)
            gx = CONV_TRANSPOSE[self.nd](self.stride, self.padding, op, self.dilation, self.groups).apply(g, w)
        if needs_grad(w):
            gw = ConvWeightGrad(kernel, self.stride, self.padding, self.dilation, self.groups).apply(x, g)
        return gx, gw


class Conv1d(_Conv):
    """1-D convolution (cross-correlation) of ``(N, C_in, L)`` by ``(C_out, C_in/groups, K)``."""

    nd, fn = 1, "conv1d"


class Conv2d(_Conv):
    """2-D convolution (cross-correlation) of ``(N, C_in, H, W)`` by ``(C_out, C_in/groups, kH, kW)``."""

    nd, fn = 2, "conv2d"


class Conv3d(_Conv):
    """3-D convolution (cross-correlation) of ``(N, C_in, D, H, W)`` by ``(C_out, C_in/groups, kD, kH, kW)``."""

    nd, fn = 3, "conv3d"


class _ConvTranspose(Op):
    """The adjoint of ``conv`` in its input: scatters each input element times the kernel."""
    onnx = "ConvTranspose"

    def onnx_attributes(self, opset):
        pads = [lo for lo, _ in self.padding] + [hi for _, hi in self.padding]
        return {"strides": self.stride, "pads": pads, "output_padding": self.output_padding,
                "dilations": self.dilation, "group": self.groups}

    nd = 2
    fn = "conv_transpose2d"
    props = ("stride", "padding", "output_padding", "dilation", "groups")

    def __init__(self, stride: tuple, padding: tuple, output_padding: tuple, dilation: tuple, groups: int = 1):
        self.stride = tuple(stride)
        self.padding = tuple(tuple(p) for p in padding)
        self.output_padding = tuple(output_padding)
        self.dilation = tuple(dilation)
        self.groups = int(groups)

    def infer(self, x, w):
        nd, fn = self.nd, self.fn
        dtype = _check_ranks(nd, fn, x, w, "in_channels, out_channels/groups")
        c, (ci, cg), kernel = x.shape[1], w.shape[:2], w.shape[2:]
        if None in kernel or ci is None or cg is None:
            raise ShapeError(f"{fn}: the weight shape must be known, got {_shown(w.shape)}")
        g = self.groups
        if ci % g:
            raise ShapeError(f"{fn}: weight of shape {_shown(w.shape)} has {ci} input channels, "
                             f"not divisible by groups={g}")
        if c is not None and c != ci:
            raise ShapeError(f"{fn}: input of shape {_shown(x.shape)} has {c} channels but weight of shape "
                             f"{_shown(w.shape)} expects {ci}")
        out = []
        for i in range(nd):
            size = x.shape[2 + i]
            if size is None:
                out.append(None)
                continue
            lo, hi = self.padding[i]
            o = (size - 1) * self.stride[i] + self.dilation[i] * (kernel[i] - 1) + 1 \
                + self.output_padding[i] - lo - hi
            if o < 1:
                raise ShapeError(f"{fn}: input of shape {_shown(x.shape)} with weight {_shown(w.shape)} and "
                                 f"padding {self.padding} gives an empty output")
            out.append(o)
        return TensorSpec((x.shape[0], cg * g) + tuple(out), dtype)

    def forward(self, xp, x, w):
        return _conv_transpose_forward(xp, x, w, self.stride, self.padding, self.output_padding,
                                       self.dilation, self.groups)

    def backward(self, inputs, out, g):
        x, w = inputs
        gx = gw = None
        if needs_grad(x):
            gx = CONV[self.nd](self.stride, self.padding, self.dilation, self.groups).apply(g, w)
        if needs_grad(w):
            kernel = tuple(_shape_of(w)[2:])
            gw = ConvWeightGrad(kernel, self.stride, self.padding, self.dilation, self.groups).apply(g, x)
        return gx, gw


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution of ``(N, C_in, L)`` by ``(C_in, C_out/groups, K)``."""

    nd, fn = 1, "conv_transpose1d"


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution of ``(N, C_in, H, W)`` by ``(C_in, C_out/groups, kH, kW)``."""

    nd, fn = 2, "conv_transpose2d"


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution of ``(N, C_in, D, H, W)`` by ``(C_in, C_out/groups, kD, kH, kW)``."""

    nd, fn = 3, "conv_transpose3d"


class ConvWeightGrad(Op):
    """``wgrad(x, gy)``: the gradient of ``conv(x, w)`` in ``w`` for the upstream gradient ``gy``
    (the correlation of the input with ``gy``), of shape ``(C_out, C_in/groups, *kernel_size)``."""

    props = ("kernel_size", "stride", "padding", "dilation", "groups")

    def __init__(self, kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple, groups: int = 1):
        self.kernel_size = tuple(kernel_size)
        self.stride = tuple(stride)
        self.padding = tuple(tuple(p) for p in padding)
        self.dilation = tuple(dilation)
        self.groups = int(groups)

    def infer(self, x, gy):
        nd = len(self.kernel_size)
        if x.ndim != nd + 2 or gy.ndim != nd + 2:
            raise ShapeError(f"{self.name}: expected {nd + 2}-D input and gradient, got {_shown(x.shape)} "
                             f"and {_shown(gy.shape)}")
        c, co = x.shape[1], gy.shape[1]
        if c is None or co is None or c % self.groups or co % self.groups:
            raise ShapeError(f"{self.name}: channels of input {_shown(x.shape)} and gradient {_shown(gy.shape)} "
                             f"must be known and divisible by groups={self.groups}")
        return TensorSpec((co, c // self.groups) + self.kernel_size, _float_dtype(self.name, x, gy))

    def forward(self, xp, x, gy):
        return _conv_weight_grad(xp, x, gy, self.kernel_size, self.stride, self.padding, self.dilation,
                                 self.groups)

    def backward(self, inputs, out, g):
        x, gy = inputs
        nd = len(self.kernel_size)
        gx = ggy = None
        if needs_grad(x):
            op = _output_padding(_shape_of(x), _shape_of(gy), self.kernel_size, self.stride, self.padding,
                                 self.dilation)
            gx = CONV_TRANSPOSE[nd](self.stride, self.padding, op, self.dilation, self.groups).apply(gy, g)
        if needs_grad(gy):
            ggy = CONV[nd](self.stride, self.padding, self.dilation, self.groups).apply(x, g)
        return gx, ggy


CONV = {1: Conv1d, 2: Conv2d, 3: Conv3d}
CONV_TRANSPOSE = {1: ConvTranspose1d, 2: ConvTranspose2d, 3: ConvTranspose3d}


def _axes(nd: int, prefix: str = "") -> str:
    return ", ".join(prefix + a for a in {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}[nd])


# ---- public functions ------------------------------------------------------------------------------
def _conv_padding(fn: str, padding, nd: int, kernel: tuple, stride: tuple, dilation: tuple) -> tuple:
    """``padding`` (int, tuple, ``'valid'`` or ``'same'``) as ``(low, high)`` pairs per axis."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ShapeError(f"{fn}: padding='same' is not supported for strided convolutions "
                                 f"(stride={stride})")
            pads = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise ValueError(f"{fn}: padding must be an int, a tuple, 'valid' or 'same', got {padding!r}")
    return tuple((p, p) for p in _ntuple(fn, "padding", padding, nd))


def _check_rank(fn: str, x, w, nd: int) -> tuple:
    xs, ws = _shape_of(x), _shape_of(w)
    if len(xs) != nd + 2:
        raise ShapeError(f"{fn}: expected a {nd + 1}-D (channels, {_axes(nd)}) or {nd + 2}-D input (batch, channels, "
                         f"{_axes(nd)}), got shape {_shown(xs)}")
    if len(ws) != nd + 2 or None in ws:
        raise ShapeError(f"{fn}: expected a {nd + 2}-D weight of known shape, got shape {_shown(ws)}")
    return xs, ws


def _add_bias(fn: str, y: Tensor, bias, channels: int, nd: int) -> Tensor:
    bs = _shape_of(bias)
    if len(bs) != 1 or bs[0] not in (None, channels):
        raise ShapeError(f"{fn}: bias must have shape ({channels},) (one value per output channel), "
                         f"got {_shown(bs)}")
    return y + reshape(bias, (channels,) + (1,) * nd)


def _unbatched(function):
    """``function(fn, nd, input, weight, ...)`` also taking an input without a batch axis (``(C, *S)``, as
    PyTorch does): it runs as a batch of one and the batch axis is dropped again."""

    def wrapper(fn, nd, input, *args):
        if len(_shape_of(input)) == nd + 1:
            y = function(fn, nd, expand_dims(input, 0), *args)
            return squeeze(y, 0)
        return function(fn, nd, input, *args)

    return wrapper


@_unbatched
def _conv_nd(fn, nd, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    _, ws = _check_rank(fn, input, weight, nd)
    stride = _ntuple(fn, "stride", stride, nd, 1)
    dilation = _ntuple(fn, "dilation", dilation, nd, 1)
    if int(groups) < 1:
        raise ShapeError(f"{fn}: groups must be >= 1, got {groups}")
    pads = _conv_padding(fn, padding, nd, tuple(ws[2:]), stride, dilation)
    y = _checked(CONV[nd](stride, pads, dilation, int(groups)), input, weight)
    return y if bias is None else _add_bias(fn, y, bias, ws[0], nd)


def conv1d(input, weight, bias=None, stride: IntOrTuple = 1, padding: Union[IntOrTuple, str] = 0,
           dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation, as in PyTorch).

    Args:
        input: ``(N, C_in, L)``.
        weight: ``(C_out, C_in / groups, K)``.
        bias: ``(C_out,)`` or ``None``.
        stride, dilation: int or 1-tuple.
        padding: int, 1-tuple, ``'valid'`` (no padding) or ``'same'`` (output length ``L``; stride 1 only,
            the extra element of an even effective kernel goes at the end, as in PyTorch).
        groups: split the channels into this many independent convolutions.

    Returns:
        ``(N, C_out, L_out)`` with ``L_out = (L + 2*padding - dilation*(K-1) - 1) // stride + 1``.

    Examples:
        >>> y = gg.conv1d(gg.randn(2, 3, 10), gg.randn(4, 3, 3), padding="same")   # (2, 4, 10)
    """
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride: IntOrTuple = 1, padding: Union[IntOrTuple, str] = 0,
           dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as in PyTorch's ``F.conv2d``).

    Args:
        input: ``(N, C_in, H, W)``.
        weight: ``(C_out, C_in / groups, kH, kW)``.
        bias: ``(C_out,)`` or ``None``.
        stride, dilation: int or ``(sH, sW)``.
        padding: int, ``(pH, pW)``, ``'valid'`` or ``'same'`` (stride 1 only; an even effective kernel
            pads one more at the bottom/right, as PyTorch does).
        groups: ``C_in`` and ``C_out`` are split into ``groups`` independent convolutions.

    Returns:
        ``(N, C_out, H_out, W_out)``, ``H_out = (H + 2*pH - dH*(kH-1) - 1) // sH + 1`` (same for W).

    Examples:
        >>> x, w = gg.randn(8, 1, 28, 28), gg.randn(16, 1, 3, 3)
        >>> gg.conv2d(x, w, padding=1).shape
        (8, 16, 28, 28)
    """
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@_unbatched
def _conv_transpose_nd(fn, nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    _, ws = _check_rank(fn, input, weight, nd)
    stride = _ntuple(fn, "stride", stride, nd, 1)
    dilation = _ntuple(fn, "dilation", dilation, nd, 1)
    pads = tuple((p, p) for p in _ntuple(fn, "padding", padding, nd))
    op = _ntuple(fn, "output_padding", output_padding, nd)
    for o, s, d in zip(op, stride, dilation):
        if o >= s:
            raise ShapeError(f"{fn}: output_padding must be smaller than stride, got output_padding={op}, "
                             f"stride={stride}")
    if int(groups) < 1:
        raise ShapeError(f"{fn}: groups must be >= 1, got {groups}")
    y = _checked(CONV_TRANSPOSE[nd](stride, pads, op, dilation, int(groups)), input, weight)
    return y if bias is None else _add_bias(fn, y, bias, ws[1] * int(groups), nd)


def conv_transpose1d(input, weight, bias=None, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1, dilation: IntOrTuple = 1) -> Tensor:
    """1-D transposed convolution (the gradient of ``conv1d`` in its input), as PyTorch's.

    Args:
        input: ``(N, C_in, L)``; weight: ``(C_in, C_out / groups, K)``; bias: ``(C_out,)`` or ``None``.

    Returns:
        ``(N, C_out, (L-1)*stride - 2*padding + dilation*(K-1) + output_padding + 1)``.
    """
    return _conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding,
                              groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1, dilation: IntOrTuple = 1) -> Tensor:
    """2-D transposed convolution ("deconvolution"), as PyTorch's ``F.conv_transpose2d``.

    Args:
        input: ``(N, C_in, H, W)``.
        weight: ``(C_in, C_out / groups, kH, kW)``.
        bias: ``(C_out,)`` or ``None``.
        stride, dilation: int or pair.
        padding: int or pair: the full transposed output is cropped by ``padding`` on each side.
        output_padding: extra size added at the bottom/right (must be smaller than ``stride``).
        groups: independent channel groups.

    Returns:
        ``(N, C_out, H_out, W_out)`` with ``H_out = (H-1)*sH - 2*pH + dH*(kH-1) + output_padding + 1``.

    Examples:
        >>> gg.conv_transpose2d(gg.randn(2, 4, 7, 7), gg.randn(4, 2, 3, 3), stride=2, padding=1,
        ...                     output_padding=1).shape
        (2, 2, 14, 14)
    """
    return _conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding,
                              groups, dilation)


def conv3d(input, weight, bias=None, stride: IntOrTuple = 1, padding: Union[IntOrTuple, str] = 0,
           dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """3-D convolution (cross-correlation, as in PyTorch's ``F.conv3d``).

    Args:
        input: ``(N, C_in, D, H, W)``.
        weight: ``(C_out, C_in / groups, kD, kH, kW)``.
        bias: ``(C_out,)`` or ``None``.
        stride, dilation: int or triple.
        padding: int, triple, ``'valid'`` or ``'same'`` (stride 1 only).
        groups: independent channel groups.

    Returns:
        ``(N, C_out, D_out, H_out, W_out)``, ``D_out = (D + 2*pD - dD*(kD-1) - 1) // sD + 1`` (same for H, W).

    Examples:
        >>> gg.conv3d(gg.randn(1, 2, 5, 6, 6), gg.randn(4, 2, 3, 3, 3), padding=1).shape
        (1, 4, 5, 6, 6)
    """
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1, dilation: IntOrTuple = 1) -> Tensor:
    """3-D transposed convolution, as PyTorch's ``F.conv_transpose3d``.

    Args:
        input: ``(N, C_in, D, H, W)``; weight: ``(C_in, C_out / groups, kD, kH, kW)``; bias: ``(C_out,)``
        or ``None``; stride, padding, output_padding, dilation: int or triple; groups.

    Returns:
        ``(N, C_out, D_out, H_out, W_out)``, ``D_out = (D-1)*sD - 2*pD + dD*(kD-1) + output_padding + 1``.

    Examples:
        >>> gg.conv_transpose3d(gg.randn(1, 4, 3, 3, 3), gg.randn(4, 2, 2, 2, 2), stride=2).shape
        (1, 2, 6, 6, 6)
    """
    return _conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                              groups, dilation)
