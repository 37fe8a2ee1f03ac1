"""PyTorch-agreement cases of linear algebra: torch.linalg (decompositions, matrix functions, norms,
solvers) and the matrix products and builders (trace, kron, cross, tensordot, cov, ...), values and
gradients.

Decompositions have sign-ambiguous factors (singular and eigen vectors, Q and R up to signs that LAPACK
builds alike in both frameworks but need not): their cases compare sign-invariant quantities
(reconstructions ``U diag(S) Vh``, ``|V|``, values), and symmetric inputs are made inside the case from a
general matrix, so both frameworks differentiate the same function."""
import math

import numpy as np

from tests.oracle.cases import A, C, F, I, well_conditioned

F32 = {"dtype": "float32", "rtol": 1e-4, "atol": 1e-5}


def _sym(x):
    return (x + x.transpose(-1, -2)) / 2


def _spd(x):
    """x x^T + n I (the identity built from x itself, so the same code serves both frameworks)."""
    n = x.shape[-1]
    eye = x.new_ones(n).diag() if hasattr(x, "new_ones") else _gg_eye(x, n)
    return x @ x.transpose(-1, -2) + n * eye


def _gg_eye(x, n):
    import graphgrad as gg

    return gg.eye(n, dtype=x.dtype)


def _t_recon(r):
    return (r.U * r.S.unsqueeze(-2)) @ r.Vh


def _g_recon(g, r):
    return g.matmul(r.U * g.expand_dims(r.S, -2), r.Vh)


def _second_well_conditioned(rng, xs):
    """``xs[1]`` (the matrix) plus 3 I."""
    return [xs[0], (xs[1] + 3.0 * np.eye(xs[1].shape[-1])).astype(xs[1].dtype)] + list(xs[2:])


S3 = (2, 3, 3)

# ---- determinants and inverses ------------------------------------------------------------------------------
C("slogdet", [F(S3)], lambda t, a: tuple(t.linalg.slogdet(a)), lambda g, a: tuple(g.linalg.slogdet(a)),
  prepare=well_conditioned)
C("slogdet[negative_det]", [A(((0.0, 2.0, 0.5), (1.5, 0.3, 0.0), (0.2, 0.1, 1.0)), diff=True)],
  lambda t, a: tuple(t.slogdet(a)), lambda g, a: tuple(a.slogdet()))
C("logdet", [F(S3)], lambda t, a: t.logdet(_spd(a)), lambda g, a: g.logdet(_spd(a)))
C("inverse", [F((3, 3))], lambda t, a: t.inverse(a), lambda g, a: a.inverse(), prepare=well_conditioned)
C("inv_ex", [F(S3)], lambda t, a: tuple(t.linalg.inv_ex(a)), lambda g, a: tuple(g.linalg.inv_ex(a)),
  prepare=well_conditioned)
C("det[method_f32]", [F((3, 3))], lambda t, a: a.det(), lambda g, a: a.det(), prepare=well_conditioned, **F32)
C("solve[batch_of_vectors]", [F(S3), F((2, 3))], lambda t, a, b: t.linalg.solve(a, b),
  lambda g, a, b: g.linalg.solve(a, b), prepare=well_conditioned)
C("solve[right]", [F(S3), F((2, 4, 3))], lambda t, a, b: t.linalg.solve(a, b, left=False),
  lambda g, a, b: g.linalg.solve(a, b, left=False), prepare=well_conditioned)
C("solve_ex", [F((3, 3)), F((3, 2))], lambda t, a, b: tuple(t.linalg.solve_ex(a, b)),
  lambda g, a, b: tuple(g.linalg.solve_ex(a, b)), prepare=well_conditioned)
C("cholesky_ex", [F((3, 3))], lambda t, a: tuple(t.linalg.cholesky_ex(_spd(a))),
  lambda g, a: tuple(g.linalg.cholesky_ex(_spd(a))))
C("svd[driver_kw]", [F((3, 3))], lambda t, a: t.linalg.svdvals(a, driver=None), lambda g, a: g.linalg.svdvals(a, driver=None))
C("solve[linalg_ns]", [F(S3), F((2, 3, 2))], lambda t, a, b: t.linalg.solve(a, b), lambda g, a, b: g.linalg.solve(a, b),
  prepare=well_conditioned)

