"""Sorting and order statistics: sort, msort, topk, kthvalue, median / nanmedian, mode, cummax / cummin,
logcumsumexp, quantile / nanquantile.

Values are composed from ``argsort`` (a stable sort) and ``gather``, so their gradient is the gather's:
the upstream gradient scattered back to the positions the values came from (PyTorch's rule for sort,
topk, kthvalue, median, mode, cummax and cummin). Indices are int64 and never differentiable.
Primitives (hand-written here): ``ModeIndices``, ``CumExtremumIndices`` (no gradient) and
``LogCumSumExp``.

Naming: ``gg.sort`` and ``gg.median`` keep NumPy's meanings (``sort`` returns the values; ``median``
averages the two middle values of an even count); the Tensor methods ``x.sort()``, ``x.median(dim)``,
``x.nanmedian(dim)`` follow PyTorch (``(values, indices)``;
the lower median). Ties: a stable sort puts equal values in index order, so ``sort``, ``topk``,
``kthvalue`` and the medians pick among equal values by position (PyTorch leaves that unspecified);
``mode`` returns the last index of the most frequent value and ``cummax`` / ``cummin`` the last index
of the running extremum, as PyTorch does. NaN sorts above every number, as in NumPy and PyTorch.
"""
from __future__ import annotations

import math
from typing import Optional, Union

from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, normalize_axis
from graphgrad.core.tensor import Tensor, ValuesIndices
from graphgrad.dtypes import float_result
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops import reduce
from graphgrad.ops.array import count_like, stop_gradient
from graphgrad.ops.elementwise import astype, maximum, where
from graphgrad.ops.indexing import argsort
from graphgrad.ops.shape import gather, reshape, squeeze, stack, take_along_axis
from graphgrad.ops.unary import exp, floor, isnan, log, logical_not


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _along(x: Tensor, axis: int, item) -> Tensor:
    """``x[..., item, ...]`` with ``item`` (a slice or an int) at ``axis``."""
    return x[(slice(None),) * axis + (item,)]


def _vector_view(name: str, x, dim: int) -> tuple:
    """(x, non-negative dim, was 0-d): a 0-d tensor is read as a one-element vector along dim 0 / -1,
    as PyTorch does; callers reshape their results back to 0-d."""
    x = _tensor(x)
    if x.ndim == 0:
        normalize_axis(name, dim, 0)
        return reshape(x, (1,)), 0, True
    return x, normalize_axis(name, dim, x.ndim), False


def _finish(out: Tensor, axis: int, keepdim: bool, was_0d: bool) -> Tensor:
    """A result with ``axis`` kept as size 1: squeezed unless ``keepdim``, 0-d for a 0-d input."""
    if was_0d:
        return reshape(out, ())
    return out if keepdim else squeeze(out, axis)


# ---- sort, msort, topk, kthvalue -----------------------------------------------------------------------------
def _sort_pair(x, dim: int, descending: bool, name: str) -> ValuesIndices:
    x, ax, was_0d = _vector_view(name, x, dim)
    order = argsort(x, ax, descending=descending)
    values = gather(x, ax, order)
    if was_0d:
        return ValuesIndices(reshape(values, ()), reshape(order, ()))
    return ValuesIndices(values, order)


def sort(x, axis: int = -1, descending: bool = False, stable: bool = False, *, dim: Optional[int] = None,
         kind: Optional[str] = None) -> Tensor:
    """The values of ``x`` sorted along ``axis`` (NumPy's ``np.sort``: values only; NaN last, or first
    when ``descending``). The sort is always stable (NumPy's ``kind`` is accepted and changes nothing).
    ``x.sort(dim)`` / ``torch.sort`` return
    ``(values, indices)``. Differentiable: the gradient goes back to each value's position.
    Shapes: (3, 4) -> (3, 4)."""
    return _sort_pair(x, axis if dim is None else dim, descending, "sort").values


def _sort_method(x, dim: int = -1, descending: bool = False, stable: bool = False) -> ValuesIndices:
    """PyTorch's ``x.sort(dim=-1, descending=False, stable=False)``: ``(values, indices)`` (always stable:
    equal values keep their index order)."""
    return _sort_pair(x, dim, descending, "sort")


def msort(x) -> Tensor:
    """``x`` sorted along its first dimension (``torch.msort``). Shapes: (3, 4) -> (3, 4)."""
    return sort(x, 0)


