"""Binary elementwise ops: arithmetic, comparisons, logic, ``where``, ``maximum``/``minimum``, ``clip``, casts.

All broadcast NumPy-style and promote dtypes as NumPy does (Python scalars are weak:
``float32 * 2.5`` stays float32). Gradients may come back broadcast; autograd sums them to shape.
"""
from __future__ import annotations

import math
import operator as _operator
from typing import Any

from graphgrad.backend import np, ufunc_result_dtype
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec, broadcast_shapes
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import as_dtype, float_result
from graphgrad.errors import DTypeError


_FLOAT64 = np.dtype("float64")


def _operand_dtype(s: Any):
    """What NumPy's dtype resolution takes for an operand: its dtype, or the Python type of a scalar."""
    if isinstance(s, TensorSpec):
        return s.dtype
    if isinstance(s, bool):
        return np.dtype(bool)
    if isinstance(s, (int, float, complex)):
        return type(s)
    return np.asarray(s).dtype


def _shape(s: Any) -> tuple:
    return s.shape if isinstance(s, TensorSpec) else np.shape(s)


def _ufunc_spec(op: Op, ufunc: str, *specs) -> TensorSpec:
    """Shape/dtype rule of an elementwise NumPy ufunc (broadcast shapes, ufunc dtype resolution)."""
    shape = broadcast_shapes(op.name, *[_shape(s) for s in specs])
    try:
        dtype = ufunc_result_dtype(ufunc, *[_operand_dtype(s) for s in specs])
    except Exception as exc:
        shown = ", ".join(str(_operand_dtype(s)) for s in specs)
        raise DTypeError(f"{op.name}: unsupported dtypes ({shown}): {exc}") from None
    return TensorSpec(shape, _pytorch_float(dtype, *specs))


def _pytorch_float(dtype, *specs):
    """The shape rule's side of :func:`_narrowed`: float64 only when an operand is float64."""
    if dtype != _FLOAT64:
        return dtype
    dimensioned = [s.dtype for s in specs if isinstance(s, TensorSpec) and len(s.shape) > 0 and s.dtype.kind == "f"]
    if dimensioned and all(s.dtype != _FLOAT64 or len(s.shape) == 0 for s in specs if isinstance(s, TensorSpec)):
        return np.result_type(*dimensioned)  # float64 only from 0-d operands: the tensor's dtype (PyTorch)
    dtypes = [_operand_dtype(s) for s in specs]
    dtypes = [d for d in dtypes if isinstance(d, np.dtype)]
    if any(d == _FLOAT64 for d in dtypes):
        return dtype
    floats = [d for d in dtypes if d.kind in "fc"]
    return floats[0] if len(floats) == 1 else np.promote_types(*floats) if floats else float_result(np.dtype("int64"))


class Binary(Op):
    """An elementwise op backed by the NumPy ufunc named ``ufunc``."""

    ufunc = ""

    def infer(self, a, b):
        return _ufunc_spec(self, self.ufunc, a, b)


class Add(Binary):
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Add"
    ufunc = "add"
    saves_output = False

    def forward(self, xp, a, b):
        return _narrowed(a + b, a, b, _operator.add)

    def backward(self, inputs, out, g):
        return g, g


class Sub(Binary):
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Sub"
    ufunc = "subtract"
    saves_output = False

    def forward(self, xp, a, b):
        return _narrowed(a - b, a, b, _operator.sub)

    def backward(self, inputs, out, g):
        return g, (-g if needs_grad(inputs[1]) else None)


class Mul(Binary):
    onnx = "Mul"
    ufunc = "multiply"
    saves_output = False

    def forward(self, xp, a, b):
        return _narrowed(a * b, a, b, _operator.mul)

    def backward(self, inputs, out, g):
        a, b = inputs
        return (g * b if needs_grad(a) else None), (g * a if needs_grad(b) else None)


def _true_divide_dtype(a_dtype, b_dtype):
    """True division's result dtype: that of the float tensor operand(s); integer, bool and Python
    scalar operands alone give the default float dtype (PyTorch's rule; NumPy would give float64)."""
    floats = [d for d in (a_dtype, b_dtype) if d is not None and isinstance(d, np.dtype) and d.kind in "fc"]
    if not floats:
        return float_result(np.dtype("int64"))
    return floats[0] if len(floats) == 1 else np.promote_types(*floats)


