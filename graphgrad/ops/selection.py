"""Selecting and arranging elements: nonzero, masked_select, diagonal and diag_embed, meshgrid,
tensor_split / array_split."""
from __future__ import annotations

import builtins
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, broadcast_shapes, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.shape import broadcast_to, moveaxis, reshape


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


class NonZero(Op):
    """The int64 indices of the non-zero elements, one row per element in row-major order:
    shape (...) -> (count, ndim) (``count`` is unknown until it runs); no gradient."""

    def infer(self, x):
        return TensorSpec((None, len(x.shape)), np.dtype("int64"))

    def forward(self, xp, x):
        return xp.argwhere(x).astype("int64")

    def backward(self, inputs, out, g):
        return (None,)


def nonzero(x, as_tuple: bool = False):
    """torch.nonzero: indices of the non-zero elements of ``x``, shape (count, ndim) int64; with
    ``as_tuple=True`` one (count,) tensor per dimension (NumPy's ``nonzero``; one for a 0-d ``x``)."""
    x = _tensor(x)
    if not as_tuple:
        return NonZero().apply(x)
    rows = NonZero().apply(reshape(x, (1,)) if x.ndim == 0 else x)
    return tuple(rows[:, d] for d in range(builtins.max(x.ndim, 1)))


def argwhere(x) -> Tensor:
    """NumPy ``argwhere``: the (count, ndim) int64 indices of the non-zero elements of ``x``."""
    return NonZero().apply(_tensor(x))


def masked_select(x, mask) -> Tensor:
    """The elements of ``x`` where the boolean ``mask`` is True, as a 1-D tensor in row-major order
    (``x`` and ``mask`` broadcast together first). Shapes: (...), (...) -> (count,)."""
    x, mask = _tensor(x), _tensor(mask)
    if mask.dtype.kind != "b":
        raise DTypeError(f"masked_select: mask must be a boolean tensor, got {mask.dtype}")
    shape = broadcast_shapes("masked_select", tuple(x.shape), tuple(mask.shape))
    if None in shape and (tuple(x.shape) != shape or tuple(mask.shape) != shape):
        raise ShapeError(f"masked_select: broadcasting {x.shape} with {mask.shape} needs known sizes")
    if tuple(x.shape) != shape:
        x = broadcast_to(x, shape)
    if tuple(mask.shape) != shape:
        mask = broadcast_to(mask, shape)
    if x.ndim == 0:
        return reshape(x, (1,))[reshape(mask, (1,))]
    return x[mask]


class DiagonalView(Op):
    """The ``offset``-th diagonal of the planes along ``dim1``, ``dim2`` as a writable strided view of the
    input's array, the diagonal last (eager tensors; graphs compose ``diagonal`` from indexing). The
    gradient scatters back onto the diagonal."""

    pure = False  # (a view: writes into the result reach the input, so it is never merged or moved)

    def __init__(self, offset: int, dim1: int, dim2: int) -> None:
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2

    def forward(self, xp, x):
        planes = xp.moveaxis(x, (self.dim1, self.dim2), (-2, -1))
        start_r, start_c = (0, self.offset) if self.offset >= 0 else (-self.offset, 0)
        corner = planes[..., start_r:, start_c:]
        n = builtins.max(0, builtins.min(corner.shape[-2], corner.shape[-1]))
        strides = corner.strides[:-2] + (corner.strides[-2] + corner.strides[-1],)
        return xp.lib.stride_tricks.as_strided(corner, corner.shape[:-2] + (n,), strides,
                                               writeable=bool(x.flags.writeable))

    def backward(self, inputs, out, g):
        from graphgrad.ops.array import zeros_like
        from graphgrad.ops.shape_more import diagonal_scatter

        return (diagonal_scatter(zeros_like(inputs[0]), g, self.offset, self.dim1, self.dim2),)


def diagonal(x, offset: int = 0, dim1: int = 0, dim2: int = 1, *, axis1: Optional[int] = None,
             axis2: Optional[int] = None) -> Tensor:
    """The ``offset``-th diagonal of the planes spanned by ``dim1`` and ``dim2`` (``axis1``/``axis2``:
    NumPy's names), appended as the last dimension (torch.diagonal and np.diagonal agree).
    Shapes: (B, n, m) with dims 1, 2 -> (B, len) where len is the diagonal's length."""
    x = _tensor(x)
    dim1 = dim1 if axis1 is None else axis1
    dim2 = dim2 if axis2 is None else axis2
    d1, d2 = normalize_axis("diagonal", dim1, x.ndim), normalize_axis("diagonal", dim2, x.ndim)
    if d1 == d2:
        raise ShapeError(f"diagonal: dim1 and dim2 must differ, both are {d1}")
    rows, cols = x.shape[d1], x.shape[d2]
    if rows is None or cols is None:
        raise ShapeError(f"diagonal: dims {d1} and {d2} of shape {x.shape} must be known when the graph is built "
                         "(the length of the diagonal depends on them)")
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    n = builtins.max(0, builtins.min(rows - start_r, cols - start_c))
    if x._data is not None and hasattr(x._data, "strides"):  # eager: a view, as PyTorch's (writes go through)
        return DiagonalView(offset, d1, d2).apply(x)
    r = Tensor(np.arange(start_r, start_r + n), dtype="int64")
    c = Tensor(np.arange(start_c, start_c + n), dtype="int64")
    # index the two dims in front (the form ONNX export takes), then move the diagonal last
    return moveaxis(moveaxis(x, (d1, d2), (0, 1))[r, c], 0, -1)