def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:
    """The ``k`` largest (``largest=False``: smallest) entries along ``dim`` as ``(values, indices)``,
    ordered from the most extreme (always sorted; among equal values the lower index comes first; NaN
    counts as the largest). Values are differentiable. Shapes: (3, 5), k=2 -> (3, 2), (3, 2) int64."""
    x, ax, was_0d = _vector_view("topk", x, dim)
    n = x.shape[ax]
    if k < 0 or (n is not None and k > n):
        raise ShapeError(f"topk: k={k} is out of range for dimension {dim} of size {n}")
    indices = _along(argsort(x, ax, descending=largest), ax, slice(0, k))
    values = gather(x, ax, indices)
    if was_0d:
        return ValuesIndices(reshape(values, ()), reshape(indices, ()))
    return ValuesIndices(values, indices)


def kthvalue(x, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The ``k``-th smallest entry (1-based) along ``dim`` and its index: ``(values, indices)``.
    Shapes: (3, 5), k=2 -> (3,), (3,) int64 (``keepdim``: (3, 1))."""
    x, ax, was_0d = _vector_view("kthvalue", x, dim)
    n = x.shape[ax]
    if k < 1 or (n is not None and k > n):
        raise ShapeError(f"kthvalue: k={k} is out of range for dimension {dim} of size {n} (k counts from 1)")
    indices = _along(argsort(x, ax), ax, slice(k - 1, k))
    values = gather(x, ax, indices)
    return ValuesIndices(_finish(values, ax, keepdim, was_0d), _finish(indices, ax, keepdim, was_0d))


# ---- medians --------------------------------------------------------------------------------------------------
def _lower_median(x, dim: int, keepdim: bool, ignore_nan: bool, name: str) -> ValuesIndices:
    """PyTorch's median along ``dim``: the lower of the two middle values and its index. With NaNs,
    ``median`` gives NaN and the index of the first NaN; ``nanmedian`` the median of the other values."""
    x, ax, was_0d = _vector_view(name, x, dim)
    if x.shape[ax] == 0:
        raise ShapeError(f"{name}: dimension {dim} is empty")
    order = argsort(x, ax)  # NaN last
    floats = x.dtype.kind == "f"
    if ignore_nan and floats:
        valid = reduce.sum(logical_not(isnan(x)), ax, keepdims=True)
        middle = maximum((valid - 1) // 2, 0)  # no number at all: the first NaN, as PyTorch
        indices = take_along_axis(order, middle, ax)
    else:
        n = x.shape[ax]
        if n is None:
            middle = (astype(count_like(x, ax), "int64") - 1) // 2
            indices = take_along_axis(order, reshape(middle, (1,) * x.ndim), ax)
        else:
            indices = _along(order, ax, slice((n - 1) // 2, (n - 1) // 2 + 1))
        if floats:
            nan = isnan(x)
            first_nan = reduce.argmax(astype(nan, "int32"), ax, keepdims=True)  # (ONNX's ArgMax takes no bool)
            indices = where(reduce.any(nan, ax, keepdims=True), first_nan, indices)
    values = gather(x, ax, indices)
    return ValuesIndices(_finish(values, ax, keepdim, was_0d), _finish(indices, ax, keepdim, was_0d))


def _median_of_all(x, ignore_nan: bool, name: str) -> Tensor:
    """The lower median of all elements; its gradient is shared evenly among the elements equal to it
    (NaNs equal to a NaN result), as PyTorch's is."""
    x = _tensor(x)
    value = stop_gradient(_lower_median(reshape(x, (-1,)), 0, False, ignore_nan, name).values)
    if x.dtype.kind != "f":
        return value
    same = (x == value) | (isnan(x) & isnan(value))
    # value + mean of the (zero) differences: exactly the value, with the gradient spread over the ties
    return value + reduce.sum(where(same, x - value, 0.0)) / reduce.sum(astype(same, x.dtype))


def _median_method(x, dim: Optional[int] = None, keepdim: bool = False) -> Union[Tensor, ValuesIndices]:
    """PyTorch's ``x.median()``: the lower median of all elements (NaN if there is one); with ``dim``,
    ``(values, indices)`` of the lower median along ``dim``."""
    if dim is None:
        return _median_of_all(x, False, "median")
    return _lower_median(x, dim, keepdim, False, "median")


def _nanmedian_method(x, dim: Optional[int] = None, keepdim: bool = False) -> Union[Tensor, ValuesIndices]:
    """PyTorch's ``x.nanmedian()``: as ``median``, ignoring NaNs (NaN only where all are NaN)."""
    if dim is None:
        return _median_of_all(x, True, "nanmedian")
    return _lower_median(x, dim, keepdim, True, "nanmedian")


def median(x, axis: Optional[int] = None, keepdims: bool = False, *, dim: Optional[int] = None,
           keepdim: Optional[bool] = None) -> Tensor:
    """NumPy's ``np.median``: the middle value along ``axis`` (all elements when ``None``), the mean of
    the two middle values for an even count; NaN where a NaN is present. (The Tensor method and
    ``torch.median`` give PyTorch's lower median and indices.) Shapes: (3, 4), axis 1 -> (3,)."""
    return _quantile(x, 0.5, axis if dim is None else dim, keepdims if keepdim is None else keepdim,
                     "midpoint", False, "median")


def nanmedian(x, axis: Optional[int] = None, keepdims: bool = False, *, dim: Optional[int] = None,
              keepdim: Optional[bool] = None) -> Tensor:
    """NumPy's ``np.nanmedian``: ``median`` ignoring NaNs (NaN where every value is NaN)."""
    return _quantile(x, 0.5, axis if dim is None else dim, keepdims if keepdim is None else keepdim,
                     "midpoint", True, "nanmedian")


# ---- quantiles ------------------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_levels(name: str, q) -> tuple:
    """(levels as floats, whether ``q`` was a scalar)."""
    if isinstance(q, Tensor):
        if q._data is None:
            raise ShapeError(f"{name}: q must have a value when the graph is built (a constant, not a placeholder)")
        if q.ndim > 1:
            raise ShapeError(f"{name}: q must be a scalar or a 1-D tensor, got shape {q.shape}")
        scalar, levels = q.ndim == 0, q.tolist()
    elif isinstance(q, (int, float)):
        scalar, levels = True, q
    else:
        scalar, levels = False, [float(v) for v in q]
    levels = [levels] if scalar else list(levels)
    if any(not 0 <= v <= 1 for v in levels):
        raise ValueError(f"{name}: q values must be in [0, 1], got {levels}")
    return [float(v) for v in levels], scalar


def _quantile(x, q, axis: Optional[int], keepdims: bool, interpolation: str, ignore_nan: bool, name: str) -> Tensor:
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    levels, scalar = _quantile_levels(name, q)
    x = _tensor(x)
    if x.dtype.kind not in "f":
        if x.dtype.kind not in "biu":
            raise DTypeError(f"{name}: expects a real tensor, got {x.dtype}")
        x = astype(x, float_result(x.dtype))
    ndim = x.ndim
    if axis is None:
        x, ax = reshape(x, (-1,)), 0
    else:
        x, ax, _ = _vector_view(name, x, axis)
    if x.shape[ax] == 0:
        raise ShapeError(f"{name}: cannot take a quantile of an empty dimension")
    ranked = gather(x, ax, argsort(x, ax))  # NaN last
    nan = isnan(x)
    n = x.shape[ax] if x.shape[ax] is not None else reshape(count_like(x, ax), (1,) * x.ndim)
    if ignore_nan:  # rank among the numbers; a row of NaNs picks its first NaN (PyTorch's gradient goes there)
        count = astype(reduce.sum(logical_not(nan), ax, keepdims=True), x.dtype)
    results = []
    for level in levels:
        if ignore_nan:
            position = maximum(level * (count - 1), 0.0)
        else:  # a row with a NaN picks its last sorted element, a NaN (where PyTorch sends the gradient)
            has_nan = astype(reduce.any(nan, ax, keepdims=True), x.dtype)
            position = has_nan * ((1 - level) * (n - 1)) + level * (n - 1)
        out = _interpolate(ranked, ax, position, interpolation)
        if axis is None:
            out = reshape(out, (1,) * ndim if keepdims else ())
        elif not keepdims and ndim:
            out = squeeze(out, ax)
        elif ndim == 0:
            out = reshape(out, ())
        results.append(out)
    return results[0] if scalar else stack(results, 0)


def _interpolate(ranked: Tensor, ax: int, position, interpolation: str) -> Tensor:
    """The value at fractional ``position`` (a number or a tensor with ``ax`` of size 1) of the sorted
    ``ranked``, by the interpolation rule; the result keeps ``ax`` with size 1."""
    if isinstance(position, Tensor):
        low = astype(maximum(floor(position), 0), "int64")
        high = astype(maximum(-floor(-position), 0), "int64")
        nearest = astype(maximum(position.round(), 0), "int64")
        fraction = position - floor(position)

        def pick(i):
            return take_along_axis(ranked, i, ax)
    else:
        low, high, nearest = math.floor(position), math.ceil(position), round(position)  # round: half to even
        fraction = position - low

        def pick(i):
            return _along(ranked, ax, slice(i, i + 1))
    if interpolation == "lower":
        return pick(low)
    if interpolation == "higher":
        return pick(high)
    if interpolation == "nearest":
        return pick(nearest)
    below, above = pick(low), pick(high)
    if interpolation == "midpoint":
        return (below + above) * 0.5
    return below + (above - below) * fraction


def quantile(x, q, axis: Optional[int] = None, keepdims: bool = False, *, interpolation: str = "linear",
             method: Optional[str] = None, dim: Optional[int] = None, keepdim: Optional[bool] = None) -> Tensor:
    """The ``q``-quantiles of ``x`` along ``axis`` (all elements when ``None``): ``q`` a number in [0, 1]
    or a 1-D sequence / tensor of them (their dimension comes first in the result). ``interpolation``
    (NumPy: ``method``) between the two nearest ranks: ``'linear'``, ``'lower'``, ``'higher'``,
    ``'midpoint'`` or ``'nearest'`` (ties to the even rank). NaN where the reduced values hold a NaN.
    torch.quantile and np.quantile agree on these; ``dim``/``keepdim`` are accepted as aliases.
    Differentiable in ``x`` through the picked values. Shapes: (3, 4), q (2,), axis 1 -> (2, 3)."""
    return _quantile(x, q, axis if dim is None else dim, keepdims if keepdim is None else keepdim,
                     method or interpolation, False, "quantile")


def nanquantile(x, q, axis: Optional[int] = None, keepdims: bool = False, *, interpolation: str = "linear",
                method: Optional[str] = None, dim: Optional[int] = None, keepdim: Optional[bool] = None) -> Tensor:
    """``quantile`` ignoring NaNs (NaN where every reduced value is NaN)."""
    return _quantile(x, q, axis if dim is None else dim, keepdims if keepdim is None else keepdim,
                     method or interpolation, True, "nanquantile")


# ---- mode --------------------------------------------------------------------------------------------------------
class ModeIndices(Op):
    """int64 index of the most frequent value along ``axis`` (the smallest such value on ties; the last
    index holding it, as PyTorch); ``axis`` kept with size 1. No gradient."""

    props = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer(self, x):
        ax = normalize_axis(self.name, self.axis, len(x.shape))
        return TensorSpec(tuple(1 if i == ax else d for i, d in enumerate(x.shape)), "int64")

    def forward(self, xp, x):
        ax = normalize_axis(self.name, self.axis, x.ndim)
        moved = xp.moveaxis(x, ax, -1)
        n = moved.shape[-1]
        if n == 0:
            raise ShapeError(f"{self.name}: cannot take the mode of an empty dimension")
        rows = moved.reshape(-1, n)
        order = xp.argsort(rows, axis=1, kind="stable")
        ranked = xp.take_along_axis(rows, order, 1)
        position = xp.arange(n)
        starts = xp.ones(rows.shape, dtype=bool)
        starts[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        ends = xp.ones(rows.shape, dtype=bool)
        ends[:, :-1] = starts[:, 1:]
        run_start = xp.maximum.accumulate(xp.where(starts, position, 0), axis=1)
        run_end = xp.flip(xp.minimum.accumulate(xp.flip(xp.where(ends, position, n - 1), 1), axis=1), 1)
        longest = xp.argmax(run_end - run_start + 1, axis=1)[:, None]  # the first: the smallest value
        # a stable sort keeps equal values in index order: the run's last element has the last index
        last = xp.take_along_axis(order, xp.take_along_axis(run_end, longest, 1), 1)
        return xp.moveaxis(last.reshape(moved.shape[:-1] + (1,)), -1, ax).astype("int64")

    def backward(self, inputs, out, g):
        return (None,)


def mode(x, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the last index
    where it occurs: ``(values, indices)``. Values are differentiable. Shapes: (3, 5) -> (3,), (3,) int64."""
    x, ax, was_0d = _vector_view("mode", x, dim)
    indices = ModeIndices(ax).apply(x)
    values = gather(x, ax, indices)
    return ValuesIndices(_finish(values, ax, keepdim, was_0d), _finish(indices, ax, keepdim, was_0d))


# ---- running extrema and logcumsumexp --------------------------------------------------------------------------
class CumExtremumIndices(Op):
    """int64 indices of the running maximum (``largest``) or minimum along ``axis``: at each position
    the last index holding the extremum so far (a NaN is the extremum from where it appears, as in
    PyTorch). No gradient."""

    props = ("axis", "largest")

    def __init__(self, axis: int, largest: bool):
        self.axis = int(axis)
        self.largest = bool(largest)

    def infer(self, x):
        normalize_axis(self.name, self.axis, len(x.shape))
        return TensorSpec(x.shape, "int64")

    def forward(self, xp, x):
        ax = normalize_axis(self.name, self.axis, x.ndim)
        running = (xp.maximum if self.largest else xp.minimum).accumulate(x, axis=ax)  # NaN propagates
        # where x equals the running extremum it (re)starts the extremum's run: the last such index wins
        hits = x == running
        if x.dtype.kind in "fc":
            hits |= xp.isnan(x)
        shape = [1] * x.ndim
        shape[ax] = x.shape[ax]
        position = xp.arange(x.shape[ax]).reshape(shape)
        return xp.maximum.accumulate(xp.where(hits, position, 0), axis=ax).astype("int64")

    def backward(self, inputs, out, g):
        return (None,)


def _cum_extremum(x, dim: int, largest: bool, name: str) -> ValuesIndices:
    x, ax, was_0d = _vector_view(name, x, dim)
    indices = CumExtremumIndices(ax, largest).apply(x)
    values = gather(x, ax, indices)
    if was_0d:
        return ValuesIndices(reshape(values, ()), reshape(indices, ()))
    return ValuesIndices(values, indices)


def cummax(x, dim: int) -> ValuesIndices:
    """Running maximum along ``dim`` and, at each position, the last index holding it: ``(values,
    indices)``. The values' gradient goes to those indices. Shapes: (3, 4) -> (3, 4), (3, 4) int64."""
    return _cum_extremum(x, dim, True, "cummax")


def cummin(x, dim: int) -> ValuesIndices:
    """Running minimum along ``dim`` and the last index holding it: ``(values, indices)``."""
    return _cum_extremum(x, dim, False, "cummin")


class LogCumSumExp(Op):
    """``out[i] = log(sum_{j <= i} exp(x[j]))`` along ``axis``, accumulated pairwise with ``logaddexp``
    (no overflow or underflow). Gradient ``gx[j] = sum_{i >= j} g[i] exp(x[j] - out[i])``: every term is
    at most ``|g[i]|``; it is summed as two reversed logcumsumexps, of the positive and the negative part
    of ``g``, so it stays finite for any range of ``x`` (and is differentiable again). ``-inf`` inputs
    are allowed forward; the gradient assumes finite ones."""

    props = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer(self, x):
        normalize_axis(self.name, self.axis, len(x.shape))
        if x.dtype.kind != "f":
            raise DTypeError(f"{self.name}: expects a floating-point tensor, got {x.dtype}")
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return xp.logaddexp.accumulate(x, axis=normalize_axis(self.name, self.axis, x.ndim))

    def backward(self, inputs, out, g):
        x, ax = inputs[0], self.axis

        def log_part(v):
            # log(v) where v > 0; elsewhere a finite stand-in for -inf whose terms exp(x - out - 1e4) are 0
            # (x <= out), finite so that differentiating this gradient again gives no inf - inf
            positive = v > 0
            return where(positive, log(where(positive, v, 1.0)), -1e4)

        def reversed_lcse(v):
            return LogCumSumExp(ax).apply(v.flip(ax)).flip(ax)

        up = reversed_lcse(log_part(g) - out)
        down = reversed_lcse(log_part(-g) - out)
        return (exp(x + up) - exp(x + down),)


def logcumsumexp(x, dim: int) -> Tensor:
    """``log(cumsum(exp(x), dim))`` computed without overflow; integers give the default float dtype.
    Shapes: (3, 4) -> (3, 4)."""
    x, ax, was_0d = _vector_view("logcumsumexp", x, dim)
    if x.dtype.kind != "f":
        x = astype(x, float_result(x.dtype))
    out = LogCumSumExp(ax).apply(x)
    return reshape(out, ()) if was_0d else out


#: PyTorch-named Tensor methods whose meaning differs from the gg function of the same name.
TORCH_METHODS = {"sort": _sort_method, "median": _median_method, "nanmedian": _nanmedian_method}
