"""Shapes computed when a graph runs: the ops that let a static graph take any batch size or sequence
length when its shapes are only known at run time (an ONNX model exported with dynamic axes, a
``gg.function`` traced with ``None`` dimensions).

``shape_of(x)`` is a 1-D int64 tensor holding ``x``'s shape when the graph runs (TensorFlow's
``tf.shape``). The other ops take such run-time tensors where a constant is usually given: a target
shape (``ReshapeTo``, ``ExpandTo``, ``FullOfShape``), a range's bounds (``ArangeOf``), or a slice's
starts and ends (``SliceDynamic``). Each carries a ``hint``: the output dimensions known when the
graph is built (``None`` for the others), so the shape rules downstream keep every static dimension
(ONNX import computes hints from the parts of a shape it already knows).
"""
from __future__ import annotations

from typing import Optional, Sequence

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import as_dtype
from graphgrad.errors import DTypeError, ShapeError

_INT64 = np.dtype("int64")


def _hint(hint, rank: Optional[int] = None) -> Optional[tuple]:
    if hint is None:
        return None if rank is None else (None,) * rank
    return tuple(None if d is None else int(d) for d in hint)


def _shape_vector(op: str, spec, what: str = "shape") -> int:
    """The length of a 1-D integer ``spec`` (a run-time shape), checked."""
    if not isinstance(spec, TensorSpec):
        raise ShapeError(f"{op}: the {what} must be a 1-D integer tensor, got {spec!r}")
    if spec.dtype.kind not in "iu":
        raise DTypeError(f"{op}: the {what} must be an integer tensor, got {spec.dtype}")
    if len(spec.shape) != 1 or spec.shape[0] is None:
        raise ShapeError(f"{op}: the {what} must be a 1-D tensor of known length, got shape {spec.shape}")
    return spec.shape[0]


def _ints(values) -> list:
    """A run-time shape (a host or device integer array, or numbers) as Python ints: read with
    ``tolist``, the explicit device-to-host read (NumPy's ``asarray`` would refuse a device array)."""
    values = values.tolist() if hasattr(values, "tolist") else values
    return [int(v) for v in (values if isinstance(values, (list, tuple)) else [values])]


def _check_hint(op: str, hint, shape: tuple) -> None:
    """A run-time shape must agree with the dimensions the graph was built with."""
    if hint is not None and (len(hint) != len(shape) or any(h is not None and h != d for h, d in zip(hint, shape))):
        raise ShapeError(f"{op}: the shape computed at run time {tuple(shape)} does not match the shape known "
                         f"when the graph was built {tuple('?' if h is None else h for h in hint)}")


class ShapeOf(Op):
    """The run-time shape of ``x`` (dimensions ``start:end``) as a 1-D int64 tensor; no gradient."""

    onnx = "Shape"
    props = ("start", "end")
    saves_inputs = False
    saves_output = False

    def __init__(self, start: int = 0, end: Optional[int] = None):
        self.start = int(start)
        self.end = None if end is None else int(end)

    def onnx_attributes(self, opset):
        if opset < 15 and (self.start, self.end) != (0, None):
            raise ValueError("Shape with start/end needs opset 15")
        attributes = {"start": self.start} if self.start else {}
        if self.end is not None:
            attributes["end"] = self.end
        return attributes

    def infer(self, x):
        return TensorSpec((len(range(len(x.shape))[self.start:self.end]),), _INT64)

    def forward(self, xp, x):
        return xp.asarray(x.shape[self.start:self.end], dtype=_INT64)

    def backward(self, inputs, out, g):
        return (None,)


class ReshapeTo(Op):
    """``x`` reshaped to the run-time ``shape`` (a 1-D int tensor; ``-1`` is inferred, and ``0`` copies
    ``x``'s dimension unless ``allowzero``, as ONNX ``Reshape``)."""

    onnx = "Reshape"
    props = ("allowzero", "hint")
    saves_inputs = False
    saves_output = False

    def __init__(self, allowzero: bool = False, hint: Optional[Sequence] = None):
        self.allowzero = bool(allowzero)
        self.hint = _hint(hint)

    def onnx_attributes(self, opset):
        return {"allowzero": int(self.allowzero)} if self.allowzero else {}

    def infer(self, x, shape):
        rank = _shape_vector(self.name, shape)
        hint = _hint(self.hint, rank)
        if len(hint) != rank:
            raise ShapeError(f"{self.name}: a hint of rank {len(hint)} for a target shape of length {rank}")
        return TensorSpec(hint, x.dtype)

    def forward(self, xp, x, shape):
        target = _ints(shape)
        if not self.allowzero:
            target = [x.shape[i] if d == 0 and i < x.ndim else d for i, d in enumerate(target)]
        out = x.reshape(target)
        _check_hint(self.name, self.hint, out.shape)
        return out

    def backward(self, inputs, out, g):
        return g.reshape_like(inputs[0]), None


class ExpandTo(Op):
    """``x`` broadcast with the run-time ``shape`` (ONNX ``Expand``: the result has the broadcast of
    ``x``'s shape and ``shape``)."""

    onnx = "Expand"
    props = ("hint",)
    saves_inputs = False
    saves_output = False

    def __init__(self, hint: Optional[Sequence] = None):
        self.hint = _hint(hint)

    def infer(self, x, shape):
        rank = max(len(x.shape), _shape_vector(self.name, shape))
        return TensorSpec(_hint(self.hint, rank), x.dtype)

    def forward(self, xp, x, shape):
        target = np.broadcast_shapes(x.shape, tuple(_ints(shape)))
        _check_hint(self.name, self.hint, target)
        return xp.broadcast_to(x, target)

    def backward(self, inputs, out, g):
        return g.sum_like(inputs[0]), None


