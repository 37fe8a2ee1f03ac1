"""Scatter ops (PyTorch's ``scatter`` and ``scatter_reduce``): write or reduce ``src`` into a copy of
``x`` at the positions ``index`` names along one axis (``out[index[i][j]][j] = src[i][j]`` for axis 0)."""
from __future__ import annotations

import builtins
from typing import Optional

from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.array import full_like, ones_like
from graphgrad.ops.elementwise import where
from graphgrad.ops.shape import Pad, ScatterAdd, TakeAlongAxis, _check_index, _index_key

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _check_src(op_name: str, index, src) -> None:
    if isinstance(src, TensorSpec) and (len(src.shape) != len(index.shape) or builtins.any(
            n is not None and s is not None and n != s for n, s in zip(index.shape, src.shape))):
        raise ShapeError(f"{op_name}: src of shape {src.shape} must have the index's shape {index.shape} "
                         "(the public functions crop a larger src)")


class Scatter(Op):
    """``out = x.copy(); out[index[i][j]][j] = src[i][j]`` for ``axis=0`` (torch.scatter); ``src`` is a
    tensor of the index's shape or a Python scalar. With repeated indices one of the writes wins.
    Gradient: ``g`` with the written positions zeroed for ``x``, ``g`` gathered at ``index`` for ``src``."""

    props = ("axis",)
    saves_output = False

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer(self, x, index, src):
        _check_index(self.name, x, index, self.axis)
        _check_src(self.name, index, src)
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x, index, src):
        out = x.copy()
        out[_index_key(self.name, xp, x, index, self.axis)] = src
        return out

    def backward(self, inputs, out, g):
        x, index, src = inputs
        gx = Scatter(self.axis).apply(g, index, 0.0) if needs_grad(x) else None
        gsrc = TakeAlongAxis(self.axis).apply(g, index) if needs_grad(src) else None
        return gx, None, gsrc


class ScatterReduce(Op):
    """torch.scatter_reduce: ``out = x.copy()`` then each ``src[i][j]`` is combined into
    ``out[index[i][j]][j]`` (axis 0) by ``reduce`` ('sum', 'prod', 'mean', 'amax' or 'amin'). With
    ``include_self=False`` the positions written to start from ``src`` alone (``x``'s value is left out).
    Gradients follow PyTorch: ties of amax/amin share the gradient evenly; prod handles zeros exactly."""

    props = ("axis", "reduce", "include_self")

    def __init__(self, axis: int, reduce: str, include_self: bool = True):
        if reduce not in REDUCTIONS:
            raise ValueError(f"scatter_reduce: reduce must be one of {REDUCTIONS}, got {reduce!r}")
        self.axis = int(axis)
        self.reduce = reduce
        self.include_self = bool(include_self)

    def infer(self, x, index, src):
        _check_index(self.name, x, index, self.axis)
        _check_src(self.name, index, src)
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x, index, src):
        key = _index_key(self.name, xp, x, index, self.axis)
        out = x.copy()
        count = None
        if not self.include_self:  # the written positions start from the reduction's identity
            out[key] = _identity(xp, self.reduce, x.dtype)
        if self.reduce == "mean":
            count = xp.full(x.shape, 1 if self.include_self else 0, dtype=x.dtype)
            xp.add.at(count, key, 1)
        ufunc = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}
        ufunc[self.reduce].at(out, key, src)
        if count is not None:
            count = xp.maximum(count, 1)
            out = out // count if x.dtype.kind in "iu" else out / count
        return out.astype(x.dtype, copy=False)

    def backward(self, inputs, out, g):
        x, index, src = inputs
        # own: 1 where x's own value takes part in the reduction (everywhere unless include_self is
        # False, then only where nothing is written)
        own = ones_like(x) if self.include_self else Scatter(self.axis).apply(ones_like(x), index, 0.0)
        take = TakeAlongAxis(self.axis)

        def count_of(own_part, src_part):  # how many values take part at each output position
            return own_part + ScatterAdd(self.axis, into_zeros=True).apply(x, index, src_part)

        if self.reduce == "sum":
            return g * own, None, take.apply(g, index)
        if self.reduce == "mean":
            gm = g / count_of(own, ones_like(src))
            return gm * own, None, take.apply(gm, index)
        if self.reduce in ("amax", "amin"):
            own_hit = own * (x == out).astype(x.dtype)
            src_hit = (src == take.apply(out, index)).astype(src.dtype)
            gm = g / count_of(own_hit, src_hit)
            return gm * own_hit, None, take.apply(gm, index) * src_hit
        # prod: d out / d v is the product of the other values of its group, read without dividing by
        # zero from the number of zeros in the group and the product of its non-zero values
        own_zero = own * (x == 0).astype(x.dtype)
        src_zero = (src == 0).astype(src.dtype)
        zeros = count_of(own_zero, src_zero)
        nonzero_x = where(own_zero + (1 - own) > 0, 1.0, x)
        nonzero_prod = ScatterReduce(self.axis, "prod").apply(nonzero_x, index, where(src == 0, 1.0, src))
        gx = g * own * _others(x, zeros, nonzero_prod, out)
        gsrc = take.apply(g, index) * _others(src, take.apply(zeros, index), take.apply(nonzero_prod, index),
                                              take.apply(out, index))
        return gx, None, gsrc