# ---- decompositions -------------------------------------------------------------------------------------
C("cholesky", [F(S3)], lambda t, a: t.linalg.cholesky(_spd(a)), lambda g, a: g.linalg.cholesky(_spd(a)))
C("cholesky[upper]", [F((4, 4))], lambda t, a: t.linalg.cholesky(_spd(a), upper=True),
  lambda g, a: g.linalg.cholesky(_spd(a), upper=True))
C("cholesky[torch_fn]", [F((3, 3))], lambda t, a: t.cholesky(_spd(a)), lambda g, a: g.cholesky(_spd(a)))
C("eigh", [F((2, 4, 4))], lambda t, a: (t.linalg.eigh(_sym(a)).eigenvalues, t.linalg.eigh(_sym(a)).eigenvectors.abs()),
  lambda g, a: (g.linalg.eigh(_sym(a)).eigenvalues, g.abs(g.linalg.eigh(_sym(a)).eigenvectors)))
# eig's results are complex, which the corpus compares through magnitudes (ordering is LAPACK's in both)
C("eig", [F((2, 4, 4), diff=False)], lambda t, a: tuple(x.abs() for x in t.linalg.eig(a)),
  lambda g, a: tuple(g.abs(x) for x in g.linalg.eig(a)), rtol=1e-9, atol=1e-12)
C("eigvals[f32]", [F((3, 3), diff=False)], lambda t, a: t.linalg.eigvals(a).abs(),
  lambda g, a: g.abs(g.linalg.eigvals(a)), **F32)
C("eigvalsh", [F((4, 4))], lambda t, a: t.linalg.eigvalsh(_sym(a)), lambda g, a: g.linalg.eigvalsh(_sym(a)))
C("eigh[f32]", [F((3, 3))], lambda t, a: t.linalg.eigvalsh(_sym(a)), lambda g, a: g.linalg.eigvalsh(_sym(a)), **F32)
C("svd[recon_tall]", [F((2, 5, 3))], lambda t, a: _t_recon(t.linalg.svd(a, full_matrices=False)),
  lambda g, a: _g_recon(g, g.linalg.svd(a, full_matrices=False)))
C("svd[abs_factors_wide]", [F((3, 5))],
  lambda t, a: tuple(x.abs() for x in t.linalg.svd(a, full_matrices=False)),
  lambda g, a: tuple(g.abs(x) for x in g.linalg.svd(a, full_matrices=False)), rtol=1e-8, atol=1e-10)
C("svd[full_values]", [F((4, 2))], lambda t, a: t.linalg.svd(a).S, lambda g, a: g.linalg.svd(a).S)
C("svd[torch_old_api]", [F((4, 3))], lambda t, a: (lambda r: (r.U * r.S) @ r.V.T)(t.svd(a)),
  lambda g, a: (lambda r: g.matmul(r.U * r.S, r.V.T))(a.svd()))
C("svdvals[zero_batch]", [F((0, 3, 3))], lambda t, a: t.linalg.svdvals(a), lambda g, a: g.linalg.svdvals(a))
C("qr[zero_batch]", [F((0, 4, 2))], lambda t, a: tuple(t.linalg.qr(a)), lambda g, a: tuple(g.linalg.qr(a)))
C("lu[zero_batch]", [F((0, 3, 3))], lambda t, a: tuple(t.linalg.lu(a)), lambda g, a: tuple(g.linalg.lu(a)))
C("eigh[empty_matrices]", [F((2, 0, 0))], lambda t, a: tuple(t.linalg.eigh(a)), lambda g, a: tuple(g.linalg.eigh(a)))
C("svdvals", [F((2, 3, 4))], lambda t, a: t.linalg.svdvals(a), lambda g, a: g.linalg.svdvals(a))
C("qr", [F((2, 4, 3))], lambda t, a: tuple(t.linalg.qr(a)), lambda g, a: tuple(g.linalg.qr(a)))
C("qr[complete_square]", [F((3, 3))], lambda t, a: tuple(t.linalg.qr(a, mode="complete")),
  lambda g, a: tuple(g.linalg.qr(a, mode="complete")))
