"""PyTorch-agreement cases at the special points where graphgrad once differed from PyTorch: 0-d
tensors reduced over dim 0 / -1, powers at zero, the standard deviation of a constant, atan2 at the
origin."""
from tests.oracle.cases import A, C

F64 = {"dtype": "float64"}
ZERO_D = A(2.5, diff=True)
C("zero_d.sum_dim0", [ZERO_D], lambda t, x: t.sum(x, 0), lambda g, x: g.sum(x, 0), **F64)
C("zero_d.prod_dim_last", [ZERO_D], lambda t, x: t.prod(x, -1), lambda g, x: g.prod(x, -1), **F64)
C("zero_d.logsumexp_dim0", [ZERO_D], lambda t, x: t.logsumexp(x, 0), lambda g, x: g.logsumexp(x, 0), **F64)
C("zero_d.max_dim0_values", [ZERO_D], lambda t, x: t.amax(x, 0), lambda g, x: g.max(x, 0), **F64)
C("zero_d.cumsum", [ZERO_D], lambda t, x: t.cumsum(x, 0), lambda g, x: g.cumsum(x, 0), **F64)
C("zero_d.cumprod", [ZERO_D], lambda t, x: t.cumprod(x, -1), lambda g, x: g.cumprod(x, -1), **F64)
C("pow.at_zero", [A((0.0, 0.0, 2.0), diff=True), A((0.0, 2.0, 0.0), diff=True)],
  lambda t, x, y: x ** y, lambda g, x, y: x ** y, **F64)
C("std.constant", [A((2.0, 2.0, 2.0), diff=True)], lambda t, x: x.std(), lambda g, x: g.std(x, ddof=1), **F64)
C("atan2.origin", [A((0.0, 1.0), diff=True), A((0.0, 0.0), diff=True)], lambda t, y, x: t.atan2(y, x),
  lambda g, y, x: g.arctan2(y, x), **F64)