def _identity(xp, reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    info = xp.finfo(dtype) if dtype.kind == "f" else xp.iinfo(dtype)
    if dtype.kind == "f":
        return -xp.inf if reduce == "amax" else xp.inf
    return info.min if reduce == "amax" else info.max


def _others(v: Tensor, zeros: Tensor, nonzero_prod: Tensor, prod: Tensor) -> Tensor:
    """The product of the other members of each value's group: ``prod / v`` when the group has no
    zero, the product of its non-zero values for its only zero, else 0."""
    no_zero = where(zeros == 0, prod / where(v == 0, 1.0, v), 0.0)
    return where(v != 0, no_zero, where(zeros == 1, nonzero_prod, 0.0))


def _crop(src: Tensor, index: Tensor) -> Tensor:
    """``src[:index.shape]``: PyTorch reads only the leading part of a src larger than the index."""
    if tuple(src.shape) == tuple(index.shape) or None in src.shape or None in index.shape:
        return src
    if len(src.shape) != len(index.shape) or builtins.any(s < n for s, n in zip(src.shape, index.shape)):
        raise ShapeError(f"scatter: src of shape {tuple(src.shape)} is smaller than the index {tuple(index.shape)}")
    return src[tuple(slice(0, n) for n in index.shape)]


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def scatter(x, dim: int, index, src=None, value=None, reduce: Optional[str] = None) -> Tensor:
    """torch.scatter: a copy of ``x`` with ``out[index[i][j]][j] = src[i][j]`` for ``dim=0`` (``src``
    a tensor at least as large as ``index``, or a scalar ``value``). ``reduce='add'`` or ``'multiply'``
    combines instead of writing (as ``scatter_reduce`` with 'sum' / 'prod'). Shapes: x (...), index
    of x's rank -> x's shape."""
    x, index = _as_tensor(x), _as_tensor(index)
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter: give src (a tensor) or value (a scalar)")
    if reduce is not None:
        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
        if not isinstance(src, Tensor):
            src = full_like(index, src, dtype=x.dtype)
        return scatter_reduce(x, dim, index, src, modes[reduce])
    if isinstance(src, Tensor):
        return Scatter(dim).apply(x, index, _crop(src, index))
    if not isinstance(src, (int, float, bool)):
        src = _as_tensor(src)
        return Scatter(dim).apply(x, index, _crop(src, index))
    return Scatter(dim).apply(x, index, src)


def scatter_reduce(x, dim: int, index, src, reduce: str, include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: a copy of ``x`` with each ``src[i][j]`` combined into
    ``out[index[i][j]][j]`` (``dim=0``) by ``reduce``: 'sum', 'prod', 'mean', 'amax' or 'amin'.
    ``include_self=False`` leaves ``x``'s value out at the positions written to. Shapes: x (...),
    index of x's rank, src at least as large as index -> x's shape."""
    x, index, src = _as_tensor(x), _as_tensor(index), _as_tensor(src)
    return ScatterReduce(dim, reduce, include_self).apply(x, index, _crop(src, index))