def _check_integer_divisor(name: str, a, b) -> None:
    """Integer division by zero raises, as in PyTorch and Python (NumPy would give 0 and a warning)."""
    kind_a = getattr(a, "dtype", None)
    kind_b = getattr(b, "dtype", None)
    a_int = isinstance(a, int) or (kind_a is not None and kind_a.kind in "biu")
    b_int = isinstance(b, int) or (kind_b is not None and kind_b.kind in "biu")
    if a_int and b_int and not (b if isinstance(b, int) else b.all()):
        from graphgrad.errors import DivisionByZeroError

        raise DivisionByZeroError(f"{name}: integer division by zero")


def _zero_d_beside(x, other) -> bool:
    """Whether ``x`` is a 0-d float array and ``other`` a float array with dimensions of another dtype."""
    return (getattr(x, "ndim", None) == 0 and getattr(other, "ndim", 0) > 0 and x.dtype.kind == "f"
            and other.dtype.kind == "f" and other.dtype != x.dtype)


def _narrowed(out, a, b, compute):
    """``out`` (NumPy's result of ``compute(a, b)``), recomputed under PyTorch's promotion where NumPy
    widened to float64 with no float64 operand (an integer tensor with a Python float or a float32
    tensor): then the result takes the float tensor's dtype, or the default float dtype."""
    if out.dtype is not _FLOAT64:  # (NumPy's builtin dtypes are singletons: the cheap test on the hot path)
        return out
    a_dtype, b_dtype = getattr(a, "dtype", None), getattr(b, "dtype", None)
    # (`is None` first: NumPy reads None as float64 in dtype comparisons)
    if (a_dtype is not None and a_dtype == _FLOAT64) or (b_dtype is not None and b_dtype == _FLOAT64):
        # a 0-d float64 beside a float tensor with dimensions takes that tensor's dtype (PyTorch)
        if _zero_d_beside(a, b):
            return compute(a.astype(b_dtype), b)
        if _zero_d_beside(b, a):
            return compute(a, b.astype(a_dtype))
        return out
    dtype = _true_divide_dtype(a_dtype, b_dtype)
    out = compute(a.astype(dtype) if a_dtype is not None else a, b.astype(dtype) if b_dtype is not None else b)
    return out if out.dtype == dtype else out.astype(dtype)  # (two Python floats: NumPy says float64 again)


class Div(Binary):
    onnx = "Div"
    ufunc = "true_divide"

    def infer(self, a, b):
        spec = _ufunc_spec(self, self.ufunc, a, b)
        dtype = _true_divide_dtype(_operand_dtype(a), _operand_dtype(b))
        if isinstance(_operand_dtype(a), np.dtype) and _operand_dtype(a).kind in "fc" and dtype == spec.dtype:
            return spec
        return TensorSpec(spec.shape, dtype)

    def forward(self, xp, a, b):
        return _narrowed(a / b, a, b, _operator.truediv)

    def backward(self, inputs, out, g):
        a, b = inputs
        ga = g / b if needs_grad(a) else None
        gb = -g * out / b if needs_grad(b) else None
        return ga, gb


