"""More shape and indexing functions under NumPy's and PyTorch's names: stacking and splitting helpers
(``hstack``, ``vsplit``...), ``movedim``/``unflatten``/``select``, and the out-of-place index writes
(``index_add``, ``index_copy``, ``index_fill``, ``index_put``, ``masked_scatter``, ``select_scatter``,
``slice_scatter``).

The index writes share one op, :class:`IndexPut` (``x`` with ``x[key] = values``, or ``+=`` when
accumulating); everything else is composed from existing ops.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec, normalize_axis
from graphgrad.core.spec import broadcast_shapes as _broadcast_shapes
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops import array, elementwise as ew, reduce, shape
from graphgrad.ops.indexing import GetItem, _build_key, _index_shape, _parse_key


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# ---- index writes ----------------------------------------------------------------------------------------
class IndexPut(Op):
    """``x`` with ``x[key] = values`` (or ``x[key] += values`` with ``accumulate``, repeated indices
    adding up). Gradients: ``g`` with the written positions zeroed (all of ``g`` when accumulating)
    for ``x``; ``g[key]`` for ``values``."""

    props = ("key", "accumulate")

    def __init__(self, key: tuple, accumulate: bool = False):
        self.key = tuple(key)
        self.accumulate = bool(accumulate)

    def infer(self, x, values, *arrays):
        expected = _index_shape(self.name, x.shape, self.key, [a.shape for a in arrays])
        _broadcast_shapes(self.name, expected, values.shape)
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x, values, *arrays):
        out = x.copy()
        key = _build_key(xp, self.key, arrays)
        if self.accumulate:
            xp.add.at(out, key, values.astype(x.dtype, copy=False))
        else:
            out[key] = values
        return out

    def backward(self, inputs, out, g):
        x, values, arrays = inputs[0], inputs[1], inputs[2:]
        gx = None
        if needs_grad(x):
            gx = g if self.accumulate else IndexPut(self.key).apply(g, array.zeros_like(values, dtype=g.dtype), *arrays)
        gv = None
        if needs_grad(values):
            picked = GetItem(self.key).apply(g, *arrays)
            gv = reduce.sum_to(picked, tuple(values.shape)) if tuple(picked.shape) != tuple(values.shape) else picked
        return (gx, gv) + (None,) * len(arrays)


def index_put(x, indices: Union[tuple, list], values, accumulate: bool = False) -> Tensor:
    """``x`` with ``x[indices] = values`` (``indices`` a tuple of index tensors, slices or ints, as in
    ``x[...]``), or ``+=`` with ``accumulate`` (repeated indices add up). ``values`` broadcasts to the
    indexed shape. Differentiable in ``x`` and ``values``. Shapes: x (...) -> x's shape."""
    x = _tensor(x)
    struct, arrays = _parse_key(tuple(indices) if isinstance(indices, list) else indices)
    values = values if isinstance(values, Tensor) else Tensor(values, dtype=x.dtype)
    return IndexPut(struct, accumulate).apply(x, ew.astype(values, x.dtype), *arrays)


def _along(dim: int, index) -> tuple:
    return (slice(None),) * dim + (index,)


def index_add(x, dim: int, index, source, *, alpha: Any = 1) -> Tensor:
    """``x`` with ``alpha * source`` added at positions ``index`` (1-d) along ``dim``; repeated indices
    add up. Shapes: x (..., n, ...), index (k,), source (..., k, ...) -> x's shape."""
    x = _tensor(x)
    dim = normalize_axis("index_add", dim, max(x.ndim, 1))
    source = _tensor(source)
    return index_put(x, _along(dim, _tensor(index)), source * alpha if alpha != 1 else source, accumulate=True)


def index_copy(x, dim: int, index, source) -> Tensor:
    """``x`` with ``source``'s slices written at positions ``index`` (1-d) along ``dim``.
    Shapes: x (..., n, ...), index (k,), source (..., k, ...) -> x's shape."""
    x = _tensor(x)
    dim = normalize_axis("index_copy", dim, max(x.ndim, 1))
    return index_put(x, _along(dim, _tensor(index)), source)


def index_fill(x, dim: int, index, value: Any) -> Tensor:
    """``x`` with ``value`` (a number or a 0-d tensor) at positions ``index`` (1-d) along ``dim``.
    Shapes: x (...) -> x's shape."""
    x = _tensor(x)
    dim = normalize_axis("index_fill", dim, max(x.ndim, 1))
    return index_put(x, _along(dim, _tensor(index)), value)


