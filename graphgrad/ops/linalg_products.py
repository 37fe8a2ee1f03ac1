"""Products and matrix helpers, all composed from other ops (so they differentiate, run in graphs and
export where those ops do): trace, inner, kron, cross, vdot, tensordot, mv/addmv/addr/addbmm,
chain_matmul, block_diag, cov, corrcoef, diagflat, vander, tril/triu_indices, cartesian_prod,
combinations, dist, renorm, and PyTorch's ``inverse``/``ger``.

NumPy's name and meaning where NumPy has the function (``trace``, ``inner``, ``kron``, ``tensordot``,
``vander``, ``cov``); PyTorch's argument names are accepted too (``dims=``, ``correction=``).
"""
from __future__ import annotations

import itertools
import math
import string
from typing import Optional

from graphgrad.backend import np
from graphgrad.core.creation import tensor as _tensor
from graphgrad.core.op import as_tensor_args
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.array import identity
from graphgrad.ops.elementwise import clip, greater, mul, where
from graphgrad.ops.indexing import getitem
from graphgrad.ops.linalg import _fmt, einsum, inv, matmul, outer
from graphgrad.ops.linalg_more import multi_dot, vector_norm
from graphgrad.ops.reduce import mean, sum as _sum
from graphgrad.ops.selection import diagonal, meshgrid
from graphgrad.ops.shape import concatenate, diag, expand_dims, pad, reshape, roll, stack, take
from graphgrad.ops.unary import sqrt


def inverse(input) -> Tensor:
    """``torch.inverse``: the matrix inverse, :func:`inv`. Shapes: (..., n, n) -> (..., n, n)."""
    return inv(input)


def ger(input, vec2) -> Tensor:
    """``torch.ger`` (the older name of ``outer``). Shapes: (n,), (m,) -> (n, m)."""
    return outer(input, vec2)


