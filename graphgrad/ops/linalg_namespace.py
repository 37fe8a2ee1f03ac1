"""``gg.linalg``: the linear-algebra namespace, with ``torch.linalg``'s names and meanings (most are also
``numpy.linalg``'s): ``gg.linalg.norm``, ``gg.linalg.svd``, ``gg.linalg.eigh``... It is ``torch.linalg``
in ``graphgrad.compat.torch``.

Nothing is computed here: every name is an op function of the ``linalg``, ``linalg_more`` and
``linalg_products`` families, or a thin function giving one of them ``torch.linalg``'s defaults
(``diagonal`` of the last two dims, ``vander`` increasing, ``norm`` choosing vector or matrix norm).
Results with several parts are named tuples as in PyTorch: ``slogdet`` (sign, logabsdet), ``lu`` (P, L,
U), ``lu_factor`` (LU, pivots), ``eigh``
(eigenvalues, eigenvectors), ``svd`` (U, S, Vh), ``qr`` (Q, R), ``lstsq`` (solution, residuals, rank,
singular_values), ``inv_ex`` (inverse, info).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Optional

from graphgrad import ops as _ops
from graphgrad.backend import np as _np
from graphgrad.core.op import as_tensor_args as _args

det = _ops.det
slogdet = _ops.slogdet
inv = _ops.inv
inv_ex = _ops.inv_ex
lstsq = _ops.lstsq
pinv = _ops.pinv
matrix_rank = _ops.matrix_rank
matrix_power = _ops.matrix_power
matrix_exp = _ops.matrix_exp
cholesky = _ops.cholesky
qr = _ops.qr
eigh = _ops.eigh
eigvalsh = _ops.eigvalsh
eig = _ops.eig
eigvals = _ops.eigvals
svd = _ops.svd
svdvals = _ops.svdvals
cross = _ops.cross
multi_dot = _ops.multi_dot
tensorinv = _ops.tensorinv
tensorsolve = _ops.tensorsolve
vecdot = _ops.vecdot
matmul = _ops.matmul
vector_norm = _ops.vector_norm
cond = _ops.cond
lu = _ops.lu
lu_factor = _ops.lu_factor
lu_factor_ex = _ops.lu_factor_ex
lu_solve = _ops.lu_solve
householder_product = _ops.householder_product
ldl_factor = _ops.ldl_factor
ldl_factor_ex = _ops.ldl_factor_ex
ldl_solve = _ops.ldl_solve
solve_triangular = _ops.solve_triangular
#: what a singular or not positive-definite input raises
LinAlgError = _np.linalg.LinAlgError
matrix_norm = _ops.matrix_norm

CholeskyExResult = namedtuple("CholeskyExResult", ["L", "info"])
SolveExResult = namedtuple("SolveExResult", ["result", "info"])


def norm(A, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype=None, axis: Any = None,
         keepdims: Optional[bool] = None):
    """``torch.linalg.norm`` (``numpy.linalg.norm``'s ``axis``/``keepdims`` too): a vector norm when
    ``dim`` is an int or ``A`` is 1-D, a matrix norm when ``dim`` is a pair or ``A`` is 2-D (with
    ``ord`` given); with ``ord`` and ``dim`` both ``None``, the 2-norm of all elements."""
    (A,) = _args(A)
    dim = dim if axis is None else axis
    keepdim = keepdim if keepdims is None else keepdims
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise ValueError(f"linalg.norm: with ord={ord!r} and dim=None the input must be 1-D or 2-D, got "
                             f"shape {tuple(A.shape)}")
        dim = 0 if A.ndim == 1 else (0, 1)
    if isinstance(dim, int) or len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)


def solve(A, B, *, left: bool = True):
    """``torch.linalg.solve``: ``X`` with ``A @ X = B`` (``X @ A = B`` when not ``left``). As in PyTorch,
    ``B`` is a (batch of) vector(s) when it is 1-D or its shape is ``A``'s without the last dim
    (``gg.solve`` follows NumPy 2: vectors only when 1-D).
    Shapes: (..., n, n), (..., n) or (..., n, k) -> B's shape."""
    A, B = _args(A, B)
    if B.ndim > 1 and tuple(B.shape) == tuple(A.shape[:-1]):  # a batch of vectors
        column = _ops.expand_dims(B, -1)
        if not left:
            return _ops.squeeze(_ops.solve(_ops.swapaxes(A, -1, -2), column), -1)
        return _ops.squeeze(_ops.solve(A, column), -1)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        if B.ndim == 1:
            return _ops.solve(_ops.swapaxes(A, -1, -2), B)
        return _ops.swapaxes(_ops.solve(_ops.swapaxes(A, -1, -2), _ops.swapaxes(B, -1, -2)), -1, -2)
    return _ops.solve(A, B)


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """``torch.linalg.diagonal``: the diagonal of the last two dims (``gg.diagonal`` with those defaults)."""
    return _ops.diagonal(A, offset, dim1, dim2)


def vander(x, *, N: Optional[int] = None):
    """``torch.linalg.vander``: powers of ``x`` increasing from ``x**0`` (``gg.vander`` decreases by
    default, as NumPy's). Shapes: (..., n) with 1-D supported -> (n, N)."""
    return _ops.vander(x, N, increasing=True)


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False):
    """``torch.linalg.cholesky_ex``: ``(L, info)`` with ``info`` 0; a matrix that is not positive
    definite raises (graphgrad reports errors rather than codes)."""
    L = cholesky(A, upper=upper)
    return CholeskyExResult(L, _ops.zeros_like(_ops.getitem(L, (Ellipsis, 0, 0)), dtype="int32"))


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False):
    """``torch.linalg.solve_ex``: ``(result, info)`` with ``info`` 0 (a singular matrix raises)."""
    (A,) = _args(A)
    X = solve(A, B, left=left)
    return SolveExResult(X, _ops.zeros_like(_ops.getitem(A, (Ellipsis, 0, 0)), dtype="int32"))


__all__ = ["det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "lstsq", "pinv", "matrix_rank", "matrix_power",
           "matrix_exp", "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "cross",
           "multi_dot", "tensorinv", "tensorsolve", "vecdot", "matmul", "vector_norm", "cond", "solve_triangular", "LinAlgError", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "householder_product", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "matrix_norm", "norm",
           "diagonal", "vander"]
