"""Op-table rows for 1-D and 3-D convolution and pooling, unpooling, adaptive max pooling, power-average
pooling, 3-D and nearest-exact interpolation, pixel/channel shuffles and padding modes.

The references are naive loops over output positions in any number of spatial axes, written from
PyTorch's documented formulas, sharing no code with graphgrad.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

import graphgrad as gg
import graphgrad.nn.functional as GF
from tests.ops.op_table import A, F, I, OpSpec, P
from tests.ops.rows_conv import _pool_len, ref_conv2d


def _nd(v, nd):
    return (v,) * nd if isinstance(v, int) else tuple(v)


# ---- references ------------------------------------------------------------------------------------
def ref_conv3d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """A sum of 2-D convolutions, one per depth offset of the kernel."""
    s, p, d = _nd(stride, 3), _nd(padding, 3), _nd(dilation, 3)
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (0, 0), (0, 0)))
    depth = (xp.shape[2] - d[0] * (w.shape[2] - 1) - 1) // s[0] + 1
    planes = []
    for o in range(depth):
        total = 0
        for k in range(w.shape[2]):
            total = total + ref_conv2d(xp[:, :, o * s[0] + k * d[0]], w[:, :, k], None, s[1:], p[1:], d[1:], groups)
        planes.append(total)
    y = np.stack(planes, axis=2)
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


def ref_conv_transpose3d(x, w, stride=1, padding=0, output_padding=0):
    """Scatter every input element times the kernel (groups 1, dilation 1)."""
    s, p, op = _nd(stride, 3), _nd(padding, 3), _nd(output_padding, 3)
    n, _, *size = x.shape
    k = w.shape[2:]
    full = [(size[i] - 1) * s[i] + k[i] + op[i] for i in range(3)]
    out = np.zeros((n, w.shape[1], *full))
    for pos in itertools.product(*[range(v) for v in size]):
        contrib = np.einsum("nc,cokqr->nokqr", x[(slice(None), slice(None)) + pos], w)
        sl = tuple(slice(pos[i] * s[i], pos[i] * s[i] + k[i]) for i in range(3))
        out[(slice(None), slice(None)) + sl] += contrib
    return out[(slice(None), slice(None)) + tuple(slice(p[i], full[i] - p[i]) for i in range(3))]


def _windows(shape, k, s, p, d, ceil_mode):
    """(output position, list of in-bounds input positions, window extent clipped to the padded input)."""
    nd = len(k)
    out = [_pool_len(shape[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    for o in itertools.product(*[range(v) for v in out]):
        axes, padded = [], 1
        for i in range(nd):
            start = o[i] * s[i] - p[i]
            axes.append([start + a * d[i] for a in range(k[i]) if 0 <= start + a * d[i] < shape[i]])
            padded *= min(start + k[i], shape[i] + p[i]) - start
        yield o, out, list(itertools.product(*axes)), padded


def ref_max_pool(x, k, s=None, p=0, d=1, ceil_mode=False, nd=3, indices=False):
    k, p, d = _nd(k, nd), _nd(p, nd), _nd(d, nd)
    s = k if s is None else _nd(s, nd)
    lead, shape = x.shape[:-nd], x.shape[-nd:]
    result, where = {}, {}
    for o, out, positions, _ in _windows(shape, k, s, p, d, ceil_mode):
        vals = np.stack([x[(Ellipsis,) + q] for q in positions], -1)
        result[o] = vals.max(-1)
        where[o] = np.asarray([np.ravel_multi_index(q, shape) for q in positions])[vals.argmax(-1)]
    y, idx = np.empty(lead + tuple(out)), np.empty(lead + tuple(out), dtype=np.int64)
    for o in result:
        y[(Ellipsis,) + o], idx[(Ellipsis,) + o] = result[o], where[o]
    return idx if indices else y


def ref_avg_pool(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor_override=None, nd=3):
    k, p = _nd(k, nd), _nd(p, nd)
    s = k if s is None else _nd(s, nd)
    lead, shape = x.shape[:-nd], x.shape[-nd:]
    cells = {}
    for o, out, positions, padded in _windows(shape, k, s, p, (1,) * nd, ceil_mode):
        total = sum(x[(Ellipsis,) + q] for q in positions)
        cells[o] = total / (divisor_override or (padded if count_include_pad else len(positions)))
    y = np.empty(lead + tuple(out))
    for o, v in cells.items():
        y[(Ellipsis,) + o] = v
    return y


def _adaptive_ranges(n_in, n_out):
    return [(i * n_in // n_out, -(-(i + 1) * n_in // n_out)) for i in range(n_out)]


def ref_adaptive(x, size, reduce, nd):
    shape = x.shape[-nd:]
    size = _nd(size, nd)
    ranges = [_adaptive_ranges(shape[i], size[i]) for i in range(nd)]
    y = np.empty(x.shape[:-nd] + size)
    for o in itertools.product(*[range(v) for v in size]):
        block = x[(Ellipsis,) + tuple(slice(*ranges[i][o[i]]) for i in range(nd))]
        y[(Ellipsis,) + o] = reduce(block.reshape(block.shape[:-nd] + (-1,)), axis=-1)
    return y


def ref_unpool(values, index, size):
    nd = len(size)
    lead = values.shape[:-nd]
    out = np.zeros(lead + tuple(size))
    flat = out.reshape(-1, math.prod(size))
    for plane, (v, i) in enumerate(zip(values.reshape(len(flat), -1), index.reshape(len(flat), -1))):
        flat[plane, i] = v
    return out


def ref_lp_pool(x, norm, k, s=None, nd=2):
    return (ref_avg_pool(x ** norm, k, s, nd=nd) * math.prod(_nd(k, nd))) ** (1.0 / norm)


def ref_pixel_shuffle(x, r):
    n, c, h, w = x.shape
    out = np.empty((n, c // (r * r), h * r, w * r))
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[:, ch, i::r, j::r] = x[:, ch * r * r + i * r + j]
    return out


def ref_trilinear(x, size):
    """Separable linear interpolation (align_corners False), one axis at a time."""
    for axis, n_out in zip((2, 3, 4), size):
        n_in = x.shape[axis]
        src = np.maximum((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0)
        i0 = np.minimum(np.floor(src).astype(int), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        lam = (src - i0).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
        x = np.take(x, i0, axis) * (1 - lam) + np.take(x, i1, axis) * lam
    return x


def ref_nearest_exact(x, size):
    for axis, n_out in zip(range(2, x.ndim), size):
        n_in = x.shape[axis]
        x = np.take(x, np.minimum(np.floor((np.arange(n_out) + 0.5) * n_in / n_out).astype(int), n_in - 1), axis)
    return x


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}
X3 = (2, 2, 4, 5, 6)

ROWS = [
    # conv3d / conv_transpose3d
    OpSpec("conv3d", lambda x, w, b: gg.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
           lambda x, w, b: ref_conv3d(x, w, b, (1, 2, 1), 1), [F((2, 2, 4, 5, 4)), F((3, 2, 2, 3, 2)), F((3,))]),
    OpSpec("conv3d[groups2,dilation2]", lambda x, w: gg.conv3d(x, w, dilation=(2, 1, 1), groups=2),
           lambda x, w: ref_conv3d(x, w, dilation=(2, 1, 1), groups=2), [F((2, 4, 5, 3, 3)), F((4, 2, 2, 2, 2))]),
    OpSpec("conv3d[depthwise]", lambda x, w: gg.conv3d(x, w, padding=1, groups=2),
           lambda x, w: ref_conv3d(x, w, padding=1, groups=2), [F((2, 2, 3, 3, 3)), F((4, 1, 3, 3, 3))]),
    OpSpec("conv_transpose3d", lambda x, w: gg.conv_transpose3d(x, w, stride=2, padding=1, output_padding=(1, 0, 1)),
           lambda x, w: ref_conv_transpose3d(x, w, 2, 1, (1, 0, 1)), [F((2, 3, 2, 3, 2)), F((3, 2, 3, 2, 3))]),
    # max / avg pooling in 1 and 3 axes
    OpSpec("max_pool1d", lambda x: gg.max_pool1d(x, 3, 2, 1), lambda x: ref_max_pool(x, 3, 2, 1, nd=1),
           [F((2, 3, 9))]),
    OpSpec("max_pool1d[ceil,dilation2]", lambda x: gg.max_pool1d(x, 2, 2, dilation=2, ceil_mode=True),
           lambda x: ref_max_pool(x, 2, 2, 0, 2, True, nd=1), [F((2, 3, 8))]),
    OpSpec("max_pool3d", lambda x: gg.max_pool3d(x, 2), lambda x: ref_max_pool(x, 2), [F(X3)]),
    OpSpec("max_pool3d[k(2,3,2),s(1,2,2),pad1,ceil]", lambda x: gg.max_pool3d(x, (2, 3, 2), (1, 2, 2), 1, ceil_mode=True),
           lambda x: ref_max_pool(x, (2, 3, 2), (1, 2, 2), 1, 1, True), [F(X3)]),
    OpSpec("max_pool3d[unbatched]", lambda x: gg.max_pool3d(x, 2, 1), lambda x: ref_max_pool(x, 2, 1), [F((2, 3, 3, 4))]),
    OpSpec("max_pool3d[indices]", lambda x: gg.max_pool3d(x, 2, return_indices=True)[1],
           lambda x: ref_max_pool(x, 2, indices=True), [F(X3, diff=False)], grad=False),
    OpSpec("max_pool3d[values_with_indices]", lambda x: gg.max_pool3d(x, (3, 2, 2), 2, 1, return_indices=True)[0],
           lambda x: ref_max_pool(x, (3, 2, 2), 2, 1), [F(X3)]),
    OpSpec("max_pool1d[indices]", lambda x: gg.max_pool1d(x, 3, 2, 1, return_indices=True)[1],
           lambda x: ref_max_pool(x, 3, 2, 1, nd=1, indices=True), [F((2, 3, 9), diff=False)], grad=False),
    OpSpec("avg_pool1d", lambda x: gg.avg_pool1d(x, 3, 2, 1), lambda x: ref_avg_pool(x, 3, 2, 1, nd=1), [F((2, 3, 9))]),
    OpSpec("avg_pool1d[exclude_pad,ceil]", lambda x: gg.avg_pool1d(x, 3, 2, 1, True, False),
           lambda x: ref_avg_pool(x, 3, 2, 1, True, False, nd=1), [F((2, 3, 8))]),
    OpSpec("avg_pool3d", lambda x: gg.avg_pool3d(x, 2), lambda x: ref_avg_pool(x, 2), [F(X3)]),
    OpSpec("avg_pool3d[pad1,exclude_pad,ceil]", lambda x: gg.avg_pool3d(x, 3, 2, 1, True, False),
           lambda x: ref_avg_pool(x, 3, 2, 1, True, False), [F(X3)]),
    OpSpec("avg_pool3d[divisor_override]", lambda x: gg.avg_pool3d(x, (2, 2, 3), 1, divisor_override=5),
           lambda x: ref_avg_pool(x, (2, 2, 3), 1, divisor_override=5), [F(X3)]),
    # unpooling (indices from a max pooling of fixed values)
    OpSpec("max_unpool1d", lambda v, i: gg.max_unpool1d(v, i, 2),
           lambda v, i: ref_unpool(v, i, (8,)), [F((2, 3, 4)), A(np.arange(4)[None, None] * 2 + np.array([[[0], [1], [0]]]) + np.zeros((2, 1, 1), int))]),
    OpSpec("max_unpool2d", lambda v, i: gg.max_unpool2d(v, i, 2, output_size=(5, 4)),
           lambda v, i: ref_unpool(v, i, (5, 4)), [F((2, 2, 2, 2)), A(np.array([[0, 3], [9, 14]]) + np.zeros((2, 2, 1, 1), int))]),
    OpSpec("max_unpool3d", lambda v, i: gg.max_unpool3d(v, i, 2),
           lambda v, i: ref_unpool(v, i, (4, 4, 4)),
           [F((1, 2, 2, 2, 2)), A(np.array([0, 7, 10, 31, 40, 45, 58, 63]).reshape(1, 1, 2, 2, 2) + np.zeros((1, 2, 1, 1, 1), int))]),
    # adaptive pooling
    OpSpec("adaptive_avg_pool1d", lambda x: gg.adaptive_avg_pool1d(x, 4),
           lambda x: ref_adaptive(x, 4, np.mean, 1), [F((2, 3, 10))]),
    OpSpec("adaptive_avg_pool3d", lambda x: gg.adaptive_avg_pool3d(x, (3, 2, 4)),
           lambda x: ref_adaptive(x, (3, 2, 4), np.mean, 3), [F(X3)]),
    OpSpec("adaptive_max_pool1d", lambda x: gg.adaptive_max_pool1d(x, 4),
           lambda x: ref_adaptive(x, 4, np.max, 1), [F((2, 3, 10))]),
    OpSpec("adaptive_max_pool2d", lambda x: gg.adaptive_max_pool2d(x, (3, 4)),
           lambda x: ref_adaptive(x, (3, 4), np.max, 2), [F((2, 3, 7, 6))]),
    OpSpec("adaptive_max_pool3d", lambda x: gg.adaptive_max_pool3d(x, (3, 2, 4)),
           lambda x: ref_adaptive(x, (3, 2, 4), np.max, 3), [F(X3)]),
    OpSpec("adaptive_max_pool2d[upsample]", lambda x: gg.adaptive_max_pool2d(x, (5, 2)),
           lambda x: ref_adaptive(x, (5, 2), np.max, 2), [F((2, 2, 3, 5))]),
    # power-average pooling (positive inputs: x^p of a negative x is NaN for fractional p)
    OpSpec("lp_pool1d", lambda x: gg.lp_pool1d(x, 2, 3, 2), lambda x: ref_lp_pool(x, 2, 3, 2, nd=1), [P((2, 3, 9))]),
    OpSpec("lp_pool2d", lambda x: gg.lp_pool2d(x, 1.5, (2, 3)), lambda x: ref_lp_pool(x, 1.5, (2, 3)), [P((2, 2, 4, 6))]),
    OpSpec("lp_pool3d", lambda x: gg.lp_pool3d(x, 3, 2), lambda x: ref_lp_pool(x, 3, 2, nd=3), [P(X3)]),
    # interpolation
    OpSpec("interpolate[trilinear]", lambda x: gg.interpolate(x, size=(3, 7, 4), mode="trilinear"),
           lambda x: ref_trilinear(x, (3, 7, 4)), [F(X3)]),
    OpSpec("interpolate[nearest,3d]", lambda x: gg.interpolate(x, size=(3, 7, 4)),
           lambda x: np.take(np.take(np.take(x, [0, 1, 2], 2), [0, 0, 1, 2, 2, 3, 4], 3), [0, 1, 3, 4], 4),
           [F(X3)]),
    OpSpec("interpolate[nearest-exact]", lambda x: gg.interpolate(x, size=(3, 7), mode="nearest-exact"),
           lambda x: ref_nearest_exact(x, (3, 7)), [F((2, 2, 5, 4))]),
    OpSpec("interpolate[nearest,int]", lambda x: gg.interpolate(x, size=(3, 7)),
           lambda x: np.take(np.take(x, [0, 1, 3], 2), [0, 0, 1, 1, 2, 2, 3], 3), [I((2, 2, 5, 4), 0, 100)],
           grad=False),
    # shuffles
    OpSpec("pixel_shuffle", lambda x: gg.pixel_shuffle(x, 2), lambda x: ref_pixel_shuffle(x, 2), [F((2, 8, 3, 2))]),
    OpSpec("pixel_unshuffle", lambda x: gg.pixel_unshuffle(x, 2),
           lambda x: x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(2, 12, 2, 3), [F((2, 3, 4, 6))]),
    OpSpec("channel_shuffle", lambda x: gg.channel_shuffle(x, 3),
           lambda x: x.reshape(2, 3, 2, 5).transpose(0, 2, 1, 3).reshape(2, 6, 5), [F((2, 6, 5))]),
    # padding modes over three axes (F.pad's PyTorch order: last axis first)
] + [
    OpSpec(f"pad[{mode},3d]", lambda x, mode=mode: GF.pad(x, (1, 2, 0, 1, 2, 1), mode=mode),
           lambda x, mode=mode: np.pad(x, ((0, 0), (0, 0), (2, 1), (0, 1), (1, 2)), mode=_PAD_MODES[mode]),
           [F((2, 2, 4, 3, 5))])
    for mode in _PAD_MODES
]


# ---- channel and alpha dropout (a fresh generator per call: a fixed mask, so a fixed function) -------
def ref_channel_dropout(x, p, seed, channel_axis=1):
    keep = np.random.default_rng(seed).random(x.shape[:channel_axis + 1] + (1,) * (x.ndim - channel_axis - 1)) >= p
    return x * keep / (1 - p)


def ref_alpha_dropout(x, p, seed, channel_axis=None):
    like = x.shape if channel_axis is None else x.shape[:channel_axis + 1] + (1,) * (x.ndim - channel_axis - 1)
    keep = np.random.default_rng(seed).random(like) >= p
    s = 1.7580993408473766
    a = 1 / math.sqrt((s * s * p + 1) * (1 - p))
    return np.where(keep, a * x + a * s * p, a * s * (p - 1))


ROWS += [
    OpSpec("dropout1d", lambda x: gg.dropout1d(x, 0.4, generator=gg.Generator(3)),
           lambda x: ref_channel_dropout(x, 0.4, 3), [F((4, 5, 3))]),
    OpSpec("dropout1d[unbatched]", lambda x: gg.dropout1d(x, 0.4, generator=gg.Generator(3)),
           lambda x: ref_channel_dropout(x, 0.4, 3, 0), [F((5, 3))], batch=False),  # axis 0 is the channel axis
    OpSpec("dropout2d", lambda x: gg.dropout2d(x, 0.5, generator=gg.Generator(1)),
           lambda x: ref_channel_dropout(x, 0.5, 1), [F((3, 4, 2, 3))]),
    OpSpec("dropout2d[eval]", lambda x: gg.dropout2d(x, 0.5, training=False), lambda x: x, [F((3, 4, 2, 3))]),
    OpSpec("dropout3d", lambda x: gg.dropout3d(x, 0.3, generator=gg.Generator(5)),
           lambda x: ref_channel_dropout(x, 0.3, 5), [F((3, 4, 2, 2, 3))]),
    OpSpec("alpha_dropout", lambda x: gg.alpha_dropout(x, 0.2, training=True, generator=gg.Generator(2)),
           lambda x: ref_alpha_dropout(x, 0.2, 2), [F((4, 6))]),
    OpSpec("alpha_dropout[eval]", lambda x: gg.alpha_dropout(x, 0.2), lambda x: x, [F((4, 6))]),
    OpSpec("feature_alpha_dropout", lambda x: gg.feature_alpha_dropout(x, 0.3, training=True, generator=gg.Generator(4)),
           lambda x: ref_alpha_dropout(x, 0.3, 4, 1), [F((4, 5, 3))]),
]


# ---- per-sample normalizations --------------------------------------------------------------------------
def ref_instance_norm(x, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    view = (1, -1) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(view)
    if bias is not None:
        y = y + bias.reshape(view)
    return y


def ref_local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    div = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        div[:, ch] = (x[:, lo:hi] ** 2).sum(1)
    return x / (k + alpha / size * div) ** beta


ROWS += [
    OpSpec("instance_norm", gg.instance_norm, ref_instance_norm, [F((2, 3, 4, 5))]),
    OpSpec("instance_norm[affine,1d]", lambda x, w, b: gg.instance_norm(x, None, None, w, b),
           lambda x, w, b: ref_instance_norm(x, w, b), [F((2, 3, 6)), F((3,)), F((3,))], batch=False),  # (C,) params
    OpSpec("local_response_norm", lambda x: gg.local_response_norm(x, 3, 0.1, 0.6, 1.5),
           lambda x: ref_local_response_norm(x, 3, 0.1, 0.6, 1.5), [F((2, 5, 3, 2))]),
    OpSpec("local_response_norm[even,1d]", lambda x: gg.local_response_norm(x, 2, 0.2),
           lambda x: ref_local_response_norm(x, 2, 0.2), [F((2, 4, 5))]),
]


def _cubic_weights_1d(n_in, n_out, align_corners):
    """(n_out, n_in): Keys' cubic (A = -0.75) over the 4 neighbours of each source position, edges clamped."""
    a = -0.75
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        if align_corners:
            real = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            real = (o + 0.5) * n_in / n_out - 0.5
        base = math.floor(real)
        t = real - base
        for k in range(4):
            d = abs(t - (k - 1))
            w = ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
            m[o, min(max(base - 1 + k, 0), n_in - 1)] += w
    return m


