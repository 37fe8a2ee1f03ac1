"""ONNX import converters: vision ops (sampling, spatial transforms, local normalization, unpooling).

GridSample, AffineGrid, RoiAlign, DeformConv, LRN, LpPool, MaxUnpool and Col2Im. Sampling at
positions computed from the model's data (GridSample, RoiAlign, DeformConv) shares one path: each
spatial axis gives a few taps (an integer pixel index and a weight: 1 for nearest, 2 for linear, 4
for cubic), the taps of all axes combine into flat indices into the image, and one gather reads them
all; the output is the weighted sum of the gathered values. Indices carry no gradient; the weights
do (through the coordinates), so outputs are differentiable w.r.t. the image and the coordinates.
Geometry known at import time (sizes, pads, which columns of a Col2Im input land on which pixel) is
computed with NumPy and wrapped as constants of the input's dtype.
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import const_tensor, converter
from graphgrad.io.onnx.ops_nn import (_known, _pad_to_windows, _pool_setup, _static, _sum_pool_padded,
                                      _window_attrs)
from graphgrad.io.onnx.ops_shape import _ints, _known_shape

#: Keys' cubic convolution coefficient (ONNX GridSample's, PyTorch's)
_CUBIC_A = -0.75


# ---- sampling at data-dependent positions ----------------------------------------------------------------
def _reflect(pos, low: float, high: float):
    """``pos`` folded back into ``[low, high]`` by reflecting at the borders as often as needed (a
    triangle wave of period ``2 * (high - low)``)."""
    span = high - low
    if span == 0:
        return G.zeros_like(pos) + low
    t = G.mod(pos - low, 2 * span)
    return G.where(t > span, 2 * span - t, t) + low


def _borders(size: int, align_corners: bool) -> tuple:
    """The extent of the image in pixel coordinates: pixel centres, or pixel edges."""
    return (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)


def _pixel(i, size: int, padding: str, align_corners: bool) -> tuple:
    """(int64 index inside the image, validity or None) of the integer-valued float coordinates ``i``
    of taps, for an image axis of ``size`` pixels; invalid taps read zeros (padding 'zeros')."""
    valid = None
    if padding == "zeros":
        valid = G.logical_and(i >= 0, i <= size - 1)
    elif padding == "reflection":
        i = G.round(_reflect(i, *_borders(size, align_corners)))
    return G.clip(i, 0, size - 1).astype(np.int64), valid


def _cubic_weights(t) -> list:
    """Keys' cubic weights of the taps at -1, 0, 1, 2 for a position ``t`` in [0, 1) past tap 0."""
    a = _CUBIC_A
    to_prev, to_next, to_far = t + 1.0, 1.0 - t, 2.0 - t  # distances to the taps at -1, 1 and 2
    return [((a * to_prev - 5 * a) * to_prev + 8 * a) * to_prev - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1.0,
            ((a + 2) * to_next - (a + 3)) * to_next * to_next + 1.0,
            ((a * to_far - 5 * a) * to_far + 8 * a) * to_far - 4 * a]


def _axis_taps(pos, size: int, mode: str, padding: str, align_corners: bool) -> tuple:
    """Taps of one axis: (int64 indices, weights), each ``pos.shape + (taps,)``.

    ``pos``: pixel coordinates (integer-valued for 'nearest'); mode 'nearest', 'linear' or 'cubic'."""
    if mode == "nearest":
        base, offsets, weights = pos, [0], [G.ones_like(pos)]
    else:
        base = G.floor(pos)
        t = pos - base
        offsets, weights = ([0, 1], [1.0 - t, t]) if mode == "linear" else ([-1, 0, 1, 2], _cubic_weights(t))
    indices = []
    for k, offset in enumerate(offsets):
        index, valid = _pixel(base + float(offset), size, padding, align_corners)
        indices.append(index)
        if valid is not None:
            weights[k] = weights[k] * valid.astype(pos.dtype)
    return G.stack(indices, axis=-1), G.stack(weights, axis=-1)


