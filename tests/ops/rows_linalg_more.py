"""Op-table rows for the decompositions, matrix functions and products (linalg_more, linalg_products).

Decompositions have sign-ambiguous factors, so their rows check quantities that do not depend on the
signs (reconstructions, absolute values of singular/eigen vectors) against NumPy. Symmetric inputs
(eigh, cholesky) are built inside the row from a general matrix, so the finite-difference check sees
the same function graphgrad differentiates. Rows whose leading dim is a matrix dim set ``batch=False``
(the decompositions need their matrix dims when the graph is built)."""
from __future__ import annotations

import math

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, F, I, OpSpec

LOOSE = {"rtol32": 2e-4, "atol32": 2e-4}


def _sym(a):
    """A symmetric matrix from a general one (graphgrad or NumPy)."""
    t = gg.swapaxes(a, -1, -2) if isinstance(a, gg.Tensor) else np.swapaxes(a, -1, -2)
    return (a + t) / 2


def _spd(a):
    """A symmetric positive-definite matrix: a a^T + n I."""
    n = a.shape[-1]
    if isinstance(a, gg.Tensor):
        return gg.matmul(a, gg.swapaxes(a, -1, -2)) + gg.tensor(n * np.eye(n), dtype=a.dtype)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _wc(a):
    """``a`` + 3 I (comfortably invertible)."""
    n = a.shape[-1]
    return a + (gg.tensor(3.0 * np.eye(n), dtype=a.dtype) if isinstance(a, gg.Tensor) else 3.0 * np.eye(n))


def _recon(r):
    """U diag(S) Vh of a graphgrad svd result."""
    return gg.matmul(r.U * gg.expand_dims(r.S, -2), r.Vh)


def _np_sign_fixed(v, axis=-2):
    """abs of singular/eigen vectors: the sign-free part NumPy and graphgrad agree on."""
    return np.abs(v)


def _expm(a):
    """The NumPy reference of matrix_exp: by eigen-decomposition (inputs here are diagonalizable)."""
    w, v = np.linalg.eig(a)
    return np.real(v @ (np.exp(w)[..., None] * np.linalg.inv(v)))


def _np_lu(a):
    """A plain partial-pivoting LU of one matrix: (P, L, U) with a = P L U."""
    a = np.array(a, dtype=float)
    m, n = a.shape
    perm = np.arange(m)
    for j in range(min(m, n)):
        p = j + np.argmax(np.abs(a[j:, j]))
        a[[j, p]], perm[[j, p]] = a[[p, j]], perm[[p, j]]
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    k = min(m, n)
    return np.eye(m)[:, perm], np.tril(a[:, :k], -1) + np.eye(m, k), np.triu(a[:k])


def _np_reflectors(a, tau):
    """The (m, m) product H_1 ... H_k of the Householder reflectors stored in a and tau."""
    m = a.shape[0]
    q = np.eye(m)
    for i in range(tau.shape[0]):
        v = np.concatenate([np.zeros(i), [1.0], a[i + 1:, i]])
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    return q


def _np_cov(x, correction=1, fweights=None, aweights=None):
    return np.cov(x, ddof=correction, fweights=fweights, aweights=aweights)


