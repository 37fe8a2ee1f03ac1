"""PyTorch-agreement cases of sorting and order statistics (sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode, cummax, cummin, logcumsumexp, quantile, nanquantile), searching and counting
(searchsorted, bucketize, histc, histogram, bincount) and deduplication (unique, unique_consecutive).

PyTorch leaves the index picked among equal values unspecified for sort (unless stable), topk, kthvalue
and median: cases with ties there use ``stable=True`` or compare values only; mode, cummax and cummin
define it (the last index), and their cases have ties on purpose."""
import math

from tests.oracle.cases import A, C, F, I

NAN = math.nan
TIES = A(((1.0, 3.0, 3.0, 2.0, 3.0, 1.0, 1.0), (2.0, 1.0, 2.0, 1.0, 0.5, 0.5, 2.0)), diff=True)
WITH_NAN = A(((1.0, NAN, 3.0, 0.5), (2.0, 1.0, -1.0, 4.0), (NAN, 1.0, NAN, 2.0)), diff=True)
#: the same values as constants: where the index among ties is unspecified only the values are compared
TIES_VALUES = A(TIES.value)
S3 = (2, 3, 5)

# ---- sort --------------------------------------------------------------------------------------------------------
C("sort", [F(S3)], lambda t, x: t.sort(x), lambda g, x: x.sort())
C("sort.dim0_descending", [F(S3)], lambda t, x: t.sort(x, 0, descending=True), lambda g, x: x.sort(0, descending=True))
C("sort.stable_ties", [TIES], lambda t, x: t.sort(x, stable=True), lambda g, x: x.sort(stable=True))
C("sort.stable_ties_descending", [TIES], lambda t, x: t.sort(x, stable=True, dim=1, descending=True),
  lambda g, x: x.sort(stable=True, dim=1, descending=True))
C("sort.nan", [WITH_NAN], lambda t, x: t.sort(x, -1), lambda g, x: x.sort(-1), nonfinite=True)
C("sort.nan_descending", [WITH_NAN], lambda t, x: t.sort(x, -1, descending=True),
  lambda g, x: x.sort(-1, descending=True), nonfinite=True)
C("sort.zero_d", [A(2.5, diff=True)], lambda t, x: t.sort(x), lambda g, x: x.sort())
C("sort.values_numpy", [F(S3)], lambda t, x: t.sort(x, 1).values, lambda g, x: g.sort(x, 1))
C("argsort", [F(S3)], lambda t, x: t.argsort(x, 1, descending=True), lambda g, x: g.argsort(x, 1, descending=True))
C("msort", [F((4, 3))], lambda t, x: t.msort(x), lambda g, x: g.msort(x))

# ---- topk and kthvalue -------------------------------------------------------------------------------------------
C("topk", [F(S3)], lambda t, x: t.topk(x, 3), lambda g, x: g.topk(x, 3))
C("topk.smallest_dim0", [F(S3)], lambda t, x: x.topk(2, 0, largest=False), lambda g, x: x.topk(2, 0, largest=False))
C("topk.negative_dim", [F(S3)], lambda t, x: t.topk(x, 1, dim=-2), lambda g, x: g.topk(x, 1, dim=-2))
C("topk.nan_largest", [WITH_NAN], lambda t, x: t.topk(x, 2), lambda g, x: g.topk(x, 2), nonfinite=True)
C("topk.zero_d", [A(1.5, diff=True)], lambda t, x: t.topk(x, 1), lambda g, x: g.topk(x, 1))
C("kthvalue", [F(S3)], lambda t, x: t.kthvalue(x, 2), lambda g, x: g.kthvalue(x, 2))
C("kthvalue.keepdim_dim0", [F(S3)], lambda t, x: x.kthvalue(2, 0, keepdim=True), lambda g, x: x.kthvalue(2, 0, keepdim=True))
C("kthvalue.ties_values", [TIES_VALUES], lambda t, x: t.kthvalue(x, 4, 1).values, lambda g, x: g.kthvalue(x, 4, 1).values)
C("kthvalue.zero_d", [A(0.5, diff=True)], lambda t, x: t.kthvalue(x, 1), lambda g, x: g.kthvalue(x, 1))