class FullOfShape(Op):
    """An array of the run-time ``shape`` filled with ``value`` of ``dtype`` (ONNX ``ConstantOfShape``)."""

    props = ("value", "dtype", "hint")

    def __init__(self, value=0.0, dtype="float32", hint: Optional[Sequence] = None):
        self.dtype = as_dtype(dtype)
        self.value = np.asarray(value, dtype=self.dtype).item()
        self.hint = _hint(hint)

    def infer(self, shape):
        return TensorSpec(_hint(self.hint, _shape_vector(self.name, shape)), self.dtype)

    def forward(self, xp, shape):
        target = tuple(_ints(shape))
        _check_hint(self.name, self.hint, target)
        return xp.full(target, self.value, dtype=self.dtype)

    def backward(self, inputs, out, g):
        return (None,)


class ArangeOf(Op):
    """``start, start + delta, ...`` below ``limit``, from run-time 0-d tensors (ONNX ``Range``); the
    result has ``start``'s dtype."""

    onnx = "Range"
    saves_output = False

    def infer(self, start, limit, delta):
        for spec in (start, limit, delta):
            if isinstance(spec, TensorSpec) and len(spec.shape) not in (0,) and spec.shape != (1,):
                raise ShapeError(f"{self.name}: start, limit and delta must be scalars, got shape {spec.shape}")
        dtype = start.dtype if isinstance(start, TensorSpec) else np.asarray(start).dtype
        return TensorSpec((None,), dtype)

    def forward(self, xp, start, limit, delta):
        first, last, step = (v.item() if hasattr(v, "item") else v for v in (start, limit, delta))
        if step == 0:
            raise ShapeError(f"{self.name}: delta must not be zero")
        dtype = start.dtype if hasattr(start, "dtype") else np.asarray(start).dtype
        return xp.arange(first, last, step).astype(dtype)

    def backward(self, inputs, out, g):
        return None, None, None


def _slice_key(ndim: int, axes: tuple, steps: tuple, starts, ends) -> tuple:
    starts, ends = _ints(starts), _ints(ends)
    if len(starts) != len(axes) or len(ends) != len(axes):
        raise ShapeError(f"SliceDynamic: {len(axes)} axes but {len(starts)} starts and {len(ends)} ends")
    key = [slice(None)] * ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        key[axis] = slice(start, end, step)  # Python clamps out-of-range bounds as ONNX Slice does
    return tuple(key)


class SliceDynamic(Op):
    """``x`` sliced along ``axes`` (non-negative) with run-time ``starts`` and ``ends`` (1-D int
    tensors, one entry per axis) and constant ``steps`` (ONNX ``Slice``)."""

    props = ("axes", "steps", "hint")
    saves_inputs = slice(1, None)  # the bounds; only x's shape
    saves_output = False

    def __init__(self, axes: Sequence[int], steps: Optional[Sequence[int]] = None, hint: Optional[Sequence] = None):
        self.axes = tuple(int(a) for a in axes)
        self.steps = tuple(int(s) for s in steps) if steps is not None else (1,) * len(self.axes)
        if len(self.steps) != len(self.axes) or 0 in self.steps:
            raise ShapeError(f"{self.name}: steps {self.steps} for axes {self.axes}")
        self.hint = _hint(hint)

    def infer(self, x, starts, ends):
        for what, spec in (("starts", starts), ("ends", ends)):
            if _shape_vector(self.name, spec, what) != len(self.axes):
                raise ShapeError(f"{self.name}: {what} has {spec.shape[0]} entries for {len(self.axes)} axes")
        if any(not 0 <= a < len(x.shape) for a in self.axes):
            raise ShapeError(f"{self.name}: axes {self.axes} out of range for shape {x.shape}")
        shape = tuple(None if i in self.axes else d for i, d in enumerate(x.shape))
        if self.hint is not None:
            shape = tuple(h if h is not None else d for h, d in zip(self.hint, shape))
        return TensorSpec(shape, x.dtype)

    def forward(self, xp, x, starts, ends):
        return x[_slice_key(x.ndim, self.axes, self.steps, starts, ends)]

    def backward(self, inputs, out, g):
        x, starts, ends = inputs
        return SliceDynamicGrad(self.axes, self.steps).apply(x, g, starts, ends), None, None


class SliceDynamicGrad(Op):
    """Zeros shaped like ``like`` with ``g`` written at the slice ``SliceDynamic`` took: its gradient.
    Only ``like``'s shape is used."""

    props = ("axes", "steps")
    saves_inputs = slice(2, None)
    saves_output = False

    def __init__(self, axes: Sequence[int], steps: Sequence[int]):
        self.axes = tuple(int(a) for a in axes)
        self.steps = tuple(int(s) for s in steps)

    def infer(self, like, g, starts, ends):
        return TensorSpec(like.shape, g.dtype)

    def forward(self, xp, like, g, starts, ends):
        out = xp.zeros(like.shape, dtype=g.dtype)
        out[_slice_key(like.ndim, self.axes, self.steps, starts, ends)] = g
        return out

    def backward(self, inputs, out, g):
        like, _, starts, ends = inputs
        return None, SliceDynamic(self.axes, self.steps).apply(g, starts, ends), None, None


def shape_of(x: Tensor, start: int = 0, end: Optional[int] = None) -> Tensor:
    """``x``'s shape (dimensions ``start:end``) as a 1-D int64 tensor, read when the graph runs
    (TensorFlow's ``tf.shape``): in a graph whose placeholders have ``None`` dimensions, this is how
    to compute with the batch size or the sequence length. Eagerly it is just the shape.

    Examples:
        >>> x = gg.placeholder(gg.float32, (None, 3))
        >>> n = gg.shape_of(x)[0]          # the batch size, when the graph runs
    """
    return ShapeOf(start, end).apply(x)
