"""Op-table rows for scatter / scatter_reduce, nonzero, masked_select, diagonal, diag_embed, meshgrid,
tensor_split / array_split, cropping pads, tuple index arrays, and unfold / fold (im2col, col2im)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, B, F, I, OpSpec

# one target row per column and source row: no two writes to one place (a plain scatter's result
# with repeated targets depends on the write order)
UNIQUE = np.array([[2, 0, 1, 3], [0, 3, 2, 1]])
REPEATED = np.array([[1, 0, 1, 1], [1, 2, 0, 1], [1, 0, 0, 2]])


def _grid(index, axis):
    return tuple(index if d == axis else np.arange(n).reshape([n if e == d else 1 for e in range(index.ndim)])
                 for d, n in enumerate(index.shape))


def _scatter_ref(x, index, src, axis):
    out = x.copy()
    src = src if np.ndim(src) == 0 else src[tuple(slice(0, n) for n in index.shape)]
    out[_grid(index, axis)] = src
    return out


def _reduce_ref(x, index, src, axis, reduce, include_self=True):
    """A loop over the index: the plain definition of scatter_reduce."""
    out = x.copy()
    groups = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[axis] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos])
    for target, values in groups.items():
        values = ([x[target]] if include_self else []) + values
        out[target] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](values)
    return out


def _diag_embed_ref(x, offset, dim1, dim2):
    n = x.shape[-1]
    m = n + abs(offset)
    out = np.zeros(x.shape[:-1] + (m, m), x.dtype)
    i = np.arange(n)
    out[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _reduce_row(reduce, include_self):
    name = f"scatter_reduce[{reduce}{'' if include_self else ',exclude_self'}]"
    return OpSpec(name, lambda x, i, s: gg.scatter_reduce(x, 0, i, s, reduce, include_self=include_self),
                  lambda x, i, s: _reduce_ref(x, i, s, 0, reduce, include_self),
                  [F((3, 4), 0.5, 2.0), A(REPEATED), F((3, 4), 0.5, 2.0)], batch=False)


ROWS = [
    OpSpec("scatter", lambda x, i, s: gg.scatter(x, 0, i, s), lambda x, i, s: _scatter_ref(x, i, s, 0),
           [F((4, 4)), A(UNIQUE), F((2, 4))], batch=False),   # the index's rows are not a batch
    OpSpec("scatter[dim=1,larger src]", lambda x, i, s: x.scatter(1, i, s), lambda x, i, s: _scatter_ref(x, i, s, 1),
           [F((2, 5)), A(np.array([[4, 0], [1, 3]])), F((3, 4))], batch=False),
    OpSpec("scatter[value]", lambda x, i: gg.scatter(x, -1, i, value=2.5), lambda x, i: _scatter_ref(x, i, 2.5, 1),
           [F((3, 4)), I((3, 2), 0, 4)]),
    OpSpec("scatter[reduce=add]", lambda x, i, s: gg.scatter(x, 0, i, s, reduce="add"),
           lambda x, i, s: _reduce_ref(x, i, s, 0, "sum"), [F((3, 4)), A(REPEATED), F((3, 4))], batch=False),
    OpSpec("scatter[reduce=multiply,value]", lambda x, i: gg.scatter(x, 0, i, value=1.5, reduce="multiply"),
           lambda x, i: _reduce_ref(x, i, np.full(i.shape, 1.5), 0, "prod"), [F((3, 4)), A(REPEATED)], batch=False),
    *[_reduce_row(r, s) for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)],
    OpSpec("scatter_reduce[prod,zeros]", lambda x, i, s: gg.scatter_reduce(x, 1, i, s, "prod"),
           lambda x, i, s: _reduce_ref(x, i, s, 1, "prod"),
           [A(np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]]), diff=True), A(np.array([[0, 0], [1, 2]])),
            A(np.array([[2.0, 0.5], [0.0, 3.0]]), diff=True)], batch=False, order=1),
    # selection: the output length depends on the input's values, so the shape rule leaves it unknown
    # (None) and the rows skip the comparison of inferred and actual shapes (infer=False)
    OpSpec("nonzero", gg.nonzero, np.argwhere, [A(np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]))], grad=False,
           infer=False),
    OpSpec("nonzero[as_tuple]", lambda x: gg.nonzero(x, as_tuple=True), np.nonzero, [B((3, 4))], grad=False,
           infer=False),
    OpSpec("argwhere", gg.argwhere, np.argwhere, [I((2, 3, 2), 0, 2)], grad=False, infer=False),
    OpSpec("masked_select", lambda x, m: gg.masked_select(x, m), lambda x, m: x[m], [F((3, 4)), B((3, 4))],
           infer=False),
    OpSpec("masked_select[broadcast]", lambda x, m: x.masked_select(m),
           lambda x, m: np.broadcast_to(x, (2, 3, 4))[np.broadcast_to(m, (2, 3, 4))], [F((3, 4)), B((2, 1, 4))],
           infer=False),
    # the diagonal's length depends on the sizes of dims 0 and 1: they must be known
    OpSpec("diagonal", gg.diagonal, np.diagonal, [F((3, 4))], batch_error=gg.ShapeError),
    OpSpec("diagonal[offset,dims]", lambda x: gg.diagonal(x, 1, 2, 0), lambda x: np.diagonal(x, 1, 2, 0),
           [F((2, 3, 4))], batch_error=gg.ShapeError),
    OpSpec("diagonal[negative offset,method]", lambda x: x.diagonal(-1, dim1=-2, dim2=-1),
           lambda x: np.diagonal(x, -1, -2, -1), [F((2, 4, 3))]),
    OpSpec("diag_embed", gg.diag_embed, lambda x: _diag_embed_ref(x, 0, -2, -1), [F((2, 3))]),
    OpSpec("diag_embed[offset,dims]", lambda x: gg.diag_embed(x, -1, 0, 2), lambda x: _diag_embed_ref(x, -1, 0, 2),
           [F((2, 3))]),
    OpSpec("meshgrid", lambda a, b, c: gg.meshgrid(a, b, c), lambda a, b, c: np.meshgrid(a, b, c),
           [F((2,)), F((3,)), F((4,))], batch=False),
    OpSpec("meshgrid[ij]", lambda a, b: gg.meshgrid([a, b], indexing="ij"),
           lambda a, b: np.meshgrid(a, b, indexing="ij"), [F((2,)), F((3,))], batch=False),
    OpSpec("tensor_split", lambda x: gg.tensor_split(x, 3, dim=1), lambda x: np.array_split(x, 3, 1), [F((2, 7))]),
    OpSpec("tensor_split[indices]", lambda x: x.tensor_split([1, 4, 9]), lambda x: np.array_split(x, [1, 4, 9]),
           [F((6, 2))], batch=False),   # the cut points are positions along the first dimension
    OpSpec("array_split", lambda x: gg.array_split(x, 4, axis=-1), lambda x: np.array_split(x, 4, -1), [F((2, 6))]),
    # cropping pads and tuple index arrays
    OpSpec("pad[negative]", lambda x: gg.pad(x, ((0, 0), (-1, 2))),
           lambda x: np.pad(x, ((0, 0), (0, 2)))[:, 1:], [F((3, 4))]),
    OpSpec("pad[torch,negative]", lambda x: gg.nn.functional.pad(x, (1, -2, -1, 0), value=0.5),
           lambda x: np.pad(x[1:, :-2], ((0, 0), (1, 0)), constant_values=0.5), [F((3, 4))], batch=False),
    OpSpec("getitem[tuple index]", lambda x, b: x[(0,), b], lambda x, b: x[(0,), b], [F((2, 3, 4)), I((2,))],
           batch=False),
    OpSpec("getitem[tuples]", lambda x: x[(1, 0), (2, 2)], lambda x: x[(1, 0), (2, 2)], [F((2, 3, 4))]),
]


def _unfold_ref(x, k, d, p, s):
    """im2col by loops over windows and kernel positions."""
    n, c, h, w = x.shape
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c, k[0], k[1], oh, ow), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            for a in range(oh):
                for b in range(ow):
                    out[:, :, i, j, a, b] = x[:, :, a * s[0] + i * d[0], b * s[1] + j * d[1]]
    return out.reshape(n, c * k[0] * k[1], oh * ow)


def _fold_ref(cols, size, k, d, p, s):
    """col2im: the adjoint of ``_unfold_ref`` (each column added back at its window)."""
    n, rows, _ = cols.shape
    c = rows // (k[0] * k[1])
    h, w = size[0] + 2 * p[0], size[1] + 2 * p[1]
    oh, ow = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1, (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    blocks = cols.reshape(n, c, k[0], k[1], oh, ow)
    out = np.zeros((n, c, h, w), cols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            for a in range(oh):
                for b in range(ow):
                    out[:, :, a * s[0] + i * d[0], b * s[1] + j * d[1]] += blocks[:, :, i, j, a, b]
    return out[:, :, p[0]:h - p[0], p[1]:w - p[1]]


ROWS += [
    OpSpec("unfold", lambda x: gg.unfold(x, 2), lambda x: _unfold_ref(x, (2, 2), (1, 1), (0, 0), (1, 1)),
           [F((2, 3, 4, 5))]),
    OpSpec("unfold[dilation,padding,stride]", lambda x: gg.nn.functional.unfold(x, (3, 2), (2, 1), (1, 2), (2, 3)),
           lambda x: _unfold_ref(x, (3, 2), (2, 1), (1, 2), (2, 3)), [F((2, 2, 7, 6))]),
    OpSpec("fold", lambda x: gg.fold(x, (4, 5), 2), lambda x: _fold_ref(x, (4, 5), (2, 2), (1, 1), (0, 0), (1, 1)),
           [F((2, 12, 12))]),
    OpSpec("fold[dilation,padding,stride]", lambda x: gg.nn.functional.fold(x, (7, 6), (3, 2), (2, 1), (1, 2), (2, 3)),
           lambda x: _fold_ref(x, (7, 6), (3, 2), (2, 1), (1, 2), (2, 3)), [F((2, 12, 9))]),
]