# ---- medians -----------------------------------------------------------------------------------------------------
C("median", [F((3, 6))], lambda t, x: t.median(x), lambda g, x: x.median())
C("median.dim", [F(S3)], lambda t, x: t.median(x, 2), lambda g, x: x.median(2))
C("median.dim_keepdim", [F((4, 6))], lambda t, x: t.median(x, -2, keepdim=True), lambda g, x: x.median(-2, keepdim=True))
C("median.ties_values", [TIES_VALUES], lambda t, x: t.median(x, 1).values, lambda g, x: x.median(1).values)
C("median.nan", [WITH_NAN], lambda t, x: t.median(x, 1), lambda g, x: x.median(1), nonfinite=True)
C("median.nan_all", [WITH_NAN], lambda t, x: t.median(x), lambda g, x: x.median(), nonfinite=True)
C("median.zero_d", [A(1.5, diff=True)], lambda t, x: t.median(x, 0), lambda g, x: x.median(0))
C("nanmedian", [WITH_NAN], lambda t, x: t.nanmedian(x), lambda g, x: x.nanmedian(), nonfinite=True)
C("nanmedian.dim", [A(((1.0, NAN, 3.0, 0.5), (NAN, NAN, 5.0, NAN), (NAN, 1.0, NAN, 2.0)), diff=True)],
  lambda t, x: t.nanmedian(x, 1), lambda g, x: x.nanmedian(1), nonfinite=True)
# a row of NaNs: the median is NaN; PyTorch's index among the NaNs is unspecified (values only)
C("nanmedian.all_nan_row", [A(((1.0, NAN, 3.0, 0.5), (NAN, NAN, NAN, NAN)))],
  lambda t, x: t.nanmedian(x, 1).values, lambda g, x: x.nanmedian(1).values, nonfinite=True)
C("median.numpy_even", [F((3, 6))], lambda t, x: t.quantile(x, 0.5, 1, interpolation="midpoint"),
  lambda g, x: g.median(x, 1))

# ---- mode --------------------------------------------------------------------------------------------------------
C("mode", [TIES], lambda t, x: t.mode(x), lambda g, x: g.mode(x))
C("mode.dim0_keepdim", [I((5, 4), 0, 3)], lambda t, x: t.mode(x, 0, keepdim=True), lambda g, x: x.mode(0, keepdim=True))
C("mode.float_ties", [A(((2.0, 1.0, 2.0, 1.0), (5.0, 5.0, 4.0, 4.0), (0.5, 1.5, 2.5, 3.5)), diff=True)],
  lambda t, x: t.mode(x, 1), lambda g, x: g.mode(x, 1))
C("mode.zero_d", [A(2.0, diff=True)], lambda t, x: t.mode(x), lambda g, x: x.mode())

# ---- running extrema, logcumsumexp ---------------------------------------------------------------------------
C("cummax", [TIES], lambda t, x: t.cummax(x, 1), lambda g, x: g.cummax(x, 1))
C("cummax.dim0", [F((4, 3))], lambda t, x: t.cummax(x, 0), lambda g, x: x.cummax(0))
C("cummax.nan", [A((1.0, NAN, 3.0, NAN, 2.0), diff=True)], lambda t, x: t.cummax(x, 0), lambda g, x: g.cummax(x, 0), nonfinite=True)
C("cummin", [TIES], lambda t, x: t.cummin(x, -1), lambda g, x: g.cummin(x, -1))
C("cummin.nan", [A((1.0, NAN, 3.0, NAN, 2.0), diff=True)], lambda t, x: t.cummin(x, 0), lambda g, x: x.cummin(0), nonfinite=True)
C("cummin.int", [I((3, 6), 0, 4)], lambda t, x: t.cummin(x, 1), lambda g, x: g.cummin(x, 1))
C("cummax.zero_d", [A(1.5, diff=True)], lambda t, x: t.cummax(x, 0), lambda g, x: g.cummax(x, 0))
C("logcumsumexp", [F(S3, -3, 3)], lambda t, x: t.logcumsumexp(x, 2), lambda g, x: g.logcumsumexp(x, 2))
C("logcumsumexp.dim0", [F((4, 3))], lambda t, x: t.logcumsumexp(x, 0), lambda g, x: x.logcumsumexp(0))
C("logcumsumexp.wide_range", [A(((-1000.0, 0.0, 500.0, -200.0), (800.0, -800.0, 799.0, 801.0)), diff=True)],
  lambda t, x: t.logcumsumexp(x, 1), lambda g, x: g.logcumsumexp(x, 1))
