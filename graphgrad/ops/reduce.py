"""Reductions: sum, mean, prod, max, min, argmax, argmin, var, std, logsumexp, norm, all, any,
cumsum, cumprod — and ``sum_to``, the reduction autograd uses to undo broadcasting.

``axis`` is ``None`` (all axes), an int or a tuple of ints (negative allowed); ``keepdims`` keeps
reduced axes with size 1. Primitives (hand-written gradients): ``Sum``, ``Mean``, ``Prod``, ``Max``,
``Min``, ``Cumsum``, ``Cumprod`` (plus the non-differentiable ``Argmax``, ``Argmin``, ``All``,
``Any``). ``var``, ``std``, ``logsumexp`` and ``norm`` are composed from them.
"""
from __future__ import annotations

import builtins
import numbers
import math
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, normalize_axes, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import float_result
from graphgrad.errors import ArgumentError, DTypeError, ShapeError
from graphgrad.ops.elementwise import astype, equal, greater, maximum, where
from graphgrad.ops.unary import abs as _abs
from graphgrad.ops.unary import exp, isfinite, log, sqrt

Axis = Union[None, int, Sequence[int]]


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    """``shape`` with ``axes`` removed (or set to 1 with ``keepdims``)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _expand_reduced(g: Tensor, shape: tuple, axes: tuple, keepdims: bool) -> Tensor:
    """Give a reduced gradient back its reduced axes (size 1) so it broadcasts against ``shape``."""
    if keepdims or not axes:
        return g
    if None in shape:  # some dimensions known only at run time: insert the axes instead
        from graphgrad.ops.shape import ExpandDims

        return ExpandDims(axes).apply(g)
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return g.reshape(kept)


def _expand_unknown_rank(op: "_Reduction", g: Tensor, x: Tensor) -> Tensor:
    """``_expand_reduced`` for an input ``x`` whose rank is known only at run time (a placeholder made
    without a shape), reducing over ``op.axis`` as given (``None``, an int or a tuple)."""
    axis = op.axis
    if op.keepdims or axis is None:
        return g  # a 0-d (or keepdims) gradient broadcasts against the input as it is
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if builtins.any(a < 0 for a in axes):  # where they go depends on the rank: take the shape at run time
        from graphgrad.ops.array import reshape_like

        return reshape_like(g, Sum(axis, keepdims=True).apply(x))
    from graphgrad.ops.shape import ExpandDims

    return ExpandDims(tuple(sorted(axes))).apply(g)


def _accumulator_dtype(dtype) -> np.dtype:
    """NumPy's accumulator for sum/prod/cumsum: small ints and bool widen to 64 bits."""
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8):
        return np.dtype("uint64") if dtype.kind == "u" else np.dtype("int64")
    return dtype


def _count(x: Tensor, axes: tuple):
    """How many elements ``x`` has over ``axes``: a Python number, or a 0-d tensor (``count_like``)
    when some of those dimensions are only known at run time."""
    if x.shape is None:  # even the rank is known only at run time
        from graphgrad.ops.array import CountLike

        return CountLike(axes, x.dtype).apply(x)
    if None not in x.shape:
        return math.prod(x.shape[a] for a in axes)
    from graphgrad.ops.array import count_like

    return count_like(x, axes)


class _Reduction(Op):
    """A reduction over ``axis`` with ``keepdims``; subclasses set the dtype rule and the kernel."""

    props = ("axis", "keepdims")

    def __init__(self, axis: Axis = None, keepdims: bool = False):
        self.axis = tuple(axis) if isinstance(axis, list) else axis
        if axis is not None and axis.__class__ is not int:
            for a in (self.axis if isinstance(self.axis, tuple) else (self.axis,)):
                if isinstance(a, bool) or not isinstance(a, numbers.Integral):
                    raise ArgumentError(f"{self.name}: axis must be an integer or a tuple of them, got {axis!r}")
        self.keepdims = bool(keepdims)

    def axes(self, ndim: int) -> tuple:
        return normalize_axes(self.name, self.axis, ndim)

    def out_dtype(self, dtype) -> np.dtype:
        return dtype

    def infer(self, x):
        axes = self.axes(len(x.shape))
        return TensorSpec(_reduced_shape(x.shape, axes, self.keepdims), self.out_dtype(x.dtype))

    def infer_unknown_rank(self, x):
        """The spec for an input of unknown rank: a full reduction is 0-d; others keep the rank unknown."""
        return TensorSpec(() if self.axis is None and not self.keepdims else None, self.out_dtype(x.dtype))

    def grad_parts(self, x: Tensor, g: Tensor) -> tuple:
        """(axes, upstream gradient with the reduced axes restored as size 1). For an input of unknown
        rank the axes are ``self.axis`` as given (``None`` for all)."""
        if x.shape is None:
            return self.axis, _expand_unknown_rank(self, g, x)
        axes = self.axes(x.ndim)
        return axes, _expand_reduced(g, x.shape, axes, self.keepdims)