def _sample(x, coords: list, mode: str, padding: str, align_corners: bool) -> tuple:
    """Gather the taps of ``x`` (N, C, *sizes) around pixel coordinates ``coords``.

    ``coords``: one tensor per spatial axis of ``x``, in order, each (N, *Q) or broadcastable to it.
    Returns (values (N, C, *Q, T), weights (N, 1, *Q, T)) with T taps per position (1, 2**r or 4**r
    for r spatial axes), so that ``sum(values * weights, -1)`` interpolates."""
    sizes = tuple(x.shape[2:])
    rank = len(sizes)
    index = weight = None
    for a, (pos, size) in enumerate(zip(coords, sizes)):
        idx, w = _axis_taps(pos, size, mode, padding, align_corners)
        spread = (Ellipsis,) + (None,) * a + (slice(None),) + (None,) * (rank - 1 - a)  # taps on their own axis
        stride = math.prod(sizes[a + 1:])
        idx, w = idx[spread] * stride, w[spread]
        index = idx if index is None else index + idx
        weight = w if weight is None else weight * w
    grid = tuple(index.shape[1:-rank])
    taps = math.prod(index.shape[-rank:])
    channels = x.shape[1]
    flat = x.reshape((-1, channels, math.prod(sizes)))
    # the same indices for every channel, broadcast by an addition so that the batch may be unknown until run time
    index = index.reshape((-1, 1, math.prod(grid) * taps)) + const_tensor(np.zeros((1, channels, 1)), np.int64)
    values = G.gather(flat, 2, index)
    weight = weight.astype(x.dtype).reshape((-1, 1) + grid + (taps,))
    return values.reshape((-1, channels) + grid + (taps,)), weight


