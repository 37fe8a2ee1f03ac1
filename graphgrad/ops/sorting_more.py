"""Searching, counting and deduplicating: searchsorted, bucketize, histc, histogram, bincount, unique,
unique_consecutive. Every output here is an index, a count or a histogram: none is differentiable
(``unique``'s values are picked with ``take`` and keep their gradient).

Data-dependent sizes: ``bincount``, ``unique`` and ``unique_consecutive`` have output lengths known only
when they run. They work eagerly and in ``gg.Session`` graphs (the length is ``None`` in the static
shape); ``unique`` is composed of a stable sort and boolean-mask selections.

Naming: ``gg.unique`` follows ``np.unique`` (``return_index``, ``return_inverse``, ``return_counts``,
``axis``; NaNs count as one value); ``x.unique()`` and ``torch.unique`` follow PyTorch (``sorted``,
``return_inverse``, ``return_counts``, ``dim``; every NaN is its own value; the result is always
sorted). ``gg.histogram`` follows ``np.histogram`` (integer counts, or float with ``weights`` or
``density``); ``x.histogram()`` / ``torch.histogram`` return PyTorch's float ``(hist, bin_edges)``.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops import reduce
from graphgrad.ops.array import ones_like, reshape_like, stop_gradient
from graphgrad.ops.elementwise import astype
from graphgrad.ops.indexing import argsort
from graphgrad.ops.shape import concatenate, reshape, take, take_along_axis
from graphgrad.ops.unary import isnan


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# ---- searchsorted and bucketize --------------------------------------------------------------------------------
class SearchSorted(Op):
    """For each of ``values``, the index where it would be inserted in ``sorted_sequence`` (along its last
    dimension) to keep it sorted: before equal entries, or after them with ``right``. A 1-D sequence
    serves every value; an N-D one is a batch of sequences matching ``values``' leading dimensions."""

    props = ("right", "out_int32")

    def __init__(self, right: bool = False, out_int32: bool = False):
        self.right = bool(right)
        self.out_int32 = bool(out_int32)

    def infer(self, sequence, values):
        if len(sequence.shape) == 0:
            raise ShapeError(f"{self.name}: the sorted sequence must have at least one dimension")
        if len(sequence.shape) > 1:
            lead, want = tuple(sequence.shape[:-1]), tuple(values.shape[:-1])
            if len(lead) != len(want) or any(a is not None and b is not None and a != b for a, b in zip(lead, want)):
                raise ShapeError(f"{self.name}: the leading dimensions of the sorted sequence {sequence.shape} and "
                                 f"of the values {values.shape} must be the same")
        return TensorSpec(values.shape, "int32" if self.out_int32 else "int64")

    def forward(self, xp, sequence, values):
        side = "right" if self.right else "left"
        dtype = "int32" if self.out_int32 else "int64"
        if sequence.ndim == 1:
            return xp.asarray(xp.searchsorted(sequence, values, side=side)).astype(dtype)
        rows = sequence.reshape(-1, sequence.shape[-1])
        queries = values.reshape(rows.shape[0], -1)
        out = xp.zeros(queries.shape, dtype)
        for i in range(rows.shape[0]):
            out[i] = xp.searchsorted(rows[i], queries[i], side=side)
        return out.reshape(values.shape)

    def backward(self, inputs, out, g):
        return (None, None)