C("qr[torch_fn]", [F((4, 3))], lambda t, a: tuple(t.qr(a)), lambda g, a: tuple(a.qr()))
C("pinv", [F((2, 4, 3))], lambda t, a: t.linalg.pinv(a), lambda g, a: g.linalg.pinv(a))
C("pinv[wide]", [F((3, 5))], lambda t, a: t.linalg.pinv(a), lambda g, a: g.linalg.pinv(a))
C("pinverse", [F((4, 4))], lambda t, a: t.pinverse(a), lambda g, a: a.pinverse())
C("lstsq", [F((5, 3)), F((5, 2))], lambda t, a, b: t.linalg.lstsq(a, b).solution,
  lambda g, a, b: g.linalg.lstsq(a, b).solution)
C("lstsq[batched]", [F((2, 6, 3)), F((2, 6, 1))], lambda t, a, b: t.linalg.lstsq(a, b).solution,
  lambda g, a, b: g.linalg.lstsq(a, b).solution)
C("matrix_rank", [F((2, 4, 3))], lambda t, a: t.linalg.matrix_rank(a), lambda g, a: g.linalg.matrix_rank(a))
C("matrix_rank[deficient]", [A(((1.0, 2.0, 3.0), (2.0, 4.0, 6.0), (1.0, 0.0, 1.0)))],
  lambda t, a: t.linalg.matrix_rank(a), lambda g, a: g.linalg.matrix_rank(a))

C("cond", [F(S3)], lambda t, a: t.linalg.cond(a), lambda g, a: g.linalg.cond(a))
C("cond[nuc]", [F((3, 3))], lambda t, a: t.linalg.cond(a, "nuc"), lambda g, a: g.linalg.cond(a, "nuc"),
  prepare=well_conditioned)
C("solve_triangular", [F(S3), F((2, 3, 2))], lambda t, a, b: t.linalg.solve_triangular(a, b, upper=True),
  lambda g, a, b: g.linalg.solve_triangular(a, b, upper=True), prepare=well_conditioned)
C("solve_triangular[right_unit]", [F((3, 3)), F((4, 3))],
  lambda t, a, b: t.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
  lambda g, a, b: g.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True))
C("cholesky_solve", [F((2, 3, 2)), F(S3)], lambda t, b, a: t.cholesky_solve(b, t.linalg.cholesky(_spd(a))),
  lambda g, b, a: g.cholesky_solve(b, g.linalg.cholesky(_spd(a))))
C("cholesky_inverse[upper]", [F((3, 3))], lambda t, a: t.cholesky_inverse(t.linalg.cholesky(_spd(a), upper=True), upper=True),
  lambda g, a: g.cholesky_inverse(g.linalg.cholesky(_spd(a), upper=True), upper=True))

C("lu", [F((4, 4))], lambda t, a: tuple(t.linalg.lu(a)), lambda g, a: tuple(g.linalg.lu(a)))
C("lu[batched_wide]", [F((2, 3, 5), diff=False)], lambda t, a: tuple(t.linalg.lu(a))[1:], lambda g, a: tuple(g.linalg.lu(a))[1:])
C("lu_factor", [F(S3)], lambda t, a: tuple(t.linalg.lu_factor(a)), lambda g, a: tuple(g.linalg.lu_factor(a)))
C("lu_factor[tall_values]", [F((5, 3), diff=False)], lambda t, a: tuple(t.linalg.lu_factor_ex(a)),
  lambda g, a: tuple(g.linalg.lu_factor_ex(a)))
C("lu_solve", [F(S3), F((2, 3, 2))], lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b),
  lambda g, a, b: g.linalg.lu_solve(*g.linalg.lu_factor(a), b), prepare=well_conditioned)
C("lu_solve[torch_old_api]", [F((3, 3)), F((3, 2))], lambda t, a, b: t.lu_solve(b, *t.lu(a)),
  lambda g, a, b: b.lu_solve(*a.lu()), prepare=well_conditioned)
