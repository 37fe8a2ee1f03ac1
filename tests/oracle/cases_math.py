"""PyTorch-agreement cases of the special functions, integer ufuncs and compositions of ops/math_more.py,
and of PyTorch's dtype promotion (integers into float functions give float32)."""
import math

from tests.oracle.cases import A, C, F, I, P

S = (4, 5)
INF = math.inf
F32 = {"dtype": "float32"}

C("lgamma", [F(S, 0.2, 8)], lambda t, x: t.lgamma(x), lambda g, x: g.lgamma(x))
C("lgamma[negative]", [F(S, -3.9, -3.1)], lambda t, x: t.lgamma(x), lambda g, x: g.lgamma(x))
C("lgamma[poles]", [A((0.0, -1.0, -2.0, 1.0, 2.0, INF))], lambda t, x: t.lgamma(x), lambda g, x: g.lgamma(x), nonfinite=True)
C("digamma", [F(S, 0.3, 8)], lambda t, x: t.digamma(x), lambda g, x: g.digamma(x), rtol=1e-8)
C("digamma[negative]", [F(S, -2.9, -2.1)], lambda t, x: t.digamma(x), lambda g, x: g.digamma(x), rtol=1e-8)
C("digamma[special]", [A((0.0, -0.0, -1.0, INF, 1.0))], lambda t, x: t.digamma(x), lambda g, x: g.digamma(x), nonfinite=True)
# PyTorch's trigamma is accurate to about 5e-10 relative; ours to about 1e-14
C("polygamma[1]", [F(S, 0.5, 8)], lambda t, x: t.polygamma(1, x), lambda g, x: g.polygamma(1, x), rtol=1e-8)
C("polygamma[2]", [F(S, 0.5, 8)], lambda t, x: t.polygamma(2, x), lambda g, x: g.polygamma(2, x), rtol=1e-8)
C("polygamma[3]", [F(S, 1.0, 8)], lambda t, x: t.polygamma(3, x), lambda g, x: g.polygamma(3, x), rtol=1e-8)
C("mvlgamma", [F(S, 1.6, 5)], lambda t, x: t.mvlgamma(x, 3), lambda g, x: g.mvlgamma(x, 3))
C("erfc", [F(S, -3, 3)], lambda t, x: t.erfc(x), lambda g, x: g.erfc(x))
C("erfc[tail]", [F(S, 3, 9)], lambda t, x: t.erfc(x), lambda g, x: g.erfc(x))
C("erfinv", [F(S, -0.99, 0.99)], lambda t, x: t.erfinv(x), lambda g, x: g.erfinv(x))
C("erfinv[edges]", [A((-1.0, 1.0, 1.5, 0.0, 0.999999))], lambda t, x: t.erfinv(x), lambda g, x: g.erfinv(x), nonfinite=True)
C("lgamma[f32]", [F(S, 0.2, 8)], lambda t, x: t.lgamma(x), lambda g, x: g.lgamma(x), **F32)
C("erfinv[f32]", [F(S, -0.99, 0.99)], lambda t, x: t.erfinv(x), lambda g, x: g.erfinv(x), **F32)
C("hypot", [F((4, 1)), F((1, 5))], lambda t, a, b: t.hypot(a, b), lambda g, a, b: g.hypot(a, b))
C("copysign", [F(S, kinks=(0.0,)), F(S, diff=False)], lambda t, a, b: t.copysign(a, b),
  lambda g, a, b: g.copysign(a, b))
C("copysign[zeros]", [F((2, 2)), A(((0.0, -0.0), (1.0, -1.0)))], lambda t, a, b: t.copysign(a, b),
  lambda g, a, b: g.copysign(a, b))
C("div[trunc]", [F(S, -5, 5), F(S, 0.5, 2)], lambda t, a, b: t.div(a, b, rounding_mode="trunc"),
  lambda g, a, b: g.div(a, b, rounding_mode="trunc"))
C("div[floor]", [F(S, -5, 5), F(S, -2, -0.5)], lambda t, a, b: t.div(a, b, rounding_mode="floor"),
  lambda g, a, b: g.div(a, b, rounding_mode="floor"))
C("div[trunc_int]", [I(S, -9, 9), I(S, 1, 4)], lambda t, a, b: t.div(a, b, rounding_mode="trunc"),
  lambda g, a, b: g.div(a, b, rounding_mode="trunc"))
