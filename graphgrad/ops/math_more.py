"""More elementwise math under PyTorch's and NumPy's names: special functions (lgamma, digamma,
polygamma, erfc, erfinv), integer ufuncs (shifts, gcd, lcm), and compositions (copysign, xlogy,
logit, ``div(rounding_mode=)``, nan-aware reductions, ``diff``...).

The special functions are ops with backend kernels (``backend/special.py``: NumPy has none of them);
everything else is composed from existing ops, so gradients, graph mode and ONNX export come free.
Gradients follow PyTorch's where the formula alone would give NaN (``xlogy`` at ``x = 0``, ``sinc`` at 0).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from graphgrad.backend import kernel, np
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import float_result
from graphgrad.errors import DTypeError
from graphgrad.ops import elementwise as ew
from graphgrad.config import get_default_dtype
from graphgrad.core import creation
from graphgrad.core.tensor import MinMax
from graphgrad.ops import array, reduce, shape, unary
from graphgrad.ops.elementwise import Binary, equal, logical_and, where
from graphgrad.ops.unary import FloatUnary


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _float(x: Tensor) -> Tensor:
    """``x``, converted to the default float dtype if it is integer or bool (PyTorch's promotion)."""
    return x if x.dtype.kind == "f" else ew.astype(x, float_result(x.dtype))


# ---- special functions -------------------------------------------------------------------------------------
class _Special(FloatUnary):
    """A float function computed by the backend kernel ``kernel_name``."""

    kernel_name = ""
    saves_output = False

    def forward(self, xp, x):
        out = kernel(xp, self.kernel_name)(x)
        return out.astype(float_result(x.dtype), copy=False)


class Lgamma(_Special):
    """``log |Gamma(x)|``."""
    kernel_name = "lgamma"

    def backward(self, inputs, out, g):
        return (g * digamma(inputs[0]),)


class Digamma(_Special):
    """``d/dx log Gamma(x)``."""
    kernel_name = "digamma"

    def backward(self, inputs, out, g):
        return (g * polygamma(1, inputs[0]),)


class Polygamma(FloatUnary):
    """The ``n``-th derivative of the digamma function."""

    props = ("n",)
    saves_output = False

    def __init__(self, n: int):
        if int(n) != n or n < 0:
            raise ValueError(f"polygamma: n must be a non-negative integer, got {n}")
        self.n = int(n)

    def forward(self, xp, x):
        out = kernel(xp, "polygamma")(self.n, x)
        return out.astype(float_result(x.dtype), copy=False)

    def backward(self, inputs, out, g):
        return (g * polygamma(self.n + 1, inputs[0]),)


class Erfc(_Special):
    """``1 - erf(x)``, accurate where it is tiny."""
    kernel_name = "erfc"

    def backward(self, inputs, out, g):
        x = inputs[0]
        return (g * (-2.0 / math.sqrt(math.pi)) * unary.exp(-(x * x)),)


class Erfinv(_Special):
    """The inverse of ``erf`` on ``[-1, 1]``."""
    kernel_name = "erfinv"
    saves_output = True

    def backward(self, inputs, out, g):
        return (g * (math.sqrt(math.pi) / 2.0) * unary.exp(out * out),)


def lgamma(x) -> Tensor:
    """``log |Gamma(x)|`` elementwise (+inf at 0 and the negative integers). Shapes: (...) -> (...)."""
    return Lgamma().apply(x)


def digamma(x) -> Tensor:
    """The digamma function ``psi(x) = d/dx lgamma(x)``. Shapes: (...) -> (...)."""
    return Digamma().apply(x)


def polygamma(n: int, x) -> Tensor:
    """The ``n``-th derivative of :func:`digamma` (PyTorch's argument order). Shapes: (...) -> (...)."""
    return Polygamma(n).apply(x)


def mvlgamma(x, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2)``. Shapes: (...) -> (...)."""
    x = _float(_tensor(x))
    total = lgamma(x)
    for j in range(1, p):
        total = total + lgamma(x - j / 2.0)
    return total + p * (p - 1) / 4.0 * math.log(math.pi)


def erfc(x) -> Tensor:
    """The complementary error function ``1 - erf(x)``. Shapes: (...) -> (...)."""
    return Erfc().apply(x)


def erfinv(x) -> Tensor:
    """The inverse error function (``+-inf`` at ``+-1``, NaN outside ``[-1, 1]``). Shapes: (...) -> (...)."""
    return Erfinv().apply(x)


# ---- integer and bit ufuncs (no gradient) ------------------------------------------------------------------
class _IntegerUfunc(Binary):
    """An elementwise NumPy ufunc on integer (or bool) tensors; not differentiable."""

    def infer(self, a, b):
        spec = super().infer(a, b)
        for s in (a, b):
            dtype = s.dtype if isinstance(s, TensorSpec) else np.asarray(s).dtype
            if dtype.kind not in "biu":
                raise DTypeError(f"{self.name}: expects integer tensors, got {dtype}")
        return spec

    def forward(self, xp, a, b):
        return getattr(xp, self.ufunc)(a, b)


class LeftShift(_IntegerUfunc):
    """``a << b``."""
    ufunc = "left_shift"


class RightShift(_IntegerUfunc):
    """``a >> b`` (arithmetic for signed integers)."""
    ufunc = "right_shift"


class Gcd(_IntegerUfunc):
    """The greatest common divisor."""
    ufunc = "gcd"


class Lcm(_IntegerUfunc):
    """The least common multiple."""
    ufunc = "lcm"


class Nextafter(Binary):
    """The next float after ``a`` towards ``b``; not differentiable."""
    ufunc = "nextafter"

    def forward(self, xp, a, b):
        return xp.nextafter(a, b)


class Hypot(Binary):
    """``sqrt(a^2 + b^2)`` without overflow."""
    ufunc = "hypot"
    saves_output = True

    def forward(self, xp, a, b):
        return xp.hypot(a, b)

    def backward(self, inputs, out, g):
        a, b = inputs
        safe = where(equal(out, 0), 1.0, out)  # at (0, 0) PyTorch's gradient is 0/0: we give 0
        return (g * a / safe if needs_grad(a) else None), (g * b / safe if needs_grad(b) else None)


class Signbit(Op):
    """Whether the sign bit is set (true for -0.0 and negative NaN); bool, no gradient."""

    def infer(self, x):
        return TensorSpec(x.shape, np.dtype(bool))

    def forward(self, xp, x):
        return xp.signbit(x)


def bitwise_left_shift(a, b) -> Tensor:
    """``a << b`` on integer tensors. Broadcasts."""
    return LeftShift().apply(a, b)


def bitwise_right_shift(a, b) -> Tensor:
    """``a >> b`` on integer tensors (arithmetic shift for signed ones). Broadcasts."""
    return RightShift().apply(a, b)


left_shift, right_shift = bitwise_left_shift, bitwise_right_shift


def gcd(a, b) -> Tensor:
    """The greatest common divisor of integer tensors (non-negative). Broadcasts."""
    return Gcd().apply(a, b)


def lcm(a, b) -> Tensor:
    """The least common multiple of integer tensors (non-negative). Broadcasts."""
    return Lcm().apply(a, b)


def nextafter(a, b) -> Tensor:
    """The next representable float after ``a`` in the direction of ``b``. Broadcasts."""
    return Nextafter().apply(a, b)


def hypot(a, b) -> Tensor:
    """``sqrt(a**2 + b**2)``, without intermediate overflow. Broadcasts."""
    return Hypot().apply(_float(_tensor(a)), _float(_tensor(b)))


def signbit(x) -> Tensor:
    """Whether each element's sign bit is set (``-0.0`` included); bool. Shapes: (...) -> (...)."""
    return Signbit().apply(x)


# ---- compositions ------------------------------------------------------------------------------------------
def copysign(a, b) -> Tensor:
    """``|a|`` with the sign of ``b`` (``b``'s sign bit: ``-0.0`` counts as negative). Broadcasts;
    integer inputs give the default float dtype."""
    a = _float(_tensor(a))
    sign = where(signbit(b), -1.0, 1.0).astype(a.dtype)
    return unary.abs(a) * sign


def div(a, b, *, rounding_mode: Optional[str] = None) -> Tensor:
    """``a / b`` (true division: integers give the default float dtype), or with ``rounding_mode``
    'trunc' (towards zero) or 'floor' (towards minus infinity), which keep integer dtypes exact.
    Broadcasts. The rounded forms have zero gradient, as in PyTorch."""
    if rounding_mode is None:
        return ew.div(a, b)
    if rounding_mode == "floor":
        return ew.floor_divide(a, b)
    if rounding_mode != "trunc":
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b = _tensor(a), _tensor(b)
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":  # exact: floor, then one step back where signs differ
        q = ew.floor_divide(a, b)
        inexact = logical_and(ew.not_equal(ew.remainder(a, b), 0), ew.not_equal(ew.less(a, 0), ew.less(b, 0)))
        return where(inexact, q + 1, q).astype(q.dtype)
    return unary.trunc(ew.div(a, b))


true_divide = divide = div


def floor_divide(a, b) -> Tensor:
    """``a // b`` rounding towards minus infinity (PyTorch >= 1.13 and NumPy agree). Broadcasts."""
    return ew.floor_divide(a, b)


def isposinf(x) -> Tensor:
    """Whether each element is +inf; bool. Shapes: (...) -> (...)."""
    x = _tensor(x)
    return equal(x, math.inf) if x.dtype.kind == "f" else array.zeros_like(x, dtype=bool)


def isneginf(x) -> Tensor:
    """Whether each element is -inf; bool. Shapes: (...) -> (...)."""
    x = _tensor(x)
    return equal(x, -math.inf) if x.dtype.kind == "f" else array.zeros_like(x, dtype=bool)


def isreal(x) -> Tensor:
    """All true: graphgrad's tensors are real (no complex dtypes). Shapes: (...) -> (...)."""
    return array.full_like(_tensor(x), True, dtype=bool)


def logit(x, eps: Optional[float] = None) -> Tensor:
    """``log(x / (1 - x))``, with ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.
    Shapes: (...) -> (...)."""
    x = _float(_tensor(x))
    if eps is not None:
        x = ew.clip(x, eps, 1.0 - eps)
    return unary.log(x / (1.0 - x))


def xlogy(x, y) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN); gradients as PyTorch's (``log(y)`` for
    ``x``, also at ``x == 0``). Broadcasts."""
    x, y = _float(_tensor(x)), _float(_tensor(y))
    # y replaced by 1 where x == 0 and log(y) is not finite, so 0 * log(y) stays 0 and no NaN reaches a gradient
    undefined = logical_and(equal(x, 0), ew.logical_or(ew.less_equal(y, 0), unary.isinf(y)))
    return x * unary.log(where(undefined, 1.0, y).astype(y.dtype))


def xlog1py(x, y) -> Tensor:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN). Broadcasts."""
    x, y = _float(_tensor(x)), _float(_tensor(y))
    undefined = logical_and(equal(x, 0), ew.logical_or(ew.less_equal(y, -1), unary.isinf(y)))
    return x * unary.log1p(where(undefined, 0.0, y).astype(y.dtype))


