"""ONNX import converters: elementwise math, activations, comparisons and logic, casts, reductions.

Every converter builds its outputs from graphgrad ops, so it runs eagerly, in a graph or in a trace
and stays differentiable. ONNX types are strict (float32 in, float32 out): attribute floats are
turned into Python floats (weak scalars) so they never promote a tensor, and ops whose NumPy
counterpart widens (integer sums, ``pow`` with an integer exponent) are cast back.
"""
from __future__ import annotations

import functools
import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import converter, np_dtype


def _attr_float(node, name: str, default: float) -> float:
    return float(node.attr(name, default))


def _known_scalar(t):
    """The value of a one-element tensor known now and not trained (a constant), as a Python
    scalar; None otherwise (a graph tensor, an input, a parameter being fine-tuned)."""
    if t is None or t._data is None or t.requires_grad or getattr(t, "is_variable", False):
        return None
    return t._data.reshape(-1)[0].item() if t._data.size == 1 else None  # (.item(): a device value read back)


def _legacy_broadcast(node, a, b):
    """Before opset 7, binary ops broadcast only with ``broadcast=1``, aligning ``b`` with ``a``'s
    dimensions from ``axis`` on (not from the right, as NumPy and later opsets do)."""
    if node.opset >= 7 or not node.attr("broadcast", 0) or not node.has("axis") or b.ndim == 0:
        return b
    trailing = a.ndim - int(node.attr("axis")) % a.ndim - b.ndim
    return G.expand_dims(b, tuple(range(b.ndim, b.ndim + trailing))) if trailing > 0 else b


# ---- arithmetic ----------------------------------------------------------------------------------------
@converter("Add")
def add(node, a, b):
    return a + _legacy_broadcast(node, a, b)


@converter("Sub")
def sub(node, a, b):
    return a - _legacy_broadcast(node, a, b)


@converter("Mul")
def mul(node, a, b):
    return a * _legacy_broadcast(node, a, b)


@converter("Div")
def div(node, a, b):
    """Float division; integer division truncates toward zero (C semantics), unlike ``//``."""
    b = _legacy_broadcast(node, a, b)
    if a.dtype.kind not in "iu":
        return a / b
    q = G.floor_divide(a, b)
    if a.dtype.kind == "u":
        return q
    # floor and truncation differ by one where the division is inexact and the signs differ
    inexact = G.not_equal(G.remainder(a, b), 0)
    signs_differ = G.logical_xor(G.less(a, 0), G.less(b, 0))
    return q + G.astype(G.logical_and(inexact, signs_differ), q.dtype)


@converter("Pow")
def pow_(node, x, y):
    """``x ** y`` with the type of the base ``x`` (NumPy would widen float32 ** int64 to float64)."""
    y = _legacy_broadcast(node, x, y)
    exponent = _known_scalar(y)
    if x.dtype.kind == "f" and exponent is not None:
        return x ** float(exponent)  # a Python exponent: simpler gradient, and the compiler sees x * x
    if x.dtype.kind != "f" and y.dtype.kind == "f":
        return G.astype(G.astype(x, y.dtype) ** y, x.dtype)
    return x ** G.astype(y, x.dtype)


@converter("Mod")
def mod(node, a, b):
    """``fmod=0``: the sign of the divisor (Python ``%``); ``fmod=1``: the sign of the dividend (C fmod)."""
    r = G.remainder(a, b)
    if not node.attr("fmod", 0):
        return r
    # a nonzero remainder whose sign differs from the dividend's is one divisor away from fmod's
    wrong_sign = G.logical_and(G.not_equal(r, 0), G.logical_xor(G.less(r, 0), G.less(a, 0)))
    return G.where(wrong_sign, r - b, r)


@converter("Neg")
def neg(node, x):
    return -x


@converter("Abs")
def abs_(node, x):
    return G.abs(x)


@converter("Reciprocal")
def reciprocal(node, x):
    return G.reciprocal(x)


@converter("Sign")
def sign(node, x):
    return G.sign(x)