ROWS = [
    # ---- determinants -------------------------------------------------------------------------------------
    OpSpec("slogdet", lambda a: tuple(gg.slogdet(_wc(a))), lambda a: tuple(np.linalg.slogdet(_wc(a))),
           [F((2, 3, 3))]),
    OpSpec("slogdet[negative]", lambda a: gg.slogdet(a).logabsdet, lambda a: np.linalg.slogdet(a)[1],
           [F((3, 3))], batch=False),
    OpSpec("logdet", lambda a: gg.logdet(_spd(a)), lambda a: np.log(np.linalg.det(_spd(a))), [F((2, 3, 3))]),
    OpSpec("inverse", lambda a: gg.inverse(_wc(a)), lambda a: np.linalg.inv(_wc(a)), [F((2, 3, 3))]),
    OpSpec("inv_ex", lambda a: tuple(gg.inv_ex(_wc(a))),
           lambda a: (np.linalg.inv(_wc(a)), np.zeros(a.shape[:-2], np.int32)), [F((2, 3, 3))]),
    # ---- decompositions --------------------------------------------------------------------------------------
    OpSpec("cholesky", lambda a: gg.cholesky(_spd(a)), lambda a: np.linalg.cholesky(_spd(a)), [F((2, 3, 3))], **LOOSE),
    OpSpec("cholesky[upper]", lambda a: gg.cholesky(_spd(a), upper=True),
           lambda a: np.swapaxes(np.linalg.cholesky(_spd(a)), -1, -2), [F((3, 3))], batch=False, **LOOSE),
    OpSpec("eigh", lambda a: (gg.eigh(_sym(a)).eigenvalues, gg.abs(gg.eigh(_sym(a)).eigenvectors)),
           lambda a: (np.linalg.eigh(_sym(a))[0], np.abs(np.linalg.eigh(_sym(a))[1])), [F((2, 4, 4))], **LOOSE),
    OpSpec("eigh[upper]", lambda a: gg.eigh(_sym(a), UPLO="U").eigenvalues,
           lambda a: np.linalg.eigh(_sym(a), UPLO="U")[0], [F((3, 3))], batch=False, **LOOSE),
    # eig: complex and not differentiable; the rows compare magnitudes (ordering is LAPACK's in both)
    OpSpec("eig", lambda a: tuple(gg.abs(t) for t in gg.eig(a)), lambda a: tuple(np.abs(t) for t in np.linalg.eig(a)),
           [F((2, 4, 4))], grad=False, **LOOSE),
    OpSpec("eigvals", lambda a: gg.abs(gg.eigvals(a)), lambda a: np.abs(np.linalg.eigvals(a)), [F((3, 3))],
           grad=False, batch=False, **LOOSE),
    OpSpec("eigvalsh", lambda a: gg.eigvalsh(_sym(a)), lambda a: np.linalg.eigvalsh(_sym(a)), [F((2, 4, 4))], **LOOSE),
    OpSpec("svd", lambda a: _recon(gg.svd(a, full_matrices=False)), lambda a: a, [F((2, 4, 3))], order=1, **LOOSE),
    OpSpec("svd[factors_tall]", lambda a: tuple(gg.abs(t) for t in gg.svd(a, full_matrices=False)),
           lambda a: tuple(np.abs(t) for t in np.linalg.svd(a, full_matrices=False)), [F((5, 3))], order=1,
           batch=False, **LOOSE),
    OpSpec("svd[factors_wide]", lambda a: tuple(gg.abs(t) for t in gg.svd(a, full_matrices=False)),
           lambda a: tuple(np.abs(t) for t in np.linalg.svd(a, full_matrices=False)), [F((2, 3, 5))], order=1,
           **LOOSE),
    # the completion columns of a full U are arbitrary (and get no gradient): the row checks the thin part
    OpSpec("svd[full]", lambda a: gg.abs(gg.svd(a).U[:, :2]), lambda a: np.abs(np.linalg.svd(a)[0][:, :2]), [F((4, 2))],
           order=1, batch=False, **LOOSE),
    OpSpec("svdvals", gg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), [F((2, 3, 4))], **LOOSE),
    OpSpec("qr", lambda a: tuple(gg.qr(a)), lambda a: tuple(np.linalg.qr(a)), [F((2, 4, 3))], **LOOSE),
    OpSpec("qr[complete_square]", lambda a: tuple(gg.qr(a, mode="complete")),
           lambda a: tuple(np.linalg.qr(a, mode="complete")), [F((3, 3))], batch=False, **LOOSE),
    OpSpec("qr[r]", lambda a: gg.qr(a, mode="r").R, lambda a: np.linalg.qr(a, mode="r"), [F((3, 4))], grad=False,
           batch=False, **LOOSE),
    OpSpec("pinv", gg.pinv, np.linalg.pinv, [F((2, 4, 3))], **LOOSE),
    OpSpec("pinv[wide]", gg.pinv, np.linalg.pinv, [F((3, 5))], batch=False, **LOOSE),
    OpSpec("pinverse", gg.pinverse, np.linalg.pinv, [F((4, 4))], batch=False, **LOOSE),
    OpSpec("lstsq", lambda a, b: gg.lstsq(a, b).solution, lambda a, b: np.linalg.lstsq(a, b)[0],
           [F((5, 3)), F((5, 2))], batch=False, **LOOSE),
    OpSpec("lstsq[vector]", lambda a, b: gg.lstsq(a, b).solution, lambda a, b: np.linalg.lstsq(a, b)[0],
           [F((5, 3)), F((5,))], batch=False, **LOOSE),
    OpSpec("matrix_rank", gg.matrix_rank, np.linalg.matrix_rank, [F((2, 4, 3))], grad=False),
    OpSpec("matrix_rank[deficient]", gg.matrix_rank, np.linalg.matrix_rank,
           [A(((1.0, 2.0, 3.0), (2.0, 4.0, 6.0), (1.0, 0.0, 1.0)))], grad=False, batch=False),
    OpSpec("cond", gg.cond, np.linalg.cond, [F((2, 3, 3))], **LOOSE),
    OpSpec("cond[fro]", lambda a: gg.cond(_wc(a), "fro"), lambda a: np.linalg.cond(_wc(a), "fro"), [F((2, 3, 3))],
           **LOOSE),
    OpSpec("solve_triangular", lambda a, b: gg.solve_triangular(_wc(a), b, upper=True),
           lambda a, b: np.linalg.solve(np.triu(_wc(a)), b), [F((3, 3)), F((3, 2))], batch=False),
    OpSpec("solve_triangular[right_unit]", lambda a, b: gg.solve_triangular(a, b, upper=False, left=False,
                                                                             unitriangular=True),
           lambda a, b: b @ np.linalg.inv(np.tril(a, -1) + np.eye(3)), [F((2, 3, 3)), F((2, 4, 3))]),
    OpSpec("cholesky_solve", lambda b, a: gg.cholesky_solve(b, gg.cholesky(_spd(a))),
           lambda b, a: np.linalg.solve(_spd(a), b), [F((2, 3, 2)), F((2, 3, 3))], **LOOSE),
    OpSpec("cholesky_inverse", lambda a: gg.cholesky_inverse(gg.cholesky(_spd(a)).mT, upper=True),
           lambda a: np.linalg.inv(_spd(a)), [F((3, 3))], batch=False, **LOOSE),
    OpSpec("lu", lambda a: tuple(gg.lu(a)), _np_lu, [F((4, 4))], batch=False),
    OpSpec("lu[batched_recon]", lambda a: (lambda r: r.P @ r.L @ r.U)(gg.lu(a)), lambda a: a, [F((2, 3, 3))]),
    OpSpec("lu[tall]", lambda a: gg.lu(a).L, lambda a: _np_lu(a)[1], [F((5, 3))], grad=False, batch=False),
    OpSpec("lu_factor", lambda a: gg.lu_factor(a).LU, lambda a: (lambda p, low, up: np.tril(low, -1) + up)(*_np_lu(a)),
           [F((4, 4))], batch=False),
    OpSpec("lu_factor_ex", lambda a: gg.lu_factor_ex(a).info, lambda a: np.zeros(2, np.int32), [F((2, 3, 3))],
           grad=False),
    OpSpec("lu_unpack", lambda a: (lambda r: r.P @ r.L @ r.U)(gg.lu_unpack(*gg.lu_factor(a))), lambda a: a,
           [F((2, 3, 4))], grad=False),
    OpSpec("lu_solve", lambda a, b: gg.lu_solve(*gg.lu_factor(_wc(a)), b), lambda a, b: np.linalg.solve(_wc(a), b),
           [F((2, 3, 3)), F((2, 3, 2))]),
    OpSpec("lu_solve[adjoint_right]", lambda a, b: gg.lu_solve(*gg.lu_factor(_wc(a)), b, left=False, adjoint=True),
           lambda a, b: b @ np.linalg.inv(np.swapaxes(_wc(a), -1, -2)), [F((2, 3, 3)), F((2, 4, 3))]),
    OpSpec("geqrf", lambda a: tuple(gg.geqrf(a)),
           lambda a: (lambda h, tau: (h.T, tau))(*np.linalg.qr(a, mode="raw")), [F((4, 3))], grad=False, batch=False),
    OpSpec("householder_product", gg.householder_product,
           lambda a, tau: _np_reflectors(a, tau)[:, :3], [F((4, 3)), F((2,), 0.5, 1.5)], batch=False),
    OpSpec("orgqr", gg.orgqr, lambda a, tau: _np_reflectors(a, tau)[:, :3], [F((3, 3)), F((3,), 0.5, 1.5)],
           batch=False),
    OpSpec("ormqr", lambda a, tau, c: gg.ormqr(a, tau, c, transpose=True),
           lambda a, tau, c: _np_reflectors(a, tau).T @ c, [F((4, 3)), F((3,), 0.5, 1.5), F((4, 2))], batch=False),
    OpSpec("ormqr[right]", lambda a, tau, c: gg.ormqr(a, tau, c, left=False),
           lambda a, tau, c: c @ _np_reflectors(a, tau), [F((3, 3)), F((3,), 0.5, 1.5), F((2, 3))], batch=False),
    OpSpec("triangular_solve", lambda b, a: tuple(gg.triangular_solve(b, _wc(a), transpose=True)),
           lambda b, a: (np.linalg.solve(np.triu(_wc(a)).T, b), _wc(a)), [F((3, 2)), F((3, 3))], batch=False),
    # LDL^T: the reference checks the solve; the factor itself is checked against PyTorch in the oracle cases
    OpSpec("ldl_factor", lambda a: tuple(gg.ldl_factor(_sym(a))), None, [F((2, 4, 4))], grad=False),
    OpSpec("ldl_factor_ex", lambda a: gg.ldl_factor_ex(_sym(a)).info, lambda a: np.zeros((), np.int32), [F((4, 4))],
           grad=False, batch=False),
    OpSpec("ldl_solve", lambda a, b: gg.ldl_solve(*gg.ldl_factor(_sym(a)), b),
           lambda a, b: np.linalg.solve(_sym(a), b), [F((2, 4, 4)), F((2, 4, 3))], grad=False, rtol=1e-6, atol=1e-8,
           **LOOSE),
    # randomized low-rank SVD of an exactly low-rank matrix: exact whatever the sketch
    OpSpec("svd_lowrank", lambda a, b: gg.svd_lowrank(a @ b, q=2)[1],
           lambda a, b: np.linalg.svd(a @ b, compute_uv=False)[:2], [F((6, 2)), F((2, 5))], order=1, batch=False,
           **LOOSE),
    OpSpec("pca_lowrank", lambda a, b: gg.pca_lowrank(a @ b, q=3)[1],
           lambda a, b: np.linalg.svd(a @ b - (a @ b).mean(0), compute_uv=False)[:3], [F((6, 2)), F((2, 5))],
           order=1, batch=False, **LOOSE),
    # ---- matrix functions ------------------------------------------------------------------------------------
    OpSpec("matrix_exp", gg.matrix_exp, _expm, [F((2, 3, 3), -1, 1)], rtol=1e-9, atol=1e-10, **LOOSE),
    OpSpec("matrix_exp[scaled]", gg.matrix_exp, _expm, [F((3, 3), -4, 4)], rtol=1e-8, atol=1e-8, order=1,
           batch=False, grad_tol=(1e-4, 1e-3), rtol32=1e-3, atol32=1e-3),
    OpSpec("matrix_power", lambda a: gg.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3), [F((2, 3, 3))]),
    OpSpec("matrix_power[zero]", lambda a: gg.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0),
           [F((3, 3))], batch=False),
    OpSpec("matrix_power[negative]", lambda a: gg.matrix_power(_wc(a), -2),
           lambda a: np.linalg.matrix_power(_wc(a), -2), [F((2, 3, 3))]),
    # ---- norms -----------------------------------------------------------------------------------------------
    OpSpec("vector_norm", lambda x: gg.vector_norm(x, 3, dim=(0, 2)),
           lambda x: np.sum(np.abs(x) ** 3, axis=(0, 2)) ** (1 / 3), [F((2, 3, 4), kinks=(0,))]),
    OpSpec("vector_norm[all_keepdim]", lambda x: gg.vector_norm(x, keepdim=True),
           lambda x: np.sqrt(np.sum(x * x)).reshape(1, 1, 1), [F((2, 3, 4))]),
    OpSpec("matrix_norm", lambda x: gg.matrix_norm(x), lambda x: np.linalg.norm(x, "fro", axis=(-2, -1)),
           [F((2, 3, 4))]),
    OpSpec("matrix_norm[nuc]", lambda x: gg.matrix_norm(x, "nuc"), lambda x: np.linalg.norm(x, "nuc", axis=(-2, -1)),
           [F((2, 3, 4))], **LOOSE),
    OpSpec("matrix_norm[2]", lambda x: gg.matrix_norm(x, 2), lambda x: np.linalg.norm(x, 2, axis=(-2, -1)),
           [F((2, 3, 4))], **LOOSE),
    OpSpec("matrix_norm[-2_dims_keepdim]", lambda x: gg.matrix_norm(x, -2, dim=(0, 2), keepdim=True),
           lambda x: np.linalg.norm(x, -2, axis=(0, 2), keepdims=True), [F((3, 2, 4))], batch=False, **LOOSE),
    OpSpec("matrix_norm[inf]", lambda x: gg.matrix_norm(x, math.inf),
           lambda x: np.linalg.norm(x, np.inf, axis=(-2, -1)), [F((2, 3, 4), kinks=(0,))]),
    OpSpec("norm[nuc]", lambda x: gg.norm(x, "nuc", axis=(1, 2)), lambda x: np.linalg.norm(x, "nuc", axis=(1, 2)),
           [F((2, 3, 4))], **LOOSE),
    OpSpec("dist", lambda a, b: gg.dist(a, b, 3), lambda a, b: np.sum(np.abs(a - b) ** 3) ** (1 / 3),
           [F((3, 4)), F((4,))], batch=False),
    OpSpec("renorm", lambda x: gg.renorm(x, 2, 1, 1.0),
           lambda x: x * np.where((n := np.sqrt((x * x).sum(axis=(0, 2), keepdims=True))) > 1.0,
                                  1.0 / (n + 1e-7), 1.0), [F((3, 4, 2))]),
    # ---- products --------------------------------------------------------------------------------------------
    OpSpec("multi_dot", lambda a, b, c: gg.multi_dot([a, b, c]), lambda a, b, c: np.linalg.multi_dot([a, b, c]),
           [F((4,)), F((4, 3)), F((3, 2))], batch=False),
    OpSpec("chain_matmul", gg.chain_matmul, lambda *m: np.linalg.multi_dot(m), [F((2, 4)), F((4, 3)), F((3, 2))],
           batch=False),
    OpSpec("vecdot", lambda x, y: gg.vecdot(x, y, dim=1), lambda x, y: np.sum(x * y, 1), [F((2, 3)), F((2, 3))]),
    OpSpec("tensorinv", lambda a: gg.tensorinv(_wc(gg.reshape(a, (6, 6))).reshape(6, 2, 3), 1),
           lambda a: np.linalg.tensorinv(_wc(a.reshape(6, 6)).reshape(6, 2, 3), 1), [F((6, 6))], batch=False),
    OpSpec("tensorsolve", lambda a, b: gg.tensorsolve(_wc(gg.reshape(a, (6, 6))).reshape(2, 3, 6), b),
           lambda a, b: np.linalg.tensorsolve(_wc(a.reshape(6, 6)).reshape(2, 3, 6), b), [F((6, 6)), F((2, 3))],
           batch=False),
    OpSpec("trace", gg.trace, np.trace, [F((3, 4))], batch=False),
    OpSpec("trace[axes]", lambda x: gg.trace(x, 1, 1, 2), lambda x: np.trace(x, 1, 1, 2), [F((2, 3, 4))]),
    OpSpec("ger", gg.ger, np.outer, [F((3,)), F((4,))], batch=False),
    OpSpec("inner", gg.inner, np.inner, [F((2, 4)), F((3, 4))], batch=False),
    OpSpec("inner[scalar]", lambda a: gg.inner(a, 2.0), lambda a: np.inner(a, 2.0), [F((3,))]),
    OpSpec("vdot", gg.vdot, np.vdot, [F((2, 3)), F((2, 3))]),
    OpSpec("kron", gg.kron, np.kron, [F((2, 3)), F((2, 2, 2))], batch=False),
    OpSpec("tensordot", lambda a, b: gg.tensordot(a, b, dims=([1, 0], [0, 2])),
           lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 2])), [F((3, 4, 5)), F((4, 2, 3))], batch=False),
    OpSpec("tensordot[int]", lambda a, b: gg.tensordot(a, b, 2), lambda a, b: np.tensordot(a, b, 2),
           [F((3, 4, 5)), F((4, 5, 2))], batch=False),
    OpSpec("cross", gg.cross, np.cross, [F((2, 4, 3)), F((4, 3))], batch=False),
    OpSpec("cross[dim0]", lambda a, b: gg.cross(a, b, dim=0), lambda a, b: np.cross(a, b, axis=0),
           [F((3, 4)), F((3, 4))], batch=False),  # dim 0 is the size-3 dim the product is taken over
    OpSpec("mv", gg.mv, np.matmul, [F((3, 4)), F((4,))], batch=False),
    OpSpec("addmv", lambda i, m, v: gg.addmv(i, m, v, beta=0.5, alpha=2.0), lambda i, m, v: 0.5 * i + 2 * (m @ v),
           [F((3,)), F((3, 4)), F((4,))]),
    OpSpec("addr", lambda i, a, b: gg.addr(i, a, b, beta=0.0), lambda i, a, b: np.outer(a, b),
           [F((3, 4)), F((3,)), F((4,))]),
    OpSpec("addbmm", lambda i, a, b: gg.addbmm(i, a, b, alpha=2.0),
           lambda i, a, b: i + 2 * np.einsum("bnm,bmp->np", a, b), [F((3, 5)), F((2, 3, 4)), F((2, 4, 5))],
           batch=False),
    # ---- matrix builders -------------------------------------------------------------------------------------
    OpSpec("block_diag", gg.block_diag,
           lambda a, b, c: np.block([[a, np.zeros((2, 3)), np.zeros((2, 2))],
                                     [np.zeros((1, 3)), b[None], np.zeros((1, 2))],
                                     [np.zeros((1, 3)), np.zeros((1, 3)), c]]),
           [F((2, 3)), F((3,)), F((1, 2))], batch=False),
    OpSpec("diagflat", lambda x: gg.diagflat(x, 1), lambda x: np.diagflat(x, 1), [F((2, 2))], batch=False),
    OpSpec("vander", gg.vander, np.vander, [F((4,))], batch=False),
    OpSpec("vander[increasing]", lambda x: gg.vander(x, 3, increasing=True),
           lambda x: np.vander(x, 3, increasing=True), [F((4,))], batch=False),
    OpSpec("cov", gg.cov, np.cov, [F((3, 6))], batch=False),
    OpSpec("cov[weights]", lambda x, f, a: gg.cov(x, correction=0, fweights=f, aweights=a),
           lambda x, f, a: _np_cov(x, 0, f, a), [F((3, 6)), I((6,), 1, 4), A((0.5, 1.0, 2.0, 1.5, 0.7, 1.2))],
           batch=False),
    OpSpec("cov[numpy_keywords]", lambda x: gg.cov(x, rowvar=False, ddof=0), lambda x: np.cov(x, rowvar=False, ddof=0),
           [F((6, 3))], batch=False),
    OpSpec("corrcoef", gg.corrcoef, np.corrcoef, [F((3, 6))], batch=False),
    OpSpec("corrcoef[rowvar]", lambda x: gg.corrcoef(x, rowvar=False), lambda x: np.corrcoef(x, rowvar=False),
           [F((6, 3))], batch=False),
    OpSpec("cartesian_prod", gg.cartesian_prod,
           lambda a, b: np.stack([np.repeat(a, 3), np.tile(b, 2)], 1), [F((2,)), F((3,))], batch=False),
    OpSpec("combinations", lambda x: gg.combinations(x, 2), lambda x: x[np.array([[0, 1], [0, 2], [1, 2]])],
           [F((3,))], batch=False),
    OpSpec("combinations[with_replacement]", lambda x: gg.combinations(x, 2, with_replacement=True),
           lambda x: x[np.array([[0, 0], [0, 1], [1, 1]])], [F((2,))], batch=False),
    OpSpec("tril_indices", lambda: gg.tril_indices(3, 4, 1), lambda: np.stack(np.tril_indices(3, 1, 4)), [],
           grad=False),
    OpSpec("triu_indices", lambda: gg.triu_indices(4, 3, -1), lambda: np.stack(np.triu_indices(4, -1, 3)), [],
           grad=False),
]