def masked_scatter(x, mask, source) -> Tensor:
    """``x`` with the elements where ``mask`` (broadcast to ``x``) is true replaced, in row-major
    order, by the first elements of ``source``. Shapes: x (...), mask broadcastable -> x's shape."""
    x, mask = _tensor(x), _tensor(mask)
    mask = shape.broadcast_to(mask, tuple(x.shape)) if tuple(mask.shape) != tuple(x.shape) else mask
    flat_mask = shape.reshape(mask, (-1,))
    # the k-th selected element takes source[k]: k is the running count of selected elements, minus one
    rank = reduce.cumsum(ew.astype(flat_mask, "int64"), 0) - 1
    flat_source = shape.reshape(_tensor(source), (-1,))
    picked = shape.take(flat_source, ew.clip(rank, 0, None), axis=0)
    return ew.where(mask, shape.reshape(picked, tuple(x.shape)) if None not in x.shape
                    else array.reshape_like(picked, x), x)


def select_scatter(x, src, dim: int, index: int) -> Tensor:
    """``x`` with the slice at ``index`` along ``dim`` replaced by ``src`` (``x.select(dim, index)``'s
    shape). Shapes: x (...) -> x's shape."""
    x = _tensor(x)
    return index_put(x, _along(normalize_axis("select_scatter", dim, x.ndim), index), src)


def slice_scatter(x, src, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
                  step: int = 1) -> Tensor:
    """``x`` with ``x[start:end:step]`` along ``dim`` replaced by ``src``. Shapes: x (...) -> x's shape."""
    x = _tensor(x)
    return index_put(x, _along(normalize_axis("slice_scatter", dim, x.ndim), slice(start, end, step)), src)


