"""Op-table rows for convolutions, pooling and interpolation.

The references are deliberately naive: explicit loops over output positions on small float64
inputs, written from PyTorch's documented formulas (and its C++ kernels' index rules), sharing no
code with graphgrad.
"""
from __future__ import annotations

import math

import numpy as np

import graphgrad as gg
from tests.ops.op_table import F, OpSpec


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


# ---- references ------------------------------------------------------------------------------------
def ref_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct definition: every output element is the dot product of a (dilated) patch and a filter."""
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    kh, kw = w.shape[2:]
    if padding == "same":
        th, tw = dh * (kh - 1), dw * (kw - 1)
        pads = ((th // 2, th - th // 2), (tw // 2, tw - tw // 2))
    elif padding == "valid":
        pads = ((0, 0), (0, 0))
    else:
        ph, pw = _pair(padding)
        pads = ((ph, ph), (pw, pw))
    xp = np.pad(x, ((0, 0), (0, 0)) + pads)
    n, c, hp, wp = xp.shape
    co, cg = w.shape[:2]
    ho = (hp - dh * (kh - 1) - 1) // sh + 1
    wo = (wp - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, co, ho, wo))
    per_group = co // groups
    for o in range(co):
        g = o // per_group
        for i in range(ho):
            for j in range(wo):
                patch = xp[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                           j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, o, i, j] = np.sum(patch * w[o], axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


def ref_conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """conv1d is conv2d on a height-1 image."""
    pad = padding if isinstance(padding, str) else (0, padding if isinstance(padding, int) else padding[0])
    s = stride if isinstance(stride, int) else stride[0]
    d = dilation if isinstance(dilation, int) else dilation[0]
    return ref_conv2d(x[:, :, None, :], w[:, :, None, :], b, (1, s), pad, (1, d), groups)[:, :, 0, :]


def ref_conv_transpose2d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Direct definition: each input element adds ``x * kernel`` at ``i*stride + k*dilation``, then the
    result is cropped by ``padding`` (output_padding adds room at the end)."""
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    oph, opw = _pair(output_padding)
    dh, dw = _pair(dilation)
    n, ci, h, wd = x.shape
    cg = w.shape[1]
    kh, kw = w.shape[2:]
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    out = np.zeros((n, cg * groups, full_h, full_w))
    per_group = ci // groups
    for c in range(ci):
        g = c // per_group
        for i in range(h):
            for j in range(wd):
                out[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                    j * sw:j * sw + dw * (kw - 1) + 1:dw] += x[:, c, i, j][:, None, None, None] * w[c][None]
    out = out[:, :, ph:full_h - ph, pw:full_w - pw]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