def deg2rad(x) -> Tensor:
    """Degrees to radians. Shapes: (...) -> (...)."""
    return _float(_tensor(x)) * (math.pi / 180.0)


def rad2deg(x) -> Tensor:
    """Radians to degrees. Shapes: (...) -> (...)."""
    return _float(_tensor(x)) * (180.0 / math.pi)


radians, degrees = deg2rad, rad2deg


def frac(x) -> Tensor:
    """The fractional part ``x - trunc(x)`` (the sign of ``x``). Shapes: (...) -> (...)."""
    x = _tensor(x)
    return x - unary.trunc(x)


def heaviside(x, values) -> Tensor:
    """0 where ``x < 0``, ``values`` where ``x == 0``, 1 where ``x > 0``. Broadcasts; ``x``'s dtype."""
    x = _tensor(x)
    step = ew.astype(ew.greater(x, 0), x.dtype)
    return where(equal(x, 0), values, step).astype(x.dtype)


def float_power(a, b) -> Tensor:
    """``a ** b`` computed in float64 (PyTorch's ``float_power``). Broadcasts."""
    a = ew.astype(_tensor(a), "float64")
    b = ew.astype(b, "float64") if isinstance(b, Tensor) else float(b)
    return ew.pow(a, b)


def fmax(a, b) -> Tensor:
    """The elementwise maximum ignoring NaN (NaN only where both are NaN). Broadcasts."""
    a, b = _tensor(a), _tensor(b)
    return where(unary.isnan(b), a, where(unary.isnan(a), b, ew.maximum(a, b)))