C("logcumsumexp.f32", [F((3, 5), -3, 3)], lambda t, x: t.logcumsumexp(x, -1), lambda g, x: g.logcumsumexp(x, -1),
  dtype="float32")

# ---- quantiles ---------------------------------------------------------------------------------------------------
for _how in ("linear", "lower", "higher", "midpoint", "nearest"):
    C(f"quantile.{_how}", [F((3, 7))], lambda t, x, h=_how: t.quantile(x, t.tensor([0.1, 0.5, 0.75, 1.0], dtype=x.dtype),
                                                                     dim=1, interpolation=h),
      lambda g, x, h=_how: g.quantile(x, [0.1, 0.5, 0.75, 1.0], dim=1, interpolation=h))
C("quantile.all_scalar", [F((4, 5))], lambda t, x: t.quantile(x, 0.3), lambda g, x: g.quantile(x, 0.3))
C("quantile.keepdim", [F(S3)], lambda t, x: t.quantile(x, 0.25, dim=-1, keepdim=True),
  lambda g, x: x.quantile(0.25, dim=-1, keepdim=True))
C("quantile.nan", [WITH_NAN], lambda t, x: t.quantile(x, 0.4, dim=1), lambda g, x: g.quantile(x, 0.4, dim=1), nonfinite=True)
C("nanquantile", [A(((1.0, NAN, 3.0, 0.5), (NAN, NAN, NAN, NAN), (NAN, 1.0, NAN, 2.0)), diff=True)],
  lambda t, x: t.nanquantile(x, t.tensor([0.25, 0.5], dtype=x.dtype), dim=1),
  lambda g, x: g.nanquantile(x, [0.25, 0.5], dim=1), nonfinite=True)
C("nanquantile.nearest", [WITH_NAN], lambda t, x: t.nanquantile(x, 0.5, dim=0, interpolation="nearest"),
  lambda g, x: g.nanquantile(x, 0.5, dim=0, interpolation="nearest"), nonfinite=True)

# ---- searching and counting ------------------------------------------------------------------------------------
SORTED = A((1.0, 3.0, 3.0, 5.0, 7.0))
C("searchsorted", [SORTED, A(((0.0, 3.0, 4.0), (7.0, 9.0, 3.0)))], lambda t, s, v: t.searchsorted(s, v),
  lambda g, s, v: g.searchsorted(s, v))
C("searchsorted.right", [SORTED, A((3.0, 7.0, 0.5))], lambda t, s, v: t.searchsorted(s, v, right=True),
  lambda g, s, v: g.searchsorted(s, v, right=True))
C("searchsorted.batched_side", [A(((1.0, 2.0, 4.0), (0.0, 5.0, 6.0))), A(((2.0, 5.0), (5.0, -1.0)))],
  lambda t, s, v: t.searchsorted(s, v, side="right", out_int32=True),
  lambda g, s, v: g.searchsorted(s, v, side="right", out_int32=True))
