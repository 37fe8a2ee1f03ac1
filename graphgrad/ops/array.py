"""Array plumbing ops: identity, stop_gradient, ``*_like`` fills, and the ``*_like`` shape ops that
let gradient rules work when a graph only knows some dimensions at run time.

In a static graph a placeholder may have unknown dimensions (``None``). A gradient rule that
must broadcast, sum or reshape to "the shape of ``x``" cannot bake that shape into the op; the
``*_like`` ops take ``x`` itself as a second input and read its shape when they run. When every
dimension is known, the helpers below fall back to the static ops (``broadcast_to``, ``sum_to``,
``reshape``), so eager mode and fully known graphs are unchanged. ``Flatten`` (merge axes) and
``SplitLike`` (cut a tensor into pieces as long as others, the gradient of ``concatenate``) read
their sizes when they run too; ``flatten`` and ``concatenate`` use them only when a size is unknown.
``RandomLike`` draws a fresh uniform or normal sample of ``x``'s shape on every run (an impure op:
the graph optimizer never folds or merges it, since its props name a ``generator``).
"""
from __future__ import annotations

import math
from typing import Optional

from graphgrad import backend
from graphgrad.core.op import Op, as_tensor_args
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.spec import TensorSpec, broadcast_shapes, normalize_axes
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import as_dtype
from graphgrad.errors import ShapeError
from graphgrad.ops.elementwise import astype, less
from graphgrad.ops.reduce import sum_to
from graphgrad.ops.shape import broadcast_to, reshape


def _known(shape) -> bool:
    return shape is not None and None not in shape


class Identity(Op):
    """The input, unchanged (a named pass-through node in graphs)."""
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Identity"

    saves_output = False

    def infer(self, x):
        return x

    def forward(self, xp, x):
        return x

    def backward(self, inputs, out, g):
        return (g,)


class Clone(Identity):
    """A copy of the input in a new array (gradient passes through unchanged)."""

    def forward(self, xp, x):
        return x.copy()


class StopGradient(Identity):
    """The input's value, with no gradient flowing back through it."""

    def backward(self, inputs, out, g):
        return (None,)


class FullLike(Op):
    """A tensor of ``x``'s shape filled with ``value`` (dtype ``dtype`` or ``x``'s); no gradient."""

    props = ("value", "dtype")

    def __init__(self, value, dtype=None):
        self.value = value
        self.dtype = None if dtype is None else as_dtype(dtype)

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype if self.dtype is None else self.dtype)

    def forward(self, xp, x):
        return xp.full(x.shape, self.value, dtype=x.dtype if self.dtype is None else self.dtype)

    def backward(self, inputs, out, g):
        return (None,)


class RandomLike(Op):
    """Random samples of ``x``'s shape: ``uniform`` in ``[a, b)`` or ``normal`` with mean ``a`` and
    standard deviation ``b``, in ``dtype`` (default ``x``'s), drawn from ``generator`` (the default
    generator when ``None``) on every run; no gradient."""

    props = ("distribution", "a", "b", "dtype", "generator")

    def __init__(self, distribution: str, a: float, b: float, dtype=None, generator: Optional[Generator] = None):
        if distribution not in ("uniform", "normal"):
            raise ValueError(f"RandomLike: distribution must be 'uniform' or 'normal', got {distribution!r}")
        self.distribution, self.a, self.b = distribution, float(a), float(b)
        self.dtype = None if dtype is None else as_dtype(dtype)
        self.generator = generator

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype if self.dtype is None else self.dtype)

    def forward(self, xp, x):
        rng = rng_of(self.generator)
        if self.distribution == "uniform":
            sample = self.a + (self.b - self.a) * rng.random(x.shape)
        else:
            sample = rng.normal(self.a, self.b, x.shape)
        return xp.asarray(sample.astype(x.dtype if self.dtype is None else self.dtype))

    def backward(self, inputs, out, g):
        return (None,)


class BroadcastLike(Op):
    """``x`` broadcast to the (run-time) shape of ``like``."""
    saves_inputs = False  # backward needs only the inputs' shapes

    saves_output = False

    def infer(self, x, like):
        shape = broadcast_shapes(self.name, x.shape, like.shape)
        if len(shape) != len(like.shape):
            raise ShapeError(f"{self.name}: cannot broadcast {x.shape} to {like.shape}")
        return TensorSpec(like.shape, x.dtype)

    def forward(self, xp, x, like):
        return xp.broadcast_to(x, like.shape)

    def backward(self, inputs, out, g):
        return sum_like(g, inputs[0]), None


