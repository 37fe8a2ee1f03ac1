"""Algebraic simplification: small local rules that make a graph cheaper and keep its meaning.

Every rule keeps the node's output spec exactly (shape and dtype; the engine checks) and is written
not to fire where the identity it uses is false. In particular:

* **Broadcasting.** ``x * 1`` is ``x`` only when the ``1`` does not broadcast ``x`` to a bigger
  shape (a constant of shape ``(3, 4)`` times ``x`` of shape ``(4,)`` is not ``x``); the same for
  ``+ 0``, ``- 0``, ``/ 1``, ``** 1``. The constant's dims must each be 1 or equal to ``x``'s
  (known) dims.
* **Dtype promotion.** ``int_tensor * 1.0`` is float, so it is not ``int_tensor``: a rule fires
  only when the result has ``x``'s dtype (Python scalars promote weakly, as in NumPy).
* **Constant chains** ``(x * c1) * c2 -> x * (c1 * c2)`` and ``(x + c1) + c2 -> x + (c1 + c2)``
  fire only when ``x``, the inner and the outer results share one dtype; the combined constant is
  computed in that dtype (exact for integers, which wrap the same way; one rounding for floats) and
  must be finite (a product that overflows or underflows to zero where neither factor is zero, or
  a sum that overflows, is not combined: ``0 * 1e300 * 1e300`` must stay ``0``, not ``nan``).
  This is a reassociation: float results may differ from the unoptimized graph in the last bits.
* **exp(log(x)) -> x** only where ``x`` is provably non-negative (otherwise ``log`` gives NaN):
  outputs of ``exp``, ``sigmoid``, ``softmax``, ``relu``, ``abs``, ``sqrt``, ``x * x``, ``x ** 2``
  (an even integer power) and constants with no negative entry. NaN inputs stay NaN either way.
* **log(exp(x)) -> x** always: it is exact mathematics, and where the unoptimized graph overflows
  (``exp(x) = inf`` for large ``x``, ``0`` for very negative ``x``) the rewrite gives the finite,
  correct ``x`` instead of ``±inf``.
* **log(softmax(x)) -> log_softmax(x)** (same axis): the stable form, finite where softmax
  underflows to 0.
* **x * 0 -> zeros** only when ``x`` can be neither NaN nor infinite (``nan * 0`` and ``inf * 0``
  are NaN): ``x`` of integer or bool dtype, a constant with only finite entries, ``tanh``,
  ``sigmoid``, ``arctan`` or ``erf`` of an input that cannot be NaN, ``sin``/``cos``/``softmax``
  of a finite input, an integer-to-float cast. A float ``x`` fed at run time is never assumed
  finite. The zeros are ``+0.0`` where ``x * 0`` could give ``-0.0`` (the values compare equal).
* **x + 0 -> x** (and ``0 + x``): for floats ``-0.0 + 0.0`` is ``+0.0``; the rewrite keeps
  ``-0.0``. The values compare equal; only the sign of a zero can differ.
* **Reshapes and transposes.** ``reshape(reshape(x, s1), s2) -> reshape(x, s2)`` holds for any
  ``s1`` (row-major order does not depend on the intermediate shape; ``-1`` in ``s2`` resolves
  against the same size); a reshape to ``x``'s own shape is dropped when that shape has at most one
  unknown dim (then the run-time shapes agree too). Transposes compose their permutations; an
  identity permutation is dropped.
* **ReLU's backward** ``relu_grad(y, g) -> g * (y > 0)``: the same values (one eager op; in a graph
  the two fuse with their neighbours).
* **sum(broadcast_to(x, shape)) over all axes -> sum(x) * (size of shape / size of x)** when ``x``'s
  shape is fully known (every element of ``x`` is repeated the same number of times).
"""
from __future__ import annotations

import math

