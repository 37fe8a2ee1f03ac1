"""Shape ops: reshape, broadcast_to, transpose, squeeze, concatenate, pad, tile, gather... (no arithmetic).

Primitives (hand-written gradients): ``Reshape``, ``BroadcastTo``, ``Transpose``, ``Squeeze``,
``ExpandDims``, ``Concatenate``, ``Pad`` (constant), ``TakeAlongAxis``, ``ScatterAdd``, ``Tril``,
``Triu``, ``Diag`` (vector to matrix) and the non-differentiable ``OneHot``. Everything else (stack,
split, chunk, tile, repeat, flip, roll, take, reflect/edge padding, moveaxis...) is composed from
them and from indexing (``graphgrad.ops.indexing``), so it gets gradients of every order for free.
"""
from __future__ import annotations

import builtins
import math
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.spec import TensorSpec, broadcast_shapes, normalize_axes, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import as_dtype, result_dtype
from graphgrad.errors import DTypeError, ShapeError

Axis = Union[None, int, Sequence[int]]


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


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
    saves_inputs = False  # backward needs only the inputs' shapes

    props = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def infer(self, x):
        return TensorSpec(_resolve_shape(self.name, x.shape, self.shape), x.dtype)

    def infer_unknown_rank(self, x):
        """An input of unknown rank: the target shape, with a -1 unknown until run time."""
        return TensorSpec(tuple(None if d == -1 else d for d in self.shape), x.dtype)

    def forward(self, xp, x):
        return x.reshape(self.shape)

    def backward(self, inputs, out, g):
        return (g.reshape_like(inputs[0]),)


class BroadcastTo(Op):
    """Repeat size-1 (and missing leading) axes up to ``shape``."""
    saves_inputs = False  # backward needs only the inputs' shapes

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
        return (g.sum_like(inputs[0]),)


class Transpose(Op):
    """Permute the axes: output axis ``i`` is input axis ``axes[i]``."""
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Transpose"

    def onnx_attributes(self, opset):
        return {"perm": self.axes}

    props = ("axes",)

    def __init__(self, axes: Sequence[int]):
        self.axes = tuple(int(a) for a in axes)

    def infer(self, x):
        if sorted(self.axes) != list(range(len(x.shape))):
            raise ShapeError(f"{self.name}: axes {self.axes} are not a permutation of the {len(x.shape)} "
                             f"axes of shape {x.shape}")
        return TensorSpec(tuple(x.shape[a] for a in self.axes), x.dtype)

    def forward(self, xp, x):
        return xp.transpose(x, self.axes)

    def backward(self, inputs, out, g):
        inverse = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inverse[a] = i
        return (Transpose(inverse).apply(g),)


class Squeeze(Op):
    """Remove the size-1 axes ``axes`` (non-negative, sorted)."""
    saves_inputs = False  # backward needs only the inputs' shapes

    props = ("axes",)

    def __init__(self, axes: Sequence[int]):
        self.axes = tuple(axes)

    def infer(self, x):
        for a in self.axes:
            if not 0 <= a < len(x.shape) or x.shape[a] not in (1, None):
                raise ShapeError(f"{self.name}: cannot squeeze axis {a} of shape {x.shape} (size is not 1)")
        return TensorSpec(tuple(d for i, d in enumerate(x.shape) if i not in self.axes), x.dtype)

    def forward(self, xp, x):
        return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in self.axes))

    def backward(self, inputs, out, g):
        return (ExpandDims(self.axes).apply(g),)


class ExpandDims(Op):
    """Insert size-1 axes so that they sit at positions ``axes`` (non-negative, sorted) of the output."""
    saves_inputs = False  # backward needs only the inputs' shapes

    props = ("axes",)

    def __init__(self, axes: Sequence[int]):
        self.axes = tuple(axes)

    def _shape(self, shape: tuple) -> tuple:
        rest = iter(shape)
        return tuple(1 if i in self.axes else next(rest) for i in range(len(shape) + len(self.axes)))

    def infer(self, x):
        if self.axes and self.axes[-1] >= len(x.shape) + len(self.axes):
            raise ShapeError(f"{self.name}: axes {self.axes} out of range for shape {x.shape}")
        return TensorSpec(self._shape(x.shape), x.dtype)

    def forward(self, xp, x):
        return x.reshape(self._shape(x.shape))

    def backward(self, inputs, out, g):
        return (Squeeze(self.axes).apply(g),)