C("searchsorted.sorter", [A((5.0, 1.0, 3.0)), A((2.0, 4.0, 6.0)), A((1, 2, 0))],
  lambda t, s, v, o: t.searchsorted(s, v, sorter=o), lambda g, s, v, o: g.searchsorted(s, v, sorter=o))
C("bucketize", [F((3, 4), -3, 3, diff=False), SORTED], lambda t, x, b: t.bucketize(x, b), lambda g, x, b: g.bucketize(x, b))
C("bucketize.right", [A((1.0, 3.0, 4.0, 8.0)), SORTED], lambda t, x, b: t.bucketize(x, b, right=True),
  lambda g, x, b: g.bucketize(x, b, right=True))
C("histc", [F((4, 5), diff=False)], lambda t, x: t.histc(x, 7), lambda g, x: g.histc(x, 7))
C("histc.range", [F((20,), diff=False)], lambda t, x: t.histc(x, 4, min=-1, max=1), lambda g, x: x.histc(4, -1, 1))
C("histc.f32_edge", [A((0.0, 1.0, 1.0, 2.0, 2.0, 3.0))], lambda t, x: t.histc(x, 3, 0, 2), lambda g, x: g.histc(x, 3, 0, 2),
  dtype="float32")
C("histogram", [F((30,), diff=False)], lambda t, x: t.histogram(x, 6), lambda g, x: x.histogram(6))
C("histogram.edges_weight", [F((4, 5), diff=False), F((4, 5), 0, 1, diff=False)],
  lambda t, x, w: t.histogram(x, t.tensor([-2.0, -0.5, 0.0, 1.5], dtype=x.dtype), weight=w, density=True),
  lambda g, x, w: x.histogram(g.tensor([-2.0, -0.5, 0.0, 1.5]), weight=w, density=True))
C("histogram.range", [F((12,), diff=False)], lambda t, x: t.histogram(x, 4, range=(-1.0, 1.0)),
  lambda g, x: x.histogram(4, range=(-1.0, 1.0)))
C("bincount", [I((12,), 0, 6)], lambda t, x: t.bincount(x), lambda g, x: g.bincount(x))
C("bincount.weights_minlength", [I((10,), 0, 4), F((10,), diff=False)],
  lambda t, x, w: t.bincount(x, w, minlength=7), lambda g, x, w: x.bincount(w, minlength=7))

# ---- unique ------------------------------------------------------------------------------------------------------
C("unique", [I((4, 5), 0, 6)], lambda t, x: t.unique(x, return_inverse=True, return_counts=True),
  lambda g, x: x.unique(return_inverse=True, return_counts=True))
C("unique.float_nan", [A((2.0, NAN, 1.0, 2.0, NAN))], lambda t, x: t.unique(x, return_counts=True),
  lambda g, x: x.unique(return_counts=True), nonfinite=True)
C("unique.dim", [A(((1, 2, 1, 0), (3, 4, 3, 0), (1, 2, 1, 0)))], lambda t, x: t.unique(x, dim=1, return_inverse=True,
                                                                                      return_counts=True),
  lambda g, x: x.unique(dim=1, return_inverse=True, return_counts=True))
C("unique.dim0", [I((6, 2), 0, 2)], lambda t, x: t.unique(x, dim=0), lambda g, x: x.unique(dim=0))
C("unique_consecutive", [A((1, 1, 2, 2, 3, 1, 1, 2))],
  lambda t, x: t.unique_consecutive(x, return_inverse=True, return_counts=True),
  lambda g, x: g.unique_consecutive(x, return_inverse=True, return_counts=True))
C("unique_consecutive.dim", [A(((1, 1, 2, 2), (0, 0, 0, 1)))], lambda t, x: t.unique_consecutive(x, dim=1, return_counts=True),
  lambda g, x: x.unique_consecutive(dim=1, return_counts=True))
C("unique_consecutive.2d_inverse", [I((3, 4), 0, 2)], lambda t, x: t.unique_consecutive(x, return_inverse=True),
  lambda g, x: x.unique_consecutive(return_inverse=True))