# integer inputs give float32 results: compared at float32's precision
C("div[int_true]", [I(S, -9, 9), I(S, 1, 4)], lambda t, a, b: a / b, lambda g, a, b: a / b, rtol=1e-6)
C("exp[int]", [I(S, -3, 3)], lambda t, x: t.exp(x), lambda g, x: g.exp(x), rtol=1e-6)
C("sqrt[int_method]", [I(S, 0, 9)], lambda t, x: x.sqrt(), lambda g, x: x.sqrt(), rtol=1e-6)
C("mean[int]", [I(S, 0, 9)], lambda t, x: x.float().mean() * 0 + x.sum() / x.numel(), lambda g, x: g.mean(x), rtol=1e-6)
C("bitwise_left_shift", [I(S, 0, 100), I(S, 0, 5)], lambda t, a, b: t.bitwise_left_shift(a, b),
  lambda g, a, b: g.bitwise_left_shift(a, b))
C("bitwise_right_shift", [I(S, -100, 100), I(S, 0, 5)], lambda t, a, b: a >> b, lambda g, a, b: a >> b)
C("gcd", [I(S, -30, 30), I(S, 1, 30)], lambda t, a, b: t.gcd(a, b), lambda g, a, b: g.gcd(a, b))
C("lcm", [I(S, 1, 30), I(S, 1, 30)], lambda t, a, b: t.lcm(a, b), lambda g, a, b: g.lcm(a, b))
C("nextafter", [F(S, diff=False), F(S, diff=False)], lambda t, a, b: t.nextafter(a, b),
  lambda g, a, b: g.nextafter(a, b))
C("signbit", [A((0.0, -0.0, -1.0, 2.0, -INF))], lambda t, x: t.signbit(x), lambda g, x: g.signbit(x), nonfinite=True)
C("isposinf", [A((1.0, INF, -INF, 0.0))], lambda t, x: t.isposinf(x), lambda g, x: g.isposinf(x), nonfinite=True)
C("isneginf", [A((1.0, INF, -INF, 0.0))], lambda t, x: t.isneginf(x), lambda g, x: g.isneginf(x), nonfinite=True)
C("logit", [F(S, 0.05, 0.95)], lambda t, x: t.logit(x), lambda g, x: g.logit(x))
C("logit[eps]", [F(S, 0.0, 1.0, kinks=(0.1, 0.9))], lambda t, x: t.logit(x, 0.1), lambda g, x: g.logit(x, 0.1))
C("xlogy", [F(S), P(S)], lambda t, x, y: t.xlogy(x, y), lambda g, x, y: g.xlogy(x, y))
C("xlogy[zero_x]", [A((0.0, 0.0, 1.0), diff=True), A((0.5, 2.0, 3.0), diff=True)],
  lambda t, x, y: t.xlogy(x, y), lambda g, x, y: g.xlogy(x, y))
C("xlog1py", [F(S), P(S)], lambda t, x, y: t.special.xlog1py(x, y), lambda g, x, y: g.xlog1py(x, y))
C("deg2rad", [F(S, -360, 360)], lambda t, x: t.deg2rad(x), lambda g, x: g.deg2rad(x))
C("rad2deg", [F(S)], lambda t, x: t.rad2deg(x), lambda g, x: g.rad2deg(x))
C("frac", [F(S, -3, 3, kinks=(-2.0, -1.0, 0.0, 1.0, 2.0))], lambda t, x: t.frac(x), lambda g, x: g.frac(x))
C("heaviside", [A((-1.0, 0.0, 2.0)), A((0.5, 0.5, 0.5))], lambda t, x, v: t.heaviside(x, v),
  lambda g, x, v: g.heaviside(x, v))
C("float_power", [P(S), F(S)], lambda t, a, b: t.float_power(a, b), lambda g, a, b: g.float_power(a, b))
C("fmax", [F(S), F(S)], lambda t, a, b: t.fmax(a, b), lambda g, a, b: g.fmax(a, b))
C("fmin[nan]", [F((4,)), A((math.nan, 1.0, math.nan, 0.5))], lambda t, a, b: t.fmin(a, b),
  lambda g, a, b: g.fmin(a, b), nonfinite=True)
C("ldexp", [F(S), I(S, 0, 4)], lambda t, x, e: t.ldexp(x, e), lambda g, x, e: g.ldexp(x, e))
C("sinc", [F(S, -3, 3)], lambda t, x: t.sinc(x), lambda g, x: g.sinc(x))
C("sinc[zero]", [A((0.0, 0.5, -1.5), diff=True)], lambda t, x: t.sinc(x), lambda g, x: g.sinc(x))
C("addcmul", [F(S), F((4, 1)), F((1, 5))], lambda t, a, b, c: t.addcmul(a, b, c, value=0.5),
  lambda g, a, b, c: g.addcmul(a, b, c, value=0.5))