class Concatenate(Op):
    """Join tensors along an existing ``axis``. Gradient: ``g`` sliced back into the pieces."""
    saves_inputs = False  # backward needs only the inputs' shapes
    onnx = "Concat"

    def onnx_attributes(self, opset):
        return {"axis": self.axis}

    props = ("axis",)

    def __init__(self, axis: int = 0):
        self.axis = int(axis)

    def infer(self, *xs):
        if not xs:
            raise ShapeError("concatenate: needs at least one tensor")
        first = xs[0].shape
        ax = normalize_axis("concatenate", self.axis, len(first))
        if len(first) == 0:
            raise ShapeError("concatenate: zero-dimensional tensors cannot be concatenated")
        out = list(first)
        for x in xs[1:]:
            if len(x.shape) != len(first):
                raise ShapeError(f"concatenate: shapes {first} and {x.shape} have different ranks")
            for i, (a, b) in enumerate(zip(out, x.shape)):
                if i == ax:
                    out[i] = None if a is None or b is None else a + b
                elif a is not None and b is not None and a != b:
                    raise ShapeError(f"concatenate: shapes {first} and {x.shape} differ on axis {i}")
                elif a is None:
                    out[i] = b
        return TensorSpec(out, np.result_type(*[x.dtype for x in xs]))

    def forward(self, xp, *xs):
        return xp.concatenate(xs, axis=self.axis)

    def backward(self, inputs, out, g):
        ax = normalize_axis(self.name, self.axis, g.ndim)
        if builtins.any(x.shape[ax] is None for x in inputs):  # sizes known only at run time
            from graphgrad.ops.array import SplitLike

            return tuple(SplitLike(ax, i).apply(g, *inputs) if needs_grad(x) else None
                         for i, x in enumerate(inputs))
        grads, start = [], 0
        for x in inputs:
            n = x.shape[ax]
            if needs_grad(x):
                grads.append(g[(slice(None),) * ax + (slice(start, start + n),)])
            else:
                grads.append(None)
            start += n
        return tuple(grads)


def _pad_pairs(op_name: str, pad_width, ndim: int, allow_negative: bool = False) -> tuple:
    """NumPy ``pad_width`` (int, (n,), (before, after), or one such per axis) as one pair per axis
    (negative amounts, which crop, only when ``allow_negative``)."""
    if isinstance(pad_width, Tensor):
        pad_width = pad_width.tolist()
    if isinstance(pad_width, int):
        return ((pad_width, pad_width),) * ndim
    pw = tuple(tuple(p) if isinstance(p, (list, tuple)) else p for p in pad_width)
    if builtins.all(isinstance(p, int) for p in pw):
        if len(pw) == 1:
            return ((pw[0], pw[0]),) * ndim
        if len(pw) == 2:
            return (pw,) * ndim
        raise ShapeError(f"{op_name}: cannot read pad_width {pad_width} for a tensor of rank {ndim}")
    if len(pw) == 1:
        pw = pw * ndim
    if len(pw) != ndim:
        raise ShapeError(f"{op_name}: pad_width {pad_width} has {len(pw)} entries for a tensor of rank {ndim}")
    pairs = []
    for p in pw:
        p = (p, p) if isinstance(p, int) else tuple(p)
        if len(p) == 1:
            p = (p[0], p[0])
        if len(p) != 2 or (not allow_negative and builtins.any(int(v) < 0 for v in p)):
            raise ShapeError(f"{op_name}: pad_width {pad_width} must hold non-negative (before, after) pairs")
        pairs.append((int(p[0]), int(p[1])))
    return tuple(pairs)


class Pad(Op):
    """Constant padding: ``pad_width`` is one (before, after) pair per axis. Gradient: ``g`` cropped."""
    saves_inputs = False  # backward needs only the inputs' shapes

    props = ("pad_width", "value")

    def __init__(self, pad_width, value=0):
        self.pad_width = tuple(tuple(p) for p in pad_width)
        self.value = value

    def infer(self, x):
        if len(self.pad_width) != len(x.shape):
            raise ShapeError(f"{self.name}: {len(self.pad_width)} pad pairs for shape {x.shape}")
        return TensorSpec(tuple(None if d is None else d + b + a for d, (b, a) in zip(x.shape, self.pad_width)),
                          x.dtype)

    def forward(self, xp, x):
        return xp.pad(x, self.pad_width, mode="constant", constant_values=self.value)

    def backward(self, inputs, out, g):
        key = tuple(slice(b, -a if a else None) for b, a in self.pad_width)
        return (g[key],)


