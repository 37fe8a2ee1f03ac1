"""LU and Householder factorizations. LU decomposition with partial pivoting: ``torch.linalg.lu`` (``A = P L U``), ``lu_factor`` (LAPACK's
compact ``LU`` and 1-based ``pivots``), ``lu_solve`` and ``lu_unpack``, and PyTorch's older ``torch.lu``.

``Lu`` is the one op: its forward eliminates column by column (vectorized over the batch), picking the
largest remaining entry of each column as the pivot, as LAPACK's getrf does; its output packs ``P``,
``L``, ``U`` and the pivots (exact small integers as floats) side by side, which the functions slice
out (see ``linalg_more``). The gradient, for square matrices, is
``P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T``. ``PivotsToPermutation`` turns pivots into the
permutation matrix (no gradient: its input is an index).

Householder form: ``geqrf`` (LAPACK's compact QR: R above the diagonal, the reflectors' vectors below,
and their scales ``tau``; no gradient, as in PyTorch), ``householder_product`` (``orgqr``: Q from
them) and ``ormqr`` (Q, or Q^T, times a matrix), the last two composed, so differentiable.
``triangular_solve`` is PyTorch's older form of ``linalg.solve_triangular``."""
from __future__ import annotations

import math
from collections import namedtuple

from graphgrad.backend import np
from graphgrad.core.creation import eye as _eye, tensor as _tensor
from graphgrad.core.op import Op, as_tensor_args
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GradError, ShapeError
from graphgrad.ops.indexing import getitem
from graphgrad.ops.linalg import _fmt, _linalg_dtype, _mT, matmul, solve
from graphgrad.ops.linalg_more import _matrix_dims, _matrix_spec, _pack, _packed_spec, _unpack, solve_triangular
from graphgrad.ops.shape import concatenate, expand_dims, tril, triu
from graphgrad.ops.array import zeros_like

LUResult = namedtuple("LUResult", ["P", "L", "U"])
LUFactorResult = namedtuple("LUFactorResult", ["LU", "pivots"])
LUFactorExResult = namedtuple("LUFactorExResult", ["LU", "pivots", "info"])


def _lu_shapes(m: int, n: int) -> list:
    k = min(m, n)
    return [(m, m), (m, k), (k, n), (k,)]


def _permutation(xp, perm, dtype):
    """The matrices P with ``P[perm[i], i] = 1`` (so ``P^T A`` has ``A[perm[i]]`` as row i)."""
    m = perm.shape[-1]
    return (perm[..., :, None] == xp.arange(m)[None, :]).swapaxes(-1, -2).astype(dtype)


class Lu(Op):
    """``A = P L U`` with partial pivoting, packed (..., P, L, U, pivots)."""

    def infer(self, a):
        m, n = _matrix_spec(self, a)
        return _packed_spec(self, a, *_lu_shapes(m, n))

    def forward(self, xp, a):
        if a.dtype.kind != "f":
            a = a.astype("float64")
        m, n = a.shape[-2:]
        k = min(m, n)
        batch = a.shape[:-2]
        work = xp.array(a.reshape((math.prod(batch), m, n)), copy=True)
        rows = xp.arange(work.shape[0])
        perm = xp.broadcast_to(xp.arange(m), (work.shape[0], m)).copy()
        pivots = xp.zeros((work.shape[0], k), a.dtype)
        for j in range(k):
            p = xp.argmax(xp.abs(work[:, j:, j]), axis=-1) + j
            pivots[:, j] = p + 1
            top, chosen = work[rows, j].copy(), work[rows, p].copy()
            work[rows, j], work[rows, p] = chosen, top
            ptop, pchosen = perm[rows, j].copy(), perm[rows, p].copy()
            perm[rows, j], perm[rows, p] = pchosen, ptop
            pivot = work[:, j, j]
            safe = xp.where(pivot == 0, 1.0, pivot)
            factors = xp.where((pivot == 0)[:, None], 0.0, work[:, j + 1:, j] / safe[:, None])
            work[:, j + 1:, j] = factors
            work[:, j + 1:, j + 1:] -= factors[:, :, None] * work[:, j, None, j + 1:]
        lower = xp.tril(work[:, :, :k], -1) + xp.eye(m, k, dtype=a.dtype)
        upper = xp.triu(work[:, :k, :])
        p_mat = _permutation(xp, perm, a.dtype)
        out = [x.reshape(batch + x.shape[1:]) for x in (p_mat, lower, upper, pivots)]
        return _pack(xp, a, *out)

    def backward(self, inputs, out, g):
        m, n = inputs[0].shape[-2:]
        if m != n:
            raise GradError(f"lu: the gradient is implemented for square matrices; got shape {_fmt(inputs[0].shape)}")
        shapes = _lu_shapes(m, n)
        p, lower, upper, _ = _unpack(out, shapes)
        _, gl, gu, _ = _unpack(g, shapes)
        phi = tril(matmul(_mT(lower), gl), -1) + triu(matmul(gu, _mT(upper)))
        x = solve(_mT(lower), phi)  # L^-T phi
        return (matmul(p, _mT(solve(upper, _mT(x)))),)  # P (L^-T phi U^-T)