class SumLike(Op):
    """``x`` summed down to the (run-time) shape of ``like``: the inverse of broadcasting."""
    saves_inputs = False  # backward needs only the inputs' shapes

    saves_output = False

    def infer(self, x, like):
        if len(like.shape) > len(x.shape):
            raise ShapeError(f"{self.name}: cannot sum shape {x.shape} to {like.shape}")
        return TensorSpec(like.shape, x.dtype)

    def forward(self, xp, x, like):
        lead = x.ndim - like.ndim
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(like.shape)
                                          if d == 1 and x.shape[lead + i] != 1)
        y = xp.sum(x, axis=axes, keepdims=True) if axes else x
        return y.reshape(like.shape)

    def backward(self, inputs, out, g):
        return broadcast_like(g, inputs[0]), None


class ReshapeLike(Op):
    """``x`` reshaped to the (run-time) shape of ``like`` (same number of elements)."""
    saves_inputs = False  # backward needs only the inputs' shapes

    saves_output = False

    def infer(self, x, like):
        return TensorSpec(like.shape, x.dtype)

    def forward(self, xp, x, like):
        return x.reshape(like.shape)

    def backward(self, inputs, out, g):
        return reshape_like(g, inputs[0]), None


class CountLike(Op):
    """The number of elements of ``like`` over ``axis`` (all axes for ``None``), as a 0-d tensor of
    ``dtype``: the divisor of a mean when the reduced dimensions are only known at run time."""

    props = ("axis", "dtype")

    def __init__(self, axis=None, dtype="float32"):
        self.axis = tuple(axis) if isinstance(axis, list) else axis
        self.dtype = as_dtype(dtype)

    def infer(self, like):
        normalize_axes(self.name, self.axis, len(like.shape))
        return TensorSpec((), self.dtype)

    def forward(self, xp, like):
        axes = normalize_axes(self.name, self.axis, like.ndim)
        return xp.asarray(math.prod(like.shape[a] for a in axes), dtype=self.dtype)

    def backward(self, inputs, out, g):
        return (None,)


class Flatten(Op):
    """Merge axes ``start_axis..end_axis`` (non-negative, inclusive) into one; the shape of the others
    is read when it runs, so it works on graph tensors with unknown dimensions (``flatten`` uses
    ``Reshape`` when the shape is fully known)."""
    saves_inputs = False  # backward needs only the inputs' shapes

    props = ("start_axis", "end_axis")
    saves_output = False

    def __init__(self, start_axis: int, end_axis: int):
        self.start_axis = int(start_axis)
        self.end_axis = int(end_axis)

    def infer(self, x):
        s, e = self.start_axis, self.end_axis
        if not 0 <= s <= e < len(x.shape):
            raise ShapeError(f"{self.name}: cannot merge axes {s}..{e} of shape {x.shape}")
        merged = x.shape[s:e + 1]
        size = None if None in merged else math.prod(merged)
        return TensorSpec(x.shape[:s] + (size,) + x.shape[e + 1:], x.dtype)

    def forward(self, xp, x):
        s, e = self.start_axis, self.end_axis
        return x.reshape(x.shape[:s] + (math.prod(x.shape[s:e + 1]),) + x.shape[e + 1:])

    def backward(self, inputs, out, g):
        return (g.reshape_like(inputs[0]),)


class SplitLike(Op):
    """Piece ``index`` of ``x`` cut along ``axis`` into consecutive pieces as long as each of ``likes``
    is along that axis (read when it runs): the gradient of ``concatenate(likes, axis)`` when some of
    those lengths are unknown in a graph (so ``x`` is as long as all of ``likes`` together). Only
    the shapes of ``likes`` are used."""

    props = ("axis", "index")
    saves_output = False

    def __init__(self, axis: int, index: int):
        self.axis = int(axis)
        self.index = int(index)

    def infer(self, x, *likes):
        if not 0 <= self.axis < len(x.shape) or not 0 <= self.index < len(likes):
            raise ShapeError(f"{self.name}: no piece {self.index} along axis {self.axis} of shape {x.shape}")
        shape = list(x.shape)
        shape[self.axis] = likes[self.index].shape[self.axis]
        return TensorSpec(shape, x.dtype)

    def forward(self, xp, x, *likes):
        ax = self.axis
        start = sum(like.shape[ax] for like in likes[:self.index])
        return x[(slice(None),) * ax + (slice(start, start + likes[self.index].shape[ax]),)]

    def backward(self, inputs, out, g):
        from graphgrad.ops.shape import concatenate

        likes = inputs[1:]
        pieces = [g if i == self.index else zeros_like(like, dtype=g.dtype) for i, like in enumerate(likes)]
        return (concatenate(pieces, self.axis),) + (None,) * len(likes)


