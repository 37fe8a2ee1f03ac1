"""ONNX import converters: neural-network ops.

Matrix products (MatMul, Gemm, Einsum), convolutions, pooling, normalizations, dropout, the softmax
family and losses (recurrent layers: ops_rnn.py; Resize/Upsample: ops_resize.py; PRelu: ops_math.py;
Conv + BatchNormalization pairs: fusion.py).
Every output is built from graphgrad ops, so one converter serves eager tensors, static graphs and
``gg.function`` traces, and stays differentiable. Geometry (pads, output sizes, pooling divisors) is
computed from static shapes and attributes at import time; NumPy is used only for those constants.
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import OnnxImportError, const_tensor, converter


# ---- small helpers ------------------------------------------------------------------------------------
def _known(node, index: int):
    """Input ``index`` as a NumPy array if it is known at import time, else None."""
    try:
        return node.const(index)
    except OnnxImportError:
        return None


def _static(node, x, what: str = "input") -> tuple:
    """``x``'s shape, whose dims after the first (the batch, which may be unknown: None) must be
    known at import time (kernel geometry and channel counts are computed from them)."""
    shape = tuple(x.shape)
    if None in shape[1:]:
        raise node.error(f"needs a static {what} shape apart from the batch dim, got {shape}")
    return shape


def _flatten_2d(x, axis: int):
    """Opset < 13 softmax family: view as 2-D ``(prod(shape[:axis]), prod(shape[axis:]))``."""
    shape = tuple(x.shape)
    axis = axis % len(shape) if shape else 0
    outer, inner = shape[:axis], shape[axis:]
    rows = -1 if None in outer else math.prod(outer)
    cols = -1 if rows != -1 else math.prod(inner)
    return x.reshape((rows, cols))


# ---- matrix products ----------------------------------------------------------------------------------
@converter("MatMul")
def matmul(node, a, b):
    lead = tuple(a.shape[:-1]) if a.shape is not None else ()
    if len(lead) > 1 and b.ndim == 2 and a.shape[-1] is not None and sum(d is None for d in lead) <= 1:
        # (..., K) @ (K, N) as one (rows, K) @ (K, N) product: one GEMM instead of one per leading
        # index, and the weight's gradient is one GEMM too
        rows = G.matmul(a.reshape((-1, a.shape[-1])), b)
        return rows.reshape(tuple(-1 if d is None else d for d in lead) + (b.shape[-1],))
    return G.matmul(a, b)


@converter("Gemm")
def gemm(node, a, b, c=None):
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    if node.attr("transA", 0):
        a = a.T
    if node.attr("transB", 0):
        b = b.T
    y = G.matmul(a, b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c * beta if beta != 1.0 else c)
    return y


@converter("MatMulInteger")
def matmul_integer(node, a, b, a_zero=None, b_zero=None):
    """int32 product of (u)int8 operands minus their zero points (per row of A / column of B)."""
    a, b = a.astype(np.int32), b.astype(np.int32)
    if a_zero is not None:
        a_zero = a_zero.astype(np.int32)
        a = a - (a_zero.reshape((-1, 1)) if a_zero.ndim == 1 else a_zero)
    if b_zero is not None:
        b = b - b_zero.astype(np.int32)
    return G.matmul(a, b)


@converter("Det")
def det(node, x):
    return G.det(x)


@converter("Einsum")
def einsum(node, *operands):
    return G.einsum(node.attr("equation").replace(" ", ""), *operands)


# ---- convolution geometry -----------------------------------------------------------------------------
def _window_attrs(node, nd: int) -> tuple:
    """(strides, dilations) of a conv/pool node, one per spatial axis."""
    strides = tuple(node.attr("strides", None) or (1,) * nd)
    dilations = tuple(node.attr("dilations", None) or (1,) * nd)
    return strides, dilations


def _pads(node, sizes: tuple, kernel: tuple, strides: tuple, dilations: tuple) -> list:
    """ONNX ``pads``/``auto_pad`` as ``(low, high)`` pairs per spatial axis."""
    nd = len(sizes)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pairs = []
        for n, k, s, d in zip(sizes, kernel, strides, dilations):
            out = -(-n // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
            small, big = total // 2, total - total // 2
            pairs.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
        return pairs
    if auto_pad == "VALID":
        return [(0, 0)] * nd
    pads = node.attr("pads", None) or [0] * (2 * nd)
    return [(int(pads[i]), int(pads[i + nd])) for i in range(nd)]


# ---- Conv ---------------------------------------------------------------------------------------------
@converter("Conv")
def conv(node, x, w, b=None):
    nd = len(w.shape) - 2
    kernel = _static(node, w, "weight")[2:]
    strides, dilations = _window_attrs(node, nd)
    pads = _pads(node, _static(node, x)[2:], kernel, strides, dilations)
    group = int(node.attr("group", 1))
    if nd in (1, 2):
        op = (G.Conv1d if nd == 1 else G.Conv2d)(strides, pads, dilations, group)
        y = op.apply(x, w)
    elif nd == 3:
        y = _conv3d(x, w, strides, pads, dilations, group)
    else:
        raise node.unsupported(f"a {nd}-D convolution")
    return y if b is None else y + b.reshape((-1,) + (1,) * nd)


@converter("ConvInteger")
def conv_integer(node, x, w, x_zero=None, w_zero=None):
    """int32 convolution of (u)int8 operands minus their zero points, computed in float64 (exact for
    8-bit operands) since graphgrad's convolutions are float ops."""
    nd = len(w.shape) - 2
    x, w = x.astype(np.float64), w.astype(np.float64)
    if x_zero is not None:
        x = x - x_zero.astype(np.float64)
    if w_zero is not None:
        w_zero = w_zero.astype(np.float64)
        w = w - (w_zero.reshape((-1,) + (1,) * (nd + 1)) if w_zero.ndim == 1 else w_zero)
    return G.round(conv(node, x, w)).astype(np.int32)