def _along(xp, index, axis: int):
    """Index tuple selecting ``x[..., index[i, j, ...], ...]`` along ``axis`` (the other axes follow
    the index's own positions, torch.gather style)."""
    key = []
    for d, n in enumerate(index.shape):
        if d == axis:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            key.append(xp.arange(n).reshape(shape))
    return tuple(key)


def _index_key(op_name: str, xp, x, index, axis: int) -> tuple:
    """The key that gather/scatter ops index ``x`` with (see :func:`_along`). As in PyTorch, a 0-d
    index of a 0-d or 1-d input counts as one of shape (1,) (``zeros(10).scatter_(0, tensor(3), value=1)``);
    any other rank mismatch is an error here too, in eager mode, where no shape rule runs first."""
    index = xp.asarray(index)
    if index.ndim == 0 and x.ndim <= 1:
        return (index,) if x.ndim == 1 else ()
    if index.ndim != x.ndim:
        raise ShapeError(f"{op_name}: index of shape {tuple(index.shape)} must have the rank of the input "
                         f"{tuple(x.shape)}")
    return _along(xp, index, normalize_axis(op_name, axis, x.ndim))


def _check_index(op_name: str, x, index, axis: int) -> int:
    if index.dtype.kind not in "iu":
        raise DTypeError(f"{op_name}: index must be an integer tensor, got {index.dtype}")
    if len(index.shape) == 0 and len(x.shape) <= 1:  # (a 0-d index of a 0-d or 1-d input: see _index_key)
        return 0
    if len(index.shape) != len(x.shape):
        raise ShapeError(f"{op_name}: index of shape {index.shape} must have the rank of the input {x.shape}")
    ax = normalize_axis(op_name, axis, len(x.shape))
    for d, (n, m) in enumerate(zip(index.shape, x.shape)):
        if d != ax and n is not None and m is not None and n > m:
            raise ShapeError(f"{op_name}: index shape {index.shape} exceeds input shape {x.shape} on axis {d}")
    return ax


class TakeAlongAxis(Op):
    """``out[i][j] = x[index[i][j]][j]`` for ``axis=0`` (torch.gather). Gradient: scatter-add of ``g``."""
    onnx = "GatherElements"

    def onnx_attributes(self, opset):
        return {"axis": self.axis}

    props = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer(self, x, index):
        _check_index(self.name, x, index, self.axis)
        return TensorSpec(index.shape, x.dtype)

    def forward(self, xp, x, index):
        return x[_index_key(self.name, xp, x, index, self.axis)]

    def backward(self, inputs, out, g):
        x, index = inputs
        return ScatterAdd(self.axis, into_zeros=True).apply(x, index, g), None


class ScatterAdd(Op):
    """``out = x.copy(); out[index[i][j]][j] += src[i][j]`` for ``axis=0`` (torch.scatter_add_).
    With ``into_zeros`` only the shape and dtype of ``x`` are used (the gradient of ``TakeAlongAxis``)."""

    props = ("axis", "into_zeros")

    def __init__(self, axis: int, into_zeros: bool = False):
        self.axis = int(axis)
        self.into_zeros = bool(into_zeros)

    def infer(self, x, index, src):
        _check_index(self.name, x, index, self.axis)
        if len(src.shape) != len(index.shape) or builtins.any(
                n is not None and s is not None and n > s for n, s in zip(index.shape, src.shape)):
            raise ShapeError(f"{self.name}: src of shape {src.shape} is smaller than index {index.shape}")
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x, index, src):
        index = xp.asarray(index)
        out = xp.zeros(x.shape, x.dtype) if self.into_zeros else x.copy()
        if src.shape != index.shape:
            src = src[tuple(slice(0, n) for n in index.shape)]
        xp.add.at(out, _index_key(self.name, xp, x, index, self.axis), src)
        return out

    def backward(self, inputs, out, g):
        x, index, src = inputs
        gx = None if self.into_zeros or not needs_grad(x) else g
        gsrc = None
        if needs_grad(src):
            gsrc = TakeAlongAxis(self.axis).apply(g, index)
            if gsrc.shape != src.shape:
                if None in src.shape or None in gsrc.shape:
                    raise ShapeError(f"{self.name}: the gradient for a src of shape {src.shape} larger than the index "
                                     f"{index.shape} pads by their difference, which must be known when the graph "
                                     "is built (give src the index's shape, or known sizes)")
                gsrc = Pad(tuple((0, s - n) for s, n in zip(src.shape, gsrc.shape))).apply(gsrc)
        return gx, None, gsrc