def searchsorted(sorted_sequence, values, *, out_int32: bool = False, right: bool = False,
                 side: Optional[str] = None, sorter=None) -> Tensor:
    """Insertion indices of ``values`` in ``sorted_sequence`` (torch.searchsorted; np.searchsorted's
    argument order): the first position whose entry is >= the value (``right=True`` or
    ``side='right'``: > the value). ``sorter``: indices that sort an unsorted sequence. A 1-D sequence
    serves any ``values`` shape; an N-D sequence is a batch whose leading dimensions ``values`` shares.
    Shapes: (5,), (2, 3) -> (2, 3) int64; (2, 5), (2, 3) -> (2, 3)."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted: side='left' contradicts right=True")
        right = side == "right"
    sequence = _tensor(sorted_sequence)
    if sorter is not None:
        sequence = take_along_axis(sequence, _tensor(sorter), -1)
    return SearchSorted(right, out_int32).apply(sequence, values if isinstance(values, Tensor) else Tensor(values))


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries`` (torch.bucketize):
    ``i`` with ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x <
    boundaries[i]``). Shapes: (...), (B,) -> (...) int64."""
    boundaries = _tensor(boundaries)
    if boundaries.ndim != 1:
        raise ShapeError(f"bucketize: boundaries must be 1-D, got shape {boundaries.shape}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---- histograms and counts ------------------------------------------------------------------------------------
class Histc(Op):
    """Counts of ``x``'s elements in ``bins`` equal-width bins over ``[min, max]`` (both 0: the data's
    range; a single value v: ``[v - 1, v + 1]``), as floats of ``x``'s dtype (torch.histc). Elements
    outside the range are ignored; ``max`` falls in the last bin. No gradient."""

    props = ("bins", "min", "max")

    def __init__(self, bins: int = 100, min: float = 0.0, max: float = 0.0):
        if int(bins) <= 0:
            raise ValueError(f"histc: bins must be positive, got {bins}")
        if max < min:
            raise ValueError(f"histc: max ({max}) must be at least min ({min})")
        self.bins, self.min, self.max = int(bins), float(min), float(max)

    def infer(self, x):
        if x.dtype.kind != "f":
            raise DTypeError(f"{self.name}: expects a floating-point tensor, got {x.dtype}")
        return TensorSpec((self.bins,), x.dtype)

    def forward(self, xp, x):
        lo, hi = self.min, self.max
        if lo == hi and x.size:
            lo, hi = float(xp.min(x)), float(xp.max(x))
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        flat = x.reshape(-1)
        flat = flat[(flat >= lo) & (flat <= hi)]
        index = ((flat - lo) * (self.bins / (hi - lo))).astype("int64")
        index = xp.minimum(index, self.bins - 1)  # x == max counts in the last bin
        return xp.bincount(index, minlength=self.bins).astype(x.dtype)

    def backward(self, inputs, out, g):
        return (None,)


def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """torch.histc: a histogram of ``input`` in ``bins`` equal bins over ``[min, max]`` (``min = max = 0``:
    the data's range). Shapes: (...) -> (bins,), ``input``'s float dtype."""
    return Histc(bins, min, max).apply(input)


class HistogramCounts(Op):
    """How many elements of ``x`` (or how much ``weight``) fall in each bin between consecutive sorted
    ``edges``: bins are half-open ``[e_i, e_{i+1})``, the last one closed; elements outside are ignored.
    With ``density`` the counts are divided by their total times the bin widths. No gradient."""

    props = ("density", "dtype")

    def __init__(self, density: bool = False, dtype="float32"):
        self.density = bool(density)
        self.dtype = np.dtype(dtype)

    def infer(self, x, edges, weight=None):
        if len(edges.shape) != 1:
            raise ShapeError(f"{self.name}: bin edges must be 1-D, got shape {edges.shape}")
        n = edges.shape[0]
        return TensorSpec((None if n is None else n - 1,), self.dtype)

    def forward(self, xp, x, edges, weight=None):
        flat = x.reshape(-1)
        bins = edges.shape[0] - 1
        inside = (flat >= edges[0]) & (flat <= edges[-1])
        index = xp.minimum(xp.searchsorted(edges, flat[inside], side="right") - 1, bins - 1)
        w = None if weight is None else weight.reshape(-1)[inside]
        counts = xp.bincount(index, weights=w, minlength=bins)[:bins]
        if self.density:
            counts = counts / (counts.sum() * xp.diff(edges))
        return counts.astype(self.dtype)

    def backward(self, inputs, out, g):
        return tuple(None for _ in inputs)


def _histogram_edges(x: Tensor, bins, range_) -> Tensor:
    """The bin edges: ``bins`` given as edges, or ``bins + 1`` equal steps over ``range_`` / the data's
    range (a single value v: ``[v - 0.5, v + 0.5]``, as NumPy and PyTorch)."""
    if not isinstance(bins, int):
        return stop_gradient(astype(_tensor(bins), x.dtype))
    if bins <= 0:
        raise ValueError(f"histogram: bins must be positive, got {bins}")
    if range_ is not None:
        lo, hi = (float(v) for v in range_)
        if hi < lo:
            raise ValueError(f"histogram: range max ({hi}) must be at least min ({lo})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return stop_gradient(Tensor(np.linspace(lo, hi, bins + 1), dtype=x.dtype))  # a graph node in a graph
    if x._data is None:
        raise ShapeError("histogram: without range=, the bins depend on the data: give range= (or the edges) "
                         "in a graph")
    data = x.numpy()
    lo, hi = (float(data.min()), float(data.max())) if data.size else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return stop_gradient(Tensor(np.linspace(lo, hi, bins + 1), dtype=x.dtype))


def histogram(x, bins=10, range: Optional[Sequence[float]] = None, density: bool = False, weights=None, *,
              weight=None) -> tuple:
    """NumPy's ``np.histogram``: ``(hist, bin_edges)`` of ``x`` (flattened) with ``bins`` equal bins over
    ``range`` (default: the data's range) or the given edges. ``hist`` is int64 counts, or floats of
    ``x``'s dtype with ``weights`` or ``density``. (``x.histogram()`` / ``torch.histogram`` give float
    counts.) Shapes: (...), bins B -> (B,), (B + 1,)."""
    x = _tensor(x)
    if x.dtype.kind != "f":
        x = astype(x, "float64")
    weights = weights if weight is None else weight
    edges = _histogram_edges(x, bins, range)
    dtype = x.dtype if (weights is not None or density) else np.dtype("int64")
    inputs = (x, edges) if weights is None else (x, edges, _tensor(weights))
    return HistogramCounts(density, dtype).apply(*inputs), edges


#: The result of ``x.histogram()`` / ``torch.histogram``: PyTorch's ``torch.return_types.histogram``.
_HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])