def diag_embed(x, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.diag_embed: a tensor whose planes along ``dim1``, ``dim2`` (dims of the output) hold the
    last dimension of ``x`` on their ``offset``-th diagonal, zeros elsewhere.
    Shapes: (..., n) -> (..., m, m) with m = n + |offset| (dims placed at ``dim1``, ``dim2``)."""
    x = _tensor(x)
    if x.ndim == 0:
        raise ShapeError("diag_embed: needs a tensor of at least one dimension, got a 0-d tensor")
    n = x.shape[-1]
    if n is None:
        raise ShapeError(f"diag_embed: the last dimension of {x.shape} must be known when the graph is built")
    m = n + builtins.abs(offset)
    d1, d2 = normalize_axis("diag_embed", dim1, x.ndim + 1), normalize_axis("diag_embed", dim2, x.ndim + 1)
    if d1 == d2:
        raise ShapeError(f"diag_embed: dim1 and dim2 must differ, both are {d1}")
    # place[i] is the m x m matrix with a single 1 where element i of the diagonal goes
    place = np.zeros((n, m, m), dtype=x.dtype)
    i = np.arange(n)
    place[i, i + builtins.max(-offset, 0), i + builtins.max(offset, 0)] = 1
    out = (x[..., None, None] * Tensor(place, device=x.device)).sum(-3)
    return moveaxis(out, (-2, -1), (d1, d2))


def meshgrid(*tensors, indexing: str = "xy") -> list:
    """Coordinate grids from 1-D tensors (or a single sequence of them). ``indexing='xy'`` (NumPy's
    default) swaps the first two output dimensions; ``'ij'`` (PyTorch's) keeps the inputs' order.
    Shapes: (a,), (b,), (c,) -> three of (a, b, c) with 'ij', (b, a, c) with 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [_tensor(t) for t in tensors]
    for t in ts:
        if t.ndim > 1:
            raise ShapeError(f"meshgrid: expects 0-d or 1-D tensors, got shape {t.shape}")
    ts = [reshape(t, (1,)) if t.ndim == 0 else t for t in ts]
    sizes = [t.shape[0] for t in ts]
    if None in sizes:
        raise ShapeError(f"meshgrid: input lengths {sizes} must be known when the graph is built")
    k = len(ts)
    order = list(range(k))
    if indexing == "xy" and k >= 2:
        order[0], order[1] = 1, 0
    shape = tuple(sizes[order[d]] for d in range(k))
    grids = []
    for i, t in enumerate(ts):
        position = order.index(i)  # the output dimension input i varies along
        view = [1] * k
        view[position] = sizes[i]
        grids.append(broadcast_to(reshape(t, tuple(view)), shape))
    return grids


def _split_bounds(op_name: str, n: int, indices_or_sections) -> list:
    """The (start, stop) of each piece: ``k`` sections (the first ``n % k`` one longer) or cut points."""
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise ShapeError(f"{op_name}: the number of sections must be positive, got {k}")
        size, extra = divmod(n, k)
        bounds, start = [], 0
        for i in range(k):
            stop = start + size + (1 if i < extra else 0)
            bounds.append((start, stop))
            start = stop
        return bounds
    cuts = [int(c) for c in indices_or_sections]
    edges = [0] + cuts + [n]
    # cut points are clamped to [0, n], as Python slicing does (PyTorch and NumPy agree)
    clamp = [builtins.min(builtins.max(e + n if e < 0 else e, 0), n) for e in edges]
    return [(clamp[i], builtins.max(clamp[i], clamp[i + 1])) for i in range(len(clamp) - 1)]


def tensor_split(x, indices_or_sections: Union[int, Sequence[int], Tensor], dim: int = 0) -> tuple:
    """torch.tensor_split: ``k`` nearly equal pieces along ``dim`` (the first ``n % k`` one element
    longer), or pieces between the cut points ``indices``. Shapes: (7, 2), 3 -> (3, 2), (2, 2), (2, 2)."""
    x = _tensor(x)
    ax = normalize_axis("tensor_split", dim, x.ndim)
    n = x.shape[ax]
    if n is None:
        raise ShapeError(f"tensor_split: dim {ax} of shape {x.shape} must be known when the graph is built")
    lead = (slice(None),) * ax
    return tuple(x[lead + (slice(a, b),)] for a, b in _split_bounds("tensor_split", n, indices_or_sections))


def array_split(x, indices_or_sections: Union[int, Sequence[int]], axis: int = 0) -> list:
    """NumPy ``array_split``: as ``tensor_split`` (unequal sections allowed), returning a list."""
    return list(tensor_split(x, indices_or_sections, axis))