@converter("Max", "Min", "Sum", "Mean")
def variadic(node, *xs):
    """Elementwise max/min/sum/mean of any number of broadcast inputs."""
    combine = {"Max": G.maximum, "Min": G.minimum}.get(node.op_type, G.add)
    out = functools.reduce(combine, xs)
    return out / len(xs) if node.op_type == "Mean" else out


# ---- unary math ------------------------------------------------------------------------------------------
_UNARY = {
    "Exp": G.exp, "Log": G.log, "Sqrt": G.sqrt, "Erf": G.erf, "Sin": G.sin, "Cos": G.cos, "Tan": G.tan,
    "Asin": G.arcsin, "Acos": G.arccos, "Atan": G.arctan, "Sinh": G.sinh, "Cosh": G.cosh, "Tanh": G.tanh,
    "Floor": G.floor, "Ceil": G.ceil, "Round": G.round, "Relu": G.relu,
    "Not": G.logical_not, "BitwiseNot": G.bitwise_not, "IsNaN": G.isnan,
}


@converter(*_UNARY)
def unary(node, x):
    """One-to-one elementwise functions (Round rounds half to even, as ONNX does)."""
    return _UNARY[node.op_type](x)


@converter("Sigmoid")
def sigmoid(node, x):
    return _sigmoid(x)


def _sigmoid(x):
    """``exp(min(x, 0)) / (1 + exp(-|x|))``: the logistic function to float rounding for every x,
    with no overflow, written with elementwise ops that the graph compiler fuses into one kernel with
    its neighbours (a conv's bias before, the product of a Swish/SiLU after); NumPy's SIMD ``exp``
    makes it ~2x faster than a sigmoid kernel even unfused (float32, measured)."""
    return G.exp(G.minimum(x, 0.0)) / (G.exp(-G.abs(x)) + 1.0)


@converter("Asinh")
def asinh(node, x):
    # odd symmetry: log(x + sqrt(x^2 + 1)) would cancel catastrophically for large negative x
    ax = G.abs(x)
    return G.sign(x) * G.log(ax + G.sqrt(ax * ax + 1.0))


@converter("Acosh")
def acosh(node, x):
    return G.log(x + G.sqrt(x * x - 1.0))


@converter("Atanh")
def atanh(node, x):
    return G.log((x + 1.0) / (1.0 - x)) * 0.5


@converter("IsInf")
def isinf(node, x):
    out = G.isinf(x)
    if not node.attr("detect_negative", 1):
        out = G.logical_and(out, G.greater(x, 0))
    if not node.attr("detect_positive", 1):
        out = G.logical_and(out, G.less(x, 0))
    return out


# ---- activations -------------------------------------------------------------------------------------------
@converter("LeakyRelu")
def leaky_relu(node, x):
    return G.leaky_relu(x, _attr_float(node, "alpha", 0.01))


@converter("PRelu")
def prelu(node, x, slope):
    return G.where(G.less(x, 0), x * slope, x)


@converter("ThresholdedRelu")
def thresholded_relu(node, x):
    return G.where(G.greater(x, _attr_float(node, "alpha", 1.0)), x, 0.0)


@converter("Elu")
def elu(node, x):
    return G.elu(x, _attr_float(node, "alpha", 1.0))


@converter("Selu")
def selu(node, x):
    # ONNX's default constants are the float32 roundings of the SELU constants
    alpha = _attr_float(node, "alpha", 1.67326319217681884765625)
    gamma = _attr_float(node, "gamma", 1.05070102214813232421875)
    return G.elu(x, alpha) * gamma


@converter("Celu")
def celu(node, x):
    alpha = _attr_float(node, "alpha", 1.0)
    return G.where(G.greater(x, 0), x, G.elu(x * (1.0 / alpha)) * alpha)


@converter("HardSigmoid")
def hard_sigmoid(node, x):
    return _hard_sigmoid(x, _attr_float(node, "alpha", 0.2), _attr_float(node, "beta", 0.5))