def lu(A, *, pivot: bool = True) -> LUResult:
    """``torch.linalg.lu``: ``(P, L, U)`` with ``A = P @ L @ U``, ``L`` unit lower triangular (m, k),
    ``U`` upper triangular (k, n), k = min(m, n); partial pivoting as LAPACK. Differentiable for square
    matrices. Shapes: (..., m, n) -> (..., m, m), (..., m, k), (..., k, n)."""
    (A,) = as_tensor_args(A)
    if not pivot:
        raise NotImplementedError("lu: LU without pivoting is not implemented (as on PyTorch's CPU)")
    m, n = _matrix_dims("lu", A)
    p, lower, upper, _ = _unpack(Lu().apply(A), _lu_shapes(m, n))
    return LUResult(p, lower, upper)


def _compact(lower: Tensor, upper: Tensor, m: int, n: int) -> Tensor:
    """LAPACK's one-matrix form: L's strict lower triangle and U, (m, n)."""
    strict = tril(lower, -1)
    if m >= n:  # L (m, n), U (n, n): U gets zero rows below it
        return strict + concatenate([upper, zeros_like(getitem(strict, (Ellipsis, slice(n, m), slice(None))))], -2)
    return concatenate([strict, zeros_like(getitem(upper, (Ellipsis, slice(None), slice(m, n))))], -1) + upper


def lu_factor(A, *, pivot: bool = True) -> LUFactorResult:
    """``torch.linalg.lu_factor``: ``(LU, pivots)``, LAPACK's compact form (L's strict lower triangle
    and U in one (m, n) matrix) and the 1-based int32 row swaps. Shapes: (..., m, n) -> (..., m, n), (..., k)."""
    (A,) = as_tensor_args(A)
    if not pivot:
        raise NotImplementedError("lu_factor: LU without pivoting is not implemented (as on PyTorch's CPU)")
    m, n = _matrix_dims("lu_factor", A)
    _, lower, upper, pivots = _unpack(Lu().apply(A), _lu_shapes(m, n))
    return LUFactorResult(_compact(lower, upper, m, n), pivots.astype("int32"))


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:
    """``torch.linalg.lu_factor_ex``: ``(LU, pivots, info)`` with ``info`` 0 (int32)."""
    LU, pivots = lu_factor(A, pivot=pivot)
    return LUFactorExResult(LU, pivots, zeros_like(getitem(pivots, (Ellipsis, 0))))


class PivotsToPermutation(Op):
    """The permutation matrix P (``A = P L U``) of LAPACK's 1-based ``pivots`` (row swaps in order)."""
    props = ("m",)

    def __init__(self, m: int):
        self.m = int(m)

    def infer(self, pivots):
        return TensorSpec(tuple(pivots.shape[:-1]) + (self.m, self.m), _linalg_dtype(self, pivots))

    def forward(self, xp, pivots):
        batch, k = pivots.shape[:-1], pivots.shape[-1]
        flat = pivots.reshape((math.prod(batch), k)).astype("int64") - 1
        rows = xp.arange(flat.shape[0])
        perm = xp.broadcast_to(xp.arange(self.m), (flat.shape[0], self.m)).copy()
        for j in range(k):
            p = flat[:, j]
            top, chosen = perm[rows, j].copy(), perm[rows, p].copy()
            perm[rows, j], perm[rows, p] = chosen, top
        return _permutation(xp, perm, "float64").reshape(batch + (self.m, self.m))


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True) -> LUResult:
    """``torch.lu_unpack``: ``(P, L, U)`` from ``lu_factor``'s compact form and pivots."""
    LU, pivots = as_tensor_args(LU_data, LU_pivots)
    m, n = _matrix_dims("lu_unpack", LU)
    k = min(m, n)
    lower = tril(getitem(LU, (Ellipsis, slice(None), slice(0, k))), -1) + _eye(m, k, dtype=LU.dtype)
    upper = triu(getitem(LU, (Ellipsis, slice(0, k), slice(None))))
    p = PivotsToPermutation(m).apply(pivots).astype(LU.dtype)
    return LUResult(p, lower, upper)


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """``torch.linalg.lu_solve``: ``X`` with ``A X = B`` (``X A = B`` when not ``left``; ``A^T`` when
    ``adjoint``) from ``lu_factor(A)``. Shapes: (..., n, n), (..., n), (..., n, k) -> (..., n, k)."""
    (LU,) = as_tensor_args(LU)
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        raise ShapeError(f"lu_solve: LU must be square (..., n, n), got shape {_fmt(LU.shape)}")
    p, lower, upper = lu_unpack(LU, pivots)
    (B,) = as_tensor_args(B)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(LU, pivots, _mT(B), left=True, adjoint=not adjoint))
    if adjoint:  # A^T = U^T L^T P^T
        y = solve_triangular(_mT(upper), B, upper=False)
        y = solve_triangular(_mT(lower), y, upper=True, unitriangular=True)
        return matmul(p, y)
    y = solve_triangular(lower, matmul(_mT(p), B), upper=False, unitriangular=True)
    return solve_triangular(upper, y, upper=True)