from graphgrad.backend import np
from graphgrad.core.spec import TensorSpec, normalize_axes
from graphgrad.core.tensor import Tensor
from graphgrad.graph.rewrite.engine import producer_op, rewrite
from graphgrad.graph.variables import Const
from graphgrad.ops.array import FullLike
from graphgrad.ops.elementwise import Add, Cast, Div, Greater, Mul, Pow, Sub
from graphgrad.ops.linalg import Linear, MatMul
from graphgrad.ops.nn import LogSoftmax, Softmax
from graphgrad.ops.reduce import Sum
from graphgrad.ops.shape import BroadcastTo, Reshape, Transpose
from graphgrad.ops.unary import Abs, Arctan, Cos, Erf, Exp, Log, Neg, Relu, ReluGrad, Sigmoid, Sin, Sqrt, Tanh

#: Largest constant (in elements) a rule creates (``x * 0`` of a known shape becomes zeros).
MAX_CONST_ELEMENTS = 1_000_000
_DEPTH = 8  # how far the value-range analyses (finite, not NaN, non-negative) look back


# ---- helpers ------------------------------------------------------------------------------------
_op = producer_op


def _same_spec(x, out: Tensor) -> bool:
    return isinstance(x, Tensor) and x.shape == out.shape and x.dtype == out.dtype


def _spec(x):
    return x.spec if isinstance(x, Tensor) else x


def _make(ctx, node, op, *inputs):
    """``op(*inputs)`` added to the copy if its spec is exactly ``node``'s, else ``None``."""
    try:
        spec = op.infer(*[_spec(x) for x in inputs])
    except Exception:
        return None
    if spec is None or spec.shape != node.out.shape or spec.dtype != node.out.dtype:
        return None
    return ctx.make(op, *inputs)


def _const_tensor(ctx, array) -> Tensor:
    return ctx.graph.add_node(Const(array), (), TensorSpec(array.shape, array.dtype), name="Const").out


def _does_not_broadcast(x: Tensor, c) -> bool:
    """Whether combining ``x`` with constant ``c`` elementwise leaves ``x``'s shape unchanged."""
    if not isinstance(c, Tensor):
        return True  # a Python scalar
    if x.shape is None or c.shape is None or len(c.shape) > len(x.shape):
        return False
    aligned = x.shape[len(x.shape) - len(c.shape):]
    return all(cd == 1 or (xd is not None and cd == xd) for cd, xd in zip(c.shape, aligned))


def _identity_operand(ctx, node, value, which=(0, 1)):
    """The operand ``x`` of binary ``node`` when the other operand (position in ``which``) is the
    constant ``value`` everywhere and ``node``'s result is exactly ``x``."""
    a, b = node.inputs
    for pos in which:
        x, c = (b, a) if pos == 0 else (a, b)  # pos: the constant's position
        if (isinstance(x, Tensor) and ctx.is_const(c, value) and _same_spec(x, node.out)
                and _does_not_broadcast(x, c)):
            return x
    return None


def _split_const(ctx, node):
    """``(x, c)`` for a binary node with one non-constant tensor operand ``x`` and a constant ``c``."""
    if node is None or len(node.inputs) != 2:
        return None
    a, b = node.inputs
    if isinstance(a, Tensor) and ctx.const_value(a) is None and ctx.const_value(b) is not None:
        return a, b
    if isinstance(b, Tensor) and ctx.const_value(b) is None and ctx.const_value(a) is not None:
        return b, a
    return None


def _array(ctx, c, dtype):
    return np.asarray(ctx.const_value(c)).astype(dtype)


def _const_values(ctx, x):
    v = ctx.const_value(x)
    return None if v is None else np.asarray(v)


def _finite(ctx, x, depth: int = _DEPTH) -> bool:
    """Whether every value of ``x`` is provably finite (neither NaN nor infinite)."""
    if not isinstance(x, Tensor):
        return isinstance(x, (bool, int)) or (isinstance(x, float) and math.isfinite(x))
    if x.dtype.kind in "biu":
        return True
    v = _const_values(ctx, x)
    if v is not None:
        return v.dtype.kind in "biu" or bool(np.all(np.isfinite(v)))
    if depth <= 0:
        return False
    op = _op(x)
    if op is None:
        return False
    inputs = x._node.inputs
    if isinstance(op, (Tanh, Sigmoid, Arctan, Erf)):
        return _not_nan(ctx, inputs[0], depth - 1)
    if isinstance(op, (Sin, Cos, Softmax)):
        return _finite(ctx, inputs[0], depth - 1)
    if isinstance(op, Cast):
        src = inputs[0]
        return isinstance(src, Tensor) and src.dtype.kind in "biu" and x.dtype.itemsize >= 4
    return False