C("lu_unpack", [F((4, 3), diff=False)], lambda t, a: tuple(t.lu_unpack(*t.linalg.lu_factor(a))),
  lambda g, a: tuple(g.lu_unpack(*g.linalg.lu_factor(a))))

C("geqrf", [F((2, 4, 3), diff=False)], lambda t, a: tuple(t.geqrf(a)), lambda g, a: tuple(g.geqrf(a)))
C("householder_product", [F((4, 3)), F((3,), 0.5, 1.5)], lambda t, a, tau: t.linalg.householder_product(a, tau),
  lambda g, a, tau: g.linalg.householder_product(a, tau))
C("orgqr[batched]", [F((2, 3, 3)), F((2, 2), 0.5, 1.5)], lambda t, a, tau: t.orgqr(a, tau),
  lambda g, a, tau: a.orgqr(tau))
C("ormqr", [F((4, 3)), F((3,), 0.5, 1.5), F((4, 2))], lambda t, a, tau, c: t.ormqr(a, tau, c, transpose=True),
  lambda g, a, tau, c: g.ormqr(a, tau, c, transpose=True))
C("ormqr[right]", [F((3, 3)), F((3,), 0.5, 1.5), F((2, 3))], lambda t, a, tau, c: t.ormqr(a, tau, c, left=False),
  lambda g, a, tau, c: a.ormqr(tau, c, left=False))
C("triangular_solve", [F((3, 2)), F((3, 3))], lambda t, b, a: tuple(t.triangular_solve(b, a, upper=False)),
  lambda g, b, a: tuple(b.triangular_solve(a, upper=False)), prepare=_second_well_conditioned)

C("ldl_factor", [F((2, 4, 4), diff=False)], lambda t, a: tuple(t.linalg.ldl_factor(_sym(a))),
  lambda g, a: tuple(g.linalg.ldl_factor(_sym(a))))
# a zero first diagonal entry forces a 2x2 pivot block (negative pivots)
C("ldl_factor[two_by_two]", [A(((0.0, 1.0, 2.0, 0.5), (1.0, 0.0, 3.0, 1.0), (2.0, 3.0, 0.0, -1.0),
                                (0.5, 1.0, -1.0, 2.0)))],
  lambda t, a: tuple(t.linalg.ldl_factor_ex(a)), lambda g, a: tuple(g.linalg.ldl_factor_ex(a)))
C("ldl_solve", [F((5, 5), diff=False), F((2, 5, 3), diff=False)],
  lambda t, a, b: t.linalg.ldl_solve(*t.linalg.ldl_factor(_sym(a)), b),
  lambda g, a, b: g.linalg.ldl_solve(*g.linalg.ldl_factor(_sym(a)), b), rtol=1e-8, atol=1e-10)

C("svd_lowrank[exact_rank]", [F((2, 7, 2)), F((2, 2, 5))], lambda t, a, b: t.svd_lowrank(a @ b, q=3)[1][..., :2],
  lambda g, a, b: g.svd_lowrank(a @ b, q=3)[1][..., :2], rtol=1e-8, atol=1e-10)
C("pca_lowrank[exact_rank]", [F((7, 2)), F((2, 5))], lambda t, a, b: t.pca_lowrank(a @ b, q=3)[1],
  lambda g, a, b: g.pca_lowrank(a @ b, q=3)[1], rtol=1e-8, atol=1e-10)

# ---- matrix functions -----------------------------------------------------------------------------------
C("matrix_exp", [F(S3, -1, 1)], lambda t, a: t.linalg.matrix_exp(a), lambda g, a: g.linalg.matrix_exp(a))
C("matrix_exp[scaled]", [F((3, 3), -3, 3)], lambda t, a: t.matrix_exp(a), lambda g, a: a.matrix_exp(),
  rtol=1e-9, atol=1e-9)
C("matrix_power", [F(S3)], lambda t, a: t.linalg.matrix_power(a, 5), lambda g, a: g.linalg.matrix_power(a, 5))
C("matrix_power[negative]", [F((3, 3))], lambda t, a: a.matrix_power(-2), lambda g, a: a.matrix_power(-2),
  prepare=well_conditioned)