class Sum(_Reduction):
    """Sum over ``axis``. Gradient: the upstream gradient broadcast back over the reduced axes."""
    saves_inputs = False  # backward needs only the inputs' shapes

    def out_dtype(self, dtype):
        return _accumulator_dtype(dtype)

    def forward(self, xp, x):
        return xp.sum(x, axis=self.axis, keepdims=self.keepdims)

    def backward(self, inputs, out, g):
        x = inputs[0]
        axes, g = self.grad_parts(x, g)
        return (g.broadcast_like(x),)


class Mean(_Reduction):
    """Arithmetic mean over ``axis`` (integers give the default float dtype). Gradient: ``g / n``
    broadcast back."""
    saves_inputs = False  # backward needs only the inputs' shapes

    def out_dtype(self, dtype):
        if dtype.kind not in "biufc":
            raise DTypeError(f"{self.name}: not defined for dtype {dtype}")
        return dtype if dtype.kind in "fc" else float_result(dtype)

    def forward(self, xp, x):
        if x.dtype.kind not in "fc":  # accumulate integers exactly, then round once to the result dtype
            return xp.mean(x, axis=self.axis, keepdims=self.keepdims, dtype="float64").astype(float_result(x.dtype))
        return xp.mean(x, axis=self.axis, keepdims=self.keepdims)

    def backward(self, inputs, out, g):
        x = inputs[0]
        axes, g = self.grad_parts(x, g)
        return (g.broadcast_like(x) / _count(x, axes),)


class Prod(_Reduction):
    """Product over ``axis``. Gradient: ``g`` times the product of the *other* elements, computed with
    exclusive cumulative products so that zeros in the input are handled exactly."""

    def out_dtype(self, dtype):
        return _accumulator_dtype(dtype)

    def forward(self, xp, x):
        return xp.prod(x, axis=self.axis, keepdims=self.keepdims)

    def backward(self, inputs, out, g):
        x = inputs[0]
        if x.shape is None:
            raise ShapeError(f"{self.name}: the gradient of a product needs the input's rank, which is unknown "
                             "(a placeholder made without a shape): give the placeholder a shape")
        axes, g = self.grad_parts(x, g)
        return (g * _product_of_others(x, axes),)


def _product_of_others(x: Tensor, axes: tuple) -> Tensor:
    """For each element, the product of the other elements of its reduction group (no division)."""
    from graphgrad.ops.shape import moveaxis, pad

    k = len(axes)
    if k == 0:
        return x * 0 + 1
    moved = moveaxis(x, axes, tuple(range(-k, 0)))
    flat = moved.flatten(moved.ndim - k) if k > 1 else moved
    if flat.shape[-1] == 0:
        return x
    none = [(0, 0)] * (flat.ndim - 1)
    left = cumprod(pad(flat[..., :-1], none + [(1, 0)], constant_values=1), axis=-1)
    right = cumprod(pad(flat[..., 1:], none + [(0, 1)], constant_values=1).flip(-1), axis=-1).flip(-1)
    others = (left * right).reshape_like(moved)
    return moveaxis(others, tuple(range(-k, 0)), axes)