class _Triangle(Op):
    props = ("k",)

    def __init__(self, k: int = 0):
        self.k = int(k)

    def infer(self, x):
        if len(x.shape) < 2:
            raise ShapeError(f"{self.name}: needs a tensor of rank >= 2, got shape {x.shape}")
        return x


class Tril(_Triangle):
    """Lower triangle (``j <= i + k``) of the last two axes, zeros elsewhere."""

    def forward(self, xp, x):
        return xp.tril(x, self.k)

    def backward(self, inputs, out, g):
        return (Tril(self.k).apply(g),)


class Triu(_Triangle):
    """Upper triangle (``j >= i + k``) of the last two axes, zeros elsewhere."""

    def forward(self, xp, x):
        return xp.triu(x, self.k)

    def backward(self, inputs, out, g):
        return (Triu(self.k).apply(g),)


class Diag(Op):
    """A square matrix with the vector ``x`` on its ``k``-th diagonal. Gradient: that diagonal of ``g``."""

    props = ("k",)

    def __init__(self, k: int = 0):
        self.k = int(k)

    def infer(self, x):
        if len(x.shape) != 1:
            raise ShapeError(f"{self.name}: needs a 1-D tensor, got shape {x.shape}")
        n = None if x.shape[0] is None else x.shape[0] + builtins.abs(self.k)
        return TensorSpec((n, n), x.dtype)

    def forward(self, xp, x):
        return xp.diag(x, self.k)

    def backward(self, inputs, out, g):
        if inputs[0].shape[0] is not None:
            return (diag(g, self.k),)
        # length known only at run time: g is square (n + |k|, n + |k|), so its k-th diagonal has
        # exactly n entries; read them as masked sums over one axis, dropping the |k| leading ones
        from graphgrad.ops.array import ones_like

        on_diagonal = g * Tril(self.k).apply(Triu(self.k).apply(ones_like(g)))
        return (on_diagonal.sum(0)[self.k:] if self.k >= 0 else on_diagonal.sum(1)[-self.k:],)


class OneHot(Op):
    """``out[..., c] = (indices[...] == c)`` for ``c < num_classes``; no gradient."""

    props = ("num_classes", "dtype")

    def __init__(self, num_classes: int, dtype="int64"):
        self.num_classes = int(num_classes)
        self.dtype = as_dtype(dtype)

    def infer(self, x):
        if x.dtype.kind not in "iu":
            raise DTypeError(f"{self.name}: indices must be integers, got {x.dtype}")
        return TensorSpec(tuple(x.shape) + (self.num_classes,), self.dtype)

    def forward(self, xp, x):
        if x.size and (x.min() < 0 or x.max() >= self.num_classes):
            from graphgrad.errors import IndexRangeError

            bad = int(x.min()) if x.min() < 0 else int(x.max())
            raise IndexRangeError(f"one_hot: class {bad} is out of range for num_classes={self.num_classes} "
                                  f"(valid: 0 .. {self.num_classes - 1})")
        return (x[..., None] == xp.arange(self.num_classes)).astype(self.dtype)


# ---- public functions ---------------------------------------------------------------------------
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


def flatten(x, start_axis: int = 0, end_axis: int = -1) -> Tensor:
    """Merge axes ``start_axis..end_axis`` (inclusive) into one. Shape (2, 3, 4) -> (24,);
    ``flatten(x, 1)`` -> (2, 12)."""
    x = _tensor(x)
    if x.ndim == 0:
        return reshape(x, (1,))
    s = normalize_axis("flatten", start_axis, x.ndim)
    e = normalize_axis("flatten", end_axis, x.ndim)
    if s > e:
        raise ShapeError(f"flatten: start_axis {start_axis} comes after end_axis {end_axis} for shape {x.shape}")
    if None in x.shape:  # some dimensions known only at run time
        from graphgrad.ops.array import Flatten

        return Flatten(s, e).apply(x) if s < e else x
    return reshape(x, x.shape[:s] + (math.prod(x.shape[s:e + 1]),) + x.shape[e + 1:])