# ---- norms ----------------------------------------------------------------------------------------------
C("vector_norm", [F((2, 3, 4))], lambda t, a: t.linalg.vector_norm(a, 3, dim=(0, 2)),
  lambda g, a: g.linalg.vector_norm(a, 3, dim=(0, 2)))
for _ord in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
    C(f"matrix_norm[{_ord}]", [F((2, 3, 4))], lambda t, a, o=_ord: t.linalg.matrix_norm(a, o),
      lambda g, a, o=_ord: g.linalg.matrix_norm(a, o))
C("linalg_norm[vector_default]", [F((2, 3, 4))], lambda t, a: t.linalg.norm(a), lambda g, a: g.linalg.norm(a))
C("linalg_norm[matrix_ord]", [F((3, 4))], lambda t, a: t.linalg.norm(a, "nuc"), lambda g, a: g.linalg.norm(a, "nuc"))
C("linalg_norm[dims_keepdim]", [F((2, 3, 4))], lambda t, a: t.linalg.norm(a, 2, dim=(0, 2), keepdim=True),
  lambda g, a: g.linalg.norm(a, 2, dim=(0, 2), keepdim=True))
C("norm[torch_nuc]", [F((3, 4))], lambda t, a: t.norm(a, p="nuc"), lambda g, a: a.norm(p="nuc"))
C("dist", [F((3, 4)), F((4,))], lambda t, a, b: t.dist(a, b, 3), lambda g, a, b: a.dist(b, 3))
C("renorm", [F((3, 4, 2))], lambda t, x: t.renorm(x, 2, 1, 1.0), lambda g, x: x.renorm(2, 1, 1.0))

# ---- products -------------------------------------------------------------------------------------------
C("multi_dot", [F((4,)), F((4, 3)), F((3, 2))], lambda t, a, b, c: t.linalg.multi_dot([a, b, c]),
  lambda g, a, b, c: g.linalg.multi_dot([a, b, c]))
C("vecdot", [F((2, 3)), F((3,))], lambda t, a, b: t.linalg.vecdot(a, b), lambda g, a, b: g.linalg.vecdot(a, b))
C("tensorinv", [F((6, 6))], lambda t, a: t.linalg.tensorinv(a.reshape(6, 2, 3), 1),
  lambda g, a: g.linalg.tensorinv(a.reshape(6, 2, 3), 1), prepare=well_conditioned)
C("tensorsolve", [F((6, 6)), F((2, 3))], lambda t, a, b: t.linalg.tensorsolve(a.reshape(2, 3, 6), b),
  lambda g, a, b: g.linalg.tensorsolve(a.reshape(2, 3, 6), b), prepare=well_conditioned)
C("linalg_diagonal", [F((2, 3, 4))], lambda t, a: t.linalg.diagonal(a, offset=1),
  lambda g, a: g.linalg.diagonal(a, offset=1))
C("linalg_cross", [F((2, 4, 3)), F((1, 4, 3))], lambda t, a, b: t.linalg.cross(a, b),
  lambda g, a, b: g.linalg.cross(a, b))
C("cross[torch_default_dim]", [F((3, 4, 3)), F((3, 4, 3))], lambda t, a, b: t.cross(a, b, dim=None),
  lambda g, a, b: a.cross(b))
C("trace", [F((3, 4))], lambda t, a: t.trace(a), lambda g, a: a.trace())
C("outer[method]", [F((3,)), F((4,))], lambda t, a, b: a.outer(b), lambda g, a, b: a.outer(b))
C("ger", [F((3,)), F((4,))], lambda t, a, b: t.ger(a, b), lambda g, a, b: g.ger(a, b))
C("inner", [F((2, 4)), F((3, 4))], lambda t, a, b: t.inner(a, b), lambda g, a, b: a.inner(b))
C("kron", [F((2, 3)), F((2, 2, 2))], lambda t, a, b: t.kron(a, b), lambda g, a, b: g.kron(a, b))
C("vdot", [F((5,)), F((5,))], lambda t, a, b: t.vdot(a, b), lambda g, a, b: a.vdot(b))
C("mv", [F((3, 4)), F((4,))], lambda t, a, b: t.mv(a, b), lambda g, a, b: a.mv(b))
C("addmv", [F((3,)), F((3, 4)), F((4,))], lambda t, i, m, v: t.addmv(i, m, v, beta=0.5, alpha=2.0),
  lambda g, i, m, v: i.addmv(m, v, beta=0.5, alpha=2.0))
