"""PyTorch-agreement cases of the broad Tensor-method surface (ops/torch_methods_more.py and the index
writes of ops/shape_more.py): the same call on both frameworks' tensors, in place forms included, and
the ``torch.*`` functions whose meaning is the method's (``torch.std``, ``torch.transpose``...)."""
import graphgrad.compat.torch  # noqa: F401  (g.compat.torch below)
from tests.oracle.cases import A, B, C, F, I, P

S = (3, 4)


def _same(expr):
    """The same method-call expression for both frameworks."""
    return (lambda t, *xs: expr(*xs)), (lambda g, *xs: expr(*xs))


def M(name, inputs, expr, **kw):
    t_fn, g_fn = _same(expr)
    C("method." + name, inputs, t_fn, g_fn, **kw)


M("add_alpha", [F(S), F(S)], lambda x, y: x.add(y, alpha=-2.5))
M("sub_alpha", [F(S), F((4,))], lambda x, y: x.sub(y, alpha=0.5))
M("mul_div", [F(S), P(S)], lambda x, y: x.mul(y).div(y * 2))
M("div_rounding", [F(S, -5, 5, diff=False), P(S, diff=False)], lambda x, y: x.div(y, rounding_mode="floor"))
M("neg_positive", [F(S)], lambda x: x.neg() + x.negative() * x.positive())
M("trig_aliases", [F(S, -0.9, 0.9)], lambda x: x.acos() + x.asin() * x.atan() + x.atanh())
M("hyperbolic_aliases", [F(S, 1.1, 3)], lambda x: x.acosh() + x.asinh())
M("atan2", [F(S), F(S)], lambda x, y: x.atan2(y))
M("where", [F(S), F(S), B(S)], lambda x, y, m: x.where(m, y))
M("where_scalar", [F(S), B(S)], lambda x, m: x.where(m, 0.5))
M("comparisons", [F(S, diff=False), F(S, diff=False)],
  lambda x, y: (x.greater(y), x.less_equal(y), x.not_equal(y), x.greater_equal(y)))
M("bitwise", [I(S, 0, 16), I(S, 0, 16)], lambda a, b: (a.bitwise_and(b), a.bitwise_or(b), a.bitwise_xor(b),
                                                       a.bitwise_not(), a << 1, b >> 1))
M("sgn_fix", [F(S, -3, 3, diff=False)], lambda x: x.sgn() + x.fix())
M("clamp_min_max", [F(S, kinks=(-0.5, 0.5))], lambda x: x.clamp_min(-0.5).clamp_max(0.5))
M("addcmul_addcdiv", [F(S), F(S), P(S)], lambda x, y, z: x.addcmul(y, z, value=2).addcdiv(y, z, value=0.5))
M("lerp", [F(S), F(S)], lambda x, y: x.lerp(y, 0.3))
M("lgamma_digamma", [P(S)], lambda x: x.lgamma() + x.digamma(), rtol=1e-8)  # PyTorch trigamma: ~5e-10
M("polygamma", [P(S)], lambda x: x.polygamma(1), rtol=1e-8)
M("erf_family", [F(S, -0.9, 0.9)], lambda x: x.erfc() + x.erfinv())
M("logit_xlogy", [F(S, 0.1, 0.9), P(S)], lambda x, y: x.logit() + x.xlogy(y))
M("hypot_copysign", [F(S), F(S, kinks=(0.0,))], lambda x, y: x.hypot(y) + x.copysign(y))
M("frac_deg", [F(S, -3, 3, kinks=(-2.0, -1.0, 0.0, 1.0, 2.0))], lambda x: x.frac() + x.deg2rad() + x.rad2deg())
M("nansum_nanmean", [F(S)], lambda x: x.nansum(1) + x.nanmean(1))
M("diff", [F(S)], lambda x: x.diff(dim=0))
M("aminmax", [F(S)], lambda x: x.aminmax(dim=0).min)
M("movedim_swapdims", [F((2, 3, 4))], lambda x: x.movedim(0, -1).swapdims(0, 1))
M("unflatten_ravel", [F((2, 12))], lambda x: x.unflatten(1, (3, 4)).ravel())
M("select", [F((2, 3, 4))], lambda x: x.select(1, -1))
M("take_along_dim", [F(S), I((3, 2), 0, 4)], lambda x, i: x.take_along_dim(i, 1))
M("take_along_dim_broadcast", [F(S), I((1, 2), 0, 4)], lambda x, i: x.take_along_dim(i, dim=1))
M("fliplr_flipud", [F(S)], lambda x: x.fliplr() + x.flipud())
M("hsplit_vsplit", [F((4, 6))], lambda x: x.hsplit(3) + x.vsplit([1]))
M("index_add", [F((5, 3)), F((2, 3)), A((0, 3))], lambda x, s, i: x.index_add(0, i, s, alpha=2))
M("index_add_repeated", [F((5, 3)), F((3, 3)), A((1, 1, 4))], lambda x, s, i: x.index_add(0, i, s))
M("index_copy", [F((5, 3)), F((5, 2)), A((2, 0))], lambda x, s, i: x.index_copy(1, i, s))
M("index_fill", [F((5, 3)), A((1, 3))], lambda x, i: x.index_fill(0, i, -2.0))
M("index_put", [F((5, 3)), F((2,)), A((0, 4)), A((1, 2))], lambda x, v, i, j: x.index_put((i, j), v))
M("index_put_accumulate", [F((5, 3)), F((3,)), A((0, 4, 0)), A((1, 2, 1))],
  lambda x, v, i, j: x.index_put((i, j), v, accumulate=True))