# ---- GridSample and AffineGrid -------------------------------------------------------------------------
_GRID_MODES = {16: {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"},  # opset 16-19
               20: {"linear": "linear", "nearest": "nearest", "cubic": "cubic"}}


def _grid_sample_mode(node) -> str:
    names = _GRID_MODES[20 if node.opset >= 20 else 16]
    mode = node.attr("mode", "linear" if node.opset >= 20 else "bilinear")
    if mode not in names:
        raise node.unsupported(f"mode={mode!r} (opset {node.opset} GridSample takes {', '.join(names)})")
    return names[mode]


@converter("GridSample")
def grid_sample(node, x, grid):
    """``x`` (N, C, *sizes) sampled at ``grid`` (N, *out, r), whose last axis holds normalized
    coordinates in [-1, 1], the first for the last spatial axis of ``x``; output (N, C, *out)."""
    mode = _grid_sample_mode(node)
    padding = node.attr("padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        raise node.unsupported(f"padding_mode={padding!r} (zeros, border or reflection)")
    align_corners = bool(node.attr("align_corners", 0))
    sizes = _static(node, x)[2:]
    rank = len(sizes)
    if grid.shape[-1] != rank:
        raise node.error(f"a grid of shape {grid.shape} for an input of {rank} spatial axes")
    coords = []
    for a, size in enumerate(sizes):
        g = grid[..., rank - 1 - a]
        pos = (g + 1.0) / 2.0 * (size - 1) if align_corners else ((g + 1.0) * size - 1.0) / 2.0
        if mode == "nearest":
            pos = G.round(pos)  # half to even, as ONNX's reference and PyTorch
        low, high = _borders(size, align_corners)
        if padding == "border":
            outside = G.logical_or(pos < low, pos > high)
            pos = G.where(outside, G.clip(pos, 0.0, size - 1.0), pos)
        elif padding == "reflection":
            pos = _reflect(pos, low, high)
        coords.append(pos)
    image = x if x.dtype.kind == "f" else x.astype(grid.dtype)  # integer images: interpolated in the grid's dtype
    values, weights = _sample(image, coords, mode, padding, align_corners)
    return G.sum(values * weights, axis=-1).astype(x.dtype)


@converter("AffineGrid")
def affine_grid(node, theta, size):
    """The sampling grid (N, *sizes, r) of the affine maps ``theta`` (N, r, r + 1), for an image of
    ``size`` (N, C, *sizes) with r = 2 or 3 spatial axes."""
    sizes = _ints(node.const(1))[2:]
    align_corners = bool(node.attr("align_corners", 0))
    axes = []
    for n in sizes:
        if align_corners:
            axes.append(np.linspace(-1.0, 1.0, n))
        else:
            axes.append((2.0 * np.arange(n) + 1.0) / n - 1.0)
    mesh = np.meshgrid(*axes, indexing="ij")
    # homogeneous coordinates, the last spatial axis first: (x, y[, z], 1) per pixel
    base = np.stack([m.reshape(-1) for m in mesh[::-1]] + [np.ones(math.prod(sizes))], axis=-1)
    grid = G.matmul(const_tensor(base, theta.dtype), G.swapaxes(theta, 1, 2))
    return grid.reshape((-1,) + tuple(sizes) + (len(sizes),))


# ---- RoiAlign -------------------------------------------------------------------------------------------
@converter("RoiAlign")
def roi_align(node, x, rois, batch_indices):
    """Average (or max) of bilinear samples on a regular grid in each bin of each region of interest.

    ``x`` (N, C, H, W), ``rois`` (R, 4) as (x1, y1, x2, y2), ``batch_indices`` (R,); output
    (R, C, output_height, output_width)."""
    mode = node.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise node.unsupported(f"mode={mode!r} (avg or max)")
    transform = node.attr("coordinate_transformation_mode", "half_pixel" if node.opset >= 16 else "output_half_pixel")
    if transform not in ("half_pixel", "output_half_pixel"):
        raise node.unsupported(f"coordinate_transformation_mode={transform!r} (half_pixel or output_half_pixel)")
    _static(node, x)
    half_pixel, scale = transform == "half_pixel", float(node.attr("spatial_scale", 1.0))
    bins = (int(node.attr("output_height", 1)), int(node.attr("output_width", 1)))
    ratio = int(node.attr("sampling_ratio", 0))
    if ratio > 0:
        return _roi_align(x, rois, batch_indices, (ratio, ratio), mode, half_pixel, scale, bins)
    # adaptive: ceil(roi size / bins) samples per bin, which depends on each roi's size
    boxes = _known(node, 1)
    if boxes is None:
        raise node.error("sampling_ratio=0 (a sample count per roi size) needs the rois known at import time")
    per_roi = []
    for r, (x1, y1, x2, y2) in enumerate(np.asarray(boxes, dtype=np.float64) * scale):
        extent = (y2 - y1, x2 - x1) if half_pixel else (max(y2 - y1, 1.0), max(x2 - x1, 1.0))
        counts = tuple(math.ceil(e / n) for e, n in zip(extent, bins))
        if min(counts) <= 0:  # an empty roi has no samples: zeros
            per_roi.append(const_tensor(np.zeros((1, x.shape[1]) + bins), x.dtype))
        else:
            per_roi.append(_roi_align(x, rois[r:r + 1], batch_indices[r:r + 1], counts, mode, half_pixel, scale, bins))
    return G.concatenate(per_roi, axis=0)


def _roi_extent(rois, half_pixel: bool, scale: float):
    """((start_y, start_x), (height, width)), each (R,), of ``rois`` (R, 4) in pixel coordinates;
    without half_pixel, malformed rois are at least 1x1."""
    shift = 0.5 if half_pixel else 0.0
    x1, y1, x2, y2 = (rois[:, i] * scale - shift for i in range(4))
    height, width = y2 - y1, x2 - x1
    if not half_pixel:
        height, width = G.maximum(height, 1.0), G.maximum(width, 1.0)
    return (y1, x1), (height, width)


def _roi_align(x, rois, batch_indices, counts, mode, half_pixel, scale, bins):
    """RoiAlign with ``counts`` (per-bin samples along y, x) fixed for every roi."""
    height, width = x.shape[2:]
    starts, extents = _roi_extent(rois, half_pixel, scale)
    coords, valid = [], None
    for a, (start, extent, n_bins, count, size) in enumerate(zip(starts, extents, bins, counts, (height, width))):
        # sample j of bin b at start + (b + (j + 0.5) / count) * bin_size
        steps = np.arange(n_bins)[:, None] + (np.arange(count)[None, :] + 0.5) / count
        bin_size = (extent / float(n_bins)).reshape((-1, 1, 1))
        pos = start.reshape((-1, 1, 1)) + bin_size * const_tensor(steps, rois.dtype)
        pos = pos[:, :, :, None, None] if a == 0 else pos[:, None, None, :, :]  # (R, bins_y, count_y, bins_x, count_x)
        inside = G.logical_and(pos >= -1.0, pos <= float(size))  # samples beyond a pixel off the image read 0
        valid = inside if valid is None else G.logical_and(valid, inside)
        coords.append(G.clip(pos, 0.0, size - 1.0))
    values, weights = _sample(G.take(x, batch_indices, axis=0), coords, "linear", "border", True)
    taps = values * (weights * valid.astype(x.dtype)[:, None, ..., None])  # (R, C, bins_y, count_y, bins_x, count_x, 4)
    if mode == "max":  # ONNX's max mode: the largest weighted corner value over the bin's samples
        return G.max(taps, axis=(3, 5, 6))
    return G.sum(taps, axis=(3, 5, 6)) / float(counts[0] * counts[1])


# ---- DeformConv -----------------------------------------------------------------------------------------
@converter("DeformConv")
def deform_conv(node, x, w, offset, b=None, mask=None):
    """2-D convolution whose kernel taps are moved by ``offset`` (N, offset_group * kH * kW * 2, oH, oW),
    as (dy, dx) per tap, read bilinearly (zeros outside) and scaled by ``mask`` (N, offset_group * kH * kW,
    oH, oW). ``x`` (N, C, H, W), ``w`` (oC, C / group, kH, kW); output (N, oC, oH, oW)."""
    if x.ndim != 4:
        raise node.unsupported(f"a {x.ndim - 2}-D DeformConv (only 2-D)")
    n_channels, height, width = _static(node, x)[1:]
    kernel = tuple(node.attr("kernel_shape", None) or _static(node, w, "weight")[2:])
    strides, dilations = _window_attrs(node, 2)
    pads = node.attr("pads", None) or [0] * 4
    group, offset_group = int(node.attr("group", 1)), int(node.attr("offset_group", 1))
    out = [(n + pads[a] + pads[a + 2] - dilations[a] * (k - 1) - 1) // strides[a] + 1
           for a, (n, k) in enumerate(zip((height, width), kernel))]
    taps, pixels = math.prod(kernel), math.prod(out)
    offset = offset.reshape((-1, offset_group, taps, 2, pixels))
    coords = []
    for a in range(2):  # the undeformed tap positions, plus the offsets
        tap = np.arange(kernel[a]) * dilations[a]
        at = np.arange(out[a]) * strides[a] - pads[a]
        shape = (kernel[0], 1, out[0], 1) if a == 0 else (1, kernel[1], 1, out[1])
        grid = np.broadcast_to((tap[:, None] + at[None, :]).reshape(shape), kernel + tuple(out))
        grid = grid.reshape(taps, pixels)
        coords.append((offset[:, :, :, a] + const_tensor(grid, offset.dtype)).reshape((-1, taps, pixels)))
    per_group = x.reshape((-1, n_channels // offset_group, height, width))  # (N * offset_group, C / og, H, W)
    values, weights = _sample(per_group, coords, "linear", "zeros", True)
    sampled = G.sum(values * weights, axis=-1).reshape((-1, offset_group, n_channels // offset_group, taps, pixels))
    if mask is not None:
        sampled = sampled * mask.reshape((-1, offset_group, 1, taps, pixels))
    columns = sampled.reshape((-1, group, n_channels // group * taps, pixels))
    out_channels = w.shape[0]
    kernels = w.reshape((group, out_channels // group, -1))
    y = G.einsum("ngkp,gok->ngop", columns, kernels).reshape((-1, out_channels) + tuple(out))
    return y if b is None else y + b.reshape((-1, 1, 1))


# ---- LRN and LpPool -------------------------------------------------------------------------------------
@converter("LRN")
def lrn(node, x):
    """``x / (bias + alpha / size * sum of x**2 over the size nearest channels) ** beta``, x (N, C, ...)."""
    size = int(node.attr("size"))
    alpha, beta, bias = (float(node.attr(k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    channels = _static(node, x)[1]
    low, high = (size - 1) // 2, size // 2  # the window is longer after the channel for an even size
    squares = G.pad(x * x, ((0, 0), (low, high)) + ((0, 0),) * (x.ndim - 2))
    window = squares[:, 0:channels]
    for i in range(1, size):
        window = window + squares[:, i:i + channels]
    return x / (bias + alpha / size * window) ** beta


@converter("LpPool")
def lp_pool(node, x):
    """``(sum of |x|**p over each window) ** (1 / p)``, windows as MaxPool's (zero padding)."""
    p = float(node.attr("p", 2))
    sizes, kernel, strides, dilations, pads, out = _pool_setup(node, x)
    powered = G.abs(x) ** p
    padded = _pad_to_windows(powered, sizes, kernel, strides, dilations, pads, out, 0.0)
    return _sum_pool_padded(padded, kernel, strides, dilations) ** (1.0 / p)


# ---- MaxUnpool and Col2Im -------------------------------------------------------------------------------
@converter("MaxUnpool")
def max_unpool(node, x, indices, output_shape=None):
    """Zeros with ``x`` (N, C, *in) put back at the flat ``indices`` of a MaxPool; shape
    (N, C, (in - 1) * stride + kernel - pads) per axis, zero-padded at the end to ``output_shape``."""
    shape = _known_shape(node, x, "MaxUnpool")
    kernel = tuple(node.attr("kernel_shape"))
    nd = len(kernel)
    strides = node.attr("strides", None) or [1] * nd
    pads = node.attr("pads", None) or [0] * (2 * nd)
    full = shape[:2] + tuple((n - 1) * s - (pads[a] + pads[a + nd]) + k
                             for a, (n, s, k) in enumerate(zip(shape[2:], strides, kernel)))
    # indices point into the unpooled shape, which is then zero-padded to output_shape (as ONNX's reference and
    # backend tests; onnxruntime reads them in output_shape's layout instead)
    flat_index = indices.astype(np.int64).reshape(-1)
    zeros = const_tensor(np.zeros(math.prod(full)), x.dtype)
    sums = G.scatter_add(zeros, 0, flat_index, x.reshape(-1))
    # overlapping windows may pick the same element twice: those entries add up equal values
    counts = G.scatter_add(zeros, 0, flat_index, G.ones_like(x).reshape(-1))
    y = (sums / G.maximum(counts, 1.0)).reshape(full)
    if output_shape is None:
        return y
    target = _ints(node.const(2))
    if len(target) != len(full) or any(t < f for t, f in zip(target, full)):
        raise node.error(f"output_shape {target} is smaller than the unpooled shape {full}")
    return G.pad(y, tuple((0, t - f) for t, f in zip(target, full)))


def _col2im_sources(image: tuple, block: tuple, counts: list, strides, dilations, pads) -> np.ndarray:
    """For each image pixel and kernel position, the column (kernel_index * blocks + block_index) of the
    Col2Im input that lands there, or ``kernels * blocks`` (a zero column) when none does; ``counts``:
    blocks per axis. Shape (pixels * kernels,)."""
    rank = len(image)
    blocks, kernels = math.prod(counts), math.prod(block)
    hit_all = np.ones((1,) * 2 * rank, dtype=bool)
    kernel_index = block_index = np.zeros((1,) * 2 * rank, dtype=np.int64)
    for a, (n, k) in enumerate(zip(image, block)):
        # pixel q sees kernel tap j of the block that starts at q + pad - j * dilation, if there is one
        start = np.arange(n)[:, None] + pads[a] - np.arange(k)[None, :] * dilations[a]
        which = start // strides[a]
        hit = (start % strides[a] == 0) & (which >= 0) & (which < counts[a])
        shape = [1] * 2 * rank
        shape[a], shape[rank + a] = n, k  # pixel axes first, then kernel axes
        hit_all = hit_all & hit.reshape(shape)
        block_index = block_index + which.reshape(shape) * math.prod(counts[a + 1:])
        kernel_index = kernel_index + np.arange(k).reshape(shape[rank:]) * math.prod(block[a + 1:])
    return np.where(hit_all, kernel_index * blocks + block_index, kernels * blocks).reshape(-1)


@converter("Col2Im")
def col2im(node, x, image_shape, block_shape):
    """Sum sliding blocks back into an image: ``x`` (N, C * prod(block), blocks) -> (N, C, *image)."""
    image, block = tuple(_ints(node.const(1))), tuple(_ints(node.const(2)))
    rank = len(image)
    strides = node.attr("strides", None) or [1] * rank
    dilations = node.attr("dilations", None) or [1] * rank
    pads = node.attr("pads", None) or [0] * (2 * rank)
    n_cols, blocks = _static(node, x)[1:]
    counts = [(n + pads[a] + pads[a + rank] - dilations[a] * (k - 1) - 1) // strides[a] + 1
              for a, (n, k) in enumerate(zip(image, block))]
    kernels = math.prod(block)
    if math.prod(counts) != blocks or n_cols % kernels:
        raise node.error(f"an input of shape {x.shape} does not hold {counts} blocks of {block} for an image {image}")
    sources = _col2im_sources(image, block, counts, strides, dilations, pads)
    channels = n_cols // kernels
    columns = G.pad(x.reshape((-1, channels, kernels * blocks)), ((0, 0), (0, 0), (0, 1)))  # + a zero column
    picked = G.take(columns, const_tensor(sources, np.int64), axis=2).reshape((-1, channels, math.prod(image), kernels))
    return G.sum(picked, axis=-1).reshape((-1, channels) + image)


# ---- detection -------------------------------------------------------------------------------------
@converter("NonMaxSuppression")
def non_max_suppression(node, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None,
                        score_threshold=None):
    """Greedy suppression per batch and class (graphgrad's NonMaxSuppression op): (K, 3) rows
    (batch, class, box); the thresholds must be known at import."""
    limit = node.const(2)
    iou = node.const(3)
    score = node.const(4)
    op = G.NonMaxSuppression(0.0 if iou is None else float(np.asarray(iou).reshape(-1)[0]),
                             None if limit is None else int(np.asarray(limit).reshape(-1)[0]),
                             None if score is None else float(np.asarray(score).reshape(-1)[0]),
                             node.attr("center_point_box", 0))
    return op.apply(boxes, scores)
