"""Unary elementwise primitives: exp/log family, roots, trigonometry, sigmoid, relu, erf, gelu, rounding,
tests.

Each op is a few lines: the NumPy ufunc that computes it, and its derivative written with graphgrad
ops. Functions composed from these (softplus, silu...) live in ``composite.py``; gelu is a primitive
because it is hot in transformers (one op forward and one backward instead of a dozen).
"""
from __future__ import annotations

import math

from graphgrad import backend
from graphgrad.backend import kernel, native, np, ufunc_result_dtype
from graphgrad.backend.parallel import parallel_for
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import float_result
from graphgrad.errors import DTypeError
from graphgrad.ops.elementwise import _ufunc_spec


class Unary(Op):
    """An elementwise op whose dtype rule is that of the NumPy ufunc ``ufunc``."""

    ufunc = ""

    def infer(self, x):
        try:
            return TensorSpec(x.shape, ufunc_result_dtype(self.ufunc, x.dtype))
        except Exception:
            raise DTypeError(f"{self.name}: not defined for dtype {x.dtype}") from None


class FloatUnary(Op):
    """An elementwise float function (integer inputs give float, as NumPy's ufuncs do)."""

    def infer(self, x):
        if x.dtype.kind not in "biuf":
            raise DTypeError(f"{self.name}: not defined for dtype {x.dtype}")
        return TensorSpec(x.shape, float_result(x.dtype))


class Neg(Unary):
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Neg"
    saves_output = False
    ufunc = "negative"

    def forward(self, xp, x):
        return -x

    def backward(self, inputs, out, g):
        return (-g,)


class Abs(Unary):
    onnx = "Abs"
    saves_output = False
    ufunc = "absolute"

    def forward(self, xp, x):
        return xp.abs(x)

    def backward(self, inputs, out, g):
        return (g * sign(inputs[0]),)


class Sign(Unary):
    """-1, 0 or 1; zero gradient."""
    onnx = "Sign"
    saves_output = False

    ufunc = "sign"

    def forward(self, xp, x):
        return xp.sign(x)

    def backward(self, inputs, out, g):
        return (g * 0,)


class Exp(Unary):
    onnx = "Exp"
    ufunc = "exp"

    def forward(self, xp, x):
        return xp.exp(x)

    def backward(self, inputs, out, g):
        return (g * out,)


class Expm1(Unary):
    """``exp(x) - 1``, accurate near 0."""

    ufunc = "expm1"

    def forward(self, xp, x):
        return xp.expm1(x)

    def backward(self, inputs, out, g):
        return (g * (out + 1),)


class Log(Unary):
    onnx = "Log"
    saves_output = False
    ufunc = "log"

    def forward(self, xp, x):
        return xp.log(x)

    def backward(self, inputs, out, g):
        return (g / inputs[0],)


class Log1p(Unary):
    """``log(1 + x)``, accurate near 0."""
    saves_output = False

    ufunc = "log1p"

    def forward(self, xp, x):
        return xp.log1p(x)

    def backward(self, inputs, out, g):
        return (g / (inputs[0] + 1),)


class Log2(Unary):
    saves_output = False
    ufunc = "log2"

    def forward(self, xp, x):
        return xp.log2(x)

    def backward(self, inputs, out, g):
        return (g / (inputs[0] * math.log(2.0)),)


class Sqrt(Unary):
    onnx = "Sqrt"
    ufunc = "sqrt"

    def forward(self, xp, x):
        return xp.sqrt(x)

    def backward(self, inputs, out, g):
        return (g * 0.5 / out,)


class Reciprocal(FloatUnary):
    """``1 / x``."""
    onnx = "Reciprocal"

    def forward(self, xp, x):
        return 1.0 / x if x.dtype.kind == "f" else 1.0 / x.astype(float_result(x.dtype))

    def backward(self, inputs, out, g):
        return (-g * out * out,)


class Sin(Unary):
    onnx = "Sin"
    saves_output = False
    ufunc = "sin"

    def forward(self, xp, x):
        return xp.sin(x)

    def backward(self, inputs, out, g):
        return (g * cos(inputs[0]),)


class Cos(Unary):
    onnx = "Cos"
    saves_output = False
    ufunc = "cos"

    def forward(self, xp, x):
        return xp.cos(x)

    def backward(self, inputs, out, g):
        return (-g * sin(inputs[0]),)


class Tan(Unary):
    onnx = "Tan"
    ufunc = "tan"

    def forward(self, xp, x):
        return xp.tan(x)

    def backward(self, inputs, out, g):
        return (g * (1 + out * out),)