def _hard_sigmoid(x, alpha: float, beta: float):
    # maximum/minimum rather than clip: the graph compiler fuses them with the multiply-add (and a
    # HardSwish's product) into one elementwise kernel
    return G.minimum(G.maximum(x * alpha + beta, 0.0), 1.0)


@converter("HardSwish")
def hard_swish(node, x):
    return x * _hard_sigmoid(x, 1.0 / 6.0, 0.5)


@converter("Softplus")
def softplus(node, x):
    return G.softplus(x)


@converter("Softsign")
def softsign(node, x):
    return x / (G.abs(x) + 1.0)


@converter("Gelu")
def gelu(node, x):
    return G.gelu(x, node.attr("approximate", "none"))


@converter("Mish")
def mish(node, x):
    return G.mish(x)


@converter("Swish")
def swish(node, x):
    alpha = _attr_float(node, "alpha", 1.0)
    return x * _sigmoid(x * alpha if alpha != 1.0 else x)


@converter("Shrink")
def shrink(node, x):
    """``x + bias`` below ``-lambd``, ``x - bias`` above ``lambd``, else 0."""
    lambd, bias = _attr_float(node, "lambd", 0.5), _attr_float(node, "bias", 0.0)
    out = G.where(G.less(x, -lambd), x + bias, G.where(G.greater(x, lambd), x - bias, 0))
    return G.astype(out, x.dtype)  # integer inputs: a float bias must not widen the result


@converter("Clip")
def clip(node, x, lo=None, hi=None):
    """Bounds are attributes before opset 11 and optional inputs since."""
    if node.opset < 11:
        return G.clip(x, _bound(node.attr("min")), _bound(node.attr("max")))
    return G.clip(x, _bound_input(lo, x), _bound_input(hi, x))


def _bound(value):
    return None if value is None else float(value)


def _bound_input(t, x):
    """A constant bound as a Python scalar of ``x``'s kind (the one-op ``Clip``); else the tensor."""
    value = _known_scalar(t)
    if value is None:
        return t
    return float(value) if x.dtype.kind == "f" else int(value)


# ---- comparisons and logic ---------------------------------------------------------------------------------
_BINARY = {
    "Equal": G.equal, "Less": G.less, "Greater": G.greater, "LessOrEqual": G.less_equal,
    "GreaterOrEqual": G.greater_equal, "And": G.logical_and, "Or": G.logical_or, "Xor": G.logical_xor,
    "BitwiseAnd": G.bitwise_and, "BitwiseOr": G.bitwise_or, "BitwiseXor": G.bitwise_xor,
}


@converter(*_BINARY)
def binary(node, a, b):
    """Broadcast comparisons (bool results) and logical/bitwise operators."""
    return _BINARY[node.op_type](a, _legacy_broadcast(node, a, b))


@converter("BitShift")
def bit_shift(node, x, y):
    """Integer shifts as products and floor divisions by powers of 2 (arithmetic right shift for
    signed ints); a shift that is negative or not less than the bit width gives 0 (or -1)."""
    out_of_range = G.logical_or(G.less(y, 0), G.greater_equal(y, x.dtype.itemsize * 8))
    shift = G.where(out_of_range, 0, y)
    two = G.full_like(x, 2)
    if node.attr("direction") == "LEFT":
        return G.where(out_of_range, 0, x * G.pow(two, shift))  # wraps around like a shift
    # two halves keep each power of 2 below the sign bit of a signed type
    half = G.floor_divide(shift, 2)
    out = G.floor_divide(G.floor_divide(x, G.pow(two, half)), G.pow(two, shift - half))
    return G.where(out_of_range, -G.astype(G.less(x, 0), x.dtype), out)  # the sign bit fills


@converter("Where")
def where(node, cond, x, y):
    return G.where(cond, x, y)


@converter("Identity")
def identity(node, x):
    if x is None or isinstance(x, list):  # an optional or a sequence passes through as it is
        return None if x is None else [G.identity(item) for item in x]
    return G.identity(x)


# ---- casts ---------------------------------------------------------------------------------------------------
_CASTABLE = frozenset(np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                            "uint32", "uint64", "float16", "float32", "float64"))
_NATIVE_FLOATS = frozenset(np.dtype(t) for t in ("float16", "float32", "float64"))

