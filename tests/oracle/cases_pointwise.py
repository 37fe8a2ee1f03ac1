"""PyTorch-agreement cases of the composed elementwise functions and activations (ops/pointwise.py)."""
from tests.oracle.cases import C, F, P, nnf

S = (4, 5)
C("asinh", [F(S, -3, 3)], lambda t, x: t.asinh(x), lambda g, x: g.asinh(x))
C("acosh", [F(S, 1.2, 4)], lambda t, x: t.acosh(x), lambda g, x: g.acosh(x))
C("atanh", [F(S, -0.9, 0.9)], lambda t, x: t.atanh(x), lambda g, x: g.atanh(x))
C("trunc", [F(S, -3, 3)], lambda t, x: t.trunc(x), lambda g, x: g.trunc(x))
C("exp2", [F(S)], lambda t, x: t.exp2(x), lambda g, x: g.exp2(x))
C("log10", [P(S)], lambda t, x: t.log10(x), lambda g, x: g.log10(x))
C("logaddexp", [F((4, 1), -3, 3), F((1, 5), -3, 3)], lambda t, a, b: t.logaddexp(a, b), lambda g, a, b: g.logaddexp(a, b))
C("logaddexp2", [F(S, -3, 3), F(S, -3, 3)], lambda t, a, b: t.logaddexp2(a, b), lambda g, a, b: g.logaddexp2(a, b))
C("lerp", [F(S), F(S), F(S, 0, 1)], lambda t, a, b, w: t.lerp(a, b, w), lambda g, a, b, w: g.lerp(a, b, w))
C("softsign", [F(S)], lambda t, x: nnf(t).softsign(x), lambda g, x: g.softsign(x))
C("logsigmoid", [F(S, -30, 30)], lambda t, x: nnf(t).logsigmoid(x), lambda g, x: g.logsigmoid(x))
C("hardsigmoid", [F(S, -5, 5)], lambda t, x: nnf(t).hardsigmoid(x), lambda g, x: g.hardsigmoid(x),
  rtol=1e-7)  # PyTorch's backward multiplies by 1/6 rounded to float32, even in float64
C("hardswish", [F(S, -5, 5)], lambda t, x: nnf(t).hardswish(x), lambda g, x: g.hardswish(x))
C("softmin", [F(S)], lambda t, x: nnf(t).softmin(x, dim=1), lambda g, x: g.softmin(x, 1))
C("celu", [F(S)], lambda t, x: nnf(t).celu(x, alpha=0.5), lambda g, x: g.celu(x, 0.5))
C("glu", [F((4, 6))], lambda t, x: nnf(t).glu(x, dim=-1), lambda g, x: g.glu(x, -1))
C("threshold", [F(S)], lambda t, x: nnf(t).threshold(x, 0.1, -2.0), lambda g, x: g.threshold(x, 0.1, -2.0))
C("fmod", [F(S, -5, 5), F(S, 0.6, 2.0)], lambda t, a, b: t.fmod(a, b), lambda g, a, b: g.fmod(a, b))
C("nan_to_num[finite]", [F(S)], lambda t, x: t.nan_to_num(x), lambda g, x: g.nan_to_num(x))
C("isclose", [F(S), F(S)], lambda t, a, b: t.isclose(a, a + b * 1e-7), lambda g, a, b: g.isclose(a, a + b * 1e-7))
C("mm", [F((3, 4)), F((4, 2))], lambda t, a, b: t.mm(a, b), lambda g, a, b: g.mm(a, b))
C("bmm", [F((2, 3, 4)), F((2, 4, 2))], lambda t, a, b: t.bmm(a, b), lambda g, a, b: g.bmm(a, b))
C("addmm", [F((1, 2)), F((3, 4)), F((4, 2))], lambda t, c, a, b: t.addmm(c, a, b, beta=0.5, alpha=2.0),
  lambda g, c, a, b: g.addmm(c, a, b, beta=0.5, alpha=2.0))
C("baddbmm", [F((2, 3, 2)), F((2, 3, 4)), F((2, 4, 2))], lambda t, c, a, b: t.baddbmm(c, a, b, beta=0.5, alpha=2.0),
  lambda g, c, a, b: g.baddbmm(c, a, b, beta=0.5, alpha=2.0))
C("rot90", [F((3, 4, 2))], lambda t, x: t.rot90(x, 1, (0, 1)), lambda g, x: g.rot90(x, 1, (0, 1)))
C("rot90[k=3]", [F((3, 4, 2))], lambda t, x: t.rot90(x, 3, (1, 2)), lambda g, x: g.rot90(x, 3, (1, 2)))