# ---- public functions ---------------------------------------------------------------------------
def identity(x) -> Tensor:
    """``x`` itself, as a new node (useful to name a graph tensor). Shapes: (...) -> (...)."""
    return Identity().apply(x)


def clone(x) -> Tensor:
    """A copy of ``x`` with its own storage, still in the autograd graph (PyTorch's ``clone``).
    Shapes: (...) -> (...)."""
    return Clone().apply(x)


def stop_gradient(x) -> Tensor:
    """``x``'s value, treated as a constant by autograd (eager and graph). Shapes: (...) -> (...)."""
    return StopGradient().apply(x)


def _placed(out: Tensor, device, requires_grad: bool) -> Tensor:
    """``out`` moved to ``device`` (on the same device as its input by default) and marked."""
    if device is not None and out._data is not None and device != out.device:
        from graphgrad.core.device import check_available

        out = Tensor._wrap(backend.to_device(out._data, check_available(device)))
    return out.requires_grad_() if requires_grad else out


def full_like(x, fill_value, dtype=None, requires_grad: bool = False, *, device=None, **kwargs) -> Tensor:
    """A tensor of ``x``'s shape (known when it runs) filled with ``fill_value``, on ``x``'s device
    unless ``device`` is given (PyTorch's ``memory_format=``/``layout=`` are accepted and ignored)."""
    return _placed(FullLike(fill_value, dtype).apply(x), device, requires_grad)


def zeros_like(x, dtype=None, requires_grad: bool = False, *, device=None, **kwargs) -> Tensor:
    """Zeros with ``x``'s shape and (by default) dtype; works on graph tensors too."""
    return full_like(x, 0, dtype, requires_grad, device=device)


def ones_like(x, dtype=None, requires_grad: bool = False, *, device=None, **kwargs) -> Tensor:
    """Ones with ``x``'s shape and (by default) dtype; works on graph tensors too."""
    return full_like(x, 1, dtype, requires_grad, device=device)


def rand_like(x, low: float = 0.0, high: float = 1.0, dtype=None, generator: Optional[Generator] = None, *,
              device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """Uniform samples in ``[low, high)`` with ``x``'s shape (known when it runs) and (by default)
    dtype, drawn anew on every run of a graph. Shapes: (...) -> (...)."""
    return _placed(RandomLike("uniform", low, high, dtype, generator).apply(x), device, requires_grad)


def randn_like(x, mean: float = 0.0, std: float = 1.0, dtype=None, generator: Optional[Generator] = None, *,
               device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """Normal samples with ``x``'s shape (known when it runs) and (by default) dtype, drawn anew on
    every run of a graph. Shapes: (...) -> (...)."""
    return _placed(RandomLike("normal", mean, std, dtype, generator).apply(x), device, requires_grad)


def bernoulli(p, dtype=None, generator: Optional[Generator] = None) -> Tensor:
    """1 with probability ``p`` (elementwise), else 0, in ``dtype`` (default ``p``'s); no gradient.
    Shapes: (...) -> (...).

    Examples:
        >>> gg.bernoulli(gg.full((2, 3), 0.5), generator=gg.Generator(0))
    """
    (p,) = as_tensor_args(p)
    draw = RandomLike("uniform", 0.0, 1.0, "float64", generator).apply(p)
    return astype(less(draw, p), p.dtype if dtype is None else dtype)


def broadcast_like(x, like: Tensor) -> Tensor:
    """``x`` broadcast to ``like``'s shape; static ``broadcast_to`` when that shape is fully known."""
    if _known(like.shape):
        return broadcast_to(x, like.shape)
    return BroadcastLike().apply(x, like)


def sum_like(x, like: Tensor) -> Tensor:
    """``x`` summed down to ``like``'s shape; static ``sum_to`` when both shapes are fully known."""
    if _known(like.shape) and _known(x.shape):
        return sum_to(x, like.shape)
    if x.shape == like.shape and like.shape is not None:
        return x
    return SumLike().apply(x, like)


def reshape_like(x, like: Tensor) -> Tensor:
    """``x`` reshaped to ``like``'s shape; static ``reshape`` when that shape is fully known."""
    if _known(like.shape):
        return reshape(x, like.shape)
    return ReshapeLike().apply(x, like)


def count_like(like: Tensor, axis=None, dtype=None) -> "Tensor | float":
    """How many elements of ``like`` lie in ``axis``: a Python number when known, else a 0-d tensor."""
    axes = normalize_axes("count_like", axis, len(like.shape))
    sizes = [like.shape[a] for a in axes]
    if _known(sizes):
        return float(math.prod(sizes))
    return CountLike(axis, dtype or like.dtype).apply(like)