class FloorDivide(Binary):
    """``a // b`` rounding toward minus infinity; its gradient is zero almost everywhere."""

    ufunc = "floor_divide"
    saves_output = False

    def forward(self, xp, a, b):
        _check_integer_divisor("floor_divide", a, b)
        return _narrowed(a // b, a, b, _operator.floordiv)

    def backward(self, inputs, out, g):
        return g * 0, g * 0


class Remainder(Binary):
    """``a % b`` with the sign of ``b`` (Python/NumPy/PyTorch ``remainder``)."""

    ufunc = "remainder"
    saves_output = False

    def forward(self, xp, a, b):
        _check_integer_divisor("remainder", a, b)
        return _narrowed(a % b, a, b, _operator.mod)

    def backward(self, inputs, out, g):
        a, b = inputs
        return g, (-g * floor_divide(a, b) if needs_grad(b) else None)


class Pow(Binary):
    onnx = "Pow"
    ufunc = "power"

    def forward(self, xp, a, b):
        return _narrowed(a ** b, a, b, _operator.pow)

    def backward(self, inputs, out, g):
        a, b = inputs
        ga = gb = None
        if needs_grad(a):
            if isinstance(b, (int, float)):
                ga = g * 0 if b == 0 else (g * (2 * a) if b == 2 else g * (b * a ** (b - 1)))
            else:  # 0 where b == 0 (also at a == 0, where b * a**(b-1) is 0 * inf), as PyTorch does
                ga = g * where(equal(b, 0), 0.0, b * a ** (b - 1))
        if needs_grad(b):
            # d(a^b)/db = a^b log a; at a == 0 it is 0 for b >= 0 (the limit) and -inf for b < 0, as
            # PyTorch does. log is taken of a with zeros replaced by 1 (no warning), then set to -inf
            a = a if isinstance(a, Tensor) else Tensor(a, dtype=out.dtype, device=out.device)
            zero = equal(a, 0)
            log_a = where(zero, -math.inf, where(zero, 1.0, a).log())
            gb = g * where(logical_and(zero, greater_equal(b, 0)), 0.0, out * log_a)
        return ga, gb


class Arctan2(Binary):
    """``arctan2(y, x)``: the angle of the point (x, y)."""

    ufunc = "arctan2"
    saves_output = False

    def forward(self, xp, y, x):
        return _narrowed(xp.arctan2(y, x), y, x, xp.arctan2)

    def backward(self, inputs, out, g):
        y, x = inputs
        denom = x * x + y * y
        denom = where(equal(denom, 0), 1.0, denom)  # at (0, 0) the gradient is 0, as PyTorch's
        return (g * x / denom if needs_grad(y) else None), (-g * y / denom if needs_grad(x) else None)


class _Extremum(Binary):
    """Elementwise maximum or minimum; on ties the gradient is split evenly (as PyTorch does)."""

    saves_output = False

    def backward(self, inputs, out, g):
        a, b = inputs
        a_wins = greater(a, b) if self.ufunc == "maximum" else less(a, b)
        share = where(a_wins, 1.0, where(equal(a, b), 0.5, 0.0)).astype(g.dtype)
        return (g * share if needs_grad(a) else None), (g * (1 - share) if needs_grad(b) else None)


class Maximum(_Extremum):
    """Elementwise maximum; on ties the gradient is split evenly."""
    onnx = "Max"

    ufunc = "maximum"

    def forward(self, xp, a, b):
        return _narrowed(xp.maximum(a, b), a, b, xp.maximum)


class Minimum(_Extremum):
    """Elementwise minimum; on ties the gradient is split evenly."""
    onnx = "Min"

    ufunc = "minimum"

    def forward(self, xp, a, b):
        return _narrowed(xp.minimum(a, b), a, b, xp.minimum)


class _Predicate(Binary):
    """Comparison or logical op: boolean output, no gradient."""


def _predicate(name: str, ufunc: str, doc: str, onnx=None) -> type:
    fn = getattr(np, ufunc)

    def forward(self, xp, a, b):
        return getattr(xp, ufunc)(a, b) if xp is not np else fn(a, b)

    return type(name, (_Predicate,), {"ufunc": ufunc, "forward": forward, "__doc__": doc, "onnx": onnx})


Equal = _predicate("Equal", "equal", "``a == b`` elementwise.", onnx="Equal")
NotEqual = _predicate("NotEqual", "not_equal", "``a != b`` elementwise.")
Less = _predicate("Less", "less", "``a < b`` elementwise.", onnx="Less")
LessEqual = _predicate("LessEqual", "less_equal", "``a <= b`` elementwise.", onnx="LessOrEqual")
Greater = _predicate("Greater", "greater", "``a > b`` elementwise.", onnx="Greater")
GreaterEqual = _predicate("GreaterEqual", "greater_equal", "``a >= b`` elementwise.", onnx="GreaterOrEqual")
LogicalAnd = _predicate("LogicalAnd", "logical_and", "Elementwise logical and (any dtype; nonzero is true).")
LogicalOr = _predicate("LogicalOr", "logical_or", "Elementwise logical or.")
LogicalXor = _predicate("LogicalXor", "logical_xor", "Elementwise logical xor.")
BitwiseAnd = _predicate("BitwiseAnd", "bitwise_and", "``a & b`` on bool/int tensors.")
BitwiseOr = _predicate("BitwiseOr", "bitwise_or", "``a | b`` on bool/int tensors.")
BitwiseXor = _predicate("BitwiseXor", "bitwise_xor", "``a ^ b`` on bool/int tensors.")


class Where(Op):
    """``where(cond, x, y)``: ``x`` where ``cond`` is true, else ``y`` (all three broadcast)."""
    onnx = "Where"

    def infer(self, cond, x, y):
        shape = broadcast_shapes(self.name, _shape(cond), _shape(x), _shape(y))
        return TensorSpec(shape, _pytorch_float(np.result_type(*[s.dtype if isinstance(s, TensorSpec) else s
                                                                  for s in (x, y)]), x, y))

    def forward(self, xp, cond, x, y):
        return _narrowed(xp.where(cond, x, y), x, y, lambda x, y: xp.where(cond, x, y))

    def backward(self, inputs, out, g):
        cond, x, y = inputs
        return (None, where(cond, g, 0.0) if needs_grad(x) else None,
                where(cond, 0.0, g) if needs_grad(y) else None)


class Clip(Op):
    """Clamp to ``[min, max]`` (either may be ``None``); the gradient passes where ``min <= x <= max``."""

    props = ("min", "max")

    def __init__(self, min=None, max=None):
        self.min, self.max = min, max

    def infer(self, x):
        bounds = [b for b in (self.min, self.max) if b is not None]
        return _ufunc_spec(self, "maximum", x, *bounds[:1]) if bounds else x

    def forward(self, xp, x):
        return xp.clip(x, self.min, self.max)

    def backward(self, inputs, out, g):
        x = inputs[0]
        inside = None
        if self.min is not None:
            inside = greater_equal(x, self.min)
        if self.max is not None:
            upper = less_equal(x, self.max)
            inside = upper if inside is None else logical_and(inside, upper)
        return (g if inside is None else where(inside, g, 0.0),)


class Cast(Op):
    """Convert to ``dtype``; the gradient is cast back to the input's dtype."""
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Cast"

    def onnx_attributes(self, opset):
        return {"to": self.dtype}

    props = ("dtype",)

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)

    def infer(self, x):
        return TensorSpec(x.shape, self.dtype)

    def forward(self, xp, x):
        return x.astype(self.dtype)

    def backward(self, inputs, out, g):
        return (g.astype(inputs[0].dtype),)