def _histogram_method(x, bins=100, *, range: Optional[Sequence[float]] = None, weight=None,
                      density: bool = False) -> tuple:
    """PyTorch's ``x.histogram(bins, *, range, weight, density)``: float ``(hist, bin_edges)``."""
    x = _tensor(x)
    if x.dtype.kind != "f":
        raise DTypeError(f"histogram: expects a floating-point tensor, got {x.dtype}")
    edges = _histogram_edges(x, bins, range)
    inputs = (x, edges) if weight is None else (x, edges, _tensor(weight))
    return _HistogramResult(HistogramCounts(density, x.dtype).apply(*inputs), edges)


class Bincount(Op):
    """How often each non-negative integer occurs in the 1-D ``x`` (or the sum of its ``weights``): length
    ``max(x) + 1`` or ``minlength``, whichever is larger (known only when it runs). int64 counts, or the
    weights' float dtype (float64 for integer weights). No gradient."""

    props = ("minlength",)

    def __init__(self, minlength: int = 0):
        self.minlength = int(minlength)

    def infer(self, x, weights=None):
        if len(x.shape) != 1 or x.dtype.kind not in "iub":
            raise DTypeError(f"{self.name}: expects a 1-D tensor of non-negative integers, got {x.dtype} {x.shape}")
        if weights is None:
            dtype = np.dtype("int64")
        else:
            dtype = weights.dtype if weights.dtype.kind == "f" else np.dtype("float64")
        return TensorSpec((None,), dtype)

    def forward(self, xp, x, weights=None):
        if x.size and int(x.min()) < 0:
            raise ValueError(f"{self.name}: the input must be non-negative, got {int(x.min())}")
        out = xp.bincount(x, weights=weights, minlength=self.minlength)
        if weights is None:
            return out.astype("int64")
        return out.astype(weights.dtype if weights.dtype.kind == "f" else "float64")

    def backward(self, inputs, out, g):
        return tuple(None for _ in inputs)


