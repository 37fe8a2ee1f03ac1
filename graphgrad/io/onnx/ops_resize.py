"""ONNX import converters: Resize and Upsample.

Resizing is linear and separable: each resized axis is multiplied by an ``(out, in)`` matrix built at
import time, following the ONNX reference's 1-D interpolation (coordinate transformation, choice of
neighbours with edge clamping, nearest/linear/cubic coefficients, antialiasing, exclude_outside), so
every mode is exact, runs as one matmul per axis, and is differentiable. ``scales``, ``sizes`` and
``roi`` must be known at import time.
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import const_tensor, converter


def _static(node, x) -> tuple:
    shape = tuple(x.shape)
    if None in shape:
        raise node.error(f"needs a static input shape, got {shape}")
    return shape


def _source_coordinate(x: int, mode: str, scale: float, n_in: int, n_out: int, roi) -> float:
    """The input coordinate that output position ``x`` samples."""
    width = scale * n_in  # the real-valued output length
    if mode == "align_corners":
        return 0.0 if width == 1 else x * (n_in - 1) / (width - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if width == 1:
            return (end - start) * (n_in - 1) / 2 + start * (n_in - 1)
        return x * (end - start) * (n_in - 1) / (width - 1) + start * (n_in - 1)
    if mode == "pytorch_half_pixel":
        return -0.5 if width == 1 else (x + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / width)
        return offset + (x + 0.5) / scale - 0.5
    raise ValueError(mode)


def _resize_coeffs(node, ratio: float, scale: float):
    """Interpolation weights of the neighbours, for ``ratio`` in (0, 1] past the left one."""
    mode = node.attr("mode", "nearest")
    antialias = bool(node.attr("antialias", 0)) and scale < 1.0
    if mode == "nearest":
        if float(ratio).is_integer():
            return np.array([0.0, 1.0])
        nearest = node.attr("nearest_mode", "round_prefer_floor")
        right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False,
                 "ceil": True}[nearest]
        return np.array([0.0, 1.0]) if right else np.array([1.0, 0.0])
    if mode == "linear":
        if not antialias:
            return np.array([1 - ratio, ratio])
        start = int(np.floor(-1 / scale) + 1)
        args = (np.arange(start, start + 2 - 2 * start) - ratio) * scale
        coeffs = np.clip(1 - np.abs(args), 0, 1)
        return coeffs / coeffs.sum()
    a = float(node.attr("cubic_coeff_a", -0.75))
    if not antialias:
        r = ratio
        return np.array([((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                         ((a + 2) * r - (a + 3)) * r * r + 1,
                         ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
                         ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a])
    start = int(np.floor(-2 / scale) + 1)
    t = np.abs(scale * (np.arange(start, 2 - start) - ratio))
    coeffs = np.where(t <= 1, (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1,
                      np.where(t < 2, a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a, 0.0))
    return coeffs / coeffs.sum()


def _resize_matrix(node, n_in: int, n_out: int, scale: float, roi) -> tuple:
    """(out, in) interpolation matrix, and the rows that take the extrapolation value instead."""
    mode = node.attr("coordinate_transformation_mode", "half_pixel")
    exclude_outside = bool(node.attr("exclude_outside", 0))
    matrix = np.zeros((n_out, n_in))
    outside = np.zeros(n_out, dtype=bool)
    for x in range(n_out):
        x_ori = float(_source_coordinate(x, mode, scale, n_in, n_out, roi))
        if mode == "tf_crop_and_resize" and (x_ori < 0 or x_ori > n_in - 1):
            outside[x] = True
            continue
        ratio = 1.0 if x_ori.is_integer() else x_ori - math.floor(x_ori)
        coeffs = _resize_coeffs(node, ratio, scale)
        n = len(coeffs)
        pad = -(-n // 2)
        # the n nearest positions of the edge-padded input, ties to the left (as the reference)
        around = range(max(math.floor(x_ori) - n - 1, -pad), min(math.floor(x_ori) + n + 2, n_in + pad))
        idx = np.array(sorted(sorted(around, key=lambda i: (abs(x_ori - i), i))[:n]))
        if exclude_outside:
            coeffs = np.where((idx < 0) | (idx >= n_in), 0.0, coeffs)
            coeffs = coeffs / coeffs.sum()
        np.add.at(matrix[x], np.clip(idx, 0, n_in - 1), coeffs)
    return matrix, outside


def _resize_plan(node, shape: tuple, scales, sizes, axes) -> tuple:
    """Per-axis (scale, output size), following ONNX's axes and keep_aspect_ratio_policy."""
    rank = len(shape)
    axes = [a % rank for a in (axes if axes is not None else range(rank))]
    scale = [1.0] * rank
    out = list(shape)
    if sizes is not None:
        for a, s in zip(axes, sizes):
            scale[a] = int(s) / shape[a]
            out[a] = int(s)
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            chosen = (min if policy == "not_larger" else max)(scale[a] for a in axes)
            for a in axes:
                scale[a] = chosen
                out[a] = int(chosen * shape[a] + 0.5)
    else:
        for a, s in zip(axes, scales):
            scale[a] = float(s)
            out[a] = int(float(s) * shape[a])
    return axes, scale, out


