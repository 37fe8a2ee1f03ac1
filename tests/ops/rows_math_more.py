"""Op-table rows for the special functions, integer ufuncs and compositions of graphgrad/ops/math_more.py.

The special functions have no NumPy reference (``ref=None``): their values are checked against
PyTorch's in the oracle corpus (tests/oracle/cases_math.py), their gradients here by finite differences.
"""
from __future__ import annotations

import math

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, F, I, OpSpec, P

S = (3, 4)
BC = ((3, 1), (1, 4))
_lgamma = np.vectorize(math.lgamma, otypes=[float])


def _div_trunc(a, b):
    return np.trunc(a / b)


ROWS = [
    OpSpec("lgamma", gg.lgamma, _lgamma, [F(S, 0.2, 6)], atol=1e-12, rtol=1e-12),
    OpSpec("lgamma[negative]", gg.lgamma, _lgamma, [F(S, -2.9, -2.1)], atol=1e-12, rtol=1e-12),
    OpSpec("digamma", gg.digamma, None, [F(S, 0.3, 6)]),
    OpSpec("digamma[negative]", gg.digamma, None, [F(S, -1.9, -1.1)], grad_tol=(1e-4, 1e-3)),
    OpSpec("polygamma", lambda x: gg.polygamma(1, x), None, [F(S, 0.5, 6)]),
    OpSpec("polygamma[n3]", lambda x: gg.polygamma(3, x), None, [F(S, 1, 6)], order=1),
    OpSpec("mvlgamma", lambda x: gg.mvlgamma(x, 3), lambda x: sum(_lgamma(x - j / 2) for j in range(3))
           + 3 * 2 / 4 * math.log(math.pi), [F(S, 1.5, 5)], atol=1e-12, rtol=1e-12),
    OpSpec("erfc", gg.erfc, lambda x: 1 - np.vectorize(math.erf)(x), [F(S, -2, 2)]),
    OpSpec("erfc[tail]", gg.erfc, np.vectorize(math.erfc, otypes=[float]), [F(S, 3, 8)], rtol=1e-12, atol=0),
    OpSpec("erfinv", gg.erfinv, None, [F(S, -0.95, 0.95)]),
    OpSpec("hypot", gg.hypot, np.hypot, [F(BC[0]), F(BC[1])]),
    OpSpec("copysign", gg.copysign, np.copysign, [F(S, kinks=(0.0,)), F(S, diff=False, kinks=(0.0,))]),
    OpSpec("copysign[negative_zero]", lambda a: gg.copysign(a, gg.tensor([0.0, -0.0, 1.0, -1.0])),
           lambda a: np.copysign(a, [0.0, -0.0, 1.0, -1.0]), [F(S, kinks=(0.0,))]),
    OpSpec("div[trunc]", lambda a, b: gg.div(a, b, rounding_mode="trunc"), _div_trunc,
           [F(S, -5, 5), F(S, 0.5, 2.0, diff=False)], grad=False),
    OpSpec("div[floor]", lambda a, b: gg.div(a, b, rounding_mode="floor"), lambda a, b: np.floor(a / b),
           [F(S, -5, 5), F(S, 0.5, 2.0, diff=False)], grad=False),
    OpSpec("div[trunc_int]", lambda a, b: gg.div(a, b, rounding_mode="trunc"),
           lambda a, b: np.trunc(a / b).astype(np.int64), [I(S, -9, 9), I(S, 1, 4)], grad=False),
    OpSpec("true_divide[int]", gg.true_divide, lambda a, b: (a / b).astype(np.float32),
           [I(S, -9, 9), I(S, 1, 4)], grad=False, rtol=1e-6),
    OpSpec("bitwise_left_shift", gg.bitwise_left_shift, np.left_shift, [I(S, 0, 100), I(S, 0, 5)], grad=False),
    OpSpec("bitwise_right_shift", gg.bitwise_right_shift, np.right_shift, [I(S, -100, 100), I(S, 0, 5)], grad=False),
    OpSpec("gcd", gg.gcd, np.gcd, [I(S, -30, 30), I(S, 1, 30)], grad=False),
    OpSpec("lcm", gg.lcm, np.lcm, [I(S, 1, 30), I(S, 1, 30)], grad=False),
    OpSpec("nextafter", gg.nextafter, np.nextafter, [F(S, diff=False), F(S, diff=False)], grad=False, rtol=0, atol=0),
    OpSpec("signbit", gg.signbit, np.signbit, [F(S, diff=False)], grad=False),
    OpSpec("isposinf", gg.isposinf, np.isposinf, [A([1.0, math.inf, -math.inf, math.nan])], grad=False),
    OpSpec("isneginf", gg.isneginf, np.isneginf, [A([1.0, math.inf, -math.inf, math.nan])], grad=False),
    OpSpec("isreal", gg.isreal, np.isreal, [F(S, diff=False)], grad=False),
    OpSpec("logit", gg.logit, lambda x: np.log(x / (1 - x)), [F(S, 0.05, 0.95)]),
    OpSpec("logit[eps]", lambda x: gg.logit(x, 0.1), lambda x: np.log(np.clip(x, 0.1, 0.9) / (1 - np.clip(x, 0.1, 0.9))),
           [F(S, 0.0, 1.0, kinks=(0.1, 0.9))]),
    OpSpec("xlogy", gg.xlogy, lambda x, y: x * np.log(y), [F(S), P(S)]),
    OpSpec("xlogy[zero_x]", lambda y: gg.xlogy(gg.zeros((3, 4), dtype=y.dtype), y), lambda y: 0 * y, [F(S, 0, 2)]),
    OpSpec("xlog1py", gg.xlog1py, lambda x, y: x * np.log1p(y), [F(S), P(S)]),
    OpSpec("deg2rad", gg.deg2rad, np.deg2rad, [F(S, -360, 360)]),
    OpSpec("rad2deg", gg.rad2deg, np.rad2deg, [F(S)]),
    OpSpec("frac", gg.frac, lambda x: x - np.trunc(x), [F(S, -3, 3, kinks=(-2.0, -1.0, 0.0, 1.0, 2.0))]),
    OpSpec("heaviside", lambda x: gg.heaviside(x, 0.5), lambda x: np.heaviside(x, 0.5),
           [A([-1.0, 0.0, 2.0])], grad=False),
    OpSpec("float_power", gg.float_power, np.float_power, [P(S), F(S)], dtypes=("float64",)),
    OpSpec("fmax", gg.fmax, np.fmax, [F(S), F(S)]),
    OpSpec("fmax[nan]", lambda a: gg.fmax(a, gg.tensor([math.nan, 1.0, math.nan, 0.0], dtype=a.dtype)),
           lambda a: np.fmax(a, [math.nan, 1.0, math.nan, 0.0]), [F(S, kinks=(0.0, 1.0))]),
    OpSpec("fmin", gg.fmin, np.fmin, [F(S), F(S)]),
    OpSpec("ldexp", gg.ldexp, lambda x, e: np.ldexp(x, e), [F(S), I(S, -3, 3)]),
    OpSpec("sinc", gg.sinc, np.sinc, [F(S, -3, 3)]),
    OpSpec("sinc[zero]", gg.sinc, np.sinc, [A([0.0, 0.5, -1.5], diff=True)], order=1),  # 0 at 0, as PyTorch
    OpSpec("addcmul", lambda a, b, c: gg.addcmul(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c,
           [F(S), F(BC[0]), F(BC[1])]),
    OpSpec("addcdiv", lambda a, b, c: gg.addcdiv(a, b, c, value=-2), lambda a, b, c: a - 2 * b / c, [F(S), F(S), P(S)]),
    OpSpec("clamp_min", lambda x: gg.clamp_min(x, 0.3), lambda x: np.maximum(x, 0.3), [F(S, kinks=(0.3,))]),
    OpSpec("clamp_max", lambda x: gg.clamp_max(x, 0.3), lambda x: np.minimum(x, 0.3), [F(S, kinks=(0.3,))]),
    OpSpec("clamp_min[tensor]", gg.clamp_min, np.maximum, [F(S), F(BC[1])]),
    OpSpec("nansum", lambda x: gg.nansum(x, 1), lambda x: np.nansum(x, 1), [F(S)]),
    OpSpec("nansum[nan]", lambda x: gg.nansum(x * gg.tensor([1.0, math.nan, 1.0, 1.0], dtype=x.dtype), dim=0),
           lambda x: np.nansum(x * [1.0, math.nan, 1.0, 1.0], 0), [F(S)], grad=False),  # x * NaN: NaN gradient
    OpSpec("nanmean", lambda x: gg.nanmean(x * gg.tensor([1.0, math.nan, 1.0, 1.0], dtype=x.dtype)),
           lambda x: np.nanmean(x * [1.0, math.nan, 1.0, 1.0]), [F(S)], grad=False),
    OpSpec("count_nonzero", lambda x: gg.count_nonzero(x, dim=1), lambda x: np.count_nonzero(x, 1),
           [I(S, -1, 2)], grad=False),
    OpSpec("aminmax", lambda x: gg.aminmax(x, dim=1).max - gg.aminmax(x, dim=1).min,
           lambda x: x.max(1) - x.min(1), [F(S)]),
    OpSpec("std_mean", lambda x: gg.std_mean(x, 1)[0] + gg.std_mean(x, 1)[1], lambda x: x.std(1, ddof=1) + x.mean(1),
           [F(S)]),
    OpSpec("var_mean", lambda x: gg.var_mean(x, 0, keepdim=True)[0] * gg.var_mean(x, 0, keepdim=True)[1],
           lambda x: x.var(0, ddof=1, keepdims=True) * x.mean(0, keepdims=True), [F(S)]),
    OpSpec("diff", gg.diff, lambda x: np.diff(x), [F(S)]),
    OpSpec("diff[n2_dim0_prepend]", lambda x, p: gg.diff(x, 2, 0, prepend=p), lambda x, p: np.diff(x, 2, 0, prepend=p),
           [F(S), F((2, 4))], batch=False),  # prepend joins along dim 0: not a batch dimension
    OpSpec("logspace", lambda: gg.logspace(0, 2, 5, dtype="float64"), lambda: np.logspace(0, 2, 5), [], grad=False),
    OpSpec("isin", lambda x: gg.isin(x, gg.tensor([0, 2])), lambda x: np.isin(x, [0, 2]), [I(S, 0, 4)], grad=False),
    OpSpec("isin[invert]", lambda x: gg.isin(x, gg.tensor([1]), invert=True), lambda x: ~np.isin(x, [1]),
           [I(S, 0, 4)], grad=False),
]