C("addr", [F((3, 4)), F((3,)), F((4,))], lambda t, i, a, b: t.addr(i, a, b, alpha=-1.5),
  lambda g, i, a, b: i.addr(a, b, alpha=-1.5))
C("addbmm", [F((3, 5)), F((2, 3, 4)), F((2, 4, 5))], lambda t, i, a, b: t.addbmm(i, a, b, beta=2.0),
  lambda g, i, a, b: i.addbmm(a, b, beta=2.0))
C("chain_matmul", [F((2, 4)), F((4, 3)), F((3, 2))], lambda t, a, b, c: t.linalg.multi_dot([a, b, c]),
  lambda g, a, b, c: g.chain_matmul(a, b, c))
C("tensordot", [F((3, 4, 5)), F((4, 2, 3))], lambda t, a, b: t.tensordot(a, b, dims=([1, 0], [0, 2])),
  lambda g, a, b: g.tensordot(a, b, dims=([1, 0], [0, 2])))
C("tensordot[int]", [F((3, 4, 5)), F((4, 5, 2))], lambda t, a, b: t.tensordot(a, b, 2),
  lambda g, a, b: g.tensordot(a, b, 2))

# ---- matrix builders ------------------------------------------------------------------------------------
C("block_diag", [F((2, 3)), F((3,)), F(())], lambda t, *xs: t.block_diag(*xs), lambda g, *xs: g.block_diag(*xs))
C("cov", [F((3, 6))], lambda t, x: t.cov(x), lambda g, x: g.cov(x))
C("cov[weights]", [F((3, 6)), I((6,), 1, 4), F((6,), 0.5, 2.0, diff=False)],
  lambda t, x, f, a: t.cov(x, correction=0, fweights=f, aweights=a),
  lambda g, x, f, a: g.cov(x, correction=0, fweights=f, aweights=a))
C("cov[aweights_bessel]", [F((2, 5)), F((5,), 0.5, 2.0, diff=False)], lambda t, x, a: t.cov(x, aweights=a),
  lambda g, x, a: g.cov(x, aweights=a))
C("cov[vector]", [F((6,))], lambda t, x: t.cov(x), lambda g, x: g.cov(x))
C("corrcoef", [F((3, 6))], lambda t, x: t.corrcoef(x), lambda g, x: g.corrcoef(x))
C("diagflat", [F((2, 2))], lambda t, x: t.diagflat(x, -1), lambda g, x: g.diagflat(x, -1))
# torch.vander's backward fails in PyTorch itself (an in-place error), so the values only
C("vander", [F((4,), diff=False)], lambda t, x: t.vander(x), lambda g, x: g.vander(x))
C("vander[linalg_increasing]", [F((4,), diff=False)], lambda t, x: t.linalg.vander(x, N=3),
  lambda g, x: g.linalg.vander(x, N=3))
C("tril_indices", [], lambda t: t.tril_indices(3, 4, 1), lambda g: g.tril_indices(3, 4, 1))
C("triu_indices", [], lambda t: t.triu_indices(4, 3, -1), lambda g: g.triu_indices(4, 3, -1))
C("cartesian_prod", [F((2,)), F((3,))], lambda t, a, b: t.cartesian_prod(a, b), lambda g, a, b: g.cartesian_prod(a, b))
C("combinations", [F((4,))], lambda t, x: t.combinations(x, 3), lambda g, x: g.combinations(x, 3))
C("combinations[with_replacement]", [F((3,))], lambda t, x: t.combinations(x, with_replacement=True),
  lambda g, x: g.combinations(x, with_replacement=True))
