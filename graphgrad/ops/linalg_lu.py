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
``triangular_solve`` is PyTorch's older form of ``linalg.solve_triangular``.

LDL^T of symmetric (possibly indefinite) matrices: ``ldl_factor`` (LAPACK's sytrf, lower, Bunch-Kaufman
pivoting with 1x1 and 2x2 blocks; its compact ``LD`` and pivots, negative for a 2x2 block) and
``ldl_solve`` (sytrs). Neither is differentiable, as in PyTorch."""
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
from graphgrad.ops.linalg import _fmt, _linalg_dtype, _mT, _square_spec, matmul, solve
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


# ---- LDL^T (Bunch-Kaufman) ------------------------------------------------------------------------------
LDLFactorResult = namedtuple("LDLFactorResult", ["LD", "pivots"])
LDLFactorExResult = namedtuple("LDLFactorExResult", ["LD", "pivots", "info"])
_BK_ALPHA = (1.0 + 17.0 ** 0.5) / 8.0


def _sytf2_lower(xp, a):
    """LAPACK's sytf2 (lower) on one symmetric matrix, in place; returns the 1-based pivots."""
    n = a.shape[0]
    ipiv = [0] * n
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(float(a[k, k]))
        imax, colmax = k, 0.0
        if k < n - 1:
            imax = k + 1 + int(xp.argmax(xp.abs(a[k + 1:, k])))
            colmax = abs(float(a[imax, k]))
        kp = k
        if max(absakk, colmax) != 0.0 and absakk < _BK_ALPHA * colmax:
            rowmax = float(xp.max(xp.abs(a[imax, k:imax]))) if imax > k else 0.0
            if imax < n - 1:
                rowmax = max(rowmax, float(xp.max(xp.abs(a[imax + 1:, imax]))))
            if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                kp = k
            elif abs(float(a[imax, imax])) >= _BK_ALPHA * rowmax:
                kp = imax
            else:
                kp, kstep = imax, 2
        kk = k + kstep - 1
        if kp != kk:  # interchange rows and columns kk and kp of the trailing matrix
            if kp < n - 1:
                a[kp + 1:, kk], a[kp + 1:, kp] = a[kp + 1:, kp].copy(), a[kp + 1:, kk].copy()
            a[kk + 1:kp, kk], a[kp, kk + 1:kp] = a[kp, kk + 1:kp].copy(), a[kk + 1:kp, kk].copy()
            a[kk, kk], a[kp, kp] = a[kp, kp].copy(), a[kk, kk].copy()
            if kstep == 2:
                a[k + 1, k], a[kp, k] = a[kp, k].copy(), a[k + 1, k].copy()
        if kstep == 1:
            if k < n - 1 and a[k, k] != 0:
                x = a[k + 1:, k] / a[k, k]
                a[k + 1:, k + 1:] -= xp.tril(xp.outer(x, a[k + 1:, k]))
                a[k + 1:, k] = x
            ipiv[k] = kp + 1
        else:
            if k < n - 2:
                d21 = a[k + 1, k]
                d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                scale = (1.0 / (d11 * d22 - 1.0)) / d21
                wk = scale * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                wkp1 = scale * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                a[k + 2:, k + 2:] -= xp.tril(xp.outer(a[k + 2:, k], wk) + xp.outer(a[k + 2:, k + 1], wkp1))
                a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv


class LdlFactor(Op):
    """LDL^T with Bunch-Kaufman pivoting (LAPACK's sytrf, lower), packed (..., LD, pivots). Not differentiable."""

    def infer(self, a):
        _square_spec(self, a)
        n = a.shape[-1]
        return _packed_spec(self, a, (n, n), (n,))

    def forward(self, xp, a):
        if a.dtype.kind != "f":
            a = a.astype("float64")
        n = a.shape[-1]
        batch = a.shape[:-2]
        work = xp.array(xp.tril(a).reshape((math.prod(batch), n, n)), copy=True)
        pivots = xp.zeros((work.shape[0], n), a.dtype)
        for b in range(work.shape[0]):  # the pivot choices differ per matrix: one at a time
            pivots[b] = xp.asarray(_sytf2_lower(xp, work[b]), dtype=a.dtype)
        return _pack(xp, a, work.reshape(a.shape), pivots.reshape(batch + (n,)))