class BitCast(Op):
    """The bits of each element read as ``dtype``, of the same item size (``Tensor.view(dtype)`` in
    PyTorch); not differentiable."""
    onnx = "BitCast"

    def onnx_attributes(self, opset):
        if opset < 26:
            raise ValueError("BitCast needs opset 26 or later")
        return {"to": self.dtype}

    props = ("dtype",)

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)

    def infer(self, x):
        if x.dtype.itemsize != self.dtype.itemsize:
            raise DTypeError(f"{self.name}: {x.dtype} and {self.dtype} differ in size "
                             f"({x.dtype.itemsize} and {self.dtype.itemsize} bytes)")
        return TensorSpec(x.shape, self.dtype)

    def forward(self, xp, x):
        return xp.asarray(x, order="C").view(self.dtype)  # a view needs C order; keeps 0-d

    def backward(self, inputs, out, g):
        return (None,)


# ---- public functions ---------------------------------------------------------------------------
_ADD, _SUB, _MUL, _DIV = Add(), Sub(), Mul(), Div()
_WHERE = Where()


def add(a, b) -> Tensor:
    """``a + b`` with broadcasting. Shapes: (...), (...) -> broadcast shape."""
    return _ADD.apply(a, b)


def sub(a, b) -> Tensor:
    """``a - b`` with broadcasting."""
    return _SUB.apply(a, b)