class Tanh(Unary):
    onnx = "Tanh"
    ufunc = "tanh"

    def forward(self, xp, x):
        return xp.tanh(x)

    def backward(self, inputs, out, g):
        return (TanhGrad().apply(out, g),)


class TanhGrad(Op):
    """``g * (1 - y * y)``, tanh's backward as one op: one dispatch instead of three in eager
    backward passes (the W4 benchmark), and still differentiable for higher orders."""

    def infer(self, y, g):
        return _ufunc_spec(self, "multiply", y, g)

    def forward(self, xp, y, g):
        return g * (1 - y * y)

    def backward(self, inputs, out, gout):
        y, g = inputs
        return -2 * gout * g * y, gout * (1 - y * y)


class Sinh(Unary):
    onnx = "Sinh"
    saves_output = False
    ufunc = "sinh"

    def forward(self, xp, x):
        return xp.sinh(x)

    def backward(self, inputs, out, g):
        return (g * cosh(inputs[0]),)


class Cosh(Unary):
    onnx = "Cosh"
    saves_output = False
    ufunc = "cosh"

    def forward(self, xp, x):
        return xp.cosh(x)

    def backward(self, inputs, out, g):
        return (g * sinh(inputs[0]),)


class Arcsin(Unary):
    onnx = "Asin"
    saves_output = False
    ufunc = "arcsin"

    def forward(self, xp, x):
        return xp.arcsin(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g / sqrt(1 - x * x),)


class Arcsinh(Unary):
    onnx = "Asinh"
    saves_output = False
    ufunc = "arcsinh"

    def forward(self, xp, x):
        return xp.arcsinh(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g / sqrt(x * x + 1),)


class Arccosh(Unary):
    onnx = "Acosh"
    saves_output = False
    ufunc = "arccosh"

    def forward(self, xp, x):
        return xp.arccosh(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g / sqrt(x * x - 1),)


class Arctanh(Unary):
    onnx = "Atanh"
    saves_output = False
    ufunc = "arctanh"

    def forward(self, xp, x):
        return xp.arctanh(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g / (1 - x * x),)