def trace(x, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Sum of the diagonal, as ``numpy.trace`` (``torch.trace`` for a matrix).
    Shapes: (n, m) -> (); (..., with axis1 and axis2) -> the other dims."""
    (x,) = as_tensor_args(x)
    if x.ndim < 2:
        raise ShapeError(f"trace: expected at least 2 dims, got shape {_fmt(x.shape)}")
    return _sum(diagonal(x, offset, axis1, axis2), -1)


def _letters(n: int) -> str:
    return string.ascii_letters[:n]


def tensordot(a, b, dims=2, *, axes=None) -> Tensor:
    """Sum of products over dims of ``a`` and ``b``, as ``numpy.tensordot`` / ``torch.tensordot``:
    ``dims`` (or NumPy's ``axes``) is an int ``k`` (the last k dims of ``a`` with the first k of ``b``)
    or a pair of dim lists. Shapes: (*a_free, *k), (*k, *b_free) -> (*a_free, *b_free)."""
    a, b = as_tensor_args(a, b)
    spec = dims if axes is None else axes
    if isinstance(spec, int):
        if spec < 0 or spec > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: dims={spec} does not fit shapes {_fmt(a.shape)} and {_fmt(b.shape)}")
        da, db = list(range(a.ndim - spec, a.ndim)), list(range(spec))
    else:
        da, db = spec
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    if len(da) != len(db) or any(a.shape[i] != b.shape[j] for i, j in zip(da, db)):
        raise ShapeError(f"tensordot: contracted dims {da} of {_fmt(a.shape)} and {db} of {_fmt(b.shape)} do not match")
    letters = _letters(a.ndim + b.ndim)
    sa = list(letters[:a.ndim])
    sb = list(letters[a.ndim:a.ndim + b.ndim])
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in da] + [c for j, c in enumerate(sb) if j not in db]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def inner(a, b) -> Tensor:
    """Sum of products over the last dims, as ``numpy.inner`` / ``torch.inner`` (0-d operands multiply).
    Shapes: (..., k), (..., k) -> (*a.shape[:-1], *b.shape[:-1])."""
    a, b = as_tensor_args(a, b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    return tensordot(a, b, ([-1], [-1]))


def vdot(a, b) -> Tensor:
    """Dot product of the flattened inputs (real: no conjugation). Shapes: (n,), (n,) -> ()."""
    a, b = as_tensor_args(a, b)
    if None not in a.shape + b.shape and math.prod(a.shape) != math.prod(b.shape):
        raise ShapeError(f"vdot: {_fmt(a.shape)} and {_fmt(b.shape)} have different numbers of elements")
    return _sum(reshape(a, (-1,)) * reshape(b, (-1,)))


def kron(a, b) -> Tensor:
    """Kronecker product, as ``numpy.kron`` / ``torch.kron`` (the shorter shape is padded with leading
    1s). Shapes: (a0, a1, ...), (b0, b1, ...) -> (a0*b0, a1*b1, ...)."""
    a, b = as_tensor_args(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    a2 = reshape(a, tuple(itertools.chain.from_iterable((d, 1) for d in sa)))
    b2 = reshape(b, tuple(itertools.chain.from_iterable((1, d) for d in sb)))
    return reshape(a2 * b2, tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, dim: int = -1, *, axis: Optional[int] = None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (default the last dim; NumPy's ``axis`` too), the
    other dims broadcast. ``torch.linalg.cross`` means the same; ``torch.cross`` and ``Tensor.cross``
    without ``dim`` pick the first dim of size 3, as PyTorch (deprecated there) still does.
    Shapes: (..., 3, ...), (..., 3, ...) -> broadcast."""
    a, b = as_tensor_args(a, b)
    dim = dim if axis is None else axis
    for name, t in (("input", a), ("other", b)):
        if t.ndim == 0 or t.shape[dim] != 3:
            raise ShapeError(f"cross: {name} {_fmt(t.shape)} must have size 3 in dim {dim}")
    a1, a2 = roll(a, -1, dim), roll(a, -2, dim)  # (a_y, a_z, a_x), (a_z, a_x, a_y)
    b1, b2 = roll(b, -1, dim), roll(b, -2, dim)
    return a1 * b2 - a2 * b1


def mv(input, vec) -> Tensor:
    """Matrix-vector product. Shapes: (n, m), (m,) -> (n,)."""
    input, vec = as_tensor_args(input, vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv: expected a matrix and a vector, got {_fmt(input.shape)} and {_fmt(vec.shape)}")
    return matmul(input, vec)


def _scaled_add(input, product, beta, alpha) -> Tensor:
    """``beta * input + alpha * product``; ``input`` is ignored when ``beta == 0`` (PyTorch: NaN in it
    does not propagate)."""
    scaled = product if alpha == 1 else alpha * product
    if beta == 0:
        return scaled
    return (input if beta == 1 else beta * input) + scaled


def addmv(input, mat, vec, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``. Shapes: (n,) (broadcast), (n, m), (m,) -> (n,)."""
    return _scaled_add(input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``. Shapes: (n, m) (broadcast), (n,), (m,) -> (n, m)."""
    vec1, vec2 = as_tensor_args(vec1, vec2)
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(f"addr: expected two vectors, got {_fmt(vec1.shape)} and {_fmt(vec2.shape)}")
    return _scaled_add(input, outer(vec1, vec2), beta, alpha)


def addbmm(input, batch1, batch2, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.
    Shapes: (n, p) (broadcast), (b, n, m), (b, m, p) -> (n, p)."""
    batch1, batch2 = as_tensor_args(batch1, batch2)
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise ShapeError(f"addbmm: expected 3-D batches, got {_fmt(batch1.shape)} and {_fmt(batch2.shape)}")
    return _scaled_add(input, einsum("bnm,bmp->np", batch1, batch2), beta, alpha)


def chain_matmul(*matrices) -> Tensor:
    """``torch.chain_matmul`` (deprecated there for ``linalg.multi_dot``): the product of 2-D matrices."""
    if len(matrices) == 1:
        return as_tensor_args(matrices[0])[0]
    return multi_dot(matrices)


def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix of the inputs (0-d is 1x1, 1-D is one row), as ``torch.block_diag`` /
    ``scipy.linalg.block_diag``. Shapes: (r_i, c_i)... -> (sum r, sum c)."""
    mats = []
    for t in as_tensor_args(*tensors):
        if t.ndim > 2:
            raise ShapeError(f"block_diag: inputs must have at most 2 dims, got {_fmt(t.shape)}")
        mats.append(reshape(t, (1, 1)) if t.ndim == 0 else expand_dims(t, 0) if t.ndim == 1 else t)
    if not mats:
        raise ValueError("block_diag: expected at least one tensor")
    total = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        rows.append(pad(m, ((0, 0), (left, total - left - m.shape[1]))))
        left += m.shape[1]
    return concatenate(rows, 0)


def cov(input, *, correction: int = 1, fweights=None, aweights=None, rowvar: bool = True, bias: bool = False,
        ddof: Optional[int] = None) -> Tensor:
    """Covariance of the variables in the rows of ``input`` (observations in columns), as
    ``torch.cov``: ``correction`` (1: Bessel's), integer frequency weights ``fweights`` and observation
    weights ``aweights`` per column. NumPy's keywords too: ``rowvar=False`` (variables in columns),
    ``bias`` (correction 0), ``ddof`` (the correction). Shapes: (vars, obs) -> (vars, vars); (obs,) -> ()."""
    (x,) = as_tensor_args(input)
    if ddof is not None:
        correction = ddof
    elif bias:
        correction = 0
    if not rowvar and x.ndim == 2:
        x = x.T
    if x.ndim > 2:
        raise ShapeError(f"cov: expected at most 2 dims (variables, observations), got {_fmt(x.shape)}")
    vector = x.ndim < 2
    if vector:
        x = reshape(x, (1, -1))
    if x.dtype.kind != "f":
        x = x.astype("float32")
    n_obs = x.shape[1]
    w = None
    for weights in (fweights, aweights):
        if weights is not None:
            (weights,) = as_tensor_args(weights)
            weights = weights.astype(x.dtype)
            w = weights if w is None else w * weights
    if w is None:
        avg = mean(x, 1, keepdims=True)
        norm = n_obs - correction
    else:
        w_sum = _sum(w)
        avg = _sum(x * w, 1, keepdims=True) / w_sum
        if aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * _sum(w * as_tensor_args(aweights)[0].astype(x.dtype)) / w_sum
    if isinstance(norm, Tensor):
        norm = clip(norm, 0.0, None)
    else:
        norm = max(norm, 0)
    centred = x - avg
    weighted = centred if w is None else centred * w
    out = matmul(weighted, centred.T) / norm
    return reshape(out, ()) if vector else out


def corrcoef(input, rowvar: bool = True) -> Tensor:
    """Pearson correlation coefficients of the rows (variables), as ``numpy.corrcoef`` /
    ``torch.corrcoef`` (``rowvar=False``: variables in columns), clipped to [-1, 1].
    Shapes: (vars, obs) -> (vars, vars); (obs,) -> ()."""
    c = cov(input, rowvar=rowvar)
    if c.ndim == 0:
        return c / c
    std = sqrt(diagonal(c, 0, 0, 1))
    return clip(c / expand_dims(std, 1) / expand_dims(std, 0), -1.0, 1.0)


def diagflat(x, offset: int = 0) -> Tensor:
    """A 2-D matrix with the flattened input on diagonal ``offset``. Shapes: (...) of n elements ->
    (n + |offset|, n + |offset|)."""
    (x,) = as_tensor_args(x)
    return diag(reshape(x, (-1,)), offset)


def vander(x, N: Optional[int] = None, increasing: bool = False) -> Tensor:
    """Vandermonde matrix, as ``numpy.vander`` / ``torch.vander``: columns are powers of ``x``,
    decreasing by default (``torch.linalg.vander`` is increasing). Shapes: (n,) -> (n, N) (N = n)."""
    (x,) = as_tensor_args(x)
    if x.ndim != 1:
        raise ShapeError(f"vander: expected a 1-D tensor, got shape {_fmt(x.shape)}")
    N = x.shape[0] if N is None else N
    if x.dtype.kind == "b":
        x = x.astype("int64")
    columns, power = [], None
    for _ in range(N):  # x**k by repeated products: no 0 ** 0 in the gradient
        power = x * 0 + 1 if power is None else power * x
        columns.append(power)
    if not columns:
        return getitem(expand_dims(x, 1), (slice(None), slice(0, 0)))
    out = stack(columns, 1)
    return out if increasing else getitem(out, (slice(None), slice(None, None, -1)))


def _index_pairs(rows, cols, dtype, device) -> Tensor:
    out = np.stack([np.asarray(rows), np.asarray(cols)]).astype(dtype or "int64")
    # through an op, so a graph being built records the indices as a node like any other value
    return identity(_tensor(out, device=device) if device is not None else _tensor(out))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, **kwargs) -> Tensor:
    """Indices of the lower triangle of a ``row`` x ``col`` matrix, PyTorch's signature and result:
    a (2, N) int64 tensor of row and column indices, row-major. (NumPy's ``tril_indices(n, k, m)``
    returns a pair of arrays instead.)"""
    r, c = np.tril_indices(row, offset, col)
    return _index_pairs(r, c, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, **kwargs) -> Tensor:
    """Indices of the upper triangle of a ``row`` x ``col`` matrix as a (2, N) int64 tensor (see
    :func:`tril_indices`)."""
    r, c = np.triu_indices(row, offset, col)
    return _index_pairs(r, c, dtype, device)


def cartesian_prod(*tensors) -> Tensor:
    """Cartesian product of 1-D tensors, as ``itertools.product``: (prod n_i, k) rows; one tensor is
    returned as it is. Shapes: (n1,), ..., (nk,) -> (n1*...*nk, k)."""
    tensors = as_tensor_args(*tensors)
    if any(t.ndim != 1 for t in tensors):
        raise ShapeError(f"cartesian_prod: expected 1-D tensors, got {[_fmt(t.shape) for t in tensors]}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Length-``r`` combinations of the elements of a 1-D tensor, as ``itertools.combinations`` (or
    ``combinations_with_replacement``). Shapes: (n,) -> (C, r)."""
    (x,) = as_tensor_args(input)
    if x.ndim != 1:
        raise ShapeError(f"combinations: expected a 1-D tensor, got shape {_fmt(x.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = list(pick(range(x.shape[0]), r)) if r > 0 else []
    if not index:  # nothing to pick (PyTorch gives (0,) for r = 0)
        return reshape(take(x, _tensor(np.zeros(0, np.int64))), (0, r) if r else (0,))
    return take(x, _tensor(np.asarray(index, np.int64)))


def dist(input, other, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), over all elements. Shapes: -> ()."""
    input, other = as_tensor_args(input, other)
    return vector_norm(input - other, p)


def renorm(input, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``
    (``torch.renorm``; the norm gets PyTorch's 1e-7 in the divisor). Shapes: (...) -> same."""
    (x,) = as_tensor_args(input)
    if x.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dims, got shape {_fmt(x.shape)}")
    dim = dim % x.ndim
    others = tuple(d for d in range(x.ndim) if d != dim)
    norms = vector_norm(x, p, others, keepdim=True)
    factor = where(greater(norms, maxnorm), maxnorm / (norms + 1e-7), 1.0)
    return x * factor


def svd_lowrank(A, q: Optional[int] = 6, niter: int = 2, M=None, *, generator=None) -> tuple:
    """``torch.svd_lowrank``: an approximate rank-``q`` SVD ``(U, S, V)`` (``A ~ U diag(S) V^T``) by
    randomized subspace iteration (Halko, Martinsson and Tropp, 2011): a Gaussian sketch, ``niter``
    power iterations with QR re-orthonormalization, then the SVD of the small projected matrix. Exact
    (up to rounding) when ``A - M`` has rank at most ``q``. Composed, so differentiable. ``generator``
    draws the sketch. Shapes: (..., m, n) -> (..., m, q), (..., q), (..., n, q)."""
    from graphgrad.core.creation import normal
    from graphgrad.ops.linalg_more import qr, svd

    (A,) = as_tensor_args(A)
    if M is not None:
        A = A - as_tensor_args(M)[0]
    m, n = A.shape[-2:]
    q = min(6 if q is None else q, m, n)
    sketch = normal(0.0, 1.0, (n, q), generator=generator, dtype=A.dtype)
    basis = qr(matmul(A, sketch)).Q
    for _ in range(niter):
        basis = qr(matmul(A, qr(matmul(A.mT, basis)).Q)).Q
    u, s, vh = svd(matmul(basis.mT, A), full_matrices=False)
    return matmul(basis, u), s, vh.mT


def pca_lowrank(A, q: Optional[int] = None, center: bool = True, niter: int = 2, *, generator=None) -> tuple:
    """``torch.pca_lowrank``: :func:`svd_lowrank` of ``A`` with its column means removed (``center``);
    ``q`` defaults to ``min(6, m, n)``. Shapes: (..., m, n) -> (..., m, q), (..., q), (..., n, q)."""
    (A,) = as_tensor_args(A)
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    return svd_lowrank(A - mean(A, -2, keepdims=True) if center else A, q, niter, generator=generator)


def _cross_method(x: Tensor, other, dim: Optional[int] = None) -> Tensor:
    """PyTorch's ``x.cross(other, dim=None)`` / ``torch.cross``: without ``dim``, the first dim of size 3
    (PyTorch's deprecated default; ``gg.cross`` and ``torch.linalg.cross`` use the last dim)."""
    if dim is None:
        (other,) = as_tensor_args(other)
        sizes = [a for a, b in itertools.zip_longest(x.shape[::-1], other.shape[::-1], fillvalue=1)][::-1]
        dim = next((i for i, d in enumerate(sizes) if d == 3), -1)
        dim -= len(sizes)
    return cross(x, other, dim)


TORCH_METHODS = {"cross": _cross_method}

__all__ = ["inverse", "ger", "trace", "tensordot", "inner", "vdot", "kron", "cross", "mv", "addmv", "addr", "addbmm",
           "chain_matmul", "block_diag", "cov", "corrcoef", "diagflat", "vander", "tril_indices", "triu_indices",
           "cartesian_prod", "combinations", "dist", "renorm", "svd_lowrank", "pca_lowrank"]