class _Extremum(_Reduction):
    """Max or min: values only; on ties the gradient is split evenly among the tied elements."""

    def backward(self, inputs, out, g):
        x = inputs[0]
        axes, g = self.grad_parts(x, g)
        if x.shape is None:
            o = _expand_unknown_rank(self, out, x)
        else:
            o = _expand_reduced(out, x.shape, axes, self.keepdims)
        mask = equal(x, o).astype(g.dtype)
        return (mask * (g / mask.sum(axes, keepdims=True)),)


class Max(_Extremum):
    def forward(self, xp, x):
        return xp.max(x, axis=self.axis, keepdims=self.keepdims)


class Min(_Extremum):
    def forward(self, xp, x):
        return xp.min(x, axis=self.axis, keepdims=self.keepdims)


class _ArgExtremum(Op):
    """Index of the max/min along one axis (or of the flattened tensor); int64, no gradient."""

    props = ("axis", "keepdims")

    def __init__(self, axis: Optional[int] = None, keepdims: bool = False):
        if axis is not None and not isinstance(axis, int):
            raise ShapeError(f"{type(self).__name__}: axis must be None or an int, got {axis!r}")
        self.axis = axis
        self.keepdims = bool(keepdims)

    def infer(self, x):
        ndim = len(x.shape)
        if self.axis is None:
            shape = (1,) * ndim if self.keepdims else ()
        else:
            shape = _reduced_shape(x.shape, (normalize_axis(self.name, self.axis, ndim),), self.keepdims)
        return TensorSpec(shape, np.dtype("int64"))

    def infer_unknown_rank(self, x):
        """The spec for an input of unknown rank: the flat index is 0-d; along an axis the rank is unknown."""
        return TensorSpec(() if self.axis is None and not self.keepdims else None, np.dtype("int64"))


class Argmax(_ArgExtremum):
    def forward(self, xp, x):
        return xp.argmax(x, axis=self.axis, keepdims=self.keepdims).astype("int64")


class Argmin(_ArgExtremum):
    def forward(self, xp, x):
        return xp.argmin(x, axis=self.axis, keepdims=self.keepdims).astype("int64")


class _Logical(_Reduction):
    def out_dtype(self, dtype):
        return np.dtype(bool)


class All(_Logical):
    """True where every element along ``axis`` is nonzero (no gradient)."""

    def forward(self, xp, x):
        return xp.all(x, axis=self.axis, keepdims=self.keepdims)


class Any(_Logical):
    """True where some element along ``axis`` is nonzero (no gradient)."""

    def forward(self, xp, x):
        return xp.any(x, axis=self.axis, keepdims=self.keepdims)


class _Scan(Op):
    """A cumulative op along one (non-negative or negative) ``axis``; same shape as the input."""

    props = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer(self, x):
        normalize_axis(self.name, self.axis, len(x.shape))
        return TensorSpec(x.shape, _accumulator_dtype(x.dtype))


def _reverse_cumsum(v: Tensor, axis: int) -> Tensor:
    """``out[i] = sum(v[i:])`` along ``axis``."""
    return v.flip(axis).cumsum(axis).flip(axis)


class Cumsum(_Scan):
    """Running sum along ``axis``. Gradient: the reversed running sum of ``g``."""

    def forward(self, xp, x):
        return xp.cumsum(x, axis=self.axis)

    def backward(self, inputs, out, g):
        return (_reverse_cumsum(g, self.axis),)


class Cumprod(_Scan):
    """Running product along ``axis``.

    Gradient ``gx[j] = sum_{i >= j} g[i] * prod_{k <= i, k != j} x[k]``. When the input is concrete
    and has no zero this is ``revcumsum(g * y) / x`` (O(n)); otherwise it is computed without division
    as ``excl_cumprod(x)[j] * sum_{i >= j} g[i] * prod_{j < k <= i} x[k]`` (O(n^2) per row), a
    polynomial identity, so gradients of every order are exact even at zeros.
    """

    def forward(self, xp, x):
        return xp.cumprod(x, axis=self.axis)

    def backward(self, inputs, out, g):
        x, ax = inputs[0], self.axis
        if x._data is not None and x.dtype.kind in "fc" and not bool((x._data == 0).any()):
            return (_reverse_cumsum(g * out, ax) / x,)
        return (_cumprod_grad_exact(x, g, ax),)