C("addcdiv", [F(S), F(S), P(S)], lambda t, a, b, c: t.addcdiv(a, b, c, value=-2),
  lambda g, a, b, c: g.addcdiv(a, b, c, value=-2))
C("clamp_min", [F(S, kinks=(0.3,))], lambda t, x: t.clamp_min(x, 0.3), lambda g, x: g.clamp_min(x, 0.3))
C("clamp_max", [F(S, kinks=(0.3,))], lambda t, x: t.clamp_max(x, 0.3), lambda g, x: g.clamp_max(x, 0.3))
C("nansum", [F(S)], lambda t, x: t.nansum(x, 1), lambda g, x: g.nansum(x, 1))
C("nanmean[nan]", [A((1.0, math.nan, 3.0, 4.0))], lambda t, x: t.nanmean(x), lambda g, x: g.nanmean(x), nonfinite=True)
C("count_nonzero", [I(S, -1, 2)], lambda t, x: t.count_nonzero(x, dim=1), lambda g, x: g.count_nonzero(x, dim=1))
C("aminmax", [F(S)], lambda t, x: t.aminmax(x, dim=1).max - t.aminmax(x, dim=1).min,
  lambda g, x: g.aminmax(x, dim=1).max - g.aminmax(x, dim=1).min)
C("std_mean", [F(S)], lambda t, x: t.std_mean(x, 1)[0] + t.std_mean(x, 1)[1],
  lambda g, x: g.std_mean(x, 1)[0] + g.std_mean(x, 1)[1])
C("var_mean[correction0]", [F(S)], lambda t, x: t.var_mean(x, 0, correction=0)[0],
  lambda g, x: g.var_mean(x, 0, correction=0)[0])
C("diff", [F(S)], lambda t, x: t.diff(x), lambda g, x: g.diff(x))
C("diff[n2_prepend]", [F(S), F((4, 2))], lambda t, x, p: t.diff(x, 2, -1, prepend=p),
  lambda g, x, p: g.diff(x, 2, -1, prepend=p))
C("isin", [I(S, 0, 4)], lambda t, x: t.isin(x, t.tensor([0, 2])), lambda g, x: g.isin(x, g.tensor([0, 2])))
C("logspace", [], lambda t: t.logspace(0, 2, 5, dtype=t.float64), lambda g: g.logspace(0, 2, 5, dtype="float64"))
# Tensor methods with PyTorch's meaning
C("std[method_default]", [F(S)], lambda t, x: x.std(), lambda g, x: x.std())
C("var[method_dim_unbiased]", [F(S)], lambda t, x: x.var(1, False), lambda g, x: x.var(1, False))
C("std[method_keepdim]", [F(S)], lambda t, x: x.std(0, keepdim=True), lambda g, x: x.std(0, keepdim=True))
C("repeat[method]", [F((2, 3))], lambda t, x: x.repeat(2, 1, 2), lambda g, x: x.repeat(2, 1, 2))
C("repeat_interleave[method]", [F((2, 3))], lambda t, x: x.repeat_interleave(2, dim=1),
  lambda g, x: x.repeat_interleave(2, dim=1))
# PyTorch's promotion where NumPy would widen to float64 with no float64 operand
C("promotion[int_times_float_scalar]", [I(S, -5, 5)], lambda t, x: x * 0.5 + 1, lambda g, x: x * 0.5 + 1, rtol=1e-6)
C("promotion[int_plus_f32_tensor]", [I(S, -5, 5), F(S, dtype="float32")], lambda t, i, x: i + x - x * i,
  lambda g, i, x: i + x - x * i, rtol=1e-6)
C("promotion[int_pow_float]", [I(S, 1, 5)], lambda t, x: x ** 0.5, lambda g, x: x ** 0.5, rtol=1e-6)
C("promotion[where_int_float]", [I(S, -5, 5)], lambda t, x: t.where(x > 0, x, 0.5), lambda g, x: g.where(x > 0, x, 0.5),
  rtol=1e-6)
C("promotion[maximum_int_f32]", [I(S, -5, 5), F(S, dtype="float32")], lambda t, i, x: t.maximum(i, x),
  lambda g, i, x: g.maximum(i, x), rtol=1e-6)
C("promotion[f64_stays]", [I(S, -5, 5), F(S)], lambda t, i, x: i * x, lambda g, i, x: i * x)