#: the largest finite value of each float8 type but e8m0: saturating casts clip to it
_FLOAT8_MAX = {"float8_e4m3fn": 448.0, "float8_e4m3fnuz": 240.0, "float8_e5m2": 57344.0, "float8_e5m2fnuz": 57344.0}

#: the range of each integer type narrower than a byte (NumPy stores them one per byte)
_NARROW_INT_RANGE = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}

#: dtypes NumPy has through ml_dtypes (which onnx installs), by name
_ML_DTYPES = frozenset({"bfloat16", "float8_e8m0fnu", "float4_e2m1fn", *_FLOAT8_MAX, *_NARROW_INT_RANGE})

#: float8_e8m0fnu holds the powers of two 2**-127 .. 2**127 (and NaN)
_E8M0_MIN, _E8M0_MAX = 2.0 ** -127, 2.0 ** 127
_E8M0_ROUND_MODES = ("up", "down", "nearest")


def _castable(dtype) -> bool:
    """The common dtypes, and bfloat16, float8, float4 and the 4- and 2-bit integers (through ml_dtypes)."""
    return np.dtype(dtype) in _CASTABLE or np.dtype(dtype).name in _ML_DTYPES


def _is_integer(dtype) -> bool:
    """Signed and unsigned integers, the 4- and 2-bit ones included (ml_dtypes gives those NumPy kind 'V')."""
    return np.dtype(dtype).kind in "iu" or np.dtype(dtype).name in _NARROW_INT_RANGE


def _onnx_cast(x, dtype, saturate: bool = True, round_mode: str = "up"):
    """``x`` as ``dtype`` by ONNX's rules: to a float8 type with ``saturate``, values beyond its largest
    finite value (infinities included) become that value and NaN stays NaN; to float8_e8m0fnu, a power of
    two chosen by ``round_mode``; to any other dtype, NumPy's conversion."""
    name = np.dtype(dtype).name
    if name == "float8_e8m0fnu":
        return _to_e8m0(x, dtype, saturate, round_mode)
    if saturate and name in _FLOAT8_MAX:
        if x.dtype not in _NATIVE_FLOATS:
            x = G.astype(x, np.float32)
        x = G.clip(x, -_FLOAT8_MAX[name], _FLOAT8_MAX[name])
    return G.astype(x, dtype)


def _to_e8m0(x, e8m0, saturate: bool, round_mode: str):
    """``x`` as ``e8m0`` (the float8_e8m0fnu dtype), a power of two: the one at or below ``x`` (``down``), at
    or above it (``up``), or the nearer one, ties up (``nearest``: compare with 1.5 times the lower one). With
    ``saturate`` the result is clipped to the e8m0 range, else values outside it become NaN. ONNX leaves
    negative inputs unspecified."""
    # rounded to float32 first, as ONNX specifies; in float64, floor(log2) is exact for every float32
    x = G.astype(G.astype(x, np.float32), np.float64)
    x = G.maximum(x, 2.0 ** -149)  # the smallest float32: keeps log2 finite at zero (NaN stays NaN)
    lower = G.pow(G.full_like(x, 2.0), G.floor(G.log2(x)))
    if round_mode == "up":
        out = G.where(G.equal(lower, x), lower, lower * 2.0)
    elif round_mode == "nearest":
        out = G.where(G.greater_equal(x, lower * 1.5), lower * 2.0, lower)
    else:
        out = lower
    if saturate:
        out = G.clip(out, _E8M0_MIN, _E8M0_MAX)
    else:
        out = G.where(G.logical_or(G.less(out, _E8M0_MIN), G.greater(out, _E8M0_MAX)), math.nan, out)
    return G.astype(out, e8m0)


def _cast(node, x, dtype):
    for d in (x.dtype, dtype):
        if not _castable(d):
            raise node.unsupported(f"casting {x.dtype} to {dtype}")
    round_mode = node.attr("round_mode", "up")
    if round_mode not in _E8M0_ROUND_MODES:
        raise node.unsupported(f"round_mode {round_mode!r} (expected one of {_E8M0_ROUND_MODES})")
    return _onnx_cast(x, dtype, bool(node.attr("saturate", 1)), round_mode)


