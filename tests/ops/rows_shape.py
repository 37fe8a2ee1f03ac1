"""Op-table rows for shape ops and indexing (``getitem``)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, B, F, I, OpSpec

S = (3, 4)
S3 = (2, 3, 4)
MASK = np.array([[True, False, True, True], [False, False, False, True], [True, True, False, False]])
MASK_ROWS = np.array([True, False, True])


def _grid(index, axis):
    return tuple(index if d == axis else np.arange(n).reshape([n if e == d else 1 for e in range(index.ndim)])
                 for d, n in enumerate(index.shape))


def _gather_ref(x, index, axis):
    return x[_grid(index, axis)]


def _scatter_add_ref(x, index, src, axis):
    out = x.copy()
    np.add.at(out, _grid(index, axis), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _chunk_ref(x, chunks, axis):
    n = x.shape[axis]
    size = -(-n // chunks)
    return np.split(x, list(range(size, n, size)), axis)


ROWS = [
    # reshape family
    OpSpec("reshape", lambda x: gg.reshape(x, (4, 6)), lambda x: x.reshape(4, 6), [F(S3)]),
    OpSpec("reshape[-1,method]", lambda x: x.reshape(2, -1), lambda x: x.reshape(2, -1), [F(S3)]),
    OpSpec("flatten", gg.flatten, lambda x: x.reshape(-1), [F(S3)]),
    OpSpec("flatten[start=1]", lambda x: gg.flatten(x, 1), lambda x: x.reshape(2, 12), [F(S3)]),
    OpSpec("flatten[0,-2]", lambda x: x.flatten(0, -2), lambda x: x.reshape(6, 4), [F(S3)]),
    # squeeze() without axis removes only the axes known to be 1 when the graph is built
    OpSpec("squeeze", gg.squeeze, np.squeeze, [F((1, 3, 1, 4))], batch=False),
    OpSpec("squeeze[axis]", lambda x: gg.squeeze(x, axis=-2), lambda x: np.squeeze(x, axis=-2), [F((1, 3, 1, 4))]),
    OpSpec("squeeze[axes]", lambda x: x.squeeze((0, 2)), lambda x: np.squeeze(x, (0, 2)), [F((1, 3, 1, 4))]),
    OpSpec("expand_dims", lambda x: gg.expand_dims(x, 1), lambda x: np.expand_dims(x, 1), [F(S)]),
    OpSpec("expand_dims[axes]", lambda x: gg.expand_dims(x, (0, -1)), lambda x: np.expand_dims(x, (0, -1)), [F(S)]),
    OpSpec("unsqueeze", lambda x: x.unsqueeze(-1), lambda x: x[..., None], [F(S)]),
    OpSpec("broadcast_to", lambda x: gg.broadcast_to(x, (2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4)),
           [F((3, 1))]),
    # axes permutations
    OpSpec("transpose", gg.transpose, np.transpose, [F(S3)]),
    OpSpec("transpose[axes]", lambda x: gg.transpose(x, (1, 0, 2)), lambda x: np.transpose(x, (1, 0, 2)), [F(S3)]),
    OpSpec("transpose[varargs]", lambda x: x.transpose(2, 0, 1), lambda x: np.transpose(x, (2, 0, 1)), [F(S3)]),
    OpSpec("transpose[T]", lambda x: x.T, lambda x: x.T, [F(S)]),
    OpSpec("permute", lambda x: gg.permute(x, 2, 0, 1), lambda x: np.transpose(x, (2, 0, 1)), [F(S3)]),
    OpSpec("permute[method]", lambda x: x.permute((1, -1, 0)), lambda x: np.transpose(x, (1, 2, 0)), [F(S3)]),
    OpSpec("swapaxes", lambda x: gg.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1), [F(S3)]),
    OpSpec("moveaxis", lambda x: gg.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), [F(S3)]),
    OpSpec("moveaxis[multi]", lambda x: x.moveaxis((0, 1), (-1, 0)), lambda x: np.moveaxis(x, (0, 1), (-1, 0)),
           [F(S3)]),
    # joining and splitting
    OpSpec("concatenate", lambda a, b: gg.concatenate([a, b], axis=0), lambda a, b: np.concatenate([a, b], 0),
           [F((2, 3)), F((4, 3))]),
    OpSpec("concatenate[axis=-1,3]", lambda a, b, c: gg.concatenate([a, b, c], -1),
           lambda a, b, c: np.concatenate([a, b, c], -1), [F((2, 1)), F((2, 3)), F((2, 2))]),
    OpSpec("cat", lambda a, b: gg.cat((a, b), 1), lambda a, b: np.concatenate((a, b), 1), [F((2, 3)), F((2, 2))]),
    OpSpec("stack", lambda a, b: gg.stack([a, b]), lambda a, b: np.stack([a, b]), [F(S), F(S)]),
    OpSpec("stack[axis=-1]", lambda a, b, c: gg.stack([a, b, c], axis=-1), lambda a, b, c: np.stack([a, b, c], -1),
           [F(S), F(S), F(S)]),
    OpSpec("split", lambda x: gg.split(x, 3, axis=1), lambda x: np.split(x, 3, axis=1), [F((2, 6))]),
    OpSpec("split[indices]", lambda x: gg.split(x, [1, 3]), lambda x: np.split(x, [1, 3]), [F((5, 2))]),
    OpSpec("chunk", lambda x: gg.chunk(x, 3, axis=-1), lambda x: _chunk_ref(x, 3, -1), [F((2, 7))]),
    OpSpec("chunk[fewer]", lambda x: gg.chunk(x, 4), lambda x: _chunk_ref(x, 4, 0), [F((6, 2))],
           batch_error=gg.ShapeError),
    # repetition and padding
    OpSpec("tile", lambda x: gg.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), [F(S)]),
    OpSpec("tile[more reps]", lambda x: x.tile((2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), [F((3,))]),
    OpSpec("repeat", lambda x: gg.repeat(x, 2), lambda x: np.repeat(x, 2), [F(S)]),
    OpSpec("repeat[axis]", lambda x: x.repeat(3, axis=1), lambda x: np.repeat(x, 3, axis=1), [F(S)]),
    OpSpec("repeat[counts]", lambda x: gg.repeat(x, [2, 0, 1], axis=0), lambda x: np.repeat(x, [2, 0, 1], axis=0),
           [F(S)], batch_error=gg.ShapeError),
    OpSpec("pad", lambda x: gg.pad(x, ((1, 2), (0, 3))), lambda x: np.pad(x, ((1, 2), (0, 3))), [F(S)]),
    OpSpec("pad[int,value]", lambda x: gg.pad(x, 1, constant_values=2.5),
           lambda x: np.pad(x, 1, constant_values=2.5), [F(S3)]),
    OpSpec("pad[reflect]", lambda x: gg.pad(x, ((1, 2), (3, 1)), mode="reflect"),
           lambda x: np.pad(x, ((1, 2), (3, 1)), mode="reflect"), [F(S)], batch_error=gg.ShapeError),
    OpSpec("pad[reflect,large]", lambda x: gg.pad(x, (5, 7), mode="reflect"),
           lambda x: np.pad(x, (5, 7), mode="reflect"), [F((3,))], batch_error=gg.ShapeError),
    OpSpec("pad[edge]", lambda x: gg.pad(x, (2, 1), mode="edge"), lambda x: np.pad(x, (2, 1), mode="edge"), [F(S)],
           batch_error=gg.ShapeError),
    OpSpec("pad[symmetric]", lambda x: gg.pad(x, ((2,), (5,)), mode="symmetric"),
           lambda x: np.pad(x, ((2,), (5,)), mode="symmetric"), [F(S)], batch_error=gg.ShapeError),
    OpSpec("pad[wrap]", lambda x: gg.pad(x, ((0, 1), (5, 2)), mode="wrap"),
           lambda x: np.pad(x, ((0, 1), (5, 2)), mode="wrap"), [F(S)], batch_error=gg.ShapeError),
    # reordering
    OpSpec("flip", gg.flip, np.flip, [F(S3)]),
    OpSpec("flip[axis]", lambda x: x.flip(1), lambda x: np.flip(x, 1), [F(S3)]),
    OpSpec("flip[axes]", lambda x: gg.flip(x, (0, -1)), lambda x: np.flip(x, (0, -1)), [F(S3)]),
    OpSpec("roll", lambda x: gg.roll(x, 5), lambda x: np.roll(x, 5), [F(S)], batch_error=gg.ShapeError),
    OpSpec("roll[axis]", lambda x: x.roll(-1, 1), lambda x: np.roll(x, -1, 1), [F(S)]),
    OpSpec("roll[axes]", lambda x: gg.roll(x, (1, 6), (0, 2)), lambda x: np.roll(x, (1, 6), (0, 2)), [F(S3)],
           batch_error=gg.ShapeError),
    # gathering and scattering
    OpSpec("take", lambda x, i: gg.take(x, i), lambda x, i: np.take(x, i), [F(S), I((2, 3), -12, 12)]),
    OpSpec("take[axis]", lambda x, i: x.take(i, axis=1), lambda x, i: np.take(x, i, axis=1),
           [F(S3), I((5,), 0, 3)]),
    OpSpec("take_along_axis", lambda x, i: gg.take_along_axis(x, i, 1), lambda x, i: np.take_along_axis(x, i, 1),
           [F(S), I((3, 6), 0, 4)]),
    OpSpec("take_along_axis[broadcast]", lambda x, i: x.take_along_axis(i, 0),
           lambda x, i: np.take_along_axis(x, i, 0), [F(S), I((2, 1), 0, 3)]),
    OpSpec("take_along_axis[None]", lambda x, i: gg.take_along_axis(x, i, None),
           lambda x, i: np.take_along_axis(x, i, None), [F(S), I((7,), 0, 12)]),
    OpSpec("gather", lambda x, i: gg.gather(x, 0, i), lambda x, i: _gather_ref(x, i, 0), [F(S), I((5, 4), 0, 3)]),
    OpSpec("gather[smaller]", lambda x, i: x.gather(1, i), lambda x, i: _gather_ref(x, i, 1), [F(S3), I((1, 6, 3))]),
    OpSpec("scatter_add", lambda x, i, s: gg.scatter_add(x, 0, i, s),
           lambda x, i, s: _scatter_add_ref(x, i, s, 0), [F(S), I((5, 4), 0, 3), F((5, 4))]),
    OpSpec("scatter_add[axis=-1,smaller]", lambda x, i, s: gg.scatter_add(x, -1, i, s),
           lambda x, i, s: _scatter_add_ref(x, i, s, 2), [F(S3), I((2, 2, 3), 0, 4), F((2, 3, 5))],
           batch_error=gg.ShapeError),
    OpSpec("argsort", gg.argsort, lambda x: np.argsort(x, -1, kind="stable"), [F(S3)], grad=False),
    # integers in [0, 3) have ties: a descending sort keeps them in their original order too (no
    # unknown-batch run: it sorts along the first axis, which is then not a batch axis)
    OpSpec("argsort[axis=0,descending]", lambda x: gg.argsort(x, 0, descending=True),
           lambda x: np.argsort(-x, 0, kind="stable"), [I(S, 0, 3)], grad=False, batch=False),
    OpSpec("one_hot", lambda i: gg.one_hot(i, 5), lambda i: np.eye(5, dtype=np.int64)[i], [I((2, 3), 0, 5)],
           grad=False),
    OpSpec("one_hot[auto,float]", lambda i: gg.one_hot(i, dtype="float32"),
           lambda i: np.eye(i.max() + 1, dtype=np.float32)[i], [A([0, 3, 1])], grad=False, infer=False,
           graph_error=gg.ShapeError),
    # triangles and diagonals
    OpSpec("tril", gg.tril, np.tril, [F((4, 4))]),
    OpSpec("tril[k,batch]", lambda x: x.tril(-1), lambda x: np.tril(x, -1), [F(S3)]),
    OpSpec("triu", gg.triu, np.triu, [F(S)]),
    OpSpec("triu[k]", lambda x: gg.triu(x, 2), lambda x: np.triu(x, 2), [F(S)]),
    OpSpec("diag", gg.diag, np.diag, [F((4,))]),
    OpSpec("diag[k]", lambda x: gg.diag(x, -2), lambda x: np.diag(x, -2), [F((3,))]),
    OpSpec("diag[matrix]", gg.diag, np.diag, [F(S)], batch_error=gg.ShapeError),
    OpSpec("diag[matrix,k]", lambda x: x.diag(1), lambda x: np.diag(x, 1), [F(S)], batch_error=gg.ShapeError),
    OpSpec("diag[matrix,-k]", lambda x: gg.diag(x, -1), lambda x: np.diag(x, -1), [F(S)], batch_error=gg.ShapeError),
    # indexing
    OpSpec("getitem[int]", lambda x: x[1], lambda x: x[1], [F(S3)]),
    OpSpec("getitem[ints]", lambda x: x[1, -1, 2], lambda x: x[1, -1, 2], [F(S3)]),
    OpSpec("getitem[slices]", lambda x: x[:, 1:3, ::2], lambda x: x[:, 1:3, ::2], [F(S3)]),
    OpSpec("getitem[negative step]", lambda x: x[::-1, 2:0:-1, -1::-3], lambda x: x[::-1, 2:0:-1, -1::-3], [F(S3)]),
    OpSpec("getitem[None,ellipsis]", lambda x: x[None, ..., 1, None], lambda x: x[None, ..., 1, None], [F(S3)]),
    OpSpec("getitem[array]", lambda x, i: x[i], lambda x, i: x[i], [F(S), I((2, 3), -3, 3)]),
    OpSpec("getitem[repeated]", lambda x: x[[0, 0, 2, 0]], lambda x: x[[0, 0, 2, 0]], [F(S)]),
    OpSpec("getitem[arrays]", lambda x, i, j: x[i, j], lambda x, i, j: x[i, j],
           [F(S), I((2, 1), 0, 3), I((5,), 0, 4)]),
    OpSpec("getitem[array,slice]", lambda x, i: x[1:, i], lambda x, i: x[1:, i], [F(S3), I((4,), 0, 3)]),
    OpSpec("getitem[split arrays]", lambda x, i: x[i, :, i], lambda x, i: x[i, :, i], [F(S3), I((3,), 0, 2)]),
    OpSpec("getitem[int,slice,array]", lambda x, i: x[0, :, i], lambda x, i: x[0, :, i], [F(S3), I((5,), 0, 4)]),
    OpSpec("getitem[adjacent int,array]", lambda x, i: x[:, 0, i], lambda x, i: x[:, 0, i], [F(S3), I((5,), 0, 4)]),
    OpSpec("getitem[mask]", lambda x: x[MASK], lambda x: x[MASK], [F(S)]),
    OpSpec("getitem[mask tensor]", lambda x, m: x[m], lambda x, m: x[m], [F(S), B(S)], infer=False),
    OpSpec("getitem[mask rows]", lambda x: x[gg.tensor(MASK_ROWS), 1:], lambda x: x[MASK_ROWS, 1:], [F(S)]),
    OpSpec("getitem[mask,array]", lambda x: x[:, MASK_ROWS, [0, 2]], lambda x: x[:, MASK_ROWS, [0, 2]], [F(S3)]),
    OpSpec("getitem[computed mask]", lambda x: x[x > 0], lambda x: x[x > 0], [F(S, kinks=(0,))], infer=False),
]