def _conv3d(x, w, strides, pads, dilations, group):
    """3-D convolution as a sum over the kernel depth of 2-D convolutions, with the output depth
    folded into the batch (graphgrad has 1-D and 2-D convolution primitives)."""
    n, _, depth = x.shape[:3]
    (lo, hi), sd, dd, kd = pads[0], strides[0], dilations[0], w.shape[2]
    out_d = (depth + lo + hi - dd * (kd - 1) - 1) // sd + 1
    xt = G.transpose(G.pad(x, ((0, 0), (0, 0), (lo, hi), (0, 0), (0, 0))), (0, 2, 1, 3, 4))  # N, D, C, H, W
    op = G.Conv2d(strides[1:], pads[1:], dilations[1:], group)
    total = None
    for k in range(kd):
        start = k * dd
        xs = xt[:, start:start + sd * (out_d - 1) + 1:sd]  # the input depths seen by kernel depth k
        xs = xs.reshape((-1,) + tuple(xt.shape[2:]))
        y = op.apply(xs, w[:, :, k])
        total = y if total is None else total + y
    total = total.reshape((n, out_d) + tuple(total.shape[1:]))
    return G.transpose(total, (0, 2, 1, 3, 4))


# ---- ConvTranspose ------------------------------------------------------------------------------------
def _conv_transpose_geometry(node, sizes, kernel, strides, dilations):
    """((low, high) pads, output_padding) per axis; a negative high pad becomes output padding."""
    nd = len(sizes)
    out_pad = list(node.attr("output_padding", None) or (0,) * nd)
    full = [s * (n - 1) + op + (k - 1) * d + 1 for n, k, s, d, op in zip(sizes, kernel, strides, dilations, out_pad)]
    output_shape = node.attr("output_shape", None)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if output_shape is None:
            output_shape = [n * s for n, s in zip(sizes, strides)]
        output_shape = list(output_shape)[-nd:]
        pads = []
        for f, o in zip(full, output_shape):
            total = f - o
            small, big = total // 2, total - total // 2
            pads.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
    else:
        pads = [(0, 0)] * nd if auto_pad == "VALID" else _pads(node, sizes, kernel, strides, dilations)
    pads = [list(p) for p in pads]
    for i, (lo, hi) in enumerate(pads):
        if hi < 0:  # the output extends past the full transposed convolution: zeros there
            out_pad[i] -= hi
            pads[i][1] = 0
        if lo < 0:
            raise node.unsupported(f"a negative begin padding ({lo}) of the transposed convolution")
    return [tuple(p) for p in pads], tuple(out_pad)