def squeeze(x, axis: Axis = None) -> Tensor:
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1).
    Shape (1, 3, 1) -> (3,)."""
    x = _tensor(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, x.ndim)
    return Squeeze(axes).apply(x) if axes else x


def expand_dims(x, axis: Union[int, Sequence[int]]) -> Tensor:
    """Insert size-1 axes at ``axis`` (positions in the output). Shape (3,), axis 0 -> (1, 3)."""
    x = _tensor(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return ExpandDims(normalize_axes("expand_dims", axes, x.ndim + len(axes))).apply(x)


def unsqueeze(x, axis: int) -> Tensor:
    """Insert one size-1 axis at ``axis`` (PyTorch's name for ``expand_dims``)."""
    return expand_dims(x, axis)


def transpose(x, *axes) -> Tensor:
    """Permute axes (reverse them when none are given). ``transpose(x)``, ``transpose(x, (1, 0))`` or
    ``transpose(x, 1, 0)``. Shape (2, 3, 4) -> (4, 3, 2) by default."""
    x = _tensor(x)
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    if not axes:
        axes = tuple(range(x.ndim))[::-1]
    axes = tuple(normalize_axis("transpose", int(a), x.ndim) for a in axes)
    if axes == tuple(range(x.ndim)):
        return x
    return Transpose(axes).apply(x)


def permute(x, *axes) -> Tensor:
    """Permute axes, PyTorch style: ``permute(x, 2, 0, 1)`` or ``permute(x, (2, 0, 1))``."""
    given = len(axes) == 1 and isinstance(axes[0], (tuple, list))
    if given:
        axes = tuple(axes[0])
    if not axes:
        x = _tensor(x)
        if given and x.ndim == 0:  # permute(()) of a 0-d tensor: the empty order of its no axes
            return x
        raise ShapeError("permute: give the new order of the axes")
    return transpose(x, axes)


def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    """Exchange two axes. Shape (2, 3, 4), (0, 2) -> (4, 3, 2)."""
    x = _tensor(x)
    a = normalize_axis("swapaxes", axis1, x.ndim)
    b = normalize_axis("swapaxes", axis2, x.ndim)
    if x.ndim == 0:  # dims 0 / -1 of a 0-d tensor (PyTorch): nothing to exchange
        return x
    order = list(range(x.ndim))
    order[a], order[b] = b, a
    return transpose(x, order)


def moveaxis(x, source: Union[int, Sequence[int]], destination: Union[int, Sequence[int]]) -> Tensor:
    """Move axes ``source`` to positions ``destination`` (NumPy semantics). Shape (2, 3, 4), 0 -> -1:
    (3, 4, 2)."""
    x = _tensor(x)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: source {source} and destination {destination} differ in length")
    src = [normalize_axis("moveaxis", a, x.ndim) for a in src]
    dst = [normalize_axis("moveaxis", a, x.ndim) for a in dst]
    if x.ndim == 0:  # dims 0 / -1 of a 0-d tensor (PyTorch): nothing to move
        return x
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def concatenate(xs: Sequence, axis: int = 0) -> Tensor:
    """Join tensors along an existing axis. Shapes (2, 3), (4, 3), axis 0 -> (6, 3)."""
    xs = list(xs)
    if len(xs) == 1:
        return _tensor(xs[0])
    dtypes = {x.dtype for x in xs if isinstance(x, Tensor)}
    if len(dtypes) > 1:  # mixed: all in the promoted dtype first (int64 with float32 is float32, as PyTorch)
        from graphgrad.ops.elementwise import astype  # (elementwise imports this module)

        target = result_dtype(*dtypes)
        xs = [astype(x, target) if isinstance(x, Tensor) and x.dtype != target else x for x in xs]
    return Concatenate(axis).apply(*xs)


cat = concatenate


def stack(xs: Sequence, axis: int = 0) -> Tensor:
    """Join same-shape tensors along a new axis. Shapes (2, 3) x 4, axis 0 -> (4, 2, 3)."""
    xs = [_tensor(x) for x in xs]
    if not xs:
        raise ShapeError("stack: needs at least one tensor")
    ax = normalize_axis("stack", axis, xs[0].ndim + 1)
    for x in xs[1:]:
        if x.shape != xs[0].shape:
            raise ShapeError(f"stack: all tensors must have the same shape, got {xs[0].shape} and {x.shape}")
    return concatenate([expand_dims(x, ax) for x in xs], ax)


def split(x, indices_or_sections: Union[int, Sequence[int]], axis: int = 0) -> list:
    """Split into pieces along ``axis`` (NumPy semantics): an int ``N`` gives N equal pieces (the
    size must divide), a list gives the split points. Returns a list of tensors."""
    x = _tensor(x)
    ax = normalize_axis("split", axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if n is None:
            raise ShapeError(f"split: axis {ax} of shape {x.shape} has an unknown size, so it cannot be split into "
                             f"{sections} equal sections when the graph is built; give the split points instead")
        if sections <= 0 or n % sections:
            raise ShapeError(f"split: axis {ax} of size {n} cannot be split into {sections} equal sections")
        step = n // sections
        points = [step * i for i in range(1, sections)]
    else:
        points = [int(i) for i in indices_or_sections]
    bounds = [0] + points + [n]
    lead = (slice(None),) * ax
    return [x[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]


def chunk(x, chunks: int, axis: int = 0) -> list:
    """Split into ``chunks`` pieces of size ``ceil(n / chunks)`` along ``axis`` (PyTorch semantics:
    the last may be smaller, and there may be fewer pieces). Returns a list of tensors."""
    x = _tensor(x)
    if chunks <= 0:
        raise ShapeError(f"chunk: chunks must be positive, got {chunks}")
    n = x.shape[normalize_axis("chunk", axis, x.ndim)]
    if n is None:
        raise ShapeError(f"chunk: axis {axis} of shape {x.shape} has an unknown size, so the chunk sizes cannot be "
                         "known when the graph is built; use split with explicit split points")
    size = -(-n // chunks) if n else 1
    return split(x, list(range(size, n, size)), axis)


def tile(x, reps: Union[int, Sequence[int]]) -> Tensor:
    """Repeat the whole tensor ``reps`` times along each axis (NumPy semantics).
    Shape (2, 3), reps (2, 2) -> (4, 6)."""
    x = _tensor(x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = builtins.max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    if None in x.shape:
        return _repeat_unknown(expand_dims(x, tuple(range(nd - x.ndim))) if nd > x.ndim else x, reps, before=True)
    shape = (1,) * (nd - x.ndim) + tuple(x.shape)
    inter = tuple(v for r, d in zip(reps, shape) for v in (1, d))
    big = tuple(v for r, d in zip(reps, shape) for v in (r, d))
    out = reshape(broadcast_to(reshape(x, inter), big), tuple(r * d for r, d in zip(reps, shape)))
    if out._data is not None and not getattr(out._data.flags, "writeable", True):  # (CuPy's flags have none)
        from graphgrad.ops.array import clone  # (array imports this module)

        out = clone(out)  # a broadcast view (new leading axes): a copy of its own, as np.tile and PyTorch give
    return out


def repeat(x, repeats: Union[int, Sequence[int]], axis: Optional[int] = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (``None``: of the flattened tensor),
    NumPy semantics; ``repeats`` may be one count per element. Shape (2, 3), 2, axis 1 -> (2, 6)."""
    x = _tensor(x)
    if axis is None:
        x, axis = reshape(x, -1), 0
    ax = normalize_axis("repeat", axis, x.ndim)
    if isinstance(repeats, Tensor):
        repeats = repeats.tolist()
    if not isinstance(repeats, int):
        repeats = [int(r) for r in repeats]
        if len(repeats) == 1:
            repeats = repeats[0]
    if isinstance(repeats, int):
        if None in x.shape:
            return _repeat_unknown(x, tuple(repeats if i == ax else 1 for i in range(x.ndim)), before=False)
        shape = x.shape
        inter = shape[:ax + 1] + (1,) + shape[ax + 1:]
        big = shape[:ax + 1] + (repeats,) + shape[ax + 1:]
        out = broadcast_to(reshape(x, inter), big)
        return reshape(out, shape[:ax] + (shape[ax] * repeats,) + shape[ax + 1:])
    if x.shape[ax] is None:
        raise ShapeError(f"repeat: one repeat count per element needs the size of axis {ax}, unknown in shape "
                         f"{x.shape}; give a single count, or a placeholder with that size known")
    if len(repeats) != x.shape[ax]:
        raise ShapeError(f"repeat: {len(repeats)} repeat counts for axis {ax} of size {x.shape[ax]}")
    index = [i for i, r in enumerate(repeats) for _ in range(r)]
    return take(x, Tensor(index, dtype="int64"), axis=ax)


def _repeat_unknown(x: Tensor, reps: tuple, before: bool) -> Tensor:
    """``tile`` (``before``: copies of the whole axis) or ``repeat`` (copies of each element) with
    ``reps[i]`` copies along axis ``i``, for shapes with dimensions known only at run time: a size-r
    axis is inserted next to each repeated axis by broadcasting against ones, then merged into it."""
    from graphgrad.ops.array import Flatten

    axes = [i for i, r in enumerate(reps) if r != 1]
    out = x
    for j, i in enumerate(axes):  # axis i of x is at position i + j of out
        pos = i + j if before else i + j + 1
        ones = [1] * (out.ndim + 1)
        ones[pos] = reps[i]
        out = expand_dims(out, pos) * Tensor(np.ones(ones, dtype=x.dtype))
    for j, i in reversed(list(enumerate(axes))):
        out = Flatten(i + j, i + j + 1).apply(out)
    return out


def _pad_index(p: int, n: int, mode: str) -> int:
    """Source index of padded position ``p`` (may be outside ``[0, n)``) for NumPy's pad modes."""
    if mode == "edge":
        return builtins.min(builtins.max(p, 0), n - 1)
    if mode == "wrap":
        return p % n
    if mode == "symmetric":
        m = p % (2 * n)
        return m if m < n else 2 * n - 1 - m
    if n == 1:  # reflect
        return 0
    m = p % (2 * (n - 1))
    return m if m < n else 2 * (n - 1) - m


def _crop(x: Tensor, pairs: tuple) -> Tensor:
    """``x`` with ``-amount`` elements removed at each negative (before, after) amount."""
    key = []
    for ax, (before, after) in enumerate(pairs):
        n = x.shape[ax]
        if (before < 0 or after < 0) and n is not None and -builtins.min(before, 0) - builtins.min(after, 0) > n:
            raise ShapeError(f"pad: cropping {(before, after)} from axis {ax} of shape {x.shape} leaves a negative size")
        key.append(slice(-builtins.min(before, 0), builtins.min(after, 0) or None))
    return x[tuple(key)]


def pad(x, pad_width, mode: str = "constant", constant_values=0) -> Tensor:
    """Pad with NumPy's ``pad_width`` semantics (an int, a (before, after) pair, or one per axis).
    In 'constant' mode a negative amount crops that many elements (as PyTorch's ``F.pad``).

    ``mode``: 'constant' (with ``constant_values``), 'reflect', 'symmetric', 'edge' or 'wrap'.
    Shape (2, 3), pad_width ((1, 1), (0, 2)) -> (4, 5).
    """
    x = _tensor(x)
    pairs = _pad_pairs("pad", pad_width, x.ndim, allow_negative=mode == "constant")
    if builtins.any(v < 0 for p in pairs for v in p):  # negative amounts crop (PyTorch's F.pad)
        x = _crop(x, pairs)
        pairs = tuple((builtins.max(b, 0), builtins.max(a, 0)) for b, a in pairs)
    if mode == "constant":
        if isinstance(constant_values, Tensor):
            constant_values = constant_values.item()
        if not isinstance(constant_values, (int, float, bool)):
            raise ShapeError(f"pad: constant_values must be a scalar, got {constant_values!r}")
        if builtins.all(p == (0, 0) for p in pairs):
            return x
        return Pad(pairs, constant_values).apply(x)
    if mode not in ("reflect", "symmetric", "edge", "wrap"):
        raise ShapeError(f"pad: unknown mode {mode!r} (expected 'constant', 'reflect', 'symmetric', 'edge' "
                         "or 'wrap')")
    for ax, (before, after) in enumerate(pairs):
        if before == after == 0:
            continue
        n = x.shape[ax]
        if n is None:
            raise ShapeError(f"pad: {mode} padding reads positions from the far end of axis {ax}, whose size is "
                             f"unknown in shape {x.shape}; only mode='constant' pads an axis of unknown size")
        if not n:
            raise ShapeError(f"pad: cannot {mode}-pad axis {ax} of size {n}")
        index = [_pad_index(p, n, mode) for p in range(-before, n + after)]
        x = take(x, Tensor(index, dtype="int64"), axis=ax)
    return x


def flip(x, axis: Axis = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes when ``None``). Shape unchanged."""
    x = _tensor(x)
    axes = normalize_axes("flip", axis, x.ndim)
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


def roll(x, shift: Union[int, Sequence[int]], axis: Axis = None) -> Tensor:
    """Shift elements cyclically by ``shift`` along ``axis`` (``None``: of the flattened tensor,
    then reshaped back). Shape unchanged."""
    x = _tensor(x)
    if axis is None:
        return reshape(roll(reshape(x, -1), shift, 0), x.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ShapeError(f"roll: shift {shift} and axis {axis} differ in length")
    for s, a in zip(shifts, axes):
        ax = normalize_axis("roll", a, x.ndim)
        n = x.shape[ax]
        if n is None:
            raise ShapeError(f"roll: axis {ax} of shape {x.shape} has an unknown size; rolling along it needs the "
                             "size when the graph is built")
        s = s % n if n else 0
        if s:
            lead = (slice(None),) * ax
            x = concatenate([x[lead + (slice(n - s, None),)], x[lead + (slice(0, n - s),)]], ax)
    return x


def take(x, indices, axis: Optional[int] = None) -> Tensor:
    """Elements at integer ``indices`` along ``axis`` (of the flattened tensor when ``None``).
    Shape (5, 3), indices (2, 4), axis 0 -> (2, 4, 3). Repeated indices accumulate gradients."""
    x = _tensor(x)
    if axis is None:
        return reshape(x, -1)[_tensor(indices)]
    ax = normalize_axis("take", axis, x.ndim)
    return x[(slice(None),) * ax + (_tensor(indices),)]


def gather(x, axis: int, index) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` for ``axis=0`` (torch.gather; ``index`` has the rank of ``x``
    and is no larger on the other axes). Output shape: ``index.shape``."""
    return TakeAlongAxis(axis).apply(x, index)


def take_along_axis(x, indices, axis: Optional[int]) -> Tensor:
    """``np.take_along_axis``: pick along ``axis`` with ``indices`` broadcast against ``x`` on the
    other axes (``axis=None``: of the flattened tensor). Shape (3, 4), indices (3, 2), axis 1 -> (3, 2)."""
    x, indices = _tensor(x), _tensor(indices)
    if axis is None:
        return gather(reshape(x, -1), 0, reshape(indices, -1))
    if indices.ndim != x.ndim:
        raise ShapeError(f"take_along_axis: indices of shape {indices.shape} must have the rank of {x.shape}")
    ax = normalize_axis("take_along_axis", axis, x.ndim)
    others = [i for i in range(x.ndim) if i != ax]
    common = broadcast_shapes("take_along_axis", tuple(x.shape[i] for i in others),
                              tuple(indices.shape[i] for i in others))
    xs, ix = list(x.shape), list(indices.shape)
    for i, d in zip(others, common):
        xs[i] = ix[i] = d
    return gather(broadcast_to(x, xs), ax, broadcast_to(indices, ix))


def scatter_add(x, axis: int, index, src) -> Tensor:
    """torch.scatter_add: a copy of ``x`` with ``out[index[i][j]][j] += src[i][j]`` (for ``axis=0``);
    repeated indices accumulate. Differentiable in ``x`` and ``src``. Output shape: ``x.shape``."""
    return ScatterAdd(axis).apply(x, index, src)


def one_hot(indices, num_classes: int = -1, dtype="int64") -> Tensor:
    """One-hot encoding: shape (...) -> (..., num_classes) (``-1``: ``max(indices) + 1``)."""
    indices = _tensor(indices)
    if indices.dtype.kind not in "iu":
        raise DTypeError(f"one_hot: indices must be integers, got {indices.dtype}")
    if num_classes < 0:
        if indices.is_symbolic:
            raise ShapeError("one_hot: num_classes must be given for a symbolic tensor")
        num_classes = int(indices.numpy().max()) + 1 if indices.size else 0
    return OneHot(num_classes, dtype).apply(indices)


def tril(x, k: int = 0) -> Tensor:
    """Lower triangle of the last two axes (``j <= i + k``), zeros above. Shape unchanged."""
    return Tril(k).apply(x)


def triu(x, k: int = 0) -> Tensor:
    """Upper triangle of the last two axes (``j >= i + k``), zeros below. Shape unchanged."""
    return Triu(k).apply(x)


def diag(x, k: int = 0) -> Tensor:
    """NumPy ``diag``: a 1-D tensor (n,) gives an (n+|k|, n+|k|) matrix with it on the ``k``-th
    diagonal; a 2-D tensor gives its ``k``-th diagonal as a 1-D tensor."""
    x = _tensor(x)
    if x.ndim == 1:
        return Diag(k).apply(x)
    if x.ndim != 2:
        raise ShapeError(f"diag: needs a 1-D or 2-D tensor, got shape {x.shape}")
    if None in x.shape:
        raise ShapeError(f"diag: the shape of the matrix, {x.shape}, must be known when the graph is built "
                         "(the length of its diagonal depends on it)")
    rows, cols = x.shape
    start_r, start_c = (0, k) if k >= 0 else (-k, 0)
    n = builtins.max(0, builtins.min(rows - start_r, cols - start_c))
    r = Tensor(list(range(start_r, start_r + n)), dtype="int64")
    c = Tensor(list(range(start_c, start_c + n)), dtype="int64")
    return x[r, c]
