"""ONNX import converters: linear quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
QLinearMatMul, QLinearConv) and BitCast.

A quantized tensor stands for ``(q - zero_point) * scale``. The scale and zero point apply per tensor (one
element), per axis (1-D along ``axis``) or per block (``block_size`` consecutive elements along ``axis``
share one). Quantizing rounds half to even and saturates to the target type: integers clip to their range
(4- and 2-bit ones included), float8 types clip to their largest finite value unless ``saturate=0``.
NumPy has the float8, float4 and 4-/2-bit types through ml_dtypes, which onnx installs.

Everything is built from graphgrad ops, so a quantized model runs eagerly, in a static graph and in a
trace. Integer products are exact: QLinearMatMul accumulates in int32 and QLinearConv in float64 (through
MatMulInteger's and ConvInteger's converters); requantizing their results computes in float32 or wider.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import converter, np_dtype
from graphgrad.io.onnx.ops_math import _FLOAT8_MAX, _NARROW_INT_RANGE, _castable, _is_integer, _onnx_cast
from graphgrad.io.onnx.ops_nn import conv_integer, matmul_integer
from graphgrad.io.onnx.ops_shape import _along, _axis

#: the float types QuantizeLinear may produce (besides the integers)
_QUANTIZED_FLOATS = frozenset({"float4_e2m1fn", *_FLOAT8_MAX})


# ---- helpers ------------------------------------------------------------------------------------------------
def _int_range(dtype) -> tuple:
    """(lowest, highest) value of an integer dtype, as Python floats (bounds of a float clip)."""
    dtype = np.dtype(dtype)
    lo, hi = _NARROW_INT_RANGE.get(dtype.name) or (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return float(lo), float(hi)


def _at_least_float32(dtype):
    """The dtype requantizing arithmetic runs in: float32, or ``dtype`` where it is wider."""
    return np.promote_types(dtype, np.float32)


def _round_saturate(y, zero_point, dtype):
    """``saturate(round(y) + zero_point)`` as integer ``dtype``, ``y`` being a float tensor."""
    y = G.round(y)
    if zero_point is not None:
        y = y + G.astype(zero_point, y.dtype)
    lo, hi = _int_range(dtype)
    return G.astype(G.clip(y, lo, hi), dtype)


def _spread(node, param, x, block_size: int):
    """A scale or zero point shaped to broadcast against ``x``: one element (per tensor), a 1-D tensor
    along ``axis`` (per axis), or ``x``'s rank with ``ceil(n / block_size)`` entries along ``axis``
    (blocked: each entry repeated ``block_size`` times)."""
    if param is None:
        return None
    if int(np.prod(param.shape)) == 1:
        return param.reshape(())
    axis = _axis(node, int(node.attr("axis", 1)), x.ndim)
    if not block_size:
        if param.ndim != 1:
            raise node.error(f"a per-axis scale or zero point must be 1-D, got shape {param.shape}")
        return param.reshape(tuple(-1 if i == axis else 1 for i in range(x.ndim)))
    if param.ndim != x.ndim:
        raise node.error(f"a blocked scale or zero point must have the input's rank {x.ndim}, got shape "
                         f"{param.shape}")
    repeated = G.repeat(param, block_size, axis)
    # the last block may be partial: keep the first n entries
    return repeated[_along(axis, x.ndim, slice(0, x.shape[axis]))]


def _quantized_dtype(node, zero_point):
    """QuantizeLinear's output dtype: the zero point's, else ``output_dtype``, else uint8."""
    wanted = np_dtype(node.attr("output_dtype")) if node.attr("output_dtype") else None
    if zero_point is not None:
        if wanted is not None and wanted != zero_point.dtype:
            raise node.error(f"output_dtype {wanted} differs from the zero point's dtype {zero_point.dtype}")
        wanted = zero_point.dtype
    dtype = wanted if wanted is not None else np.dtype(np.uint8)
    if not _is_integer(dtype) and dtype.name not in _QUANTIZED_FLOATS:
        raise node.unsupported(f"quantizing to {dtype}")
    return dtype


# ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear -------------------------------------------------
@converter("QuantizeLinear")
def quantize_linear(node, x, scale, zero_point=None):
    """``saturate(round(x / scale) + zero_point)``. The division runs in ``precision`` if given, else in the
    scale's dtype (ONNX's rule); float targets take ``x / scale + zero_point`` converted with ``saturate``."""
    dtype = _quantized_dtype(node, zero_point)
    block_size = int(node.attr("block_size", 0))
    precision = np_dtype(node.attr("precision")) if node.attr("precision") else scale.dtype
    y = G.astype(x, precision) / G.astype(_spread(node, scale, x, block_size), precision)
    zero_point = _spread(node, zero_point, x, block_size)
    if _is_integer(dtype):
        return _round_saturate(G.astype(y, _at_least_float32(precision)), zero_point, dtype)
    if zero_point is not None:
        y = y + G.astype(zero_point, y.dtype)
    return _onnx_cast(y, dtype, saturate=bool(node.attr("saturate", 1)))


@converter("DequantizeLinear")
def dequantize_linear(node, x, scale, zero_point=None):
    """``(x - zero_point) * scale`` in ``output_dtype`` (default: the scale's dtype). Integer differences are
    taken in int64, so they cannot wrap; the product is computed in float32 or wider, then rounded once."""
    out_dtype = np_dtype(node.attr("output_dtype")) if node.attr("output_dtype") else scale.dtype
    compute = _at_least_float32(out_dtype)
    block_size = int(node.attr("block_size", 0))
    zero_point = _spread(node, zero_point, x, block_size)
    if _is_integer(x.dtype):
        diff = G.astype(x, np.int64)
        if zero_point is not None:
            diff = diff - G.astype(zero_point, np.int64)
        diff = G.astype(diff, compute)
    else:  # float8 and float4 values: the zero point is zero in practice, but the formula holds
        diff = G.astype(x, compute)
        if zero_point is not None:
            diff = diff - G.astype(zero_point, compute)
    y = diff * G.astype(_spread(node, scale, x, block_size), compute)
    return G.astype(y, out_dtype)


@converter("DynamicQuantizeLinear")
def dynamic_quantize_linear(node, x):
    """uint8 quantization of ``x`` with the scale and zero point that map ``[min(x, 0), max(x, 0)]`` onto
    ``[0, 255]``; returns (y, scale, zero point)."""
    low = G.minimum(G.amin(x), 0.0)
    high = G.maximum(G.amax(x), 0.0)
    span = high - low
    scale = G.where(G.equal(span, 0.0), 1.0, span) / 255.0  # an all-zero input still gets a usable scale
    zero_point = G.round(G.clip(-low / scale, 0.0, 255.0))
    y = _round_saturate(x / scale, zero_point, np.uint8)
    return y, G.astype(scale, x.dtype), G.astype(zero_point, np.uint8)


# ---- QLinearMatMul, QLinearConv -----------------------------------------------------------------------------
def _requantize(node, acc, multiplier, y_zero_point, default_dtype):
    """Integer accumulators times ``multiplier`` (input scales over the output scale), quantized to
    ``y_zero_point``'s dtype (else ``default_dtype``)."""
    dtype = y_zero_point.dtype if y_zero_point is not None else np.dtype(default_dtype)
    if not _is_integer(dtype):
        raise node.unsupported(f"a {dtype} output")
    compute = _at_least_float32(multiplier.dtype)
    y = G.astype(acc, compute) * G.astype(multiplier, compute)
    return _round_saturate(y, y_zero_point, dtype)


def _per_row(t):
    """A 1-D per-row scale of a matrix as a column, to broadcast over the rows."""
    return t.reshape((-1, 1)) if t.ndim == 1 and t.shape[0] != 1 else t


@converter("QLinearMatMul")
def qlinear_matmul(node, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point=None):
    """Quantized ``a @ b``: the int32 product of the zero-point-shifted operands, requantized. Scales and
    zero points are per tensor, per row of ``a`` and per column of ``b``."""
    acc = matmul_integer(node, a, b, a_zero_point, b_zero_point)
    # the scales' own dtype (float16 or float32) computes the multiplier, as a runtime would
    multiplier = _per_row(a_scale) * b_scale / y_scale
    return _requantize(node, acc, multiplier, y_zero_point, a.dtype)


@converter("QLinearConv")
def qlinear_conv(node, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point=None, bias=None):
    """Quantized convolution (Conv's attributes): the exact integer convolution of the zero-point-shifted
    operands plus the int32 ``bias``, requantized. ``w``'s scale and zero point are per tensor or per output
    channel."""
    acc = conv_integer(node, x, w, x_zero_point, w_zero_point)
    channel_shape = (-1,) + (1,) * (acc.ndim - 2)
    if bias is not None:
        acc = acc + G.astype(bias, np.int32).reshape(channel_shape)
    multiplier = x_scale * w_scale.reshape(channel_shape) / y_scale
    return _requantize(node, acc, multiplier, y_zero_point, x.dtype)


# ---- BitCast ------------------------------------------------------------------------------------------------
@converter("BitCast")
def bit_cast(node, x):
    """Reinterpret the bits of ``x`` as the type ``to`` of the same width."""
    dtype = np_dtype(node.attr("to"))
    for d in (x.dtype, dtype):
        # NumPy stores the 4- and 2-bit types one per byte, so their bits are not ONNX's
        if not _castable(d) or d.name in _NARROW_INT_RANGE or d.name == "float4_e2m1fn":
            raise node.unsupported(f"bit-casting {x.dtype} to {dtype}")
    if x.dtype.itemsize != dtype.itemsize:
        raise node.error(f"BitCast needs types of the same width, got {x.dtype} and {dtype}")
    return G.bitcast(x, dtype)
