"""Kernels (backend arrays) for depthwise convolutions: one input channel per group, as in
MobileNet / EfficientNet blocks. ``ops/conv.py`` calls them from its conv ops; they are not ops.

A depthwise convolution has no useful matrix product (each output plane is one plane of the input
times one small filter), so it is written as a sum over kernel offsets of whole-plane
multiply-adds. Two things make that fast in NumPy:

* flat planes: each plane (one channel of one sample) is padded and flattened. With the same
  stride ``s`` along every axis, the input element under kernel offset ``k`` for output position
  ``q = row * Wp + column`` sits at ``s * q + offset(k)`` of the flat plane (``Wp`` the padded row
  length), so one offset is one strided slice of every plane: long inner loops instead of one
  loop per image row. The ``Wp - W_out`` extra columns of each output row are computed and dropped
  (zeros in the transposed direction).
* chunks of planes small enough for the cache, so the running sum stays there across offsets.

Small maps (a 7x7 or 14x14 output, the late blocks of those models) make short planes, and there
the kernels work channels last instead: the image as (N, *S, C). With many channels, one
``einsum`` over a strided view of every window sums the products in a single pass whose inner loop
runs along the channels; with few, a shift-and-add where one offset of all the channels of a whole
output row is one contiguous run of ``W_out * C`` values. The transposed kernel of a small map is
the forward one with the filters flipped.

With ``M`` filters per input channel the input planes are repeated ``M`` times first, so every
output plane has exactly one input plane and one filter.

With the native extra (graphgrad.backend.native) a float32 2-D forward with output rows of at least
``_NATIVE_ROW`` is one C call instead (``depthwise.c``): blocks of output rows summed over the kernel
offsets in registers, from a zero-padded copy of each input plane split into phases along rows (so
strided rows read consecutive floats); shorter rows go 16 planes at a time, interleaved so that the
inner loop runs across the planes.
"""
from __future__ import annotations

import math

from graphgrad.backend import native, np

_CHUNK = 1 << 15  # elements of output per chunk of planes (the running sum and a temporary in L2)
_SMALL = 256  # output maps up to this many positions go channels last (measured on 7x7 to 56x56 maps)
_NATIVE_ROW = 16  # output row length from which the C kernel beats the NumPy paths
_WIDE = 64  # channels from which an einsum over the windows beats shift-and-add (inner loop length)


def usable(stride: tuple, out: tuple, channels: int, *arrays) -> bool:
    """Whether these kernels apply to a convolution with output map ``out`` and ``channels`` output
    channels: at least single precision (float16 sums would round at every offset, where matmul
    sums in float32), and stride 1 or a small map with many channels (the einsum path; the flat
    planes compute any stride that is the same along every axis, but a stride ``s`` computes about
    ``s`` times the needed rows' width, and im2col with stacked matmuls, ops/conv.py's general
    path, was faster there)."""
    if not all(a.dtype.itemsize >= 4 for a in arrays):
        return False
    return all(s == 1 for s in stride) or (math.prod(out) <= _SMALL and channels >= _WIDE)


def transpose_usable(stride: tuple, *arrays) -> bool:
    """Whether :func:`transpose` applies: the same stride along every axis (the flat planes waste
    no work on that side: each input row is widened, not each output row), single precision or more."""
    return all(s == stride[0] for s in stride) and all(a.dtype.itemsize >= 4 for a in arrays)


def _offsets(kernel: tuple, dilation: tuple, row: int) -> list:
    """Flat offset of every kernel element (row-major), for planes of row length ``row``."""
    if len(kernel) == 1:
        return [k * dilation[0] for k in range(kernel[0])]
    return [i * dilation[0] * row + j * dilation[1] for i in range(kernel[0]) for j in range(kernel[1])]


def _plane_length(positions: int, step: int, offsets: list) -> int:
    return step * (positions - 1) + max(offsets) + 1