@converter("ConvTranspose")
def conv_transpose(node, x, w, b=None):
    nd = len(w.shape) - 2
    kernel = _static(node, w, "weight")[2:]
    strides, dilations = _window_attrs(node, nd)
    pads, out_pad = _conv_transpose_geometry(node, _static(node, x)[2:], kernel, strides, dilations)
    group = int(node.attr("group", 1))
    if nd in (1, 2):
        op = (G.ConvTranspose1d if nd == 1 else G.ConvTranspose2d)(strides, pads, out_pad, dilations, group)
        y = op.apply(x, w)
    elif nd == 3:
        y = _conv_transpose3d(x, w, strides, pads, out_pad, dilations, group)
    else:
        raise node.unsupported(f"a {nd}-D transposed convolution")
    return y if b is None else y + b.reshape((-1,) + (1,) * nd)


def _conv_transpose3d(x, w, strides, pads, out_pad, dilations, group):
    """3-D transposed convolution: per kernel depth, a 2-D transposed convolution of every input
    depth, spread over the output depths ``i * stride + k * dilation`` and summed."""
    n, _, depth = x.shape[:3]
    (lo, hi), sd, dd, kd = pads[0], strides[0], dilations[0], w.shape[2]
    full = sd * (depth - 1) + dd * (kd - 1) + 1 + out_pad[0]
    spread = sd * (depth - 1) + 1  # input depths placed stride apart
    xt = G.transpose(x, (0, 2, 1, 3, 4)).reshape((-1,) + tuple(x.shape[1:2] + x.shape[3:]))  # N*D, C, H, W
    op = G.ConvTranspose2d(strides[1:], pads[1:], out_pad[1:], dilations[1:], group)
    total = None
    for k in range(kd):
        y = op.apply(xt, w[:, :, k])
        y = y.reshape((n, depth, 1) + tuple(y.shape[1:]))
        y = G.pad(y, ((0, 0), (0, 0), (0, sd - 1)) + ((0, 0),) * 3).reshape((n, depth * sd) + tuple(y.shape[3:]))
        y = y[:, :spread]
        y = G.pad(y, ((0, 0), (k * dd, full - k * dd - spread)) + ((0, 0),) * 3)
        total = y if total is None else total + y
    total = total[:, lo:full - hi]
    return G.transpose(total, (0, 2, 1, 3, 4))


# ---- pooling ------------------------------------------------------------------------------------------
def _pool_geometry(node, sizes: tuple, kernel: tuple) -> tuple:
    """(strides, dilations, (low, high) pads, output sizes) of an ONNX pooling node."""
    nd = len(sizes)
    strides, dilations = _window_attrs(node, nd)
    pads = _pads(node, sizes, kernel, strides, dilations)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    out = []
    for n, k, s, d, (lo, hi) in zip(sizes, kernel, strides, dilations, pads):
        span = n + lo + hi - (k - 1) * d - 1
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= n + lo:  # the last window must start inside the input or left pad
            o -= 1
        out.append(o)
    return strides, dilations, pads, tuple(out)


def _pad_to_windows(x, sizes, kernel, strides, dilations, pads, out, value):
    """``x`` padded by ``value`` (cropped where the windows stop early) to exactly the extent that the
    ``out`` windows cover, so pooling needs no padding of its own."""
    nd = len(sizes)
    crop, widths = [slice(None)] * (x.ndim - nd), [(0, 0)] * (x.ndim - nd)
    for n, k, s, d, (lo, _), o in zip(sizes, kernel, strides, dilations, pads, out):
        need = (o - 1) * s + (k - 1) * d + 1  # padded length the windows read
        hi = need - n - lo
        crop.append(slice(0, n + min(hi, 0)))
        widths.append((lo, max(hi, 0)))
    x = x[tuple(crop)]
    return G.pad(x, tuple(widths), constant_values=value)


def _as_2d_pool_input(x, nd):
    """1-D pooling input (N, C, L) as (N, C, 1, L): graphgrad pools 2-D planes."""
    return x.reshape(tuple(x.shape[:2]) + (1,) + tuple(x.shape[2:])) if nd == 1 else x


