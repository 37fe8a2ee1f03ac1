"""Shape ops: reshape, broadcast_to, transpose, concatenate, indexing... (no arithmetic)."""
from __future__ import annotations

import math

from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, broadcast_shapes
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError


def _resolve_shape(op_name: str, shape: tuple, target: tuple) -> tuple:
    """``target`` with a single ``-1`` filled in so the size matches ``shape``."""
    target = tuple(int(d) for d in target)
    if target.count(-1) > 1:
        raise ShapeError(f"{op_name}: only one dimension can be -1, got {target}")
    if None in shape:
        return tuple(None if d == -1 else d for d in target)
    size = math.prod(shape)
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        if known == 0 or size % known:
            raise ShapeError(f"{op_name}: cannot reshape {shape} (size {size}) to {target}")
        target = tuple(size // known if d == -1 else d for d in target)
    if math.prod(target) != size:
        raise ShapeError(f"{op_name}: cannot reshape {shape} (size {size}) to {target}")
    return target


class Reshape(Op):
    """Same elements, new shape (one dimension may be -1)."""

    props = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def infer(self, x):
        return TensorSpec(_resolve_shape(self.name, x.shape, self.shape), x.dtype)

    def forward(self, xp, x):
        return x.reshape(self.shape)

    def backward(self, inputs, out, g):
        return (g.reshape(inputs[0].shape),)


class BroadcastTo(Op):
    """Repeat size-1 (and missing leading) axes up to ``shape``."""

    props = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def infer(self, x):
        out = broadcast_shapes(self.name, x.shape, self.shape)
        if out != self.shape:
            raise ShapeError(f"{self.name}: cannot broadcast {x.shape} to {self.shape}")
        return TensorSpec(self.shape, x.dtype)

    def forward(self, xp, x):
        return xp.broadcast_to(x, self.shape)

    def backward(self, inputs, out, g):
        return (g.sum_to(inputs[0].shape),)


def reshape(x, *shape) -> Tensor:
    """``x`` with a new shape (``-1`` infers one dimension). ``reshape(x, 2, 3)`` or ``reshape(x, (2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if isinstance(x, Tensor) and x.shape == shape:
        return x
    return Reshape(shape).apply(x)


def broadcast_to(x, shape) -> Tensor:
    """``x`` broadcast to ``shape`` (a read-only view; gradients are summed back)."""
    shape = tuple(shape)
    if isinstance(x, Tensor) and x.shape == shape:
        return x
    return BroadcastTo(shape).apply(x)