def _not_nan(ctx, x, depth: int = _DEPTH) -> bool:
    """Whether no value of ``x`` can be NaN (infinities allowed)."""
    if _finite(ctx, x, depth):
        return True
    if not isinstance(x, Tensor):
        return isinstance(x, float) and not math.isnan(x)
    v = _const_values(ctx, x)
    if v is not None:
        return not bool(np.any(np.isnan(v)))
    if depth <= 0:
        return False
    op = _op(x)
    if isinstance(op, (Exp, Tanh, Sigmoid, Arctan, Erf, Abs, Neg, Relu)):
        return _not_nan(ctx, x._node.inputs[0], depth - 1)
    return False


def _nonnegative(ctx, x) -> bool:
    """Whether ``x`` is provably ``>= 0`` wherever it is not NaN."""
    if not isinstance(x, Tensor):
        return False
    if x.dtype.kind in "bu":
        return True
    v = _const_values(ctx, x)
    if v is not None:
        return not bool(np.any(v < 0))
    op = _op(x)
    if isinstance(op, (Exp, Sigmoid, Softmax, Relu, Abs, Sqrt)):
        return True
    if isinstance(op, Mul):
        a, b = x._node.inputs
        return a is b
    if isinstance(op, Pow):
        exponent = x._node.inputs[1]
        return (isinstance(exponent, (int, float)) and not isinstance(exponent, bool)
                and float(exponent).is_integer() and int(exponent) % 2 == 0)
    return False


# ---- identities: x*1, 1*x, x+0, 0+x, x-0, x/1, x**1 ---------------------------------------------
@rewrite("simplify", tracks=[Linear])
def linear_as_matmul(node, ctx):
    """``linear(x, w, b)`` with a 2-D ``x`` -> ``x @ transpose(w) + b``: the fuse phase then runs the
    matmul, the bias and what follows (relu...) as one kernel, reading ``w`` transposed in place."""
    x, w = node.inputs[0], node.inputs[1]
    if x.ndim != 2 or x.dtype != w.dtype or (len(node.inputs) == 3 and node.inputs[2].dtype != x.dtype):
        return None
    y = ctx.make(MatMul(), x, ctx.make(Transpose((1, 0)), w))
    return ctx.make(Add(), y, node.inputs[2]) if len(node.inputs) == 3 else y


@rewrite("simplify", tracks=[ReluGrad])
def relu_grad_as_mask_multiply(node, ctx):
    """``relu_grad(y, g)`` -> ``g * (y > 0)`` (the same values): one eager dispatch, but in a graph the
    mask and the multiply fuse into their neighbours' kernels (a training step's ``g @ w`` and ReLU
    mask in one loop, with the activation's buffer free for the result), and max pooling's backward
    takes the mask on its pooled side (pooling.py)."""
    y, g = node.inputs
    if not (isinstance(y, Tensor) and isinstance(g, Tensor)):
        return None
    return ctx.make(Mul(), g, ctx.make(Greater(), y, 0))


@rewrite("simplify", tracks=[Mul])
def drop_multiply_by_one(node, ctx):
    """``x * 1`` and ``1 * x`` -> ``x`` (not where the 1 broadcasts ``x`` or changes its dtype)."""
    return _identity_operand(ctx, node, 1)


@rewrite("simplify", tracks=[Add])
def drop_add_zero(node, ctx):
    """``x + 0`` and ``0 + x`` -> ``x`` (not where the 0 broadcasts ``x`` or changes its dtype)."""
    return _identity_operand(ctx, node, 0)


