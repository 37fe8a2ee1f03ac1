"""Op-table rows for sorting, order statistics, running extrema, quantiles, searching, counting and
deduplication (graphgrad/ops/sorting.py, graphgrad/ops/sorting_more.py).

Random float inputs have no ties, so the stable NumPy references pin the indices too; rows with ties
use integers (no gradient). Data-dependent output lengths (unique, bincount) skip the shape-rule check
(their static length is ``None``) but still run in graph mode."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, F, I, OpSpec

S = (3, 6)
S3 = (2, 3, 5)
NAN = np.nan


def _sort_ref(x, axis=-1, descending=False):
    order = np.argsort(-x if descending else x, axis, kind="stable")  # equal values keep their order
    return np.take_along_axis(x, order, axis), order


def _topk_ref(x, k, axis=-1, largest=True):
    values, order = _sort_ref(x, axis, largest)
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, k)
    return values[tuple(index)], order[tuple(index)]


def _kth_ref(x, k, axis=-1):
    values, order = _sort_ref(x, axis)
    return np.take(values, k - 1, axis), np.take(order, k - 1, axis)


def _lower_median_ref(x, axis):
    return _kth_ref(x, (x.shape[axis] + 1) // 2, axis)


def _mode_ref(x, axis=-1):
    moved = np.moveaxis(x, axis, -1)
    values, indices = [], []
    for row in moved.reshape(-1, moved.shape[-1]):
        uniq, counts = np.unique(row, return_counts=True)
        best = uniq[np.argmax(counts)]
        values.append(best)
        indices.append(np.nonzero(row == best)[0][-1])
    shape = moved.shape[:-1]
    return np.array(values).reshape(shape), np.array(indices).reshape(shape)


def _cum_ref(x, axis, largest):
    moved = np.moveaxis(x, axis, -1)
    values, indices = np.empty_like(moved), np.zeros(moved.shape, np.int64)
    for i in np.ndindex(moved.shape[:-1]):
        best = 0
        for j in range(moved.shape[-1]):
            v = moved[i][j]
            if np.isnan(v) or (not np.isnan(moved[i][best]) and (v >= moved[i][best] if largest else v <= moved[i][best])):
                best = j
            values[i + (j,)], indices[i + (j,)] = moved[i][best], best
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


def _histc_ref(x, bins, lo=0.0, hi=0.0):
    if lo == hi:
        lo, hi = x.min(), x.max()
    return np.histogram(x, bins, range=(lo, hi))[0].astype(x.dtype)


def _unique_consecutive_ref(x):
    flat = x.reshape(-1)
    starts = np.concatenate([[True], flat[1:] != flat[:-1]])
    inverse = np.cumsum(starts) - 1
    return flat[starts], inverse.reshape(x.shape), np.bincount(inverse)


TIES = A([[2, 1, 2, 1, 0, 0], [5, 5, 4, 4, 4, 1], [0, 1, 2, 3, 3, 3]])
WITH_NAN = A([[1.0, NAN, 3.0, 0.5, 2.0], [2.0, 1.0, -1.0, 4.0, 0.0], [NAN, 1.0, NAN, 2.0, 5.0]])

ROWS = [
    # sort and friends: values are differentiable (the gradient goes back through the permutation)
    OpSpec("sort", gg.sort, lambda x: np.sort(x, -1), [F(S3)]),
    OpSpec("sort[method,dim0,descending]", lambda x: x.sort(0, descending=True), lambda x: _sort_ref(x, 0, True),
           [F(S3)], batch=False),  # sorts along the first dimension
    OpSpec("sort[ties]", lambda x: x.sort(dim=1, descending=True), lambda x: _sort_ref(x, 1, True), [TIES], grad=False),
    OpSpec("msort", gg.msort, lambda x: np.sort(x, 0), [F((5, 3))], batch=False),
    OpSpec("topk", lambda x: gg.topk(x, 2), lambda x: _topk_ref(x, 2), [F(S3)]),
    OpSpec("topk[smallest,dim1]", lambda x: x.topk(2, 1, largest=False), lambda x: _topk_ref(x, 2, 1, False), [F(S3)]),
    OpSpec("kthvalue", lambda x: gg.kthvalue(x, 3), lambda x: _kth_ref(x, 3), [F(S3)]),
    OpSpec("kthvalue[keepdim]", lambda x: x.kthvalue(2, -2, keepdim=True),
           lambda x: tuple(np.expand_dims(v, -2) for v in _kth_ref(x, 2, -2)), [F(S3)]),
    # medians: gg.median is NumPy's; the method is PyTorch's lower median (with indices along a dim)
    OpSpec("median", lambda x: gg.median(x, 1), lambda x: np.median(x, 1), [F(S)]),
    OpSpec("median[all]", gg.median, np.median, [F(S)]),
    OpSpec("median[keepdims,nan]", lambda x: gg.median(x, -1, keepdims=True), lambda x: np.median(x, -1, keepdims=True),
           [WITH_NAN], grad=False),
    OpSpec("median[method,dim]", lambda x: x.median(1), lambda x: _lower_median_ref(x, 1), [F(S)]),
    OpSpec("median[method,all]", lambda x: x.median(), lambda x: _lower_median_ref(x.reshape(-1), 0)[0], [F(S)]),
    OpSpec("nanmedian", lambda x: gg.nanmedian(x, 1), lambda x: np.nanmedian(x, 1), [WITH_NAN], grad=False),
    OpSpec("nanmedian[grad]", lambda x: gg.nanmedian(x), lambda x: np.nanmedian(x), [F(S)]),
    # quantiles
    OpSpec("quantile", lambda x: gg.quantile(x, [0.2, 0.5, 0.9], 1), lambda x: np.quantile(x, [0.2, 0.5, 0.9], 1), [F(S)]),
    OpSpec("quantile[all]", lambda x: gg.quantile(x, 0.3), lambda x: np.quantile(x, 0.3), [F(S)]),
    OpSpec("quantile[lower,keepdim]", lambda x: x.quantile(0.4, dim=-1, keepdim=True, interpolation="lower"),
           lambda x: np.quantile(x, 0.4, -1, method="lower", keepdims=True), [F(S3)]),
    OpSpec("quantile[higher]", lambda x: gg.quantile(x, 0.4, 1, interpolation="higher"),
           lambda x: np.quantile(x, 0.4, 1, method="higher"), [F(S)]),
    OpSpec("quantile[midpoint]", lambda x: gg.quantile(x, [0.1, 0.6], 0, method="midpoint"),
           lambda x: np.quantile(x, [0.1, 0.6], 0, method="midpoint"), [F(S)], batch=False),  # reduces dim 0
    OpSpec("quantile[nearest]", lambda x: gg.quantile(x, [0.25, 0.5, 0.7], -1, interpolation="nearest"),
           lambda x: np.quantile(x, [0.25, 0.5, 0.7], -1, method="nearest"), [F((3, 5))]),
    OpSpec("nanquantile", lambda x: gg.nanquantile(x, [0.3, 0.8], 1), lambda x: np.nanquantile(x, [0.3, 0.8], 1),
           [WITH_NAN], grad=False),
    OpSpec("nanquantile[grad]", lambda x: gg.nanquantile(x, 0.3, 1), lambda x: np.nanquantile(x, 0.3, 1), [F(S)]),
    # mode, running extrema, logcumsumexp
    OpSpec("mode", lambda x: gg.mode(x, 1), lambda x: _mode_ref(x, 1), [TIES], grad=False),
    OpSpec("mode[grad]", lambda x: x.mode(0), lambda x: _mode_ref(x, 0), [F((3, 4))], batch=False),
    OpSpec("cummax", lambda x: gg.cummax(x, 1), lambda x: _cum_ref(x, 1, True), [F(S3)]),
    OpSpec("cummax[ties]", lambda x: x.cummax(-1), lambda x: _cum_ref(x, -1, True), [TIES], grad=False),
    OpSpec("cummin", lambda x: gg.cummin(x, -1), lambda x: _cum_ref(x, -1, False), [F(S3)]),
    OpSpec("cummin[nan]", lambda x: x.cummin(1), lambda x: _cum_ref(x, 1, False), [WITH_NAN], grad=False),
    OpSpec("logcumsumexp", lambda x: gg.logcumsumexp(x, 1), lambda x: np.logaddexp.accumulate(x, 1), [F(S3)]),
    OpSpec("logcumsumexp[wide]", lambda x: x.logcumsumexp(-1), lambda x: np.logaddexp.accumulate(x, -1),
           [A([[-900.0, 0.0, 300.0, -200.0], [600.0, -600.0, 599.0, 601.0]], diff=True)], order=1),
    # searching
    OpSpec("searchsorted", lambda s, v: gg.searchsorted(s, v), lambda s, v: np.searchsorted(s, v),
           [A([1.0, 3.0, 3.0, 5.0, 7.0]), F((3, 4), 0, 8, diff=False)], grad=False, batch=False),
    OpSpec("searchsorted[right,batched]", lambda s, v: gg.searchsorted(s, v, right=True),
           lambda s, v: np.stack([np.searchsorted(a, b, "right") for a, b in zip(s, v)]),
           [A([[1.0, 2.0, 2.0, 4.0], [0.0, 5.0, 6.0, 6.0]]), A([[2.0, 5.0, 0.0], [6.0, -1.0, 5.5]])], grad=False),
    OpSpec("bucketize", lambda x, b: gg.bucketize(x, b), lambda x, b: np.searchsorted(b, x),
           [F((3, 4), 0, 8, diff=False), A([1.0, 3.0, 5.0, 7.0])], grad=False, batch=False),
    # counting
    OpSpec("histc", lambda x: gg.histc(x, 5), lambda x: _histc_ref(x, 5), [F((4, 6), diff=False)], grad=False),
    OpSpec("histc[range]", lambda x: x.histc(4, -1, 1), lambda x: _histc_ref(x, 4, -1.0, 1.0), [F((4, 6), diff=False)],
           grad=False),
    OpSpec("histogram", lambda x: gg.histogram(x, 5, range=(-2, 2)), lambda x: np.histogram(x, 5, range=(-2, 2)),
           [F((4, 6), diff=False)], grad=False),
    OpSpec("histogram[data_range]", lambda x: gg.histogram(x, 4), lambda x: np.histogram(x, 4),
           [F((4, 6), diff=False)], grad=False, infer=False, graph_error=gg.ShapeError),
    OpSpec("histogram[weights,density]", lambda x, w: gg.histogram(x, [-2.0, -1.0, 0.5, 2.0], weights=w, density=True),
           lambda x, w: np.histogram(x, [-2.0, -1.0, 0.5, 2.0], weights=w, density=True),
           [F((4, 6), diff=False), F((4, 6), 0, 1, diff=False)], grad=False),
    OpSpec("bincount", gg.bincount, np.bincount, [I((12,), 0, 5)], grad=False, infer=False),
    OpSpec("bincount[weights]", lambda x, w: gg.bincount(x, w, minlength=8), lambda x, w: np.bincount(x, w, 8),
           [I((12,), 0, 5), F((12,), diff=False)], grad=False, infer=False),
    # deduplication (lengths known only at run time)
    OpSpec("unique", lambda x: gg.unique(x, return_index=True, return_inverse=True, return_counts=True),
           lambda x: np.unique(x, return_index=True, return_inverse=True, return_counts=True), [I((4, 5), 0, 6)],
           grad=False, infer=False),
    OpSpec("unique[float]", gg.unique, np.unique, [F((12,), diff=False)], grad=False, infer=False),
    OpSpec("unique[axis]", lambda x: gg.unique(x, return_inverse=True, axis=0),
           lambda x: np.unique(x, return_inverse=True, axis=0), [I((6, 2), 0, 2)], grad=False, infer=False),
    OpSpec("unique_consecutive", lambda x: gg.unique_consecutive(x, return_inverse=True, return_counts=True),
           _unique_consecutive_ref, [I((3, 5), 0, 2)], grad=False, infer=False),
]