def ldl_factor(A, *, hermitian: bool = False) -> LDLFactorResult:
    """``torch.linalg.ldl_factor``: ``(LD, pivots)``, the compact LDL^T of a symmetric matrix as LAPACK's
    sytrf (lower triangle read) gives it: L's strict lower part and the block-diagonal D (1x1 and 2x2
    blocks) in one matrix; int32 1-based pivots, negative for a 2x2 block. Not differentiable.
    Shapes: (..., n, n) -> (..., n, n), (..., n)."""
    (A,) = as_tensor_args(A)
    n = _matrix_dims("ldl_factor", A)[1]
    LD, pivots = _unpack(LdlFactor().apply(A), [(n, n), (n,)])
    return LDLFactorResult(LD, pivots.astype("int32"))


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False) -> LDLFactorExResult:
    """``torch.linalg.ldl_factor_ex``: ``(LD, pivots, info)`` with ``info`` 0 (int32)."""
    LD, pivots = ldl_factor(A, hermitian=hermitian)
    return LDLFactorExResult(LD, pivots, zeros_like(getitem(pivots, (Ellipsis, 0))))


def _sytrs_lower(xp, a, ipiv, b):
    """LAPACK's sytrs (lower): solve A X = B in place in ``b`` from sytf2's ``a`` and 1-based ``ipiv``."""
    n = a.shape[0]
    k = 0
    while k < n:  # L D Y = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[k], b[kp] = b[kp].copy(), b[k].copy()
            b[k + 1:] -= xp.outer(a[k + 1:, k], b[k])
            b[k] = b[k] / a[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[k + 1], b[kp] = b[kp].copy(), b[k + 1].copy()
            b[k + 2:] -= xp.outer(a[k + 2:, k], b[k]) + xp.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if ipiv[k] > 0:
            b[k] -= a[k + 1:, k] @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[k], b[kp] = b[kp].copy(), b[k].copy()
            k -= 1
        else:
            b[k] -= a[k + 1:, k] @ b[k + 1:]
            b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[k], b[kp] = b[kp].copy(), b[k].copy()
            k -= 2


class LdlSolve(Op):
    """``X`` with ``A X = B`` from ``ldl_factor(A)`` (LAPACK's sytrs, lower). Not differentiable."""

    def infer(self, ld, pivots, b):
        _square_spec(self, ld)
        if len(b.shape) < 2 or b.shape[-2] != ld.shape[-1]:
            raise ShapeError(f"ldl_solve: B {_fmt(b.shape)} must be (..., {ld.shape[-1]}, k) for LD {_fmt(ld.shape)}")
        return TensorSpec(tuple(b.shape), _linalg_dtype(self, ld, b))

    def forward(self, xp, ld, pivots, b):
        n, k = b.shape[-2:]
        batch = b.shape[:-2]
        lds = xp.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n)) if batch else ld.reshape((1, n, n))
        pivs = xp.broadcast_to(pivots, batch + (n,)).reshape((-1, n)) if batch else pivots.reshape((1, n))
        out = xp.array(b.reshape((math.prod(batch), n, k)), copy=True, dtype=xp.result_type(ld, b))
        for i in range(out.shape[0]):
            _sytrs_lower(xp, lds[i], [int(p) for p in pivs[i]], out[i])
        return out.reshape(b.shape)


def ldl_solve(LD, pivots, B, *, hermitian: bool = False) -> Tensor:
    """``torch.linalg.ldl_solve``: ``X`` with ``A X = B`` from ``ldl_factor(A)``. Not differentiable.
    Shapes: (..., n, n), (..., n), (..., n, k) -> (..., n, k)."""
    return LdlSolve().apply(*as_tensor_args(LD, pivots, B))


def _lu_method(x: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """PyTorch's older ``x.lu()`` / ``torch.lu``: ``(LU, pivots)`` (and ``infos`` zeros when asked)."""
    result = lu_factor_ex(x, pivot=pivot)
    return tuple(result) if get_infos else (result.LU, result.pivots)


def _lu_solve_method(b: Tensor, LU_data, LU_pivots) -> Tensor:
    """PyTorch's older ``b.lu_solve(LU_data, LU_pivots)`` / ``torch.lu_solve``."""
    return lu_solve(LU_data, LU_pivots, b)


TORCH_METHODS = {"lu": _lu_method, "lu_solve": _lu_solve_method}

__all__ = ["Lu", "PivotsToPermutation", "Geqrf", "lu", "lu_factor", "lu_factor_ex", "lu_unpack", "lu_solve", "geqrf",
           "householder_product", "orgqr", "ormqr", "triangular_solve", "LdlFactor", "LdlSolve", "ldl_factor",
           "ldl_factor_ex", "ldl_solve"]