def ref_bicubic(x, size, align_corners=False):
    mh = _cubic_weights_1d(x.shape[2], size[0], align_corners)
    mw = _cubic_weights_1d(x.shape[3], size[1], align_corners)
    return np.einsum("oh,nchw,pw->ncop", mh, x, mw)


ROWS += [
    OpSpec("interpolate[bicubic]", lambda x: gg.interpolate(x, size=(7, 3), mode="bicubic"),
           lambda x: ref_bicubic(x, (7, 3)), [F((2, 2, 4, 5))]),
    OpSpec("interpolate[bicubic,align_corners]", lambda x: gg.interpolate(x, size=(3, 8), mode="bicubic", align_corners=True),
           lambda x: ref_bicubic(x, (3, 8), True), [F((2, 2, 4, 5))]),
]


# ---- spatial transformers ----------------------------------------------------------------------------------
def ref_affine_grid(theta, size, align_corners=False):
    n, _, h, w = size

    def base(k):
        if k == 1:
            return np.zeros(1)
        return np.linspace(-1, 1, k) if align_corners else (np.arange(k) * 2 + 1) / k - 1

    ys, xs = np.meshgrid(base(h), base(w), indexing="ij")
    points = np.stack([xs, ys, np.ones_like(xs)], -1)  # (h, w, 3)
    return np.einsum("hwk,nik->nhwi", points, theta)