def diagonal_scatter(x, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``x`` with its diagonal (``x.diagonal(offset, dim1, dim2)``) replaced by ``src``."""
    x = _tensor(x)
    d1, d2 = normalize_axis("diagonal_scatter", dim1, x.ndim), normalize_axis("diagonal_scatter", dim2, x.ndim)
    n1, n2 = x.shape[d1], x.shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start1, start2 = (0, offset) if offset >= 0 else (-offset, 0)
    rows = Tensor(np.arange(start1, start1 + length))
    cols = Tensor(np.arange(start2, start2 + length))
    # the diagonal's axis comes last in x.diagonal(); in x[rows, cols] with other axes it comes first
    key = [slice(None)] * x.ndim
    key[d1], key[d2] = rows, cols
    src = _tensor(src)
    if d2 == d1 + 1:  # adjacent advanced indices: the indexed axis stays in place
        src = shape.moveaxis(src, -1, d1)
    else:
        src = shape.moveaxis(src, -1, 0)
    return index_put(x, tuple(key), src)


# ---- reshaping and moving axes ---------------------------------------------------------------------------
def movedim(x, source: Union[int, Sequence[int]], destination: Union[int, Sequence[int]]) -> Tensor:
    """PyTorch's name for ``moveaxis``. Shape (2, 3, 4), 0 -> -1: (3, 4, 2)."""
    return shape.moveaxis(x, source, destination)


def swapdims(x, dim0: int, dim1: int) -> Tensor:
    """PyTorch's name for ``swapaxes``."""
    return shape.swapaxes(x, dim0, dim1)


def unflatten(x, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one may be -1). Shape (2, 12), 1, (3, 4) -> (2, 3, 4)."""
    x = _tensor(x)
    dim = normalize_axis("unflatten", dim, x.ndim)
    new = [-1 if d is None else d for d in x.shape[:dim]] + list(sizes) + \
          [-1 if d is None else d for d in x.shape[dim + 1:]]
    if new.count(-1) > 1:
        raise ShapeError(f"unflatten: cannot split dimension {dim} of shape {tuple(x.shape)} into {tuple(sizes)}: "
                         "more than one size is unknown")
    return shape.reshape(x, tuple(new))


def ravel(x) -> Tensor:
    """The elements as a 1-d tensor (row-major). Shape (...) -> (n,)."""
    return shape.reshape(x, (-1,))


def select(x, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim``, that dimension removed. Shape (2, 3, 4), 1, 0 -> (2, 4)."""
    x = _tensor(x)
    return x[_along(normalize_axis("select", dim, x.ndim), index)]


def take_along_dim(x, indices, dim: Optional[int] = None) -> Tensor:
    """PyTorch's ``take_along_dim``: ``take_along_axis`` with ``indices`` broadcast against ``x``
    (``dim=None``: of the flattened tensor)."""
    x, indices = _tensor(x), _tensor(indices)
    if dim is None:
        return shape.take_along_axis(x, indices, None)
    dim = normalize_axis("take_along_dim", dim, x.ndim)
    others = [i for i in range(x.ndim) if i != dim]
    if indices.ndim == x.ndim and all(x.shape[i] == indices.shape[i] for i in others):
        return shape.take_along_axis(x, indices, dim)
    target = list(np.broadcast_shapes(tuple(x.shape[:dim]) + (1,) + tuple(x.shape[dim + 1:]),
                                      tuple(indices.shape[:dim]) + (1,) + tuple(indices.shape[dim + 1:])))
    x_shape, i_shape = list(target), list(target)
    x_shape[dim], i_shape[dim] = x.shape[dim], indices.shape[dim]
    return shape.take_along_axis(shape.broadcast_to(x, tuple(x_shape)), shape.broadcast_to(indices, tuple(i_shape)), dim)


def fliplr(x) -> Tensor:
    """Reverse the columns (dimension 1). Shape unchanged (at least 2-d)."""
    return shape.flip(x, 1)


def flipud(x) -> Tensor:
    """Reverse the rows (dimension 0). Shape unchanged."""
    return shape.flip(x, 0)


def broadcast_tensors(*tensors) -> tuple:
    """The tensors broadcast to their common shape."""
    tensors = [_tensor(t) for t in tensors]
    common = _broadcast_shapes("broadcast_tensors", *[tuple(t.shape) for t in tensors])
    return tuple(t if tuple(t.shape) == common else shape.broadcast_to(t, common) for t in tensors)


broadcast_arrays = broadcast_tensors


def atleast_1d(*tensors):
    """Each tensor with at least 1 dimension (0-d become (1,)). One tensor in, one out; several: a tuple."""
    out = tuple(shape.reshape(t, (1,)) if _tensor(t).ndim == 0 else _tensor(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def atleast_2d(*tensors):
    """Each tensor with at least 2 dimensions: (n,) becomes (1, n), 0-d (1, 1)."""
    def lift(t):
        t = _tensor(t)
        return shape.reshape(t, (1, 1)) if t.ndim == 0 else shape.expand_dims(t, 0) if t.ndim == 1 else t

    out = tuple(lift(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def atleast_3d(*tensors):
    """Each tensor with at least 3 dimensions: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    def lift(t):
        t = _tensor(t)
        if t.ndim == 0:
            return shape.reshape(t, (1, 1, 1))
        if t.ndim == 1:
            return shape.expand_dims(t, (0, 2))
        if t.ndim == 2:
            return shape.expand_dims(t, 2)
        return t

    out = tuple(lift(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def _listed(tensors) -> list:
    return [_tensor(t) for t in (tensors if isinstance(tensors, (list, tuple)) else [tensors])]


def hstack(tensors: Sequence) -> Tensor:
    """Join along dimension 1 (along 0 for 1-d tensors). Shapes (2, 3), (2, 1) -> (2, 4)."""
    tensors = [atleast_1d(t) for t in _listed(tensors)]
    return shape.concatenate(tensors, axis=0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence) -> Tensor:
    """Join along dimension 0 after making every tensor at least 2-d. Shapes (3,), (3,) -> (2, 3)."""
    tensors = _listed(tensors)
    return shape.concatenate([atleast_2d(t) for t in tensors], axis=0)


row_stack = vstack


def dstack(tensors: Sequence) -> Tensor:
    """Join along dimension 2 after making every tensor at least 3-d. Shapes (2, 3) x 2 -> (2, 3, 2)."""
    tensors = _listed(tensors)
    return shape.concatenate([atleast_3d(t) for t in tensors], axis=2)


def column_stack(tensors: Sequence) -> Tensor:
    """1-d tensors as columns (and 2-d ones as they are) joined along dimension 1. Shapes (3,), (3, 2) -> (3, 3)."""
    tensors = _listed(tensors)
    return shape.concatenate([shape.reshape(t, (-1, 1)) if t.ndim <= 1 else t for t in tensors], axis=1)


def _split_along(name: str, x, indices_or_sections, axis: int, min_ndim: int) -> tuple:
    from graphgrad.ops.selection import tensor_split

    x = _tensor(x)
    if x.ndim < min_ndim:
        raise ShapeError(f"{name}: expects a tensor with at least {min_ndim} dimensions, got shape {tuple(x.shape)}")
    if isinstance(indices_or_sections, int) and x.shape[axis] % indices_or_sections:
        raise ShapeError(f"{name}: dimension {axis} of size {x.shape[axis]} does not split into "
                         f"{indices_or_sections} equal parts")
    return tuple(tensor_split(x, indices_or_sections, dim=axis))


def hsplit(x, indices_or_sections) -> tuple:
    """Split along dimension 1 (0 for 1-d tensors) into equal parts or at the given indices."""
    x = _tensor(x)
    return _split_along("hsplit", x, indices_or_sections, 0 if x.ndim == 1 else 1, 1)


def vsplit(x, indices_or_sections) -> tuple:
    """Split along dimension 0 (at least 2-d tensors) into equal parts or at the given indices."""
    return _split_along("vsplit", x, indices_or_sections, 0, 2)


def dsplit(x, indices_or_sections) -> tuple:
    """Split along dimension 2 (at least 3-d tensors) into equal parts or at the given indices."""
    return _split_along("dsplit", x, indices_or_sections, 2, 3)


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to (``torch.broadcast_shapes``, ``np.broadcast_shapes``)."""
    return _broadcast_shapes("broadcast_shapes", *[(s,) if isinstance(s, int) else tuple(s) for s in shapes])
