"""Reductions: sum, mean, prod, max, min, argmax, argmin, var, std, logsumexp, norm, all, any,
cumsum, cumprod — and ``sum_to``, the reduction autograd uses to undo broadcasting.

``axis`` is ``None`` (all axes), an int or a tuple of ints (negative allowed); ``keepdims`` keeps
reduced axes with size 1.
"""
from __future__ import annotations

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec, normalize_axes
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    """``shape`` with ``axes`` removed (or set to 1 with ``keepdims``)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def expand_reduced(g: Tensor, shape: tuple, axes: tuple, keepdims: bool) -> Tensor:
    """Give a reduced gradient back its reduced axes (size 1) so it broadcasts against ``shape``."""
    if keepdims or not axes:
        return g
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return g.reshape(kept)


class Sum(Op):
    """Sum over ``axis``. Gradient: the upstream gradient broadcast back over the reduced axes."""

    props = ("axis", "keepdims")

    def __init__(self, axis=None, keepdims: bool = False):
        self.axis = tuple(axis) if isinstance(axis, list) else axis
        self.keepdims = bool(keepdims)

    def infer(self, x):
        axes = normalize_axes(self.name, self.axis, len(x.shape))
        dtype = x.dtype
        if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8):
            dtype = np.dtype("uint64") if dtype.kind == "u" else np.dtype("int64")  # NumPy's accumulator
        return TensorSpec(reduced_shape(x.shape, axes, self.keepdims), dtype)

    def forward(self, xp, x):
        return xp.sum(x, axis=self.axis, keepdims=self.keepdims)

    def backward(self, inputs, out, g):
        x = inputs[0]
        axes = normalize_axes(self.name, self.axis, x.ndim)
        return (expand_reduced(g, x.shape, axes, self.keepdims).broadcast_to(x.shape),)


class SumTo(Op):
    """Sum a tensor down to ``shape`` (the inverse of broadcasting ``shape`` up to the input's)."""

    props = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def infer(self, x):
        lead = len(x.shape) - len(self.shape)
        if lead < 0 or any(t != 1 and t != s for t, s in zip(self.shape, x.shape[lead:])):
            raise ShapeError(f"{self.name}: cannot sum shape {x.shape} to {self.shape}")
        return TensorSpec(self.shape, x.dtype)

    def forward(self, xp, x):
        lead = x.ndim - len(self.shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(self.shape) if d == 1 and x.shape[lead + i] != 1)
        y = xp.sum(x, axis=axes, keepdims=True) if axes else x
        return y.reshape(self.shape)

    def backward(self, inputs, out, g):
        return (g.broadcast_to(inputs[0].shape),)


def sum(x, axis=None, keepdims: bool = False) -> Tensor:
    """Sum of elements over ``axis``. Shapes: (...) -> reduced."""
    return Sum(axis, keepdims).apply(x)


def sum_to(x, shape) -> Tensor:
    """Sum ``x`` down to ``shape`` (the shape it was broadcast from)."""
    shape = tuple(shape)
    if isinstance(x, Tensor) and x.shape == shape:
        return x
    return SumTo(shape).apply(x)