def _max_pool_padded(x, kernel, strides, dilations):
    """Max pooling of an already padded input, for 1, 2 or 3 spatial axes (3-D is separable: the
    maximum over (H, W) windows, then over depth windows)."""
    nd = len(kernel)
    if nd == 1:
        y = G.max_pool2d(_as_2d_pool_input(x, 1), (1, kernel[0]), (1, strides[0]), 0, (1, dilations[0]))
        return y.reshape(tuple(y.shape[:2]) + tuple(y.shape[3:]))
    if nd == 2:
        return G.max_pool2d(x, kernel, strides, 0, dilations)
    n, c, d = x.shape[:3]
    plane = G.max_pool2d(x.reshape((n, c * d) + tuple(x.shape[3:])), kernel[1:], strides[1:], 0, dilations[1:])
    h, w = plane.shape[2:]
    cols = G.max_pool2d(plane.reshape((n, c, d, h * w)), (kernel[0], 1), (strides[0], 1), 0, (dilations[0], 1))
    return cols.reshape((n, c, cols.shape[2], h, w))


def _sum_pool_padded(x, kernel, strides, dilations):
    """Window sums of an already padded float input: a convolution of each channel with ones (which
    handles dilations); 3-D sums are separable (over (H, W), then over depth)."""
    nd = len(kernel)
    shape = tuple(x.shape)
    ones = const_tensor(np.ones((1, 1) + tuple(kernel[-2:] if nd == 3 else kernel)), x.dtype)
    if nd == 1:
        y = G.Conv1d(strides, ((0, 0),), dilations, 1).apply(x.reshape((-1, 1, shape[2])), ones)
        return y.reshape(shape[:2] + tuple(y.shape[2:]))
    if nd == 2:
        y = G.Conv2d(strides, ((0, 0),) * 2, dilations, 1).apply(x.reshape((-1, 1) + shape[2:]), ones)
        return y.reshape(shape[:2] + tuple(y.shape[2:]))
    plane = G.Conv2d(strides[1:], ((0, 0),) * 2, dilations[1:], 1).apply(x.reshape((-1, 1) + shape[3:]), ones)
    h, w = plane.shape[2:]
    depth_ones = const_tensor(np.ones((1, 1, kernel[0], 1)), x.dtype)
    cols = G.Conv2d((strides[0], 1), ((0, 0),) * 2, (dilations[0], 1), 1).apply(
        plane.reshape((-1, 1, shape[2], h * w)), depth_ones)
    return cols.reshape(shape[:2] + (cols.shape[2], h, w))


def _avg_divisor(sizes, kernel, strides, dilations, pads, out, count_include_pad: bool):
    """How many elements each window averages (NumPy, import time): the window's positions inside the
    padded input (count_include_pad) or inside the input itself; windows are boxes, so the count is
    the product of per-axis counts."""
    count = np.ones((), dtype=np.float64)
    for n, k, s, d, (lo, hi), o in zip(sizes, kernel, strides, dilations, pads, out):
        pos = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d  # padded coordinates
        inside = pos < n + lo + hi if count_include_pad else (pos >= lo) & (pos < lo + n)
        count = count[..., None] * inside.sum(axis=1)
    return count


def _pool_setup(node, x):
    shape = _static(node, x)
    sizes = shape[2:]
    kernel = tuple(node.attr("kernel_shape"))
    if len(kernel) not in (1, 2, 3):
        raise node.unsupported(f"{len(kernel)}-D pooling")
    strides, dilations, pads, out = _pool_geometry(node, sizes, kernel)
    return sizes, kernel, strides, dilations, pads, out


@converter("MaxPool")
def max_pool(node, x):
    sizes, kernel, strides, dilations, pads, out = _pool_setup(node, x)
    low = -math.inf if x.dtype.kind == "f" else int(np.iinfo(x.dtype).min)
    padded = _pad_to_windows(x, sizes, kernel, strides, dilations, pads, out, low)
    y = _max_pool_padded(padded, kernel, strides, dilations)
    if node.num_outputs < 2 or not node.output_names[1]:
        return y
    if len(kernel) != 2:
        raise node.unsupported("the Indices output of a MaxPool that is not 2-D")
    return y, _max_pool_indices(node, x, padded, kernel, strides, dilations, pads)


def _max_pool_indices(node, x, padded, kernel, strides, dilations, pads):
    """ONNX's flat argmax index into ``x`` (N, C, H, W), row-major, or with ``storage_order=1`` with
    H and W swapped; from the argmax in the padded plane."""
    n, c, h, w = x.shape
    wp = padded.shape[3]
    _, index = G.max_pool2d(padded, kernel, strides, 0, dilations, return_indices=True)
    row = G.floor_divide(index, wp) - pads[0][0]
    col = G.mod(index, wp) - pads[1][0]
    plane = row * w + col if not node.attr("storage_order", 0) else col * h + row
    base = np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * (h * w)
    return plane + const_tensor(base, np.int64)