@converter("Cast")
def cast(node, x):
    """Casts between numeric dtypes; to float8, ``saturate`` (default 1) clips out-of-range values."""
    return _cast(node, x, np_dtype(node.attr("to")))


@converter("CastLike")
def cast_like(node, x, like):
    return _cast(node, x, like.dtype)


# ---- reductions ------------------------------------------------------------------------------------------------
def _reduction_axes(node, x, axes_input_since: int):
    """(axes as a tuple of non-negative ints, keepdims). ``axes`` is an attribute before opset
    ``axes_input_since`` and an optional input since; absent or empty means every axis, or none at
    all with ``noop_with_empty_axes``."""
    axes = node.const(1) if node.opset >= axes_input_since else node.attr("axes")
    keepdims = bool(node.attr("keepdims", 1))
    if axes is None or np.size(axes) == 0:
        return ((), keepdims) if node.attr("noop_with_empty_axes", 0) else (tuple(range(x.ndim)), keepdims)
    return tuple(sorted(int(a) % x.ndim for a in np.ravel(axes))), keepdims


def _empty_reduction(x, axes, keepdims, fill):
    """The result of reducing zero elements: ``fill`` in the reduced shape (max/min have no identity
    element NumPy could use)."""
    return G.full_like(G.sum(x, axes, keepdims), fill, dtype=x.dtype)


#: ONNX reduction -> (opset where axes became an input, map before reducing, reducer, map after)
_REDUCTIONS = {
    "ReduceSum": (13, None, G.sum, None),
    "ReduceMean": (18, None, G.mean, None),
    "ReduceProd": (18, None, G.prod, None),
    "ReduceMax": (18, None, G.amax, None),
    "ReduceMin": (18, None, G.amin, None),
    "ReduceSumSquare": (18, G.square, G.sum, None),
    "ReduceL1": (18, G.abs, G.sum, None),
    "ReduceL2": (18, G.square, G.sum, G.sqrt),
    "ReduceLogSum": (18, None, G.sum, G.log),
    "ReduceLogSumExp": (18, None, G.logsumexp, None),
}

#: what reducing an empty set gives where the reducer cannot compute it
_EMPTY_FILL = {"ReduceMax": -math.inf, "ReduceMin": math.inf, "ReduceLogSumExp": -math.inf}


@converter(*_REDUCTIONS)
def reduce(node, x, axes=None):
    """Reductions with ``keepdims`` (default 1); the result keeps the input's dtype."""
    since, before, reducer, after = _REDUCTIONS[node.op_type]
    axes, keepdims = _reduction_axes(node, x, since)
    if node.op_type in _EMPTY_FILL and any(x.shape[a] == 0 for a in axes):
        fill = _EMPTY_FILL[node.op_type]
        return _empty_reduction(x, axes, keepdims, fill > 0 if x.dtype == bool else fill)
    out = before(x) if before else x
    if axes:  # no axes (noop_with_empty_axes) leaves only the elementwise maps
        out = reducer(out, axes, keepdims)
    out = after(out) if after else out
    return G.astype(out, x.dtype)  # integer sums and means widen in NumPy, not in ONNX


@converter("ArgMax", "ArgMin")
def arg_extremum(node, x):
    """Index of the first (or with ``select_last_index`` the last) max/min along ``axis``; int64."""
    fn = G.argmax if node.op_type == "ArgMax" else G.argmin
    axis = int(node.attr("axis", 0)) % max(x.ndim, 1)
    keepdims = bool(node.attr("keepdims", 1))
    if not node.attr("select_last_index", 0):
        return fn(x, axis, keepdims)
    # the last extremum is the first one of the reversed axis, counted from the end
    last = x.shape[axis] - 1 if x.shape[axis] is not None else G.count_like(x, axis, dtype="int64") - 1
    return last - fn(G.flip(x, axis), axis, keepdims)
