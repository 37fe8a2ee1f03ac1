"""TensorSpec: what is known of a tensor before it has a value (shape with ``None`` dims, dtype)."""
from __future__ import annotations

import numbers

from typing import Iterable, Optional, Sequence

from graphgrad.backend import np
from graphgrad.errors import ShapeError

Shape = tuple  # tuple[int | None, ...]


class TensorSpec:
    """Shape and dtype of a tensor. ``None`` in ``shape`` means "unknown until run time"; a ``shape``
    of ``None`` means even the rank is unknown (a placeholder made without a shape)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Optional[Iterable[Optional[int]]], dtype) -> None:
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    @property
    def fully_known(self) -> bool:
        """Whether every dimension is known."""
        return self.shape is not None and None not in self.shape

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype})"

    def with_shape(self, shape) -> "TensorSpec":
        return TensorSpec(shape, self.dtype)

    def with_dtype(self, dtype) -> "TensorSpec":
        return TensorSpec(self.shape, dtype)


def spec_of(value) -> object:
    """The spec of a tensor; Python scalars and ``None`` pass through unchanged (they are weak)."""
    spec = getattr(value, "spec", None)
    if spec is not None:
        return spec
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return TensorSpec(value.shape, value.dtype)
    return value


def broadcast_shapes(op_name: str, *shapes: Sequence[Optional[int]]) -> tuple:
    """Broadcast shapes NumPy-style; ``None`` dims broadcast with anything. Raises ``ShapeError``
    naming ``op_name`` and every shape when they are incompatible."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        dims = [s[axis] for s in shapes if len(s) >= -axis]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            shown = " and ".join(str(tuple(s)) for s in shapes)
            raise ShapeError(f"{op_name}: shapes {shown} cannot be broadcast together "
                             f"(axis {axis}: sizes {sorted(known)})")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def normalize_axis(op_name: str, axis: int, ndim: int) -> int:
    """``axis`` in ``[-ndim, ndim)`` made non-negative; ``ShapeError`` otherwise. A 0-d tensor takes
    axis 0 or -1 (as PyTorch: its dims wrap as a one-element vector's), both read as 0."""
    if axis.__class__ is not int and (isinstance(axis, bool) or not isinstance(axis, numbers.Integral)):
        from graphgrad.errors import ArgumentError

        raise ArgumentError(f"{op_name}: axis must be an integer, got {axis!r} ({type(axis).__name__})")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ShapeError(f"{op_name}: axis {axis} is out of range for a tensor of rank {ndim}")
    return int(axis) % max(ndim, 1)


def normalize_axes(op_name: str, axis, ndim: int) -> tuple:
    """``None`` (all axes), an int or a sequence of ints as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    axes = tuple(sorted(normalize_axis(op_name, a, ndim) for a in axis))
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op_name}: repeated axis in {axis}")
    return axes
