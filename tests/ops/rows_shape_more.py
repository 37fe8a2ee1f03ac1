"""Op-table rows for the shape helpers and index writes of graphgrad/ops/shape_more.py."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from graphgrad.errors import ShapeError
from tests.ops.op_table import A, B, F, OpSpec

S = (3, 4)
IDX = np.array([0, 2])
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])


def _index_put(x, key, values, accumulate=False):
    out = x.copy()
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def _first(pieces):
    return pieces[0] * 2 + pieces[-1].sum()


ROWS = [
    OpSpec("index_put", lambda x, v: gg.index_put(x, (gg.tensor(IDX), gg.tensor([1, 3])), v),
           lambda x, v: _index_put(x, (IDX, [1, 3]), v), [F(S), F((2,))], batch=False),  # rows 0 and 2 are indexed
    OpSpec("index_put[accumulate_repeated]", lambda x, v: gg.index_put(x, (gg.tensor([1, 1, 0]),), v, accumulate=True),
           lambda x, v: _index_put(x, ([1, 1, 0],), v, True), [F(S), F((3, 4))], batch=False),
    OpSpec("index_put[broadcast_value]", lambda x, v: gg.index_put(x, (slice(None), gg.tensor(IDX)), v),
           lambda x, v: _index_put(x, (slice(None), IDX), v), [F(S), F((1,))], batch=False),
    OpSpec("index_add", lambda x, s: gg.index_add(x, 1, gg.tensor(IDX), s, alpha=2.0),
           lambda x, s: _index_put(x, (slice(None), IDX), 2 * s, True), [F(S), F((3, 2))]),
    OpSpec("index_copy", lambda x, s: gg.index_copy(x, 0, gg.tensor(IDX), s),
           lambda x, s: _index_put(x, (IDX,), s), [F(S), F((2, 4))], batch=False),
    OpSpec("index_fill", lambda x: gg.index_fill(x, 1, gg.tensor(IDX), -1.0),
           lambda x: _index_put(x, (slice(None), IDX), -1.0), [F(S)]),
    OpSpec("masked_scatter", lambda x, s: gg.masked_scatter(x, gg.tensor(MASK), s),
           lambda x, s: _index_put(x, (MASK,), s[:MASK.sum()]), [F(S), F((12,))], batch=False),
    OpSpec("select_scatter", lambda x, s: gg.select_scatter(x, s, 1, 2),
           lambda x, s: _index_put(x, (slice(None), 2), s), [F(S), F((3,))]),
    OpSpec("slice_scatter", lambda x, s: gg.slice_scatter(x, s, 1, 0, 4, 2),
           lambda x, s: _index_put(x, (slice(None), slice(0, 4, 2)), s), [F(S), F((3, 2))]),
    OpSpec("diagonal_scatter", lambda x, s: gg.diagonal_scatter(x, s, 1),
           lambda x, s: _index_put(x, (np.arange(3), np.arange(1, 4)), s), [F(S), F((3,))], batch=False),
    OpSpec("movedim", lambda x: gg.movedim(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), [F((2, 3, 4))]),
    OpSpec("swapdims", lambda x: gg.swapdims(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), [F((2, 3, 4))]),
    OpSpec("unflatten", lambda x: gg.unflatten(x, 1, (2, 2)), lambda x: x.reshape(3, 2, 2), [F(S)]),
    OpSpec("unflatten[inferred]", lambda x: gg.unflatten(x, 1, (2, -1)), lambda x: x.reshape(3, 2, 2), [F(S)],
           batch_error=ShapeError),  # two unknown sizes: the batch and the inferred one
    OpSpec("ravel", gg.ravel, np.ravel, [F(S)], batch=False),  # the batch merges into the one output axis
    OpSpec("select", lambda x: gg.select(x, 1, -1), lambda x: x[:, -1], [F(S)]),
    OpSpec("take_along_dim", lambda x, i: gg.take_along_dim(x, i, 1), lambda x, i: np.take_along_axis(x, i, 1),
           [F(S), A(np.array([[0], [3], [1]]))]),
    OpSpec("fliplr", gg.fliplr, np.fliplr, [F(S)]),
    OpSpec("flipud", gg.flipud, np.flipud, [F(S)]),
    OpSpec("broadcast_tensors", lambda a, b: gg.broadcast_tensors(a, b)[0] * gg.broadcast_tensors(a, b)[1],
           lambda a, b: a * b, [F((3, 1)), F((1, 4))], batch=False),
    OpSpec("broadcast_arrays", lambda a, b: gg.broadcast_arrays(a, b)[1], lambda a, b: np.broadcast_arrays(a, b)[1],
           [F((3, 1)), F((1, 4))], batch=False),
    OpSpec("broadcast_shapes", lambda x: x * gg.ones(gg.broadcast_shapes((3, 1), (4,)), dtype=x.dtype),
           lambda x: x * np.ones((3, 4)), [F(S)]),
    OpSpec("atleast_1d", lambda x: gg.atleast_1d(x), np.atleast_1d, [A(2.5, diff=True)], infer=False),
    OpSpec("atleast_2d", lambda x: gg.atleast_2d(x), np.atleast_2d, [F((4,))], batch=False),
    OpSpec("atleast_3d", lambda x: gg.atleast_3d(x), np.atleast_3d, [F(S)]),
    OpSpec("hstack", lambda a, b: gg.hstack([a, b]), lambda a, b: np.hstack([a, b]), [F(S), F((3, 2))]),
    OpSpec("vstack", lambda a, b: gg.vstack([a, b]), lambda a, b: np.vstack([a, b]), [F((4,)), F((2, 4))], batch=False),
    OpSpec("row_stack", lambda a, b: gg.row_stack([a, b]), lambda a, b: np.vstack([a, b]), [F((4,)), F((4,))],
           batch=False),
    OpSpec("dstack", lambda a, b: gg.dstack([a, b]), lambda a, b: np.dstack([a, b]), [F(S), F(S)]),
    OpSpec("column_stack", lambda a, b: gg.column_stack([a, b]), lambda a, b: np.column_stack([a, b]),
           [F((3,)), F((3, 2))]),
    OpSpec("hsplit", lambda x: _first(gg.hsplit(x, 2)), lambda x: _first(np.hsplit(x, 2)), [F(S)], batch=False),
    OpSpec("vsplit", lambda x: _first(gg.vsplit(x, [1])), lambda x: _first(np.vsplit(x, [1])), [F(S)], batch=False),
    OpSpec("dsplit", lambda x: _first(gg.dsplit(x, 2)), lambda x: _first(np.dsplit(x, 2)), [F((2, 3, 4))], batch=False),
]