def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """Counts of each value of the 1-D non-negative integer ``input`` (torch.bincount and np.bincount
    agree), or sums of ``weights``. Shapes: (n,) -> (max(input) + 1,) or (minlength,)."""
    inputs = (_tensor(input),) if weights is None else (_tensor(input), _tensor(weights))
    return Bincount(minlength).apply(*inputs)


# ---- unique ---------------------------------------------------------------------------------------------------
class SliceKeys(Op):
    """int64 keys of the slices of ``x`` along ``axis``: equal slices get equal keys and keys increase
    with the slices' lexicographic order (so ``unique`` over keys is ``unique`` over slices). No gradient."""

    props = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer(self, x):
        ax = normalize_axis(self.name, self.axis, len(x.shape))
        return TensorSpec((x.shape[ax],), "int64")

    def forward(self, xp, x):
        ax = normalize_axis(self.name, self.axis, x.ndim)
        rows = xp.moveaxis(x, ax, 0).reshape(x.shape[ax], -1)
        if rows.shape[0] == 0:
            return xp.zeros(0, "int64")
        order = xp.lexsort(rows.T[::-1]) if rows.shape[1] else xp.arange(rows.shape[0])
        ranked = rows[order]
        new = xp.any(ranked[1:] != ranked[:-1], axis=1)
        keys = xp.zeros(rows.shape[0], "int64")
        keys[order] = xp.concatenate([xp.zeros(1, "int64"), xp.cumsum(new)])
        return keys

    def backward(self, inputs, out, g):
        return (None,)


def _differs(a: Tensor, b: Tensor, equal_nan: bool) -> Tensor:
    """Elementwise ``a != b``; with ``equal_nan`` NaNs equal each other."""
    if not equal_nan or a.dtype.kind != "f":
        return a != b
    return (a != b) & ~(isnan(a) & isnan(b))


def _runs(values: Tensor, equal_nan: bool) -> tuple:
    """(starts, ends, positions) of the runs of equal neighbours in the 1-D ``values`` (its length may be
    known only at run time): bool masks of each run's first and last element, and int64 positions."""
    positions = reduce.cumsum(ones_like(values, dtype="int64"), 0) - 1  # arange(n) without knowing n
    last = reduce.sum(ones_like(values, dtype="int64")) - 1
    # shifting by one with a repeated end element keeps the length right, even for n = 0
    previous = concatenate([values[:1], values[:-1]], 0)
    following = concatenate([values[1:], values[-1:]], 0)
    starts = (positions == 0) | _differs(values, previous, equal_nan)
    ends = (positions == last) | _differs(values, following, equal_nan)
    return starts, ends, positions


def _unique_1d(values: Tensor, in_sorted_order: bool = True, equal_nan: bool = True) -> tuple:
    """(indices, inverse_indices, counts) of a 1-D tensor ``values`` (length n, possibly known only at run
    time): ``indices`` (k,) the first position of each of the k unique values, in sorted order or, if not
    ``in_sorted_order``, in order of first occurrence; ``inverse_indices`` (n,) the unique value of every
    element; ``counts`` (k,). All int64."""
    order = argsort(values, 0)  # stable: equal values keep their positions' order
    starts, ends, positions = _runs(take(values, order, 0), equal_nan)
    first = order[starts]  # stable sort: the first of a run is its value's first occurrence
    counts = positions[ends] - positions[starts] + 1
    group = reduce.cumsum(astype(starts, "int64"), 0) - 1  # the unique value of each ranked element
    inverse = take(group, argsort(order, 0), 0)  # argsort of a permutation inverts it
    if in_sorted_order:
        return first, inverse, counts
    by_occurrence = argsort(first, 0)
    new_place = argsort(by_occurrence, 0)
    return take(first, by_occurrence, 0), take(new_place, inverse, 0), take(counts, by_occurrence, 0)