M("masked_scatter", [F(S), B(S), F((12,))], lambda x, m, s: x.masked_scatter(m, s))
M("select_scatter", [F(S), F((4,))], lambda x, s: x.select_scatter(s, 0, 1))
M("slice_scatter", [F((6, 3)), F((3, 3))], lambda x, s: x.slice_scatter(s, 0, 0, 6, 2))
M("diagonal_scatter", [F((4, 5)), F((4,))], lambda x, s: x.diagonal_scatter(s, 1))
M("equal_allclose", [F(S, diff=False)],
  lambda x: x.sum() * 0 + float(x.equal(x.clone())) + 2 * float(x.allclose(x + 1e-9)) + 4 * float(x.equal(x + 1)))
M("std_var", [F(S)], lambda x: x.std(1) + x.var(1, unbiased=False) + x.std(0, correction=0).sum())
M("argsort", [F(S, diff=False)], lambda x: x.argsort(dim=0, descending=True))
M("is_predicates", [F(S, diff=False)], lambda x: x.sum() * 0 + float(x.is_floating_point()) + x.nelement()
  + x.element_size() + x.ndimension() + float(x.is_contiguous()))
# in place (on inputs that do not require grad)
M("inplace_unary", [F(S, 0.1, 0.9, diff=False)], lambda x: x.clone().acos_().exp_().log_().sqrt_().neg_())
M("inplace_binary", [F(S, diff=False), P(S, diff=False)],
  lambda x, y: x.clone().add_(y, alpha=2).mul_(y).sub_(1).div_(y).pow_(2).clamp_min_(0.5).fmod_(1.5))
M("inplace_indexing", [F((5, 3), diff=False), F((2, 3), diff=False), A((0, 3))],
  lambda x, s, i: x.clone().index_add_(0, i, s).index_fill_(1, i[:1], 0.25).masked_fill_(x > 1, -1.0))
M("inplace_reshaping", [F(S, diff=False)], lambda x: x.clone().unsqueeze_(0).transpose_(0, 2).squeeze_())
M("inplace_compare", [F(S, diff=False), F(S, diff=False)], lambda x, y: x.clone().gt_(y))
M("zero_", [F(S, diff=False)], lambda x: x.clone().zero_())
# torch.* functions that mean the Tensor method
C("torch.std_default", [F(S)], lambda t, x: t.std(x), lambda g, x: g.compat.torch.std(x))
C("torch.var_dim", [F(S)], lambda t, x: t.var(x, 1), lambda g, x: g.compat.torch.var(x, 1))
C("torch.transpose", [F((2, 3, 4))], lambda t, x: t.transpose(x, 0, 2), lambda g, x: g.compat.torch.transpose(x, 0, 2))
C("torch.split", [F((7, 3))], lambda t, x: t.split(x, 3), lambda g, x: g.compat.torch.split(x, 3))
C("torch.where_single", [F(S, diff=False)], lambda t, x: t.where(x > 0), lambda g, x: g.compat.torch.where(x > 0))
C("torch.special", [F(S, 0.1, 0.9)], lambda t, x: t.special.ndtri(x) + t.special.ndtr(x) + t.special.entr(x),
  lambda g, x: g.compat.torch.special.ndtri(x) + g.compat.torch.special.ndtr(x) + g.compat.torch.special.entr(x))
C("torch.rsub", [F(S), F(S)], lambda t, x, y: t.rsub(x, y, alpha=2), lambda g, x, y: g.compat.torch.rsub(x, y, alpha=2))