def _flat_planes(xp, x, lead: tuple, size: tuple, length: int):
    """Planes ``x`` (P, *S) copied into zero planes of ``size`` (padded; ``lead`` zeros before each
    axis), flattened and extended with zeros to at least ``length``: (P, length') with rows of
    ``size[-1]``."""
    p = x.shape[0]
    rows = max(math.prod(size[:-1]), -(-length // size[-1]))
    out = xp.zeros((p, rows * size[-1]), dtype=x.dtype)
    view = out[:, :math.prod(size)].reshape((p,) + tuple(size))
    view[(slice(None),) + tuple(slice(lo, lo + n) for lo, n in zip(lead, x.shape[1:]))] = x
    return out


def _per_plane(xp, w, n: int):
    """Filters (C, K) repeated for each of ``n`` samples: (n * C, K), one row per plane."""
    return xp.tile(w.reshape(w.shape[0], -1), (n, 1))


def _chunks(xp, planes: int, positions: int, dtype):
    """[(first, end)] chunks of planes, and a temporary for one chunk."""
    step = max(1, _CHUNK // positions)
    bounds = [(a, min(planes, a + step)) for a in range(0, planes, step)]
    return bounds, xp.empty((min(planes, step), positions), dtype=dtype)


def _repeat(xp, x, m: int):
    """(N, C, *S) -> (N * C * m, *S): each channel's plane repeated ``m`` times, one plane per row."""
    if m > 1:
        x = xp.repeat(x, m, axis=1)
    return x.reshape((-1,) + x.shape[2:])


def native_forward(xp, x, w, out: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """y (N, C*M, *out) from x (N, C, H, W) and w (C*M, 1, kh, kw) by the native kernels, or ``None``
    when they do not apply (not 2-D float32 C-contiguous NumPy arrays, or native kernels off)."""
    small = len(out) == 2 and out[1] < _NATIVE_ROW
    fn = native.kernel("depthwise2d_small_f32" if small else "depthwise2d_f32")
    if fn is None or len(out) != 2 or x.ndim != 4 or not native.usable(x, w):
        return None
    n, c, h, width = x.shape
    cm, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    y = xp.empty((n, cm) + tuple(out), dtype=x.dtype)
    args = (n, c, h, width, cm // c, kh, kw, out[0], out[1], stride[0], stride[1], padding[0][0], padding[1][0],
            dilation[0], dilation[1])
    if small:  # 16 planes at a time, interleaved: the inner loop runs across planes
        hp, wp = h + padding[0][0] + padding[0][1], width + padding[1][0] + padding[1][1]
        scratch = xp.empty((hp * wp + out[0] * out[1] + kh * kw) * 16, dtype=x.dtype)
        fn(x, w, y, scratch, *args, hp, wp)
        return y
    ok = np.zeros(1, np.int64)
    fn(x, w, y, *args, ok)  # (its padded plane, split into phases, is its own)
    return y if ok[0] else None


def forward(xp, x, w, out: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """y (N, C*M, *out) from x (N, C, *S) and w (C*M, 1, *kernel)."""
    y = native_forward(xp, x, w, out, stride, padding, dilation)
    if y is not None:
        return y
    if math.prod(out) <= _SMALL:
        return _forward_channels_last(xp, x, w, out, stride, padding, dilation)
    return _forward_flat(xp, x, w, out, stride, padding, dilation)


def _forward_flat(xp, x, w, out, stride, padding, dilation):
    n, c = x.shape[:2]
    cm, kernel = w.shape[0], tuple(w.shape[2:])
    size = tuple(x.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(padding))
    step, row = stride[0], size[-1]
    positions = math.prod(out[:-1]) * row  # output rows of the padded row length
    offsets = _offsets(kernel, dilation, row)
    span = step * (positions - 1) + 1
    flat = _flat_planes(xp, _repeat(xp, x, cm // c), tuple(lo for lo, _ in padding), size,
                        _plane_length(positions, step, offsets))
    coef = _per_plane(xp, w, n).astype(xp.result_type(x, w), copy=False)
    y = xp.empty((n * cm, positions), dtype=coef.dtype)
    bounds, tmp = _chunks(xp, n * cm, positions, y.dtype)
    for a, b in bounds:
        acc, t = y[a:b], tmp[:b - a]
        for k, off in enumerate(offsets):
            view = flat[a:b, off:off + span:step]
            if k == 0:
                xp.multiply(view, coef[a:b, k:k + 1], out=acc)
            else:
                xp.multiply(view, coef[a:b, k:k + 1], out=t)
                acc += t
    y = y.reshape((n, cm) + tuple(out[:-1]) + (row,))
    return xp.ascontiguousarray(y[..., :out[-1]])


def weight_grad(xp, x, gy, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """gw (C*M, 1, *kernel) from x (N, C, *S) and gy (N, C*M, *out)."""
    if math.prod(gy.shape[2:]) <= _SMALL and gy.shape[1] >= _WIDE:
        return _weight_grad_einsum(xp, x, gy, kernel, stride, padding, dilation)
    n, c = x.shape[:2]
    cm, out = gy.shape[1], tuple(gy.shape[2:])
    size = tuple(x.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(padding))
    step, row = stride[0], size[-1]
    positions = math.prod(out[:-1]) * row
    offsets = _offsets(kernel, dilation, row)
    span = step * (positions - 1) + 1
    flat = _flat_planes(xp, _repeat(xp, x, cm // c), tuple(lo for lo, _ in padding), size,
                        _plane_length(positions, step, offsets))
    g = xp.zeros((n * cm,) + out[:-1] + (row,), dtype=gy.dtype)  # zeros past each row: no garbage
    g[..., :out[-1]] = gy.reshape((n * cm,) + out)
    g = g.reshape(n * cm, positions)
    dtype = xp.result_type(x, gy)
    sums = xp.empty((n * cm, len(offsets)), dtype=dtype)
    bounds, _ = _chunks(xp, n * cm, positions, dtype)
    for a, b in bounds:
        for k, off in enumerate(offsets):
            sums[a:b, k] = xp.einsum("ij,ij->i", flat[a:b, off:off + span:step], g[a:b])
    return sums.reshape(n, cm, -1).sum(axis=0).reshape((cm, 1) + tuple(kernel))


def transpose(xp, x, w, out: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """The adjoint of :func:`forward` in its input, with one input channel per group: y (N, C*M, *out)
    from x (N, C, *S) and w (C, M, *kernel); input position ``i`` and kernel offset ``k`` add into
    output position ``i * stride + k * dilation - padding``."""
    if math.prod(out) <= _SMALL and all(s == 1 for s in stride):
        # the correlation with the flipped filters, padded by the kernel's reach less the padding
        size_in, kernel = tuple(x.shape[2:]), tuple(w.shape[2:])
        low = tuple(d * (k - 1) - lo for d, k, (lo, _) in zip(dilation, kernel, padding))
        high = tuple(o - s - a + d * (k - 1) for o, s, a, d, k in zip(out, size_in, low, dilation, kernel))
        if min(low + high) >= 0:
            flipped = w[(Ellipsis,) + (slice(None, None, -1),) * len(kernel)]
            flipped = flipped.reshape((w.shape[0] * w.shape[1], 1) + kernel)
            return _forward_channels_last(xp, x, flipped, out, stride, tuple(zip(low, high)), dilation)
        return _transpose_channels_last(xp, x, w, out, padding, dilation)
    return _transpose_flat(xp, x, w, out, stride, padding, dilation)


def _transpose_flat(xp, x, w, out, stride, padding, dilation):
    n, c = x.shape[:2]
    m, kernel, size_in = w.shape[1], tuple(w.shape[2:]), tuple(x.shape[2:])
    step = stride[0]
    # the uncropped output ("full"): every position any input reaches, and the cropped window
    full = tuple(max((size_in[i] - 1) * step + dilation[i] * (kernel[i] - 1) + 1, padding[i][0] + out[i])
                 for i in range(len(out)))
    row = full[-1]
    positions = math.prod(size_in[:-1]) * row  # input rows widened to the output's row length
    offsets = _offsets(kernel, dilation, row)
    span = step * (positions - 1) + 1
    src = xp.zeros((n * c * m,) + size_in[:-1] + (row,), dtype=x.dtype)
    src[..., :size_in[-1]] = _repeat(xp, x, m)
    src = src.reshape(n * c * m, positions)
    dtype = xp.result_type(x, w)
    coef = _per_plane(xp, w.reshape((c * m, 1) + kernel), n).astype(dtype, copy=False)
    length = max(_plane_length(positions, step, offsets), math.prod(full))
    buf = xp.zeros((n * c * m, length), dtype=dtype)
    bounds, tmp = _chunks(xp, n * c * m, positions, dtype)
    for a, b in bounds:
        t = tmp[:b - a]
        for k, off in enumerate(offsets):
            xp.multiply(src[a:b], coef[a:b, k:k + 1], out=t)
            buf[a:b, off:off + span:step] += t
    buf = buf[:, :math.prod(full)].reshape((n, c * m) + full)
    crop = tuple(slice(lo, lo + o) for (lo, _), o in zip(padding, out))
    return xp.ascontiguousarray(buf[(Ellipsis,) + crop])


# ---- channels last (small maps, stride 1) -------------------------------------------------------------
def _channels_last(xp, x, lead: tuple, size: tuple, m: int):
    """x (N, C, *S) as (N, *size, C*M): channels last, each repeated ``m`` times, placed ``lead``
    positions into zeros of ``size`` along each spatial axis."""
    n, c = x.shape[:2]
    out = xp.zeros((n,) + tuple(size) + (c, m), dtype=x.dtype)
    inner = tuple(slice(lo, lo + s) for lo, s in zip(lead, x.shape[2:]))
    out[(slice(None),) + inner] = xp.moveaxis(x, 1, -1)[..., None]
    return out.reshape((n,) + tuple(size) + (c * m,))


def _rows(view):
    """(N, *S, C) with the last spatial axis and the channels merged (a view: unit spatial stride)."""
    return view.reshape(view.shape[:-2] + (-1,))


def _row_filters(xp, w, width: int):
    """Filters (C, K) as (K, width * C): for each offset, its value for every channel of a merged row."""
    return xp.tile(xp.ascontiguousarray(w.reshape(w.shape[0], -1).T), (1, width))


def _windows_last(xp, src, out: tuple, kernel: tuple, stride: tuple, dilation: tuple):
    """Strided view (N, *out, *kernel, C) of every window of ``src`` (N, *S, C)."""
    st = src.strides
    spatial = st[1:-1]
    strides = (st[0],) + tuple(s * t for s, t in zip(spatial, stride)) \
        + tuple(s * d for s, d in zip(spatial, dilation)) + (st[-1],)
    shape = (src.shape[0],) + tuple(out) + tuple(kernel) + (src.shape[-1],)
    return xp.lib.stride_tricks.as_strided(src, shape, strides)


def _letters(nd: int) -> tuple:
    """einsum letters of the spatial and of the kernel axes (1-D or 2-D)."""
    return "hw"[:nd], "ab"[:nd]


def _forward_channels_last(xp, x, w, out, stride, padding, dilation):
    """Small maps: an einsum over the windows for many channels (any stride), else shift-and-add
    (stride 1)."""
    n, c = x.shape[:2]
    cm, kernel = w.shape[0], tuple(w.shape[2:])
    size = tuple(x.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(padding))
    src = _channels_last(xp, x, tuple(lo for lo, _ in padding), size, cm // c)
    if cm >= _WIDE:
        sp, kk = _letters(len(out))
        filters = xp.ascontiguousarray(xp.moveaxis(w.reshape((cm,) + kernel), 0, -1), dtype=xp.result_type(x, w))
        y = xp.einsum(f"n{sp}{kk}c,{kk}c->n{sp}c", _windows_last(xp, src, out, kernel, stride, dilation), filters)
        return xp.ascontiguousarray(xp.moveaxis(y, -1, 1))
    coef = _row_filters(xp, w, out[-1]).astype(xp.result_type(x, w), copy=False)
    y = tmp = None
    for k, offset in enumerate(_kernel_offsets(kernel)):
        window = tuple(slice(o * d, o * d + n_out) for o, d, n_out in zip(offset, dilation, out))
        view = _rows(src[(slice(None),) + window])
        if y is None:
            y = view * coef[k]
        else:
            tmp = xp.multiply(view, coef[k], out=tmp)
            y += tmp
    return xp.ascontiguousarray(xp.moveaxis(y.reshape((n,) + tuple(out) + (cm,)), -1, 1))


def _weight_grad_einsum(xp, x, gy, kernel, stride, padding, dilation):
    n, c = x.shape[:2]
    cm, out = gy.shape[1], tuple(gy.shape[2:])
    size = tuple(x.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(padding))
    src = _channels_last(xp, x, tuple(lo for lo, _ in padding), size, cm // c)
    g = xp.ascontiguousarray(xp.moveaxis(gy, 1, -1))  # channels contiguous: einsum's inner loop
    sp, kk = _letters(len(out))
    gw = xp.einsum(f"n{sp}{kk}c,n{sp}c->c{kk}", _windows_last(xp, src, out, kernel, stride, dilation), g)
    return gw.reshape((cm, 1) + tuple(kernel))


def _transpose_channels_last(xp, x, w, out, padding, dilation):
    n, c = x.shape[:2]
    m, kernel, size_in = w.shape[1], tuple(w.shape[2:]), tuple(x.shape[2:])
    dtype = xp.result_type(x, w)
    # the uncropped output: input position i and offset k land on i + k * dilation
    full = tuple(max(size_in[i] + dilation[i] * (kernel[i] - 1), padding[i][0] + out[i]) for i in range(len(out)))
    src = _rows(_channels_last(xp, x, (0,) * len(out), size_in, m))
    coef = _row_filters(xp, w.reshape((c * m, 1) + kernel), size_in[-1]).astype(dtype, copy=False)
    y = xp.zeros((n,) + full + (c * m,), dtype=dtype)
    tmp = None
    for k, offset in enumerate(_kernel_offsets(kernel)):
        window = tuple(slice(o * d, o * d + s) for o, d, s in zip(offset, dilation, size_in))
        tmp = xp.multiply(src, coef[k], out=tmp)
        _rows(y[(slice(None),) + window])[...] += tmp
    crop = tuple(slice(lo, lo + o) for (lo, _), o in zip(padding, out))
    return xp.ascontiguousarray(xp.moveaxis(y[(slice(None),) + crop], -1, 1))


def _kernel_offsets(kernel: tuple) -> list:
    """Every kernel offset (a tuple of ints), in row-major order."""
    out = [()]
    for k in kernel:
        out = [o + (i,) for o in out for i in range(k)]
    return out
