"""ONNX export converters of sorting, scans, searching and counting (graphgrad/ops/sorting*.py).

Sorting goes through ``argsort`` as a ``TopK`` over the whole axis; running extrema and logcumsumexp
are log-depth (Hillis-Steele) scans of ``Max``/``Min``/stable ``logaddexp`` steps; searchsorted and the
histograms compare every element with every entry (or bin), so their memory grows as the product.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.spec import normalize_axis
from graphgrad.io.onnx.export import OnnxExportError, exports
from graphgrad.io.onnx.export_ops import _rank, _reduce


@exports(G.Argsort)
def _argsort(ctx, node):
    # TopK over the whole axis: ONNX puts equal values in index order, as graphgrad's stable sort does
    x = node.inputs[0]
    axis = normalize_axis(node.op.name, node.op.axis, _rank(x))
    size = x.shape[axis]
    k = ctx.ints([size]) if size is not None else \
        ctx.add("Gather", [ctx.add("Shape", [ctx.value(x)]), ctx.ints([axis])], axis=0)
    _, indices = ctx.add("TopK", [ctx.value(x), k], n_outputs=2, axis=axis, largest=int(node.op.descending), sorted=1)
    return indices


@exports(G.SearchSorted)
def _searchsorted(ctx, node):
    # in a sorted row the insertion index is the count of entries below the value (at most it, with
    # right=True): compare every value with its row, (..., m, 1) against (..., 1, n), and sum (NaN
    # values count no entry, where NumPy would place them after every number)
    sequence, values = node.inputs
    dtype = np.result_type(sequence.dtype, values.dtype)
    rows = ctx.add("Unsqueeze", [ctx.value(sequence, dtype), ctx.ints([-2])])
    queries = ctx.add("Unsqueeze", [ctx.value(values, dtype), ctx.ints([-1])])
    below = ctx.add("LessOrEqual" if node.op.right else "Less", [rows, queries])
    counts = _reduce(ctx, "ReduceSum", ctx.add("Cast", [below], to=np.dtype(np.int64)), (-1,), False)
    return counts if node.out.dtype == np.int64 else ctx.add("Cast", [counts], to=np.dtype(np.int32))


def _shifted(ctx, y: str, rank: int, axis: int, size: int, shift: int, fill: str) -> str:
    """``y`` moved ``shift`` places forward along ``axis`` (of static ``size``), ``fill`` coming in."""
    kept = ctx.add("Slice", [y, ctx.ints([0]), ctx.ints([size - shift]), ctx.ints([axis])])
    pads = [0] * (2 * rank)
    pads[axis] = shift
    return ctx.add("Pad", [kept, ctx.ints(pads), fill])


def _scan(ctx, y: str, rank: int, axis: int, size: int, fill: str, combine) -> str:
    """An inclusive scan along ``axis`` in log2(size) steps (Hillis-Steele): ``y = combine(y, y shifted
    by 2^k)``, for an associative ``combine`` whose identity is ``fill``."""
    shift = 1
    while shift < size:
        y = combine(y, _shifted(ctx, y, rank, axis, size, shift, fill))
        shift *= 2
    return y


def _bin_counts(ctx, index: str, inside: str, bins: int, dtype, weight=None) -> str:
    """(bins,) sums over the flat elements whose bin is ``index`` and that lie ``inside``: a one-hot
    (elements, bins) comparison summed over the elements (memory grows as elements times bins)."""
    onehot = ctx.add("Equal", [ctx.add("Unsqueeze", [index, ctx.ints([-1])]), ctx.const(np.arange(bins, dtype=np.int64))])
    onehot = ctx.cast(ctx.add("And", [onehot, ctx.add("Unsqueeze", [inside, ctx.ints([-1])])]), np.bool_, dtype)
    if weight is not None:
        onehot = ctx.add("Mul", [onehot, ctx.add("Unsqueeze", [weight, ctx.ints([-1])])])
    return _reduce(ctx, "ReduceSum", onehot, (0,), False)


@exports(G.Histc)
def _histc(ctx, node):
    op, dtype = node.op, node.out.dtype
    flat = ctx.add("Reshape", [ctx.value(node.inputs[0]), ctx.ints([-1])])
    if op.min == op.max:  # the data's range, widened by 1 on each side when it is a single value
        lo, hi = (_reduce(ctx, r, flat, (0,), False) for r in ("ReduceMin", "ReduceMax"))
        same = ctx.add("Equal", [lo, hi])
        one = ctx.const(1, dtype)
        lo = ctx.add("Where", [same, ctx.add("Sub", [lo, one]), lo])
        hi = ctx.add("Where", [same, ctx.add("Add", [hi, one]), hi])
        scale = ctx.add("Div", [ctx.const(op.bins, dtype), ctx.add("Sub", [hi, lo])])
    else:
        lo, hi = ctx.const(op.min, dtype), ctx.const(op.max, dtype)
        scale = ctx.const(op.bins / (op.max - op.min), dtype)
    position = ctx.add("Floor", [ctx.add("Mul", [ctx.add("Sub", [flat, lo]), scale])])
    index = ctx.add("Min", [ctx.cast(position, dtype, np.int64), ctx.const(op.bins - 1, np.int64)])  # max: last bin
    inside = ctx.add("And", [ctx.add("GreaterOrEqual", [flat, lo]), ctx.add("LessOrEqual", [flat, hi])])
    return _bin_counts(ctx, index, inside, op.bins, dtype)


@exports(G.HistogramCounts)
def _histogram_counts(ctx, node):
    x, edges_t = node.inputs[:2]
    bins = node.out.shape[0]
    if bins is None:
        raise OnnxExportError("histogram: the number of bin edges must be known to export")
    dtype = x.dtype
    flat = ctx.add("Reshape", [ctx.value(x), ctx.ints([-1])])
    edges = ctx.value(edges_t, dtype)
    # the bin of v: how many edges are <= v, less one (the last edge closes the last bin)
    at_most = ctx.add("LessOrEqual", [ctx.add("Unsqueeze", [edges, ctx.ints([0])]), ctx.add("Unsqueeze", [flat, ctx.ints([-1])])])
    index = ctx.add("Sub", [_reduce(ctx, "ReduceSum", ctx.cast(at_most, np.bool_, np.int64), (1,), False), ctx.const(1, np.int64)])
    index = ctx.add("Min", [index, ctx.const(bins - 1, np.int64)])
    first = ctx.add("Gather", [edges, ctx.const(0, np.int64)])
    last = ctx.add("Gather", [edges, ctx.const(bins, np.int64)])
    inside = ctx.add("And", [ctx.add("GreaterOrEqual", [flat, first]), ctx.add("LessOrEqual", [flat, last])])
    weight = None
    if len(node.inputs) == 3:
        weight = ctx.add("Reshape", [ctx.value(node.inputs[2], dtype), ctx.ints([-1])])
    counts = _bin_counts(ctx, index, inside, bins, dtype, weight)
    if node.op.density:
        widths = ctx.add("Sub", [ctx.add("Slice", [edges, ctx.ints([1]), ctx.ints([bins + 1])]),
                                 ctx.add("Slice", [edges, ctx.ints([0]), ctx.ints([bins])])])
        total = _reduce(ctx, "ReduceSum", counts, (0,), False)
        counts = ctx.add("Div", [counts, ctx.add("Mul", [total, widths])])
    return ctx.cast(counts, dtype, node.out.dtype)


@exports(G.SliceKeys)
def _slice_keys(ctx, node):
    # ONNX's sorted Unique over the slices (as rows): its inverse indices are keys in lexicographic order
    x = node.inputs[0]
    rank = _rank(x)
    axis = normalize_axis(node.op.name, node.op.axis, rank)
    perm = [axis] + [d for d in range(rank) if d != axis]
    rows = ctx.add("Reshape", [ctx.add("Transpose", [ctx.value(x)], perm=perm), ctx.ints([0, -1])])
    return ctx.add("Unique", [rows], n_outputs=4, axis=0, sorted=1)[2]


@exports(G.CumExtremumIndices)
def _cum_extremum_indices(ctx, node):
    # the running extremum as a scan of Max/Min (NaN propagates, as in graphgrad); then, where x equals
    # it, its position; the running maximum of those positions is the last index holding the extremum
    x = node.inputs[0]
    rank = _rank(x)
    axis = normalize_axis(node.op.name, node.op.axis, rank)
    size = x.shape[axis]
    if size is None:
        raise OnnxExportError(f"{node.op.name}: the scanned dimension must be known to export (shape {x.shape})")
    dtype = x.dtype
    op_type = "Max" if node.op.largest else "Min"
    if dtype.kind == "f":
        fill = -np.inf if node.op.largest else np.inf
    else:
        fill = np.iinfo(dtype).min if node.op.largest else np.iinfo(dtype).max
    v = ctx.value(x)
    running = _scan(ctx, v, rank, axis, size, ctx.const(fill, dtype), lambda a, b: ctx.add(op_type, [a, b]))
    hits = ctx.add("Equal", [v, running])
    if dtype.kind == "f":
        hits = ctx.add("Or", [hits, ctx.add("IsNaN", [v])])
    shape = [1] * rank
    shape[axis] = size
    positions = ctx.const(np.arange(size, dtype=np.int64).reshape(shape))
    zero = ctx.const(0, np.int64)
    marked = ctx.add("Where", [hits, positions, zero])
    return _scan(ctx, marked, rank, axis, size, zero, lambda a, b: ctx.add("Max", [a, b]))


@exports(G.LogCumSumExp)
def _logcumsumexp(ctx, node):
    """A log-depth scan of logaddexp: each step is max(a, b) + log(1 + exp(-|a - b|)), so no value
    overflows or underflows, however wide the range of ``x``."""
    x = node.inputs[0]
    dtype = node.out.dtype
    rank = _rank(x)
    axis = normalize_axis(node.op.name, node.op.axis, rank)
    size = x.shape[axis]
    y = ctx.value(x)
    if size is None:  # the length is known only at run time: exp(x - max) accumulated by CumSum
        top = _reduce(ctx, "ReduceMax", y, (axis,), True)  # exact unless a prefix lies ~87 (float32) below it
        total = ctx.add("CumSum", [ctx.add("Exp", [ctx.add("Sub", [y, top])]), ctx.const(axis, np.int64)])
        return ctx.add("Add", [ctx.add("Log", [total]), top])
    one = ctx.const(1, dtype)

    def logaddexp(a, b):
        top = ctx.add("Max", [a, b])
        gap = ctx.add("Abs", [ctx.add("Sub", [a, b])])
        combined = ctx.add("Add", [top, ctx.add("Log", [ctx.add("Add", [one, ctx.add("Exp", [ctx.add("Neg", [gap])])])])])
        # two -inf give -inf (their difference would be NaN)
        return ctx.add("Where", [ctx.add("IsInf", [top], detect_positive=0), top, combined])

    return ctx.add("Identity", [_scan(ctx, y, rank, axis, size, ctx.const(-np.inf, dtype), logaddexp)])