def _cumprod_grad_exact(x: Tensor, g: Tensor, axis: int) -> Tensor:
    from graphgrad.core.creation import ones
    from graphgrad.ops.shape import expand_dims, moveaxis, pad, triu

    xm, gm = moveaxis(x, axis, -1), moveaxis(g, axis, -1)
    n = xm.shape[-1]
    if n == 0:
        return g
    lead = [(0, 0)] * (xm.ndim - 1)
    left = cumprod(pad(xm[..., :-1], lead + [(1, 0)], constant_values=1), axis=-1)  # prod_{k < j} x[k]
    if n is None:  # the (n, n) masks from the run-time length: ones of shape (..., n, n)
        from graphgrad.ops.array import ones_like

        row = ones_like(xm, dtype="bool")
        square = expand_dims(row, -1) & expand_dims(row, -2)
    else:
        square = ones(n, n, dtype="bool", device=x.device)
    above = triu(square, 1)  # [j, i]: i > j
    segment = cumprod(where(above, expand_dims(xm, -2), 1), axis=-1)  # [j, i]: prod_{j < k <= i} x[k]
    on_or_above = triu(square)
    total = where(on_or_above, segment * expand_dims(gm, -2), 0).sum(-1)
    return moveaxis(left * total, -1, axis)


# ---- public functions ---------------------------------------------------------------------------
def _axis_args(name: str, x, axis, keepdims, dim, keepdim) -> tuple:
    """``(axis, keepdims)`` from NumPy's names or PyTorch's (``dim``/``keepdim``); on a 0-d tensor,
    axis 0 or -1 (or a tuple of them) means all of it, as in PyTorch (a 0-d tensor's dims wrap as a
    one-element vector's)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{name}() got both axis and dim; pass one of them")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    if (axis == 0 or axis == -1 or isinstance(axis, (tuple, list))) and isinstance(x, Tensor) and x.shape == ():
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        if axes and builtins.all(a in (0, -1) for a in axes):
            axis = None
    return axis, keepdims


def sum(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None,
        dtype=None) -> Tensor:
    """Sum of elements over ``axis``. Shapes: (...) -> reduced. Small ints and bool sum in int64.

    Example: ``gg.sum(x, axis=(0, -1), keepdims=True)``.
    """
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("sum", x, axis, keepdims, dim, keepdim)
    if dtype is not None:  # PyTorch's dtype=: the input converted first
        x = astype(x, dtype)
    return Sum(axis, keepdims).apply(x)


def sum_to(x, shape) -> Tensor:
    """Sum ``x`` down to ``shape`` (the shape it was broadcast from)."""
    shape = tuple(shape)
    if isinstance(x, Tensor) and x.shape == shape:
        return x
    return SumTo(shape).apply(x)


def mean(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None,
        dtype=None) -> Tensor:
    """Arithmetic mean over ``axis``; integer inputs give float64. Shapes: (...) -> reduced."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("mean", x, axis, keepdims, dim, keepdim)
    if dtype is not None:  # PyTorch's dtype=: the input converted first
        x = astype(x, dtype)
    return Mean(axis, keepdims).apply(x)


def prod(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None,
        dtype=None) -> Tensor:
    """Product of elements over ``axis`` (gradient exact with zeros). Shapes: (...) -> reduced."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("prod", x, axis, keepdims, dim, keepdim)
    if dtype is not None:  # PyTorch's dtype=: the input converted first
        x = astype(x, dtype)
    return Prod(axis, keepdims).apply(x)


def max(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """Largest value over ``axis`` (values only, as ``np.max``); ties share the gradient evenly."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("max", x, axis, keepdims, dim, keepdim)
    return Max(axis, keepdims).apply(x)