def mul(a, b) -> Tensor:
    """``a * b`` with broadcasting."""
    return _MUL.apply(a, b)


def div(a, b) -> Tensor:
    """True division ``a / b`` (integers give float)."""
    return _DIV.apply(a, b)


true_divide = divide = div
subtract, multiply = sub, mul


def floor_divide(a, b) -> Tensor:
    """``a // b`` (rounds toward minus infinity)."""
    return FloorDivide().apply(a, b)


def remainder(a, b) -> Tensor:
    """``a % b`` with the sign of the divisor."""
    return Remainder().apply(a, b)


mod = remainder


def pow(a, b) -> Tensor:
    """``a ** b`` elementwise."""
    return Pow().apply(a, b)


power = pow


def arctan2(y, x) -> Tensor:
    """Elementwise angle of (x, y) in radians, in ``[-pi, pi]``."""
    return Arctan2().apply(y, x)


def maximum(a, b) -> Tensor:
    """Elementwise maximum of two tensors (broadcast)."""
    return Maximum().apply(a, b)


def minimum(a, b) -> Tensor:
    """Elementwise minimum of two tensors (broadcast)."""
    return Minimum().apply(a, b)


def equal(a, b) -> Tensor:
    """``a == b`` elementwise (bool)."""
    return Equal().apply(a, b)


def not_equal(a, b) -> Tensor:
    """``a != b`` elementwise (bool)."""
    return NotEqual().apply(a, b)


def less(a, b) -> Tensor:
    """``a < b`` elementwise (bool)."""
    return Less().apply(a, b)


def less_equal(a, b) -> Tensor:
    """``a <= b`` elementwise (bool)."""
    return LessEqual().apply(a, b)


def greater(a, b) -> Tensor:
    """``a > b`` elementwise (bool)."""
    return Greater().apply(a, b)


def greater_equal(a, b) -> Tensor:
    """``a >= b`` elementwise (bool)."""
    return GreaterEqual().apply(a, b)


eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal


def logical_and(a, b) -> Tensor:
    """Elementwise logical and (bool)."""
    return LogicalAnd().apply(a, b)


def logical_or(a, b) -> Tensor:
    """Elementwise logical or (bool)."""
    return LogicalOr().apply(a, b)


def logical_xor(a, b) -> Tensor:
    """Elementwise logical xor (bool)."""
    return LogicalXor().apply(a, b)


def bitwise_and(a, b) -> Tensor:
    """``a & b`` on bool or integer tensors."""
    return BitwiseAnd().apply(a, b)


def bitwise_or(a, b) -> Tensor:
    """``a | b`` on bool or integer tensors."""
    return BitwiseOr().apply(a, b)


def bitwise_xor(a, b) -> Tensor:
    """``a ^ b`` on bool or integer tensors."""
    return BitwiseXor().apply(a, b)


def where(cond, x, y) -> Tensor:
    """``x`` where ``cond`` else ``y``, broadcasting all three. Differentiable in ``x`` and ``y``."""
    return _WHERE.apply(cond, x, y)


def clip(x, min=None, max=None) -> Tensor:
    """Clamp ``x`` to ``[min, max]``; bounds may be scalars, tensors or ``None``."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        # where, not maximum/minimum: at a tie the gradient goes to x (PyTorch's clamp rule)
        out = x if min is None else where(less(x, min), min, x)
        return out if max is None else where(greater(out, max), max, out)
    return Clip(min, max).apply(x)


clamp = clip


def bitcast(x, dtype) -> Tensor:
    """The bits of ``x`` reinterpreted as ``dtype``, which must have the same item size
    (``float32`` <-> ``int32``...). Not differentiable. Shapes: (...) -> (...)."""
    return BitCast(dtype).apply(x)


def astype(x, dtype) -> Tensor:
    """``x`` converted to ``dtype`` (differentiable between float dtypes)."""
    dtype = as_dtype(dtype)
    if isinstance(x, Tensor) and x.dtype == dtype:
        return x
    return Cast(dtype).apply(x)