@rewrite("simplify", tracks=[Sub])
def drop_subtract_zero(node, ctx):
    """``x - 0`` -> ``x``."""
    return _identity_operand(ctx, node, 0, which=(1,))


@rewrite("simplify", tracks=[Div])
def drop_divide_by_one(node, ctx):
    """``x / 1`` -> ``x`` (float ``x`` only, in effect: integer division gives float)."""
    return _identity_operand(ctx, node, 1, which=(1,))


@rewrite("simplify", tracks=[Pow])
def drop_power_of_one(node, ctx):
    """``x ** 1`` -> ``x``."""
    return _identity_operand(ctx, node, 1, which=(1,))


@rewrite("simplify", tracks=[Neg])
def cancel_double_negation(node, ctx):
    """``-(-x)`` -> ``x``."""
    inner = node.inputs[0]
    if isinstance(_op(inner), Neg):
        x = inner._node.inputs[0]
        if _same_spec(x, node.out):
            return x
    return None


# ---- x * 0 ------------------------------------------------------------------------------------
@rewrite("simplify", tracks=[Mul])
def replace_multiply_by_zero(node, ctx):
    """``x * 0`` -> zeros, only where ``x`` is provably finite (``nan * 0`` and ``inf * 0`` are NaN)."""
    a, b = node.inputs
    for x, c in ((a, b), (b, a)):
        if not isinstance(x, Tensor) or not ctx.is_const(c, 0) or ctx.const_value(x) is not None:
            continue
        if not _finite(ctx, x):
            continue
        out = node.out
        if out.shape is not None and None not in out.shape and math.prod(out.shape) <= MAX_CONST_ELEMENTS:
            return _const_tensor(ctx, np.zeros(out.shape, out.dtype))
        if _does_not_broadcast(x, c) and x.shape == out.shape:
            return _make(ctx, node, FullLike(0, out.dtype), x)
    return None


# ---- constant chains ------------------------------------------------------------------------------
def _combine_chain(node, ctx, op_class, combine) -> Tensor | None:
    outer = _split_const(ctx, node)
    if outer is None:
        return None
    y, c2 = outer
    if not isinstance(_op(y), op_class):
        return None
    inner = _split_const(ctx, y._node)
    if inner is None:
        return None
    x, c1 = inner
    dtype = x.dtype
    if y.dtype != dtype or node.out.dtype != dtype or dtype.kind not in "iuf":
        return None
    try:
        with np.errstate(all="ignore"):
            v1, v2 = _array(ctx, c1, dtype), _array(ctx, c2, dtype)
            value = np.asarray(combine(v1, v2)).astype(dtype)
    except Exception:
        return None
    if dtype.kind == "f":
        if not (np.all(np.isfinite(v1)) and np.all(np.isfinite(v2)) and np.all(np.isfinite(value))):
            return None
        if op_class is Mul and not np.all((value != 0) | (v1 == 0) | (v2 == 0)):
            return None  # the product underflowed
    if value.size > MAX_CONST_ELEMENTS:
        return None
    try:
        spec = op_class().infer(x.spec, TensorSpec(value.shape, value.dtype))
    except Exception:
        return None
    if spec.shape != node.out.shape or spec.dtype != node.out.dtype:
        return None
    return ctx.make(op_class(), x, _const_tensor(ctx, value))


@rewrite("simplify", tracks=[Mul])
def combine_constant_factors(node, ctx):
    """``(x * c1) * c2`` -> ``x * (c1 * c2)`` (any operand order), so ``x*2*2*2`` is ``x*8``."""
    return _combine_chain(node, ctx, Mul, np.multiply)


@rewrite("simplify", tracks=[Add])
def combine_constant_terms(node, ctx):
    """``(x + c1) + c2`` -> ``x + (c1 + c2)`` (any operand order)."""
    return _combine_chain(node, ctx, Add, np.add)


# ---- shape ops ----------------------------------------------------------------------------------
@rewrite("simplify", tracks=[Transpose])
def drop_identity_transpose(node, ctx):
    """``transpose(x, (0, 1, ..., n-1))`` -> ``x``."""
    x = node.inputs[0]
    if tuple(node.op.axes) == tuple(range(len(node.op.axes))) and _same_spec(x, node.out):
        return x
    return None