def min(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """Smallest value over ``axis`` (values only, as ``np.min``); ties share the gradient evenly."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("min", x, axis, keepdims, dim, keepdim)
    return Min(axis, keepdims).apply(x)


amax, amin = max, min


def argmax(x, axis: Optional[int] = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """int64 index of the largest value along ``axis`` (of the flattened tensor when ``None``)."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("argmax", x, axis, keepdims, dim, keepdim)
    return Argmax(axis, keepdims).apply(x)


def argmin(x, axis: Optional[int] = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """int64 index of the smallest value along ``axis`` (of the flattened tensor when ``None``)."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("argmin", x, axis, keepdims, dim, keepdim)
    return Argmin(axis, keepdims).apply(x)


def all(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """Whether every element over ``axis`` is nonzero (bool; no gradient)."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("all", x, axis, keepdims, dim, keepdim)
    return All(axis, keepdims).apply(x)


def any(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """Whether some element over ``axis`` is nonzero (bool; no gradient)."""
    if axis is not None or dim is not None or keepdim is not None:  # (plain calls skip this)
        axis, keepdims = _axis_args("any", x, axis, keepdims, dim, keepdim)
    return Any(axis, keepdims).apply(x)


def var(x, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *, dim=None,
        keepdim: Optional[bool] = None) -> Tensor:
    """Variance over ``axis``: ``sum((x - mean)**2) / (n - ddof)`` (NumPy's default ``ddof=0``).
    Shapes: (...) -> reduced. Composed of ``mean``/``sum``, so it is differentiable to any order."""
    x = _tensor(x)
    if x.dtype.kind in "biu":  # integers give the default float dtype
        x = x.astype(float_result(x.dtype))
    axis, keepdims = _axis_args("var", x, axis, keepdims, dim, keepdim)
    d = x - mean(x, axis, keepdims=True)
    if ddof == 0:
        return mean(d * d, axis, keepdims)
    n = _count(x, normalize_axes("var", axis, x.ndim))
    divisor = builtins.max(n - ddof, 0) if isinstance(n, int) else maximum(n - ddof, 0)
    return sum(d * d, axis, keepdims) / divisor


def std(x, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *, dim=None,
        keepdim: Optional[bool] = None) -> Tensor:
    """Standard deviation over ``axis``: ``sqrt(var(x, axis, keepdims, ddof))``; its gradient is 0
    (not NaN) where the variance is 0, as PyTorch's."""
    v = var(x, axis, keepdims, ddof, dim=dim, keepdim=keepdim)
    if not v.requires_grad:  # the masking below only changes the gradient: skip it when none is recorded
        return sqrt(v)
    flat = equal(v, 0)
    return where(flat, 0.0, sqrt(where(flat, 1.0, v)))


def logsumexp(x, axis: Axis = None, keepdims: bool = False, *, dim=None, keepdim: Optional[bool] = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably by shifting by the maximum.
    Shapes: (...) -> reduced. The gradient is ``softmax(x)`` along the reduced axes."""
    x = _tensor(x)
    axis, keepdims = _axis_args("logsumexp", x, axis, keepdims, dim, keepdim)
    m = max(x, axis, keepdims=True)
    m = where(isfinite(m), m, 0)
    if x.shape is None and not keepdims:  # rank unknown until run time: reduce without keepdims instead
        top = max(x, axis)
        return log(sum(exp(x - m), axis)) + where(isfinite(top), top, 0)
    s = log(sum(exp(x - m), axis, keepdims=True)) + m
    if keepdims:
        return s
    from graphgrad.ops.shape import squeeze

    return squeeze(s, normalize_axes("logsumexp", axis, x.ndim))


def _safe_root(s: Tensor, p: float) -> Tensor:
    """``s ** (1/p)`` for ``s >= 0`` whose gradient is 0 (not NaN) where ``s == 0``."""
    positive = greater(s, 0)
    safe = where(positive, s, 1)
    return where(positive, sqrt(safe) if p == 2 else safe ** (1.0 / p), 0)


def _vector_norm(x: Tensor, ord, axes: tuple, keepdims: bool) -> Tensor:
    if ord is None or ord == 2:
        return _safe_root(sum(x * x, axes, keepdims), 2)
    if ord == math.inf:
        return max(_abs(x), axes, keepdims)
    if ord == -math.inf:
        return min(_abs(x), axes, keepdims)
    if ord == 1:
        return sum(_abs(x), axes, keepdims)
    if ord == 0:
        return sum(x != 0, axes, keepdims).astype(_float_dtype(x.dtype))
    if isinstance(ord, str):
        raise ShapeError(f"norm: ord={ord!r} is a matrix norm; give a pair of axes (got axis {axes})")
    return _safe_root(sum(_abs(x) ** ord, axes, keepdims), ord)


def _float_dtype(dtype):
    return dtype if dtype.kind == "f" else np.dtype("float64")


def norm(x, ord=None, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Vector or matrix norm, as ``numpy.linalg.norm``.

    Args:
        x: input tensor.
        ord: for vectors (one axis): ``None``/2 (Euclidean), 1, ``inf``, ``-inf``, 0 (count of
            nonzeros) or any other p; for matrices (two axes): ``None``/'fro' (Frobenius), 1, -1
            (max/min column abs sum), ``inf``, ``-inf`` (max/min row abs sum), 'nuc', 2, -2 (sum, max,
            min of the singular values).
        axis: ``None`` (with ``ord=None``: the 2-norm of all elements; otherwise ``x`` must be 1-D or
            2-D), an int (vector norm) or a pair of ints (matrix norm).
        keepdims: keep the reduced axes with size 1.

    Shapes: (...) -> reduced. The gradient at a zero input is 0 (never NaN).
    """
    x = _tensor(x)
    nd = x.ndim
    if axis is None:
        if ord is None:
            return _safe_root(sum(x * x, None, keepdims), 2)
        if nd not in (1, 2):
            raise ShapeError(f"norm: ord={ord!r} with axis=None needs a 1-D or 2-D tensor, got shape {x.shape}")
        axis = tuple(range(nd))
    if isinstance(axis, int):
        axis = (axis,)
    axes = tuple(normalize_axis("norm", a, nd) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"norm: repeated axis in {axis}")
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) != 2:
        raise ShapeError(f"norm: axis must be an int or a pair of ints, got {axis}")
    if ord is None or ord == "fro":
        return _safe_root(sum(x * x, axes, keepdims), 2)
    row, col = axes
    if ord in (1, -1):
        inner, outer = row, col  # column sums, then max/min over columns
    elif ord in (math.inf, -math.inf):
        inner, outer = col, row  # row sums, then max/min over rows
    elif ord in ("nuc", 2, -2):  # from the singular values (a later family: imported on use)
        from graphgrad.ops.linalg_more import matrix_norm

        return matrix_norm(x, ord, axes, keepdims)
    else:
        raise ShapeError(f"norm: matrix norm ord={ord!r} is not supported (supported: None, 'fro', 'nuc', 1, -1, "
                         "2, -2, inf, -inf)")
    sums = sum(_abs(x), inner, keepdims=True)
    out = (max if ord in (1, math.inf) else min)(sums, outer, keepdims=True)
    if keepdims:
        return out
    from graphgrad.ops.shape import squeeze

    return squeeze(out, axes)


def cumsum(x, axis: Optional[int] = None, *, dim: Optional[int] = None) -> Tensor:
    """Running sum along ``axis`` (``None``: of the flattened tensor). Shapes: (...) -> same
    (flattened when ``axis`` is ``None``)."""
    if dim is not None:
        if axis is not None:
            raise TypeError("cumsum() got both axis and dim; pass one of them")
        axis = dim
    if axis is None:
        return Cumsum(0).apply(_tensor(x).reshape(-1))
    if axis in (0, -1) and isinstance(x, Tensor) and x.shape == ():  # PyTorch scans a 0-d tensor as itself
        return Cumsum(0).apply(x.reshape(1)).reshape(())
    return Cumsum(axis).apply(x)


def cumprod(x, axis: Optional[int] = None, *, dim: Optional[int] = None) -> Tensor:
    """Running product along ``axis`` (``None``: of the flattened tensor); the gradient is exact
    when the input contains zeros."""
    if dim is not None:
        if axis is not None:
            raise TypeError("cumprod() got both axis and dim; pass one of them")
        axis = dim
    if axis is None:
        return Cumprod(0).apply(_tensor(x).reshape(-1))
    if axis in (0, -1) and isinstance(x, Tensor) and x.shape == ():  # PyTorch scans a 0-d tensor as itself
        return Cumprod(0).apply(x.reshape(1)).reshape(())
    return Cumprod(axis).apply(x)


_ONES: dict = {}  # (length, dtype) -> a read-only NumPy vector of ones, for SumTo's products


def _ones(xp, n: int, dtype):
    """A vector of ``n`` ones: on the host one kept per length and dtype (a bias gradient's sum runs
    at every step; making the vector cost a sixth of it), elsewhere a new one."""
    if xp is not np or n > 1 << 16:
        return xp.ones(n, dtype)
    key = (n, dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) > 256:
            _ONES.clear()
        ones = _ONES[key] = np.ones(n, dtype)
        ones.flags.writeable = False
    return ones


def _kept_block(shape: tuple, summed: set) -> Optional[tuple]:
    """``(before, kept, after)`` sizes when the axes of ``shape`` not in ``summed`` (ignoring axes of
    size 1) are one contiguous block: the sum is then over a (before, kept, after) view's ends."""
    kept_axes = [i for i, d in enumerate(shape) if i not in summed and d != 1]
    if kept_axes and kept_axes != list(range(kept_axes[0], kept_axes[-1] + 1)):
        return None
    first, last = (kept_axes[0], kept_axes[-1] + 1) if kept_axes else (len(shape), len(shape))
    return math.prod(shape[:first]), math.prod(shape[first:last]), math.prod(shape[last:])


class SumTo(Op):
    """Sum a tensor down to ``shape`` (the inverse of broadcasting ``shape`` up to the input's)."""

    props = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def infer(self, x):
        lead = len(x.shape) - len(self.shape)
        if lead < 0 or builtins.any(t != 1 and t != s and s is not None for t, s in zip(self.shape, x.shape[lead:])):
            raise ShapeError(f"{self.name}: cannot sum shape {x.shape} to {self.shape}")
        return TensorSpec(self.shape, x.dtype)

    def forward(self, xp, x):
        if x.__class__ is np.ndarray and x.ndim == 2 and self.shape == x.shape[1:] and x.dtype.char in "fd" and x.size:
            # a bias gradient (N, C) -> (C,), at every step of an MLP: straight to BLAS's vector-matrix
            # product (2.4 us on W6's (300, 100) where the general path below takes 5); a transposed
            # (Fortran-ordered) gradient, as eager products on OpenBLAS give, as its transpose's
            # matrix-vector product (W1's (128, 512): 41 us by the axis sum below)
            if x.flags.c_contiguous:
                return np.dot(_ones(np, x.shape[0], x.dtype), x)
            if x.flags.f_contiguous:
                return np.dot(x.T, _ones(np, x.shape[0], x.dtype))
        lead = x.ndim - len(self.shape)
        inner = tuple(lead + i for i, d in enumerate(self.shape) if d == 1 and x.shape[lead + i] != 1)
        # The result is always a fresh array, never a view of x: execution plans count SumTo among the
        # ops whose output may be written in place while x is still read.
        if not inner and not lead:
            return x.reshape(self.shape).copy()
        if not inner:  # only leading axes (a bias gradient (N, C) -> (C,)): no search for the block
            block = (math.prod(x.shape[:lead]), math.prod(x.shape[lead:]), 1)
        else:
            block = _kept_block(x.shape, set(range(lead)) | set(inner))
        if block is not None and x.dtype.char in "fd" and x.flags.c_contiguous and x.size:
            # ones @ x and x @ ones: BLAS sums rows and columns 3-7x faster than NumPy's reductions over
            # axes (a bias gradient (N, C) -> (C,); a convolution's (N, C, H, W) -> (C, 1, 1))
            before, kept, after = block
            y = x.reshape(before * kept, after) @ _ones(xp, after, x.dtype) if after > 1 else x.reshape(before * kept)
            if before > 1:
                y = _ones(xp, before, x.dtype) @ y.reshape(before, kept)
            elif after == 1:  # nothing was summed: y is still a view of x
                y = y.copy()
            return y.reshape(self.shape)
        if not inner:  # only leading axes
            return x.sum(axis=tuple(range(lead)), dtype=x.dtype)  # int32 stays int32, as the spec says
        return x.sum(axis=tuple(range(lead)) + inner, keepdims=True, dtype=x.dtype).reshape(self.shape)

    def backward(self, inputs, out, g):
        return (g.broadcast_like(inputs[0]),)