def ref_grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    """Loops over output pixels (2-D; zeros or border padding)."""
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])

    def unnormalize(v, size):
        p = (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2
        return min(max(p, 0), size - 1) if padding_mode == "border" else p

    def pixel(b, yy, xx):
        return x[b, :, yy, xx] if 0 <= yy < h and 0 <= xx < w else np.zeros(c)

    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                px, py = unnormalize(grid[b, i, j, 0], w), unnormalize(grid[b, i, j, 1], h)
                if mode == "nearest":
                    out[b, :, i, j] = pixel(b, int(np.round(py)), int(np.round(px)))
                    continue
                x0, y0 = math.floor(px), math.floor(py)
                fx, fy = px - x0, py - y0
                out[b, :, i, j] = (pixel(b, y0, x0) * (1 - fx) * (1 - fy) + pixel(b, y0, x0 + 1) * fx * (1 - fy)
                                   + pixel(b, y0 + 1, x0) * (1 - fx) * fy + pixel(b, y0 + 1, x0 + 1) * fx * fy)
    return out


#: a fixed grid (batch 2, 3 x 4 points), some points outside [-1, 1]
GRID_VALUES = np.array([[[[0.3, 0.953], [0.662, -0.66], [-0.48, 0.897], [-1.187, 0.771]],
                         [[0.713, -0.077], [-0.473, -0.532], [-0.588, -0.132], [0.011, 0.128]],
                         [[1.189, 0.702], [0.293, 1.174], [-0.683, -0.815], [0.27, -1.095]]],
                        [[[-1.114, 0.036], [-0.081, 1.001], [0.31, 0.034], [-0.008, -0.606]],
                         [[-1.172, -0.738], [0.461, -0.719], [-0.313, -1.191], [0.792, -0.829]],
                         [[-0.558, 0.913], [0.023, 0.833], [0.335, 0.58], [-0.98, 0.099]]]])
#: where bilinear sampling of a 5 x 6 input has kinks in the grid (pixel centres, align_corners False)
_GRID_KINKS = tuple(sorted({(2 * k + 1) / 6 - 1 for k in range(-1, 7)} | {(2 * k + 1) / 5 - 1 for k in range(-1, 6)}))
ROWS += [
    OpSpec("affine_grid", lambda t: gg.affine_grid(t, (2, 3, 4, 5)), lambda t: ref_affine_grid(t, (2, 3, 4, 5)),
           [F((2, 2, 3))]),
    OpSpec("affine_grid[align_corners]", lambda t: gg.affine_grid(t, (2, 1, 3, 1), align_corners=True),
           lambda t: ref_affine_grid(t, (2, 1, 3, 1), True), [F((2, 2, 3))]),
    OpSpec("grid_sample", lambda x: gg.grid_sample(x, gg.tensor(GRID_VALUES, dtype=x.dtype)),
           lambda x: ref_grid_sample(x, GRID_VALUES), [F((2, 3, 5, 6))], batch=False),  # a constant grid of batch 2
    OpSpec("grid_sample[border,align_corners]",
           lambda x: gg.grid_sample(x, gg.tensor(GRID_VALUES, dtype=x.dtype), padding_mode="border", align_corners=True),
           lambda x: ref_grid_sample(x, GRID_VALUES, padding_mode="border", align_corners=True),
           [F((2, 3, 5, 6))], batch=False),
    OpSpec("grid_sample[grid_gradient]", lambda x, g: gg.grid_sample(x, g), ref_grid_sample,
           [F((2, 3, 5, 6)), F((2, 3, 4, 2), -1.3, 1.3, kinks=_GRID_KINKS, away=0.02)]),
    OpSpec("grid_sample[nearest]", lambda x: gg.grid_sample(x, gg.tensor(GRID_VALUES, dtype=x.dtype), mode="nearest"),
           lambda x: ref_grid_sample(x, GRID_VALUES, mode="nearest"), [F((2, 3, 5, 6))], batch=False),
]


def ref_fractional_max_pool(x, kernel, out, samples):
    """Loops over planes and windows; ``samples`` in PyTorch's order ((w, h) in 2-D, (t, h, w) in 3-D)."""
    nd = len(kernel)
    order = (1, 0) if nd == 2 else tuple(range(nd))
    y = np.empty(x.shape[:2] + tuple(out))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        starts = []
        for i in range(nd):
            size, k, o, u = x.shape[2 + i], kernel[i], out[i], samples[n, c, order[i]]
            alpha = (size - k) / (o - 1) if o > 1 else 0
            starts.append([int((j + u) * alpha) - int(u * alpha) for j in range(o - 1)] + [size - k])
        for pos in itertools.product(*[range(o) for o in out]):
            window = x[(n, c) + tuple(slice(starts[i][pos[i]], starts[i][pos[i]] + kernel[i]) for i in range(nd))]
            y[(n, c) + pos] = window.max()
    return y


_SAMPLES2 = np.array([[[0.2, 0.7], [0.95, 0.1], [0.5, 0.5]], [[0.0, 0.33], [0.61, 0.8], [0.4, 0.05]]])
_SAMPLES3 = np.array([[[0.2, 0.7, 0.9], [0.5, 0.1, 0.3]], [[0.0, 0.33, 0.66], [0.61, 0.8, 0.12]]])
ROWS += [
    OpSpec("fractional_max_pool2d", lambda x: gg.fractional_max_pool2d(x, (2, 3), (5, 4), _random_samples=_SAMPLES2),
           lambda x: ref_fractional_max_pool(x, (2, 3), (5, 4), _SAMPLES2), [F((2, 3, 9, 8))],
           batch=False),  # the offsets have a batch of 2
    OpSpec("fractional_max_pool3d", lambda x: gg.fractional_max_pool3d(x, 2, (3, 4, 2), _random_samples=_SAMPLES3),
           lambda x: ref_fractional_max_pool(x, (2, 2, 2), (3, 4, 2), _SAMPLES3), [F((2, 2, 5, 6, 4))], batch=False),
]

# ---- convolutions of an input without a batch axis (PyTorch runs them as a batch of one) ----------------
ROWS += [
    OpSpec("conv2d[unbatched]", lambda x, w: gg.conv2d(x, w, padding=1),
           lambda x, w: ref_conv2d(x[None], w, padding=1)[0], [F((3, 5, 4)), F((2, 3, 3, 3))], batch=False),
    OpSpec("conv_transpose3d[unbatched]", lambda x, w: gg.conv_transpose3d(x, w, stride=2),
           lambda x, w: ref_conv_transpose3d(x[None], w, 2)[0], [F((2, 2, 3, 2)), F((2, 3, 2, 2, 2))], batch=False),
]