@rewrite("simplify", tracks=[Transpose])
def merge_transposes(node, ctx):
    """``transpose(transpose(x, p1), p2)`` -> ``transpose(x, p1[p2])``, or ``x`` when that is the identity."""
    inner = node.inputs[0]
    if not isinstance(_op(inner), Transpose):
        return None
    first, second = inner._node.op.axes, node.op.axes
    if len(first) != len(second):
        return None
    x = inner._node.inputs[0]
    axes = tuple(first[a] for a in second)
    if axes == tuple(range(len(axes))):
        return x if _same_spec(x, node.out) else None
    return _make(ctx, node, Transpose(axes), x)


def _reshape_is_identity(x, out) -> bool:
    return (_same_spec(x, out) and x.shape is not None and sum(d is None for d in x.shape) <= 1)


@rewrite("simplify", tracks=[Reshape])
def drop_identity_reshape(node, ctx):
    """``reshape(x, shape of x)`` -> ``x`` (when ``x``'s shape has at most one unknown dim)."""
    x = node.inputs[0]
    return x if _reshape_is_identity(x, node.out) else None


@rewrite("simplify", tracks=[Reshape])
def merge_reshapes(node, ctx):
    """``reshape(reshape(x, s1), s2)`` -> ``reshape(x, s2)`` (or ``x`` when that is ``x``'s shape)."""
    inner = node.inputs[0]
    if not isinstance(_op(inner), Reshape):
        return None
    x = inner._node.inputs[0]
    if _reshape_is_identity(x, node.out):
        return x
    return _make(ctx, node, Reshape(node.op.shape), x)


# ---- exp / log --------------------------------------------------------------------------------
@rewrite("simplify", tracks=[Exp])
def cancel_exp_of_log(node, ctx):
    """``exp(log(x))`` -> ``x`` where ``x`` is provably non-negative (see the module docstring)."""
    inner = node.inputs[0]
    if not isinstance(_op(inner), Log):
        return None
    x = inner._node.inputs[0]
    if _same_spec(x, node.out) and _nonnegative(ctx, x):
        return x
    return None


@rewrite("simplify", tracks=[Log])
def cancel_log_of_exp(node, ctx):
    """``log(exp(x))`` -> ``x``."""
    inner = node.inputs[0]
    if not isinstance(_op(inner), Exp):
        return None
    x = inner._node.inputs[0]
    return x if _same_spec(x, node.out) else None


@rewrite("simplify", tracks=[Log])
def use_log_softmax(node, ctx):
    """``log(softmax(x, axis))`` -> ``log_softmax(x, axis)``."""
    inner = node.inputs[0]
    if not isinstance(_op(inner), Softmax):
        return None
    return _make(ctx, node, LogSoftmax(inner._node.op.axis), inner._node.inputs[0])


# ---- reductions ---------------------------------------------------------------------------------
@rewrite("simplify", tracks=[Sum])
def sum_before_broadcast(node, ctx):
    """``sum(broadcast_to(x, shape))`` over all axes -> ``sum(x) * (size(shape) / size(x))``."""
    inner = node.inputs[0]
    if not isinstance(_op(inner), BroadcastTo):
        return None
    x = inner._node.inputs[0]
    shape = inner.shape
    if (not isinstance(x, Tensor) or x.shape is None or None in x.shape or shape is None or None in shape):
        return None
    try:
        axes = normalize_axes("sum", node.op.axis, len(shape))
    except Exception:
        return None
    if tuple(axes) != tuple(range(len(shape))):
        return None
    size = math.prod(x.shape)
    if size == 0:
        return None
    ratio = math.prod(shape) // size
    total = ctx.make(Sum(None, False), x)
    if ratio != 1:
        total = ctx.make(Mul(), total, ratio)
    if node.op.keepdims and total.shape != node.out.shape:
        total = ctx.make(Reshape(node.out.shape), total)
    return total if _same_spec(total, node.out) else None
