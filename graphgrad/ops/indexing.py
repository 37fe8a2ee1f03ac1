"""Indexing: ``x[key]`` with NumPy semantics, differentiable to any order.

``key`` may combine ints, slices (any step, negative included), ``None``, ``Ellipsis``, boolean
masks and integer arrays (Tensors, NumPy arrays or lists; fancy indexing with broadcasting, and
NumPy's placement rule for the advanced-index dimensions).

Ops are immutable and hashable, so index *arrays* are not attributes: they are extra
(non-differentiable) inputs of the op, and the ``key`` attribute keeps only the structure of the
index — ints, ``None``, ``Ellipsis``, slices as ``("slice", start, stop, step)``, and placeholders
``("array", ndim)`` for integer arrays and ``("mask", ndim, count)`` for boolean masks (``count``
is the number of true elements when the mask was concrete, else ``None``: the output size is then
unknown until run time).

Two primitives: ``GetItem`` and its gradient ``IndexAdd`` (scatter into zeros with add-at semantics,
so repeated indices accumulate), each the gradient of the other.
"""
from __future__ import annotations

import operator
from typing import Any

from graphgrad.backend import is_array, np
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec, broadcast_shapes, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError


class _IndexOutOfRange(ShapeError, IndexError):
    """An index outside the tensor (or too many indices): a ShapeError that is also an IndexError."""


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _is_advanced(item) -> bool:
    return isinstance(item, tuple) and item[0] in ("array", "mask")


def _opt_int(v):
    return None if v is None else operator.index(v)


def _index_tensor(k) -> Tensor:
    t = k if isinstance(k, Tensor) else Tensor(k)
    if t.dtype.kind == "f" and not t.is_symbolic and t.size == 0:  # [] parses as float
        t = Tensor(k, dtype="int64")
    return t


def _parse_key(key) -> tuple:
    """Split an index expression into (structure, index tensors); see the module docstring."""
    if not isinstance(key, tuple):
        key = (key,)
    struct, arrays = [], []
    for k in key:
        if k is None or k is Ellipsis:
            struct.append(k)
        elif isinstance(k, slice):
            struct.append(("slice", _opt_int(k.start), _opt_int(k.stop), _opt_int(k.step)))
        elif isinstance(k, (bool, list, tuple, range)) or isinstance(k, Tensor) or is_array(k):
            # a tuple inside the key is an index array, as in NumPy and PyTorch: x[(0,), b]; so is a
            # range (PyTorch's x[range(n), target])
            t = _index_tensor(list(k) if isinstance(k, range) else k)
            if t.dtype.kind in "iu" and t.ndim == 0 and not t.is_symbolic:
                struct.append(int(t.item()))  # a concrete 0-d integer indexes like an int (NumPy)
            elif t.dtype.kind == "b":
                count = None if t.is_symbolic else int(t.numpy().sum())
                struct.append(("mask", t.ndim, count))
                arrays.append(t)
            elif t.dtype.kind in "iu":
                struct.append(("array", t.ndim))
                arrays.append(t)
            else:
                raise DTypeError(f"getitem: index arrays must be integer or boolean, got {t.dtype}")
        else:
            try:
                struct.append(operator.index(k))
            except TypeError:
                raise DTypeError(f"getitem: invalid index {k!r} of type {type(k).__name__} (expected int, "
                                 "slice, None, Ellipsis, or an integer/boolean array)") from None
    return tuple(struct), arrays


def _consumed(item) -> int:
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, tuple) and item[0] == "mask":
        return item[1]
    return 1


def _expand(op_name: str, key: tuple, ndim: int) -> list:
    """``key`` with ``Ellipsis`` replaced by full slices and full slices appended up to ``ndim``."""
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise ShapeError(f"{op_name}: an index can only have a single ellipsis ('...'), got {key}")
    used = sum(_consumed(k) for k in key)
    if used > ndim:
        raise _IndexOutOfRange(f"{op_name}: too many indices for a tensor of rank {ndim}: {used} were indexed")
    full = [("slice", None, None, None)] * (ndim - used)
    if Ellipsis in key:
        i = key.index(Ellipsis)
        return list(key[:i]) + full + list(key[i + 1:])
    return list(key) + full


def _index_shape(op_name: str, shape: tuple, key: tuple, array_shapes: list) -> tuple:
    """The shape of ``x[key]`` for ``x`` of ``shape`` (``None`` dims allowed), NumPy's rules."""
    items = _expand(op_name, key, len(shape))
    has_arrays = any(_is_advanced(k) for k in items)
    arrays = iter(array_shapes)
    parts, adv_shapes, adv_positions = [], [], []
    d = 0
    for pos, item in enumerate(items):
        if item is None:
            parts.append((1,))
        elif isinstance(item, int):
            n = shape[d]
            if n is not None and not -n <= item < n:
                raise _IndexOutOfRange(f"{op_name}: index {item} is out of bounds for axis {d} with size {n} "
                                       f"(shape {shape})")
            d += 1
            if has_arrays:
                adv_shapes.append(())
                adv_positions.append(pos)
                parts.append("adv")
        elif item[0] == "slice":
            n = shape[d]
            if item[3] == 0:
                raise ShapeError(f"{op_name}: slice step cannot be zero")
            parts.append((None if n is None else len(range(*slice(*item[1:]).indices(n))),))
            d += 1
        elif item[0] == "array":
            adv_shapes.append(tuple(next(arrays)))
            adv_positions.append(pos)
            parts.append("adv")
            d += 1
        else:  # mask
            m = tuple(next(arrays))
            covered = shape[d:d + item[1]]
            if any(a is not None and b is not None and a != b for a, b in zip(m, covered)):
                raise _IndexOutOfRange(f"{op_name}: boolean mask of shape {m} does not match the indexed "
                                       f"dimensions {covered} of shape {shape} (from axis {d})")
            adv_shapes.append((item[2],))
            adv_positions.append(pos)
            parts.append("adv")
            d += item[1]
    if not adv_shapes:
        return tuple(v for p in parts for v in p)
    adv = broadcast_shapes(op_name, *adv_shapes)
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[0] + len(adv_positions)))
    out: list = [] if adjacent else list(adv)
    placed = not adjacent
    for p in parts:
        if p == "adv":
            if not placed:
                out.extend(adv)
                placed = True
        else:
            out.extend(p)
    return tuple(out)