# ---- Householder form -------------------------------------------------------------------------------
GeqrfResult = namedtuple("GeqrfResult", ["a", "tau"])
TriangularSolveResult = namedtuple("TriangularSolveResult", ["solution", "cloned_coefficient"])


class Geqrf(Op):
    """LAPACK's geqrf: the compact Householder QR (a (m, n), tau (k,)), packed. Not differentiable."""

    def infer(self, a):
        m, n = _matrix_spec(self, a)
        return _packed_spec(self, a, (m, n), (min(m, n),))

    def forward(self, xp, a):
        if a.dtype.kind != "f":
            a = a.astype("float64")
        h, tau = xp.linalg.qr(a, mode="raw")  # h is the transposed (Fortran-order) result
        return _pack(xp, a, xp.swapaxes(h, -1, -2), tau)


def geqrf(input) -> GeqrfResult:
    """``torch.geqrf``: ``(a, tau)``, QR in LAPACK's Householder form (R on and above the diagonal, the
    reflectors below it with an implicit 1). No gradient. Shapes: (..., m, n) -> (..., m, n), (..., k)."""
    (A,) = as_tensor_args(input)
    m, n = _matrix_dims("geqrf", A)
    a, tau = _unpack(Geqrf().apply(A), [(m, n), (min(m, n),)])
    return GeqrfResult(a, tau)


def _reflect(A: Tensor, tau: Tensor, C: Tensor, transpose: bool) -> Tensor:
    """``H_1 ... H_k C`` (``H_k ... H_1 C`` when ``transpose``), ``H_i = I - tau_i v_i v_i^T`` with ``v_i``
    the i-th column of ``A`` below the diagonal, 1 on it and 0 above."""
    m = A.shape[-2]
    k = tau.shape[-1]
    for i in (range(k) if transpose else range(k - 1, -1, -1)):
        below, unit = np.zeros((m, 1)), np.zeros((m, 1))
        below[i + 1:], unit[i] = 1.0, 1.0
        col = getitem(A, (Ellipsis, slice(None), slice(i, i + 1)))  # (..., m, 1)
        v = col * _tensor(below, dtype=A.dtype) + _tensor(unit, dtype=A.dtype)
        t = expand_dims(getitem(tau, (Ellipsis, slice(i, i + 1))), -1)  # (..., 1, 1)
        C = C - t * matmul(v, matmul(_mT(v), C))
    return C


def householder_product(A, tau) -> Tensor:
    """``torch.linalg.householder_product`` (``torch.orgqr``): the first n columns of the product of the
    Householder reflectors ``H_i = I - tau_i v_i v_i^T`` stored in ``A`` (as ``geqrf`` gives).
    Shapes: (..., m, n), (..., k) -> (..., m, n)."""
    A, tau = as_tensor_args(A, tau)
    m, n = _matrix_dims("householder_product", A)
    start = _eye(m, n, dtype=A.dtype) + zeros_like(A)
    return _reflect(A, tau, start, transpose=False)


def orgqr(input, tau) -> Tensor:
    """``torch.orgqr``: :func:`householder_product`."""
    return householder_product(input, tau)


def ormqr(input, tau, other, left: bool = True, transpose: bool = False) -> Tensor:
    """``torch.ormqr``: ``Q @ other`` (``Q^T`` when ``transpose``; ``other @ Q`` when not ``left``) with Q
    the (m, m) product of the reflectors of ``geqrf``. Shapes: (..., m, n), (..., k), (..., m, p)."""
    A, tau, C = as_tensor_args(input, tau, other)
    if not left:  # C Q = (Q^T C^T)^T
        return _mT(_reflect(A, tau, _mT(C), transpose=not transpose))
    return _reflect(A, tau, C, transpose=transpose)


def triangular_solve(b, A, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolveResult:
    """``torch.triangular_solve`` (PyTorch's older form of ``linalg.solve_triangular``):
    ``(solution, cloned_coefficient)`` with ``A X = b`` (``A^T X = b`` when ``transpose``)."""
    b, A = as_tensor_args(b, A)
    coefficient = _mT(A) if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(solution, A + zeros_like(A))


def _lu_method(x: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """PyTorch's older ``x.lu()`` / ``torch.lu``: ``(LU, pivots)`` (and ``infos`` zeros when asked)."""
    result = lu_factor_ex(x, pivot=pivot)
    return tuple(result) if get_infos else (result.LU, result.pivots)


def _lu_solve_method(b: Tensor, LU_data, LU_pivots) -> Tensor:
    """PyTorch's older ``b.lu_solve(LU_data, LU_pivots)`` / ``torch.lu_solve``."""
    return lu_solve(LU_data, LU_pivots, b)


TORCH_METHODS = {"lu": _lu_method, "lu_solve": _lu_solve_method}

__all__ = ["Lu", "PivotsToPermutation", "Geqrf", "lu", "lu_factor", "lu_factor_ex", "lu_unpack", "lu_solve", "geqrf",
           "householder_product", "orgqr", "ormqr", "triangular_solve"]