@converter("AveragePool")
def average_pool(node, x):
    sizes, kernel, strides, dilations, pads, out = _pool_setup(node, x)
    padded = _pad_to_windows(x, sizes, kernel, strides, dilations, pads, out, 0.0)
    total = _sum_pool_padded(padded, kernel, strides, dilations)
    divisor = _avg_divisor(sizes, kernel, strides, dilations, pads, out, bool(node.attr("count_include_pad", 0)))
    return total / const_tensor(divisor, x.dtype)


@converter("GlobalAveragePool")
def global_average_pool(node, x):
    shape = tuple(x.shape)
    if len(shape) < 3 or None in shape[1:] or x.dtype.kind != "f":
        return G.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True)
    # (N*C, H*W) @ (H*W, 1) of 1/(H*W): a BLAS matrix-vector product, 3-7x faster than a NumPy mean
    # over the trailing axes (measured, float32)
    size = math.prod(shape[2:])
    weights = const_tensor(np.full((size, 1), 1.0 / size), x.dtype)
    pooled = G.matmul(x.reshape((-1, size)), weights)
    return pooled.reshape((-1, shape[1]) + (1,) * (len(shape) - 2))


@converter("GlobalMaxPool")
def global_max_pool(node, x):
    return G.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


# ---- normalization ------------------------------------------------------------------------------------
def _per_channel(p, ndim: int):
    """A (C,) parameter shaped to broadcast along axis 1 of a rank-``ndim`` input."""
    return p.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm_affine(scale, bias, mean, var, eps: float) -> tuple:
    """(s, t) of shape (C,) with inference batch normalization ``(x - mean) / sqrt(var + eps) * scale
    + bias == x * s + t`` per channel."""
    s = scale * G.rsqrt(var + eps)
    return s, bias - mean * s


@converter("BatchNormalization")
def batch_normalization(node, x, scale, bias, mean, var):
    eps = float(node.attr("epsilon", 1e-5))
    training = bool(node.attr("training_mode", 0)) if node.opset >= 14 else False
    if node.opset < 9 and not node.attr("is_test", 0) and node.num_outputs > 1:
        raise node.unsupported("BatchNormalization in training mode before opset 9")
    if not training:  # one multiply-add per element (the compiler fuses it with what follows)
        s, t = batch_norm_affine(scale, bias, mean, var, eps)
        return x * _per_channel(s, x.ndim) + _per_channel(t, x.ndim)
    # training mode: normalize with the batch statistics (biased variance), and output running stats
    momentum = float(node.attr("momentum", 0.9))
    axes = (0,) + tuple(range(2, x.ndim))
    batch_mean = G.mean(x, axis=axes)
    batch_var = G.var(x, axis=axes)
    y = G.batch_norm(x, batch_mean, batch_var, scale, bias, training=False, eps=eps)
    running_mean = mean * momentum + batch_mean * (1.0 - momentum)
    running_var = var * momentum + batch_var * (1.0 - momentum)
    return y, running_mean, running_var


@converter("LayerNormalization")
def layer_normalization(node, x, scale, bias=None):
    axis = int(node.attr("axis", -1)) % x.ndim
    eps = float(node.attr("epsilon", 1e-5))
    normalized = tuple(x.shape[axis:])
    if not any(node.output_names[1:]) and None not in normalized and x.dtype.kind == "f" and \
            all(p is None or (tuple(p.shape) == normalized and p.dtype == x.dtype) for p in (scale, bias)):
        return G.layer_norm(x, normalized, scale, bias, eps=eps)  # Y alone: graphgrad's layer norm op
    axes = tuple(range(axis, x.ndim))
    mean = G.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    inv_std = G.rsqrt(G.mean(centered * centered, axis=axes, keepdims=True) + eps)
    y = centered * inv_std * scale
    if bias is not None:
        y = y + bias
    return y, mean, inv_std


@converter("RMSNormalization")
def rms_normalization(node, x, scale):
    axis = int(node.attr("axis", -1)) % x.ndim
    axes = tuple(range(axis, x.ndim))
    mean_square = G.mean(x * x, axis=axes, keepdims=True)
    return x * G.rsqrt(mean_square + float(node.attr("epsilon", 1e-5))) * scale