class Arccos(Unary):
    onnx = "Acos"
    saves_output = False
    ufunc = "arccos"

    def forward(self, xp, x):
        return xp.arccos(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (-g / sqrt(1 - x * x),)


class Arctan(Unary):
    onnx = "Atan"
    saves_output = False
    ufunc = "arctan"

    def forward(self, xp, x):
        return xp.arctan(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g / (1 + x * x),)


class Sigmoid(FloatUnary):
    """``1 / (1 + exp(-x))``, by a backend kernel that never overflows (SciPy's ``expit`` on NumPy)."""
    onnx = "Sigmoid"

    def forward(self, xp, x):
        if x.dtype.kind != "f":
            x = x.astype(float_result(x.dtype))
        return kernel(xp, "sigmoid")(x)

    def backward(self, inputs, out, g):
        return (g * out * (1 - out),)


class Relu(Unary):
    """``max(x, 0)``; gradient 1 where ``x > 0``, else 0."""
    onnx = "Relu"

    ufunc = "maximum"

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return xp.maximum(x, 0)

    def backward(self, inputs, out, g):
        return (_RELU_GRAD.apply(out, g),)


class ReluGrad(Op):
    """``g * (y > 0)``, ReLU's backward given its output ``y``, as one op: one dispatch and one pass
    (native for float32 arrays) where the composition dispatches twice and makes a mask (eager: 40 ->
    12 us for 128 x 512). Differentiable again: linear in ``g``, and ``y`` gets no gradient (the mask
    is constant almost everywhere), as with the composition."""

    def infer(self, y, g):
        return TensorSpec(_ufunc_spec(self, "multiply", y, g).shape, g.dtype)

    def forward(self, xp, y, g):
        fn = native.kernel("relu_grad_f32")
        if fn is not None and y.shape == g.shape:
            if native.usable(y, g):
                out = np.empty(g.shape, g.dtype)
                fn(y, g, out, g.size)  # one pass (backend/native/elementwise.c)
                return out
            if native.usable(y.T, g.T):  # both transposed views (a linear layer's output without MKL)
                out = np.empty(g.shape[::-1], g.dtype)
                fn(y.T, g.T, out, g.size)
                return out.T
        return g * (y > 0)  # a multiply by the mask: a third of the time of a where

    def backward(self, inputs, out, gout):
        return None, _RELU_GRAD.apply(inputs[0], gout)


_RELU_GRAD = ReluGrad()


class Erf(FloatUnary):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``."""
    onnx = "Erf"
    saves_output = False

    def forward(self, xp, x):
        if x.dtype.kind != "f":
            x = x.astype(float_result(x.dtype))
        return kernel(xp, "erf")(x)

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g * (2.0 / math.sqrt(math.pi)) * exp(-(x * x)),)


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)  # gelu's tanh formula: tanh(k * (x + c x^3))
_TANH_C = 0.044715
_MIN_PART = 1 << 16  # elements of gelu per thread, at least (fewer are not worth a thread)
_BLOCK = 1 << 16  # elements per block: gelu's temporaries stay in cache (whole arrays: GeluGrad 1.3x slower)


def _in_blocks(xp, fn):
    """``fn(start, stop)`` run over consecutive blocks of ``_BLOCK`` items (NumPy), or in one call (a GPU)."""
    if xp is not np:
        return fn

    def run(start: int, stop: int) -> None:
        for begin in range(start, stop, _BLOCK):
            fn(begin, min(begin + _BLOCK, stop))

    return run


def _check_approximate(approximate: str) -> str:
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return approximate


class Gelu(FloatUnary):
    """Gaussian error linear unit ``x * Phi(x)``, ``Phi(x) = (1 + erf(x / sqrt(2))) / 2`` the normal
    CDF; ``approximate="tanh"``: ``x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``. One op rather
    than a composition: a forward of one erf plus a few in-place passes, and a backward of one op
    (:class:`GeluGrad`) instead of a dozen elementwise ones. float32 NumPy arrays take one native
    pass when native kernels are on (backend/native/transformer.c, ~3x). ONNX: ``Gelu`` (opset 20),
    else the formula."""

    props = ("approximate",)

    def __init__(self, approximate: str = "none"):
        self.approximate = _check_approximate(approximate)

    def forward(self, xp, x):
        if x.dtype.kind != "f":
            x = x.astype(float_result(x.dtype))
        fn = native.kernel("gelu_tanh_f32" if self.approximate == "tanh" else "gelu_erf_f32")
        if fn is not None and type(x) is np.ndarray and x.dtype == np.float32:
            if not x.flags.c_contiguous:  # (0-d arrays are; ascontiguousarray would make them 1-d)
                x = np.ascontiguousarray(x)  # one copy, where NumPy's path below makes several passes
            out = np.empty(x.shape, x.dtype)
            fn(x, out, x.size)  # one pass (backend/native/transformer.c)
            return out
        flat = x.reshape(-1)
        out = xp.empty_like(flat)
        parallel_for(xp, _in_blocks(xp, lambda start, stop: self._gelu(xp, flat[start:stop], out[start:stop])),
                     flat.size, min_part=_MIN_PART, align=_BLOCK)
        return out.reshape(x.shape)

    def _gelu(self, xp, x, y) -> None:
        """``y = gelu(x)`` for 1-D ``x`` and ``y``."""
        if self.approximate == "tanh":
            xp.multiply(x, x, out=y)
            y *= _TANH_C
            y += 1.0
            y *= x
            y *= _TANH_K
            xp.tanh(y, out=y)
            y += 1.0
        else:
            xp.add(kernel(xp, "erf_fast")(x * _SQRT_HALF), 1.0, out=y)
        y *= x
        y *= 0.5

    def backward(self, inputs, out, g):
        return (GeluGrad(self.approximate).apply(inputs[0], out, g),)


class GeluGrad(Op):
    """``g * gelu'(x)`` given ``x``, ``y = gelu(x)`` and ``g``: ``g * (Phi(x) + x phi(x))`` for the
    erf form, with ``Phi(x) = y / x`` (no second erf; ``1/2`` at ``x = 0``) and ``phi`` the normal
    density. ``y`` is read as a cache of ``gelu(x)``, not as a variable: the gradient with respect to
    ``x`` is the full second derivative ``g gelu''(x)`` and ``y`` gets none, so any order works."""

    props = ("approximate",)

    def __init__(self, approximate: str = "none"):
        self.approximate = _check_approximate(approximate)

    def infer(self, x, y, g):
        return _ufunc_spec(self, "multiply", x, g)

    def forward(self, xp, x, y, g):
        if self.approximate == "tanh":
            fn, arrays = native.kernel("gelu_tanh_grad_f32"), (x, g)
        else:
            fn, arrays = native.kernel("gelu_erf_grad_f32"), (x, y, g)
        if fn is not None and x.shape == y.shape == g.shape and native.usable(x, y, g):
            out = np.empty(x.shape, x.dtype)
            fn(*arrays, out, x.size)  # one pass (backend/native/transformer.c)
            return out
        if not x.shape == y.shape == g.shape:
            x, y, g = xp.broadcast_arrays(x, y, g)
        dtype = xp.result_type(x, g)
        flat = [a.reshape(-1) for a in (x, y, g)]
        out = xp.empty(flat[0].size, dtype)
        parallel_for(xp, _in_blocks(xp, lambda start, stop: self._grad(xp, *(a[start:stop] for a in flat),
                                                                     out[start:stop])),
                     out.size, min_part=_MIN_PART, align=_BLOCK)
        return out.reshape(x.shape)

    def _grad(self, xp, x, y, g, out) -> None:
        """``out = g * gelu'(x)`` for 1-D arrays."""
        if self.approximate == "tanh":
            xp.multiply(_gelu_tanh_slope(xp, x), g, out=out)
            return
        with backend.errstate(xp, divide="ignore", invalid="ignore"):
            xp.divide(y, x, out=out)  # Phi(x) = gelu(x) / x
        out[x == 0] = 0.5
        density = x * x
        density *= -0.5
        xp.exp(density, out=density)
        density *= x
        density *= _INV_SQRT_2PI  # x phi(x)
        out += density
        out *= g

    def backward(self, inputs, out, gout):
        x, y, g = inputs
        if self.approximate == "tanh":
            t = tanh((x * x * _TANH_C + 1.0) * x * _TANH_K)
            du = (x * x * (3.0 * _TANH_C) + 1.0) * _TANH_K
            curvature = (1.0 - t * t) * (du - x * t * du * du + x * x * (3.0 * _TANH_C * _TANH_K))
        else:
            curvature = exp(x * x * -0.5) * (2.0 - x * x) * _INV_SQRT_2PI  # phi(x) (2 - x^2)
        return gout * g * curvature, None, GeluGrad(self.approximate).apply(x, y, gout)


def _gelu_tanh_slope(xp, x):
    """d/dx of gelu's tanh formula: ``(1 + tanh u)/2 + x/2 k (1 + 3 c x^2) / cosh(u)^2`` with
    ``u = k (x + c x^3)`` (``1 / cosh^2``, not ``1 - tanh^2``: no cancellation where ``|tanh u|`` ~ 1)."""
    square = x * x
    u = square * _TANH_C
    u += 1.0
    u *= x
    u *= _TANH_K
    ramp = square
    ramp *= 3.0 * _TANH_C
    ramp += 1.0
    ramp *= _TANH_K
    ramp *= x
    ramp *= 0.5  # x/2 k (1 + 3 c x^2)
    with backend.errstate(xp, over="ignore"):
        ramp /= xp.square(xp.cosh(u))  # (cosh overflows to inf for |u| > 89: the term is 0 there)
    xp.tanh(u, out=u)
    u += 1.0
    u *= 0.5
    ramp += u
    return ramp


class _Rounding(Unary):
    """Piecewise-constant op: zero gradient."""
    saves_output = False

    def backward(self, inputs, out, g):
        return (g * 0,)


class Floor(_Rounding):
    onnx = "Floor"
    ufunc = "floor"

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return xp.floor(x) if x.dtype.kind == "f" else x.copy()


class Trunc(_Rounding):
    """Rounding towards zero (the gradient is zero, as for floor)."""

    ufunc = "trunc"

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return xp.trunc(x) if x.dtype.kind == "f" else x.copy()


class Ceil(_Rounding):
    onnx = "Ceil"
    ufunc = "ceil"

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return xp.ceil(x) if x.dtype.kind == "f" else x.copy()


class Round(_Rounding):
    """Round half to even (NumPy and PyTorch agree), to ``decimals`` places."""

    props = ("decimals",)

    def __init__(self, decimals: int = 0):
        self.decimals = int(decimals)

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return xp.round(x, self.decimals)


class _Test(Unary):
    """Boolean elementwise test: no gradient."""

    def infer(self, x):
        return TensorSpec(x.shape, np.dtype(bool))


class IsNan(_Test):
    onnx = "IsNaN"

    def forward(self, xp, x):
        return xp.isnan(x)


class IsInf(_Test):
    onnx = "IsInf"

    def forward(self, xp, x):
        return xp.isinf(x)


class IsFinite(_Test):
    def forward(self, xp, x):
        return xp.isfinite(x)


class LogicalNot(_Test):
    onnx = "Not"

    def forward(self, xp, x):
        return xp.logical_not(x)


class Invert(Unary):
    """``~x``: bitwise not for integers, logical not for bool."""

    ufunc = "invert"

    def forward(self, xp, x):
        return xp.invert(x)


# ---- public functions ---------------------------------------------------------------------------
def _is_float_function(op_class) -> bool:
    """Whether the op maps integers to floats (exp, sin...), as opposed to keeping them (abs, neg)."""
    if issubclass(op_class, FloatUnary):
        return True
    if issubclass(op_class, (_Rounding, _Test)):
        return False
    ufunc = getattr(op_class, "ufunc", "")
    try:
        return bool(ufunc) and ufunc_result_dtype(ufunc, np.dtype("int64")).kind == "f"
    except TypeError:  # a binary ufunc standing for the rule (relu: maximum)
        return False


def _unary(op_class, doc):
    op = op_class()
    if not _is_float_function(op_class):
        def fn(x) -> Tensor:
            return op.apply(x)
    else:
        def fn(x) -> Tensor:
            # integers give the default float dtype (PyTorch's rule), not NumPy's float64
            if not isinstance(x, Tensor):
                x = Tensor(x)
            dtype = x.dtype
            if dtype.kind in "biu":
                x = x.astype(float_result(dtype))
            return op.apply(x)

    fn.__doc__ = doc + " Shapes: (...) -> (...)."
    return fn


neg = _unary(Neg, "``-x`` elementwise.")
negative = neg
abs = _unary(Abs, "``|x|`` elementwise (gradient ``sign(x)``, 0 at 0).")
absolute = abs
sign = _unary(Sign, "Sign of ``x``: -1, 0 or 1.")
exp = _unary(Exp, "``e ** x`` elementwise.")
expm1 = _unary(Expm1, "``exp(x) - 1`` elementwise, accurate for small ``x``.")
log = _unary(Log, "Natural logarithm elementwise.")
log1p = _unary(Log1p, "``log(1 + x)`` elementwise, accurate for small ``x``.")
log2 = _unary(Log2, "Base-2 logarithm elementwise.")
sqrt = _unary(Sqrt, "Square root elementwise.")
reciprocal = _unary(Reciprocal, "``1 / x`` elementwise.")
sin = _unary(Sin, "Sine elementwise (radians).")
cos = _unary(Cos, "Cosine elementwise (radians).")
tan = _unary(Tan, "Tangent elementwise (radians).")
tanh = _unary(Tanh, "Hyperbolic tangent elementwise.")
sinh = _unary(Sinh, "Hyperbolic sine elementwise.")
cosh = _unary(Cosh, "Hyperbolic cosine elementwise.")
arcsin = _unary(Arcsin, "Inverse sine elementwise, for ``x`` in [-1, 1].")
arccos = _unary(Arccos, "Inverse cosine elementwise, for ``x`` in [-1, 1].")
arctan = _unary(Arctan, "Inverse tangent elementwise.")
asin, acos, atan = arcsin, arccos, arctan
arcsinh = _unary(Arcsinh, "Inverse hyperbolic sine elementwise.")
arccosh = _unary(Arccosh, "Inverse hyperbolic cosine elementwise, for ``x >= 1``.")
arctanh = _unary(Arctanh, "Inverse hyperbolic tangent elementwise, for ``x`` in (-1, 1).")
asinh, acosh, atanh = arcsinh, arccosh, arctanh
trunc = _unary(Trunc, "Rounding towards zero elementwise (``fix``).")
sigmoid = _unary(Sigmoid, "Logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``.")
relu = _unary(Relu, "Rectified linear unit ``max(x, 0)``.")
erf = _unary(Erf, "Gauss error function.")


def gelu(x, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the standard normal CDF, by ``erf``);
    ``approximate="tanh"`` uses the tanh formula. Shapes: (...) -> (...).

    Examples:
        >>> gg.gelu(gg.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.1587,  0.    ,  0.8413])
    """
    return Gelu(approximate).apply(x)
floor = _unary(Floor, "Largest integer <= x (zero gradient).")
ceil = _unary(Ceil, "Smallest integer >= x (zero gradient).")
isnan = _unary(IsNan, "True where ``x`` is NaN.")
isinf = _unary(IsInf, "True where ``x`` is +-inf.")
isfinite = _unary(IsFinite, "True where ``x`` is neither NaN nor inf.")
logical_not = _unary(LogicalNot, "Elementwise logical not (bool).")
invert = bitwise_not = _unary(Invert, "``~x``: bitwise not on integers, logical not on bool.")


def round(x, decimals: int = 0) -> Tensor:
    """Round half to even to ``decimals`` places (zero gradient). Shapes: (...) -> (...)."""
    return Round(decimals).apply(x)