def _unique(x, axis: Optional[int], equal_nan: bool) -> tuple:
    """(values, first indices, inverse, counts) of the elements of ``x`` (``axis`` None; the inverse has
    ``x``'s shape) or of its slices along ``axis``."""
    x = _tensor(x)
    if axis is None:
        flat = reshape(x, (-1,))
        first, inverse, counts = _unique_1d(flat, True, equal_nan)
        return take(flat, first, 0), first, reshape_like(inverse, x) if x.ndim != 1 else inverse, counts
    ax = normalize_axis("unique", axis, x.ndim)
    first, inverse, counts = _unique_1d(SliceKeys(ax).apply(x), True, True)
    return take(x, first, ax), first, inverse, counts


def unique(x, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Optional[int] = None, *, equal_nan: bool = True) -> Union[Tensor, tuple]:
    """NumPy's ``np.unique``: the sorted unique elements of ``x`` (flattened), or its unique slices along
    ``axis``; with the ``return_*`` flags a tuple ``(values, index, inverse, counts)`` of those asked for
    (``index``: first occurrences; ``inverse``: ``x``'s shape for ``axis=None``; int64). NaNs count as
    one value unless ``equal_nan=False``. (``x.unique()`` / ``torch.unique`` follow PyTorch.) Output
    lengths are known only when it runs. Shapes: (n,) -> (k,) [, (k,), (n,), (k,)]."""
    values, first, inverse, counts = _unique(x, axis, equal_nan)
    picked = [values] + [t for flag, t in ((return_index, first), (return_inverse, inverse),
                                            (return_counts, counts)) if flag]
    return values if len(picked) == 1 else tuple(picked)


def _unique_method(x, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
                   dim: Optional[int] = None) -> Union[Tensor, tuple]:
    """PyTorch's ``x.unique(sorted=True, return_inverse=False, return_counts=False, dim=None)``: the sorted
    unique values (every NaN distinct), with the inverse indices and counts when asked. The values carry
    no gradient, as in PyTorch."""
    values, _, inverse, counts = _unique(x, dim, False)
    picked = [stop_gradient(values)] + [t for flag, t in ((return_inverse, inverse), (return_counts, counts)) if flag]
    return picked[0] if len(picked) == 1 else tuple(picked)


def unique_consecutive(x, return_inverse: bool = False, return_counts: bool = False,
                       dim: Optional[int] = None) -> Union[Tensor, tuple]:
    """torch.unique_consecutive: ``x`` (flattened, or its slices along ``dim``) with each run of equal
    consecutive elements kept once; with ``return_inverse`` the run of every element, with
    ``return_counts`` each run's length (int64). Shapes: (n,) -> (k,) [, (n,), (k,)]."""
    x = _tensor(x)
    if dim is None:
        flat = reshape(x, (-1,))
        starts, ends, positions = _runs(flat, False)
        values = flat[starts]
    else:
        ax = normalize_axis("unique_consecutive", dim, x.ndim)
        starts, ends, positions = _runs(SliceKeys(ax).apply(x), True)
        values = take(x, positions[starts], ax)  # (a 1-D mask, then a gather: both have ONNX forms)
    out = [stop_gradient(values)]
    if return_inverse:
        inverse = reduce.cumsum(astype(starts, "int64"), 0) - 1
        out.append(reshape_like(inverse, x) if dim is None and x.ndim != 1 else inverse)
    if return_counts:
        out.append(positions[ends] - positions[starts] + 1)
    return out[0] if len(out) == 1 else tuple(out)


#: PyTorch-named Tensor methods whose meaning differs from the gg function of the same name.
TORCH_METHODS = {"unique": _unique_method, "histogram": _histogram_method}