def _build_key(xp, key: tuple, arrays) -> tuple:
    arrays = iter(arrays)
    out = []
    for item in key:
        if isinstance(item, tuple):
            out.append(slice(*item[1:]) if item[0] == "slice" else xp.asarray(next(arrays)))
        else:
            out.append(item)
    return tuple(out)


class GetItem(Op):
    """``x[key]`` (NumPy basic and advanced indexing). Gradient: ``IndexAdd`` of ``g`` into zeros."""
    saves_inputs = slice(1, None)  # backward reads the index arrays, only the shape of x

    props = ("key",)

    def __init__(self, key: tuple):
        self.key = tuple(key)

    def infer(self, x, *arrays):
        return TensorSpec(_index_shape(self.name, x.shape, self.key, [a.shape for a in arrays]), x.dtype)

    def forward(self, xp, x, *arrays):
        return x[_build_key(xp, self.key, arrays)]

    def backward(self, inputs, out, g):
        x, arrays = inputs[0], inputs[1:]
        return (IndexAdd(self.key).apply(x, g, *arrays),) + (None,) * len(arrays)


class IndexAdd(Op):
    """Zeros of the shape of ``like`` with ``values`` added at ``[key]``; repeated integer indices
    accumulate (``np.add.at``). Only the shape of ``like`` is used. Gradient w.r.t. ``values``:
    ``GetItem`` of ``g``."""

    props = ("key",)

    def __init__(self, key: tuple):
        self.key = tuple(key)

    def infer(self, like, values, *arrays):
        expected = _index_shape(self.name, like.shape, self.key, [a.shape for a in arrays])
        broadcast_shapes(self.name, expected, values.shape)
        return TensorSpec(like.shape, values.dtype)

    def forward(self, xp, like, values, *arrays):
        out = xp.zeros(like.shape, values.dtype)
        key = _build_key(xp, self.key, arrays)
        if any(isinstance(k, tuple) and k[0] == "array" for k in self.key):
            xp.add.at(out, key, values)
        else:  # basic indices and masks never select an element twice
            out[key] = values
        return out

    def backward(self, inputs, out, g):
        values, arrays = inputs[1], inputs[2:]
        gv = GetItem(self.key).apply(g, *arrays) if needs_grad(values) else None
        return (None, gv) + (None,) * len(arrays)


class Argsort(Op):
    """int64 indices that sort ``x`` along ``axis``, stably (equal values keep their order, also when
    ``descending``); no gradient (it is an index)."""

    props = ("axis", "descending")

    def __init__(self, axis: int = -1, descending: bool = False):
        self.axis = int(axis)
        self.descending = bool(descending)

    def infer(self, x):
        normalize_axis(self.name, self.axis, len(x.shape))
        return TensorSpec(x.shape, np.dtype("int64"))

    def forward(self, xp, x):
        axis = normalize_axis(self.name, self.axis, x.ndim)
        if not self.descending:
            return xp.argsort(x, axis=axis, kind="stable").astype("int64")
        # A stable ascending sort of the reversed tensor, read backwards, is descending with ties in
        # their original order; negating instead would fail for unsigned integers.
        order = xp.flip(xp.argsort(xp.flip(x, axis), axis=axis, kind="stable"), axis)
        return (x.shape[axis] - 1 - order).astype("int64")


def argsort(x, axis: int = -1, descending: bool = False) -> Tensor:
    """int64 indices that sort ``x`` along ``axis`` (stable; ``descending`` keeps ties in order too).
    Shape (3, 4) -> (3, 4). Sorted values: ``take_along_axis(x, argsort(x, 1), 1)``."""
    return Argsort(axis, descending).apply(x)


def getitem(x, key: Any) -> Tensor:
    """``x[key]`` with NumPy semantics: ints, slices (negative steps too), ``None``, ``...``, boolean
    masks and integer arrays (Tensors, arrays or lists), in any combination.

    Shapes: NumPy's rules, e.g. (4, 5)[1:3, [0, 0, 2]] -> (2, 3). Differentiable in ``x``; gradients of
    repeated indices accumulate. A boolean mask's output length is unknown (``None``) in a symbolic
    graph unless the mask itself is concrete.
    """
    x = _tensor(x)
    struct, arrays = _parse_key(key)
    rank = x.ndim if x.shape is not None else len(struct)  # an unknown rank: the key's length will do
    if not arrays and struct.count(Ellipsis) <= 1 and len(struct) - struct.count(Ellipsis) <= rank \
            and all(k is Ellipsis or k == ("slice", None, None, None) for k in struct):
        return x
    return GetItem(struct).apply(x, *arrays)