def fmin(a, b) -> Tensor:
    """The elementwise minimum ignoring NaN (NaN only where both are NaN). Broadcasts."""
    a, b = _tensor(a), _tensor(b)
    return where(unary.isnan(b), a, where(unary.isnan(a), b, ew.minimum(a, b)))


def ldexp(x, exponent) -> Tensor:
    """``x * 2 ** exponent``. Broadcasts; the default float dtype for integer ``x``."""
    x = _float(_tensor(x))
    return x * ew.pow(2.0, ew.astype(exponent, x.dtype) if isinstance(exponent, Tensor) else float(exponent))


def sinc(x) -> Tensor:
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0 (gradient 0 there). Shapes: (...) -> (...)."""
    x = _float(_tensor(x))
    zero = equal(x, 0)
    px = where(zero, 1.0, x).astype(x.dtype) * math.pi
    return where(zero, 1.0, unary.sin(px) / px).astype(x.dtype)


def addcmul(input, tensor1, tensor2, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``. Broadcasts."""
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``. Broadcasts."""
    return input + value * tensor1 / tensor2


def clamp_min(x, min: Any) -> Tensor:
    """``x`` clamped below at ``min`` (a number or a tensor). Broadcasts."""
    return ew.maximum(x, min) if isinstance(min, Tensor) else ew.clip(x, min, None)


def clamp_max(x, max: Any) -> Tensor:
    """``x`` clamped above at ``max`` (a number or a tensor). Broadcasts."""
    return ew.minimum(x, max) if isinstance(max, Tensor) else ew.clip(x, None, max)


# ---- reductions ------------------------------------------------------------------------------------------
def nansum(x, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Optional[bool] = None,
           dtype: Any = None) -> Tensor:
    """The sum over ``axis`` treating NaN as 0. Shapes: (...) -> reduced."""
    x = _tensor(x)
    if dtype is not None:
        x = ew.astype(x, dtype)
    clean = where(unary.isnan(x), 0.0, x).astype(x.dtype) if x.dtype.kind == "f" else x
    return reduce.sum(clean, axis, keepdims, dim=dim, keepdim=keepdim)


def nanmean(x, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Optional[bool] = None,
            dtype: Any = None) -> Tensor:
    """The mean over ``axis`` of the non-NaN elements (NaN where all are NaN). Shapes: (...) -> reduced."""
    x = _tensor(x)
    if dtype is not None:
        x = ew.astype(x, dtype)
    present = ew.astype(unary.logical_not(unary.isnan(x)), x.dtype)
    return nansum(x, axis, keepdims, dim=dim, keepdim=keepdim) / reduce.sum(present, axis, keepdims, dim=dim,
                                                                           keepdim=keepdim)


def count_nonzero(x, axis: Any = None, keepdims: bool = False, *, dim: Any = None) -> Tensor:
    """The number of nonzero elements over ``axis`` (all by default); int64. Shapes: (...) -> reduced."""
    nonzero = ew.astype(ew.not_equal(_tensor(x), 0), "int64")
    return reduce.sum(nonzero, axis if dim is None else dim, keepdims)


def aminmax(x, *, dim: Optional[int] = None, keepdim: bool = False) -> tuple:
    """``(min, max)`` over ``dim`` (all elements by default), a named tuple as PyTorch's.
    Shapes: (...) -> reduced, twice."""
    x = _tensor(x)
    return MinMax(reduce.min(x, dim, keepdims=keepdim), reduce.max(x, dim, keepdims=keepdim))


def _correction(unbiased: Any, correction: Any) -> int:
    if correction is not None:
        return correction
    return 1 if unbiased is None else int(unbiased)


def _with_mean(name: str, spread):
    def function(x, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> tuple:
        x = _tensor(x)
        if isinstance(dim, bool):  # the old positional form (x, unbiased)
            dim, unbiased = None, dim
        return spread(x, dim, keepdim, _correction(unbiased, correction)), reduce.mean(x, dim, keepdims=keepdim)

    function.__name__ = name
    function.__doc__ = (f"``({spread.__name__}, mean)`` over ``dim`` with PyTorch's default Bessel correction "
                        "(``correction=1``). Shapes: (...) -> reduced, twice.")
    return function


std_mean = _with_mean("std_mean", reduce.std)
var_mean = _with_mean("var_mean", reduce.var)


def diff(x, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None, *, axis: Optional[int] = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``), after joining
    ``prepend`` / ``append`` along it. Shapes: (..., m, ...) -> (..., m - n, ...)."""
    x = _tensor(x)
    dim = normalize_axis("diff", dim if axis is None else axis, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = shape.concatenate([_tensor(p) for p in parts], axis=dim)
    lead = (slice(None),) * dim
    for _ in range(n):
        after, before = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
        x = ew.not_equal(after, before) if x.dtype == bool else after - before
    return x


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, **kwargs) -> Tensor:
    """``steps`` values ``base ** t`` for ``t`` evenly spaced from ``start`` to ``end``. Shape (steps,)."""
    t = creation.linspace(start, end, steps, dtype="float64")
    out = ew.astype(ew.pow(float(base), t), dtype or get_default_dtype())
    return array._placed(out, device, requires_grad)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` is one of ``test_elements``; bool of ``elements``' shape."""
    elements, test = _tensor(elements), _tensor(test_elements)
    flat = shape.reshape(test, (-1,))
    hit = reduce.any(equal(shape.expand_dims(elements, -1), flat), axis=-1) if flat.shape[0] else \
        array.zeros_like(elements, dtype=bool)
    return unary.logical_not(hit) if invert else hit
