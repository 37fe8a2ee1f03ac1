"""Op-table rows for linear algebra: matmul, dot, outer, einsum, inv, det, solve."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import F, OpSpec


def _well_conditioned(a):
    """``a`` (small entries) plus 2 I: comfortably invertible, in ``a``'s own dtype."""
    return a + gg.tensor(2.0 * np.eye(a.shape[-1]), dtype=a.dtype)


def _np_wc(a):
    return a + 2.0 * np.eye(a.shape[-1])


SMALL = (-0.4, 0.4)

ROWS = [
    # matmul: every NumPy case
    OpSpec("matmul", gg.matmul, np.matmul, [F((3, 4)), F((4, 5))]),
    OpSpec("matmul[batched]", gg.matmul, np.matmul, [F((2, 3, 4)), F((2, 4, 5))]),
    OpSpec("matmul[broadcast]", gg.matmul, np.matmul, [F((2, 1, 3, 4)), F((3, 4, 2))]),
    OpSpec("matmul[batch@2d]", gg.matmul, np.matmul, [F((2, 3, 4)), F((4, 2))]),
    OpSpec("matmul[vec@mat]", gg.matmul, np.matmul, [F((4,)), F((4, 3))]),
    OpSpec("matmul[vec@batch]", gg.matmul, np.matmul, [F((4,)), F((2, 4, 3))]),
    OpSpec("matmul[mat@vec]", gg.matmul, np.matmul, [F((3, 4)), F((4,))]),
    OpSpec("matmul[batch@vec]", gg.matmul, np.matmul, [F((2, 3, 4)), F((4,))]),
    OpSpec("matmul[vec@vec]", gg.matmul, np.matmul, [F((4,)), F((4,))]),
    OpSpec("matmul[operator]", lambda a, b: a @ b, lambda a, b: a @ b, [F((3, 4)), F((4, 2))]),
    OpSpec("matmul[method]", lambda a, b: a.matmul(b), np.matmul, [F((3, 4)), F((4, 2))]),
    # linear (x @ w^T + b as one op; the leading dims of x are batch dims, the weight's are not)
    OpSpec("linear", lambda x, w, b: gg.nn.functional.linear(x, w, b), lambda x, w, b: x @ w.T + b,
           [F((5, 4)), F((3, 4)), F((3,))], batch=False),
    OpSpec("linear[3d]", lambda x, w, b: gg.nn.functional.linear(x, w, b), lambda x, w, b: x @ w.T + b,
           [F((2, 5, 4)), F((3, 4)), F((3,))], batch=False),
    OpSpec("linear[vector]", lambda x, w, b: gg.nn.functional.linear(x, w, b), lambda x, w, b: x @ w.T + b,
           [F((4,)), F((3, 4)), F((3,))], batch=False),
    OpSpec("linear[no bias]", lambda x, w: gg.nn.functional.linear(x, w), lambda x, w: x @ w.T,
           [F((5, 4)), F((3, 4))], batch=False),
    # dot, outer
    OpSpec("dot", gg.dot, np.dot, [F((5,)), F((5,))]),
    OpSpec("dot[2d]", gg.dot, np.dot, [F((3, 4)), F((4, 2))]),
    OpSpec("dot[nd]", gg.dot, np.dot, [F((2, 3, 4)), F((2, 4, 3))]),
    OpSpec("dot[nd@vec]", gg.dot, np.dot, [F((2, 3, 4)), F((4,))]),
    OpSpec("dot[scalar]", lambda a: gg.dot(a, 2.5), lambda a: np.dot(a, 2.5), [F((3,))]),
    OpSpec("outer", gg.outer, np.outer, [F((3,)), F((4,))]),
    OpSpec("outer[flatten]", gg.outer, np.outer, [F((2, 2)), F((3,))]),
    # einsum
    OpSpec("einsum[matmul]", lambda a, b: gg.einsum("ij,jk->ik", a, b),
           lambda a, b: np.einsum("ij,jk->ik", a, b), [F((3, 4)), F((4, 5))]),
    OpSpec("einsum[attention]", lambda q, k: gg.einsum("bhqd,bhkd->bhqk", q, k),
           lambda q, k: np.einsum("bhqd,bhkd->bhqk", q, k), [F((2, 2, 3, 4)), F((2, 2, 5, 4))]),
    OpSpec("einsum[bilinear]", lambda x1, w, x2: gg.einsum("bi,oij,bj->bo", x1, w, x2),
           lambda x1, w, x2: np.einsum("bi,oij,bj->bo", x1, w, x2), [F((3, 4)), F((2, 4, 5)), F((3, 5))]),
    OpSpec("einsum[implicit]", lambda a, b: gg.einsum("ij,jk", a, b),
           lambda a, b: np.einsum("ij,jk", a, b), [F((3, 4)), F((4, 2))]),
    OpSpec("einsum[implicit-transpose]", lambda a: gg.einsum("ji", a),
           lambda a: np.einsum("ji", a), [F((3, 4))]),
    OpSpec("einsum[ellipsis]", lambda a, b: gg.einsum("...ij,...jk->...ik", a, b),
           lambda a, b: np.einsum("...ij,...jk->...ik", a, b), [F((2, 3, 4)), F((4, 2))]),
    OpSpec("einsum[ellipsis-broadcast]", lambda a, b: gg.einsum("...i,...i->...", a, b),
           lambda a, b: np.einsum("...i,...i->...", a, b), [F((2, 1, 4)), F((3, 4))]),
    OpSpec("einsum[sum-out]", lambda a: gg.einsum("ij->i", a), lambda a: np.einsum("ij->i", a), [F((3, 4))]),
    OpSpec("einsum[ellipsis-middle]", lambda a, b: gg.einsum("i...j,j->...i", a, b),
           lambda a, b: np.einsum("i...j,j->...i", a, b), [F((3, 2, 1, 4)), F((4,))]),
    OpSpec("einsum[outer]", lambda a, b: gg.einsum("i,j->ij", a, b),
           lambda a, b: np.einsum("i,j->ij", a, b), [F((3,)), F((4,))]),
    OpSpec("einsum[inner]", lambda a, b: gg.einsum("i,i->", a, b),
           lambda a, b: np.einsum("i,i->", a, b), [F((5,)), F((5,))]),
    OpSpec("einsum[spaces]", lambda a, b: gg.einsum("b i j, b j -> b i", a, b),
           lambda a, b: np.einsum("bij,bj->bi", a, b), [F((2, 3, 4)), F((2, 4))]),
    OpSpec("einsum[diag]", lambda a: gg.einsum("ii->i", a), lambda a: np.einsum("ii->i", a), [F((3, 3))],
           batch_error=gg.ShapeError),
    OpSpec("einsum[trace]", lambda a: gg.einsum("ii", a), lambda a: np.einsum("ii", a), [F((3, 3))],
           batch_error=gg.ShapeError),
    OpSpec("einsum[batch-diag]", lambda a, b: gg.einsum("...ii,i->...i", a, b),
           lambda a, b: np.einsum("...ii,i->...i", a, b), [F((2, 3, 3)), F((3,))]),
    OpSpec("einsum[repeat3]", lambda a: gg.einsum("iji->ij", a), lambda a: np.einsum("iji->ij", a), [F((3, 2, 3))],
           batch_error=gg.ShapeError),
    # inverse, determinant, solve (well-conditioned inputs)
    OpSpec("inv", lambda a: gg.inv(_well_conditioned(a)), lambda a: np.linalg.inv(_np_wc(a)),
           [F((3, 3), *SMALL)], rtol32=1e-4),
    OpSpec("inv[batched]", lambda a: gg.inv(_well_conditioned(a)), lambda a: np.linalg.inv(_np_wc(a)),
           [F((2, 3, 3), *SMALL)], rtol32=1e-4),
    OpSpec("det", lambda a: gg.det(_well_conditioned(a)), lambda a: np.linalg.det(_np_wc(a)),
           [F((3, 3), *SMALL)], rtol32=1e-4),
    OpSpec("det[batched]", lambda a: gg.det(_well_conditioned(a)), lambda a: np.linalg.det(_np_wc(a)),
           [F((2, 4, 4), *SMALL)], rtol32=1e-4),
    OpSpec("det[general]", gg.det, np.linalg.det, [F((3, 3))], rtol32=1e-4, atol32=1e-5),
    OpSpec("solve", lambda a, b: gg.solve(_well_conditioned(a), b),
           lambda a, b: np.linalg.solve(_np_wc(a), b), [F((3, 3), *SMALL), F((3,))], rtol32=1e-4),
    OpSpec("solve[matrix]", lambda a, b: gg.solve(_well_conditioned(a), b),
           lambda a, b: np.linalg.solve(_np_wc(a), b), [F((3, 3), *SMALL), F((3, 2))], rtol32=1e-4),
    OpSpec("solve[batched]", lambda a, b: gg.solve(_well_conditioned(a), b),
           lambda a, b: np.linalg.solve(_np_wc(a), b), [F((2, 3, 3), *SMALL), F((2, 3, 2))], rtol32=1e-4),
    OpSpec("solve[batched-vector]", lambda a, b: gg.solve(_well_conditioned(a), b),
           lambda a, b: np.linalg.solve(_np_wc(a), b), [F((2, 3, 3), *SMALL), F((3,))], rtol32=1e-4),
    OpSpec("solve[broadcast]", lambda a, b: gg.solve(_well_conditioned(a), b),
           lambda a, b: np.linalg.solve(_np_wc(a), b), [F((3, 3), *SMALL), F((2, 3, 2))], rtol32=1e-4),
]