@converter("InstanceNormalization")
def instance_normalization(node, x, scale, bias):
    channels = _static(node, x)[1]
    return G.group_norm(x, channels, scale, bias, eps=float(node.attr("epsilon", 1e-5)))


@converter("GroupNormalization")
def group_normalization(node, x, scale, bias):
    groups = int(node.attr("num_groups"))
    channels = _static(node, x)[1]
    if node.opset < 21:  # opset 18: one scale and bias per group, repeated over its channels
        scale, bias = G.repeat(scale, channels // groups), G.repeat(bias, channels // groups)
    return G.group_norm(x, groups, scale, bias, eps=float(node.attr("epsilon", 1e-5)))


@converter("LpNormalization")
def lp_normalization(node, x):
    axis, p = int(node.attr("axis", -1)), int(node.attr("p", 2))
    if p == 1:
        norm = G.sum(G.abs(x), axis=axis, keepdims=True)
    elif p == 2:
        norm = G.sqrt(G.sum(x * x, axis=axis, keepdims=True))
    else:
        raise node.unsupported(f"p={p} (ONNX allows 1 or 2)")
    # a zero norm means a zero slice: divide it by 1 (ONNX gives 0, not NaN)
    return x / G.where(norm == 0, G.ones_like(norm), norm)


@converter("MeanVarianceNormalization")
def mean_variance_normalization(node, x):
    axes = tuple(node.attr("axes", [0, 2, 3]))
    mean = G.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    std = G.sqrt(G.mean(centered * centered, axis=axes, keepdims=True))
    return centered / (std + 1e-9)  # the epsilon of ONNX's function body


# ---- dropout ------------------------------------------------------------------------------------------
@converter("Dropout")
def dropout(node, x, ratio=None, training_mode=None):
    if node.opset >= 12:  # training_mode and ratio are inputs; the ratio only matters when training
        training = training_mode is not None and bool(node.const(2))
        p = (0.5 if ratio is None else float(node.const(1))) if training else 0.0
    else:  # opset 7-11 Dropout is the inference op; before 7, is_test chooses
        training = node.opset < 7 and not node.attr("is_test", 0)
        p = float(node.attr("ratio", 0.5))
    if training and p > 0.0:
        y = G.dropout(x, p, training=True)
        mask = G.not_equal(y, 0) if node.num_outputs > 1 else None
    else:
        y = x
        mask = G.ones_like(x, dtype=bool) if node.num_outputs > 1 else None
    return (y, mask) if node.num_outputs > 1 else y


# ---- softmax family -----------------------------------------------------------------------------------
def _softmax_like(node, x, fn):
    """Opset >= 13: ``fn`` along one axis (default -1); before: along the flattened trailing axes from
    ``axis`` (default 1)."""
    if node.opset >= 13:
        return fn(x, int(node.attr("axis", -1)))
    return fn(_flatten_2d(x, int(node.attr("axis", 1))), 1).reshape_like(x)


@converter("Softmax")
def softmax(node, x):
    return _softmax_like(node, x, lambda t, axis: G.softmax(t, axis=axis))


@converter("LogSoftmax")
def log_softmax(node, x):
    return _softmax_like(node, x, lambda t, axis: G.log_softmax(t, axis=axis))


def _hardmax(x, axis: int):
    """One-hot of the first maximum along ``axis``, in ``x``'s dtype."""
    axis = axis % x.ndim
    hot = G.one_hot(G.argmax(x, axis=axis), int(x.shape[axis]), dtype=x.dtype)
    return G.moveaxis(hot, -1, axis)


@converter("Hardmax")
def hardmax(node, x):
    return _softmax_like(node, x, _hardmax)


# ---- losses -------------------------------------------------------------------------------------------
def _nll(node, logp, target, weight):
    """ONNX's negative log-likelihood (PyTorch's semantics: 'mean' divides by the summed weights)."""
    reduction = node.attr("reduction", "mean")
    ignore_index = int(node.attr("ignore_index", -100)) if node.has("ignore_index") else -100
    return G.nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


@converter("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(node, logp, target, weight=None):
    return _nll(node, logp, target, weight)


@converter("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(node, scores, labels, weight=None):
    logp = G.log_softmax(scores, axis=1)
    loss = _nll(node, logp, labels, weight)
    return (loss, logp) if node.num_outputs > 1 else loss