def _resize(node, x, roi, scales, sizes, axes):
    shape = _static(node, x)
    axes, scale, out = _resize_plan(node, shape, scales, sizes, axes)
    rank = len(shape)
    if roi is not None and len(roi):
        roi = list(roi)
        full = [0.0] * rank + [1.0] * rank
        for i, a in enumerate(axes):
            full[a], full[rank + a] = float(roi[i]), float(roi[len(axes) + i])
        roi = full
    extrapolation = float(node.attr("extrapolation_value", 0.0))
    y = x
    for a in axes:
        axis_roi = None if roi is None or not len(roi) else (roi[a], roi[rank + a])
        if out[a] == shape[a] and scale[a] == 1.0 and (axis_roi is None or tuple(axis_roi) == (0.0, 1.0)):
            continue  # identity along this axis
        matrix, outside = _resize_matrix(node, shape[a], out[a], scale[a], axis_roi)
        moved = G.moveaxis(y, a, -1)
        moved = G.matmul(moved, const_tensor(matrix.T, x.dtype))
        if outside.any():  # tf_crop_and_resize samples outside the input: the extrapolation value
            moved = moved + const_tensor(outside * extrapolation, x.dtype)
        y = G.moveaxis(moved, -1, a)
    return y


@converter("Resize")
def resize(node, x, *rest):
    if node.opset < 11:  # Resize-10: (X, scales)
        return _resize(node, x, None, node.const(1), None, None)
    roi = node.const(1) if len(rest) > 0 and rest[0] is not None else None
    scales = node.const(2) if len(rest) > 1 and rest[1] is not None else None
    sizes = node.const(3) if len(rest) > 2 and rest[2] is not None else None
    if scales is not None and scales.size == 0:
        scales = None
    return _resize(node, x, roi, scales, sizes, node.attr("axes", None))


@converter("Upsample")
def upsample(node, x, scales=None):
    """Upsample (deprecated): Resize with asymmetric coordinates and floor for nearest."""
    scales = node.const(1) if scales is not None else node.attr("scales")
    return _resize(_UpsampleNode(node), x, None, scales, None, None)


class _UpsampleNode:
    """``node`` seen with Resize's attributes for Upsample's semantics."""

    def __init__(self, node):
        self._node = node

    def attr(self, name, default=None):
        fixed = {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
        if name in fixed:
            return fixed[name]
        if name == "mode":
            return {"bilinear": "linear"}.get(self._node.attr("mode", "nearest"), self._node.attr("mode", "nearest"))
        return self._node.attr(name, default)

    def __getattr__(self, name):
        return getattr(self._node, name)