def _pool_len(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = math.floor(num / s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def ref_max_pool2d(x, k, s=None, p=0, d=1, ceil_mode=False):
    """Max over the input elements of each window (padding never wins)."""
    kh, kw = _pair(k)
    sh, sw = _pair(s if s is not None else k)
    ph, pw = _pair(p)
    dh, dw = _pair(d)
    n, c, h, w = x.shape
    ho, wo = _pool_len(h, kh, sh, ph, dh, ceil_mode), _pool_len(w, kw, sw, pw, dw, ceil_mode)
    out = np.empty((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            rows = [i * sh - ph + a * dh for a in range(kh) if 0 <= i * sh - ph + a * dh < h]
            cols = [j * sw - pw + b * dw for b in range(kw) if 0 <= j * sw - pw + b * dw < w]
            out[:, :, i, j] = x[:, :, rows][:, :, :, cols].max(axis=(2, 3))
    return out


def ref_avg_pool2d(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """PyTorch's CPU kernel rules: the window clipped to the padded input sets the count_include_pad
    divisor, the window clipped to the input the other one."""
    kh, kw = _pair(k)
    sh, sw = _pair(s if s is not None else k)
    ph, pw = _pair(p)
    n, c, h, w = x.shape
    ho, wo = _pool_len(h, kh, sh, ph, 1, ceil_mode), _pool_len(w, kw, sw, pw, 1, ceil_mode)
    out = np.empty((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            h0, w0 = i * sh - ph, j * sw - pw
            h1, w1 = min(h0 + kh, h + ph), min(w0 + kw, w + pw)
            pool_size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            total = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3))
            if divisor_override:
                divisor = divisor_override
            elif count_include_pad:
                divisor = pool_size
            else:
                divisor = (h1 - h0) * (w1 - w0)
            out[:, :, i, j] = total / divisor
    return out


def ref_adaptive_avg_pool2d(x, size):
    h, w = x.shape[-2:]
    oh, ow = (size, size) if isinstance(size, int) else size
    oh, ow = oh or h, ow or w
    out = np.empty(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            out[..., i, j] = x[..., r0:r1, c0:c1].mean(axis=(-2, -1))
    return out


def _nearest_src(dst, n_in, n_out, scale_factor):
    """PyTorch's nearest_idx (CPU): identity / halving special cases, else float32 floor(dst * scale)."""
    if n_out == n_in:
        return dst
    if n_out == 2 * n_in:
        return dst // 2
    scale = np.float32(1.0 / scale_factor) if scale_factor else np.float32(n_in) / np.float32(n_out)
    return min(int(math.floor(np.float32(dst) * scale)), n_in - 1)


def ref_interpolate_nearest(x, size=None, scale_factor=None):
    sizes = x.shape[2:]
    if size is not None:
        outs = (size,) * len(sizes) if isinstance(size, int) else tuple(size)
        scales = (None,) * len(sizes)
    else:
        scales = (scale_factor,) * len(sizes) if not isinstance(scale_factor, tuple) else scale_factor
        outs = tuple(int(math.floor(n * s)) for n, s in zip(sizes, scales))
    out = np.empty(x.shape[:2] + outs)
    for dst in np.ndindex(*outs):
        src = tuple(_nearest_src(d, n, o, s) for d, n, o, s in zip(dst, sizes, outs, scales))
        out[(slice(None), slice(None)) + dst] = x[(slice(None), slice(None)) + src]
    return out


def _linear_src(dst, n_in, n_out, align_corners, scale_factor):
    """PyTorch's area_pixel_compute_source_index + guard: (i0, i1, lambda1)."""
    if align_corners:
        real = (n_in - 1) / (n_out - 1) * dst if n_out > 1 else 0.0
    else:
        scale = 1.0 / scale_factor if scale_factor else n_in / n_out
        real = max(scale * (dst + 0.5) - 0.5, 0.0)
    i0 = min(int(math.floor(real)), n_in - 1)
    lam = min(max(real - i0, 0.0), 1.0)
    return i0, i0 + (1 if i0 < n_in - 1 else 0), lam


def ref_interpolate_bilinear(x, size=None, scale_factor=None, align_corners=False):
    h, w = x.shape[2:]
    if size is not None:
        oh, ow = (size, size) if isinstance(size, int) else size
        sh = sw = None
    else:
        sh, sw = (scale_factor, scale_factor) if not isinstance(scale_factor, tuple) else scale_factor
        oh, ow = int(math.floor(h * sh)), int(math.floor(w * sw))
    out = np.empty(x.shape[:2] + (oh, ow))
    for i in range(oh):
        r0, r1, a = _linear_src(i, h, oh, align_corners, sh)
        for j in range(ow):
            c0, c1, b = _linear_src(j, w, ow, align_corners, sw)
            out[:, :, i, j] = ((1 - a) * ((1 - b) * x[:, :, r0, c0] + b * x[:, :, r0, c1])
                               + a * ((1 - b) * x[:, :, r1, c0] + b * x[:, :, r1, c1]))
    return out


def ref_interpolate_linear(x, size=None, align_corners=False):
    n_in = x.shape[2]
    out = np.empty(x.shape[:2] + (size,))
    for i in range(size):
        i0, i1, lam = _linear_src(i, n_in, size, align_corners, None)
        out[:, :, i] = (1 - lam) * x[:, :, i0] + lam * x[:, :, i1]
    return out


# ---- rows ------------------------------------------------------------------------------------------
X = (2, 3, 6, 6)

ROWS = [
    # conv1d
    OpSpec("conv1d", gg.conv1d, ref_conv1d, [F((2, 3, 7)), F((4, 3, 3))]),
    OpSpec("conv1d[bias,stride2,pad1]", lambda x, w, b: gg.conv1d(x, w, b, stride=2, padding=1),
           lambda x, w, b: ref_conv1d(x, w, b, stride=2, padding=1), [F((2, 3, 8)), F((4, 3, 3)), F((4,))]),
    OpSpec("conv1d[same,even,dilation2]", lambda x, w: gg.conv1d(x, w, padding="same", dilation=2),
           lambda x, w: ref_conv1d(x, w, padding="same", dilation=2), [F((2, 2, 7)), F((3, 2, 4))]),
    OpSpec("conv1d[groups2]", lambda x, w: gg.conv1d(x, w, groups=2, padding=1),
           lambda x, w: ref_conv1d(x, w, groups=2, padding=1), [F((2, 4, 6)), F((6, 2, 3))]),
    # conv2d
    OpSpec("conv2d", gg.conv2d, ref_conv2d, [F(X), F((4, 3, 3, 3))]),
    OpSpec("conv2d[bias,stride2,pad1]", lambda x, w, b: gg.conv2d(x, w, b, stride=2, padding=1),
           lambda x, w, b: ref_conv2d(x, w, b, stride=2, padding=1), [F(X), F((4, 3, 3, 3)), F((4,))]),
    OpSpec("conv2d[stride(2,1),pad(0,2),kernel(2,3)]", lambda x, w: gg.conv2d(x, w, stride=(2, 1), padding=(0, 2)),
           lambda x, w: ref_conv2d(x, w, stride=(2, 1), padding=(0, 2)), [F((2, 2, 7, 5)), F((3, 2, 2, 3))]),
    OpSpec("conv2d[same,even_kernel]", lambda x, w, b: gg.conv2d(x, w, b, padding="same"),
           lambda x, w, b: ref_conv2d(x, w, b, padding="same"), [F((2, 2, 5, 6)), F((3, 2, 2, 4)), F((3,))]),
    OpSpec("conv2d[same,dilation2]", lambda x, w: gg.conv2d(x, w, padding="same", dilation=2),
           lambda x, w: ref_conv2d(x, w, padding="same", dilation=2), [F((2, 2, 6, 6)), F((3, 2, 3, 2))]),
    OpSpec("conv2d[valid,dilation(2,1),stride2]", lambda x, w: gg.conv2d(x, w, stride=2, padding="valid",
                                                                         dilation=(2, 1)),
           lambda x, w: ref_conv2d(x, w, stride=2, dilation=(2, 1)), [F((2, 2, 7, 7)), F((3, 2, 3, 3))]),
    OpSpec("conv2d[groups2,bias]", lambda x, w, b: gg.conv2d(x, w, b, padding=1, groups=2),
           lambda x, w, b: ref_conv2d(x, w, b, padding=1, groups=2), [F((2, 4, 5, 5)), F((6, 2, 3, 3)), F((6,))]),
    OpSpec("conv2d[depthwise]", lambda x, w: gg.conv2d(x, w, padding=1, groups=3),
           lambda x, w: ref_conv2d(x, w, padding=1, groups=3), [F((2, 3, 5, 5)), F((3, 1, 3, 3))]),
    OpSpec("conv2d[depthwise,multiplier2,stride2]", lambda x, w: gg.conv2d(x, w, stride=2, padding=1, groups=3),
           lambda x, w: ref_conv2d(x, w, stride=2, padding=1, groups=3), [F((2, 3, 6, 5)), F((6, 1, 3, 3))]),
    OpSpec("conv2d[depthwise,dilation2,pad(2,1)]",
           lambda x, w: gg.conv2d(x, w, padding=(2, 1), dilation=2, groups=4),
           lambda x, w: ref_conv2d(x, w, padding=(2, 1), dilation=2, groups=4), [F((2, 4, 5, 6)), F((4, 1, 3, 2))]),
    OpSpec("conv2d[groups3,stride2]", lambda x, w: gg.conv2d(x, w, stride=2, groups=3),
           lambda x, w: ref_conv2d(x, w, stride=2, groups=3), [F((2, 6, 5, 5)), F((3, 2, 2, 2))]),
    OpSpec("conv1d[depthwise,stride2]", lambda x, w: gg.conv1d(x, w, stride=2, padding=1, groups=3),
           lambda x, w: ref_conv1d(x, w, stride=2, padding=1, groups=3), [F((2, 3, 7)), F((3, 1, 3))]),
    # conv_transpose2d
    OpSpec("conv_transpose2d", gg.conv_transpose2d, ref_conv_transpose2d, [F((2, 3, 4, 4)), F((3, 2, 3, 3))]),
    OpSpec("conv_transpose1d[stride]", lambda x, w: gg.conv_transpose1d(x, w, stride=2, padding=1),
           lambda x, w: ref_conv_transpose2d(x[:, :, None, :], w[:, :, None, :], stride=(1, 2),
                                             padding=(0, 1))[:, :, 0, :], [F((2, 3, 5)), F((3, 2, 3))]),
    OpSpec("conv_transpose2d[bias,stride2,pad1,outpad1]",
           lambda x, w, b: gg.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
           lambda x, w, b: ref_conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
           [F((2, 3, 4, 4)), F((3, 2, 3, 3)), F((2,))]),
    OpSpec("conv_transpose2d[groups2,dilation2,stride(2,1)]",
           lambda x, w: gg.conv_transpose2d(x, w, stride=(2, 1), groups=2, dilation=2, padding=(1, 0)),
           lambda x, w: ref_conv_transpose2d(x, w, stride=(2, 1), groups=2, dilation=2, padding=(1, 0)),
           [F((2, 4, 4, 3)), F((4, 2, 2, 3))]),
    OpSpec("conv_transpose2d[depthwise,stride2]",
           lambda x, w: gg.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=3),
           lambda x, w: ref_conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=3),
           [F((2, 3, 3, 4)), F((3, 2, 3, 3))]),
    # max_pool2d
    OpSpec("max_pool2d", lambda x: gg.max_pool2d(x, 2), lambda x: ref_max_pool2d(x, 2), [F(X)]),
    OpSpec("max_pool2d[k3,s1,pad1]", lambda x: gg.max_pool2d(x, 3, stride=1, padding=1),
           lambda x: ref_max_pool2d(x, 3, 1, 1), [F((2, 2, 5, 5))]),
    OpSpec("max_pool2d[ceil_mode,pad1]", lambda x: gg.max_pool2d(x, 3, 2, padding=1, ceil_mode=True),
           lambda x: ref_max_pool2d(x, 3, 2, 1, ceil_mode=True), [F((2, 2, 6, 7))]),
    OpSpec("max_pool2d[k2,s3,odd]", lambda x: gg.max_pool2d(x, 2, 3), lambda x: ref_max_pool2d(x, 2, 3),
           [F((2, 2, 7, 8))]),
    OpSpec("max_pool2d[dilation2,k(2,3),s(1,2)]", lambda x: gg.max_pool2d(x, (2, 3), (1, 2), dilation=2),
           lambda x: ref_max_pool2d(x, (2, 3), (1, 2), 0, 2), [F((2, 2, 6, 7))]),
    # avg_pool2d
    OpSpec("avg_pool2d", lambda x: gg.avg_pool2d(x, 2), lambda x: ref_avg_pool2d(x, 2), [F(X)]),
    OpSpec("avg_pool2d[pad1,include_pad]", lambda x: gg.avg_pool2d(x, 3, 2, 1),
           lambda x: ref_avg_pool2d(x, 3, 2, 1), [F((2, 2, 7, 6))]),
    OpSpec("avg_pool2d[pad1,exclude_pad]", lambda x: gg.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
           lambda x: ref_avg_pool2d(x, 3, 2, 1, count_include_pad=False), [F((2, 2, 7, 6))]),
    OpSpec("avg_pool2d[ceil_mode,include_pad]", lambda x: gg.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
           lambda x: ref_avg_pool2d(x, 3, 2, 1, ceil_mode=True), [F((2, 2, 6, 6))]),
    OpSpec("avg_pool2d[ceil_mode,no_pad]", lambda x: gg.avg_pool2d(x, (3, 2), (2, 2), ceil_mode=True),
           lambda x: ref_avg_pool2d(x, (3, 2), (2, 2), ceil_mode=True), [F((2, 2, 6, 5))]),
    OpSpec("avg_pool2d[ceil_mode,exclude_pad]",
           lambda x: gg.avg_pool2d(x, 2, 3, 1, ceil_mode=True, count_include_pad=False),
           lambda x: ref_avg_pool2d(x, 2, 3, 1, ceil_mode=True, count_include_pad=False), [F((2, 2, 7, 6))]),
    OpSpec("avg_pool2d[divisor_override]", lambda x: gg.avg_pool2d(x, 2, 1, divisor_override=3),
           lambda x: ref_avg_pool2d(x, 2, 1, divisor_override=3), [F((2, 2, 5, 5))]),
    # adaptive_avg_pool2d
    OpSpec("adaptive_avg_pool2d", lambda x: gg.adaptive_avg_pool2d(x, 3),
           lambda x: ref_adaptive_avg_pool2d(x, 3), [F((2, 3, 7, 7))]),
    OpSpec("adaptive_avg_pool2d[(2,None)]", lambda x: gg.adaptive_avg_pool2d(x, (2, None)),
           lambda x: ref_adaptive_avg_pool2d(x, (2, None)), [F((2, 3, 5, 6))]),
    OpSpec("adaptive_avg_pool2d[upsample(4,1)]", lambda x: gg.adaptive_avg_pool2d(x, (7, 1)),
           lambda x: ref_adaptive_avg_pool2d(x, (7, 1)), [F((2, 2, 5, 4))]),
    # interpolate
    OpSpec("interpolate[nearest,size]", lambda x: gg.interpolate(x, size=(7, 4)),
           lambda x: ref_interpolate_nearest(x, size=(7, 4)), [F((2, 2, 5, 6))]),
    OpSpec("interpolate[nearest,scale2]", lambda x: gg.interpolate(x, scale_factor=2),
           lambda x: ref_interpolate_nearest(x, scale_factor=2), [F((2, 2, 3, 4))]),
    OpSpec("interpolate[nearest,scale(1.7,0.6)]", lambda x: gg.interpolate(x, scale_factor=(1.7, 0.6)),
           lambda x: ref_interpolate_nearest(x, scale_factor=(1.7, 0.6)), [F((2, 2, 5, 7))]),
    OpSpec("interpolate[nearest,1d]", lambda x: gg.interpolate(x, size=9),
           lambda x: ref_interpolate_nearest(x, size=9), [F((2, 3, 4))]),
    OpSpec("interpolate[bilinear,size]", lambda x: gg.interpolate(x, size=(7, 5), mode="bilinear"),
           lambda x: ref_interpolate_bilinear(x, size=(7, 5)), [F((2, 2, 4, 6))]),
    OpSpec("interpolate[bilinear,align_corners]",
           lambda x: gg.interpolate(x, size=(7, 3), mode="bilinear", align_corners=True),
           lambda x: ref_interpolate_bilinear(x, size=(7, 3), align_corners=True), [F((2, 2, 4, 5))]),
    OpSpec("interpolate[bilinear,scale1.5]", lambda x: gg.interpolate(x, scale_factor=1.5, mode="bilinear"),
           lambda x: ref_interpolate_bilinear(x, scale_factor=1.5), [F((2, 2, 4, 5))]),
    OpSpec("interpolate[linear,1d]", lambda x: gg.interpolate(x, size=7, mode="linear"),
           lambda x: ref_interpolate_linear(x, size=7), [F((2, 2, 5))]),
]
