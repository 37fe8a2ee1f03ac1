"""ONNX import converters: constants, shapes, reshaping, slicing, gathering and scattering, padding.

Arguments ONNX passes as tensors but that decide output shapes (``shape``, ``axes``, ``pads``,
``starts``, ``repeats``, ``k``...) are read with ``node.const(i)``: import-time constants (see the
importer's docstring). When a model's inputs have dimensions known only at run time (dynamic batch
and sequence length), ``Shape`` becomes a run-time op (``ShapeOf``) and the shape arithmetic after it
runs as graph ops: ``Reshape``, ``Expand``, ``ConstantOfShape``, ``Range`` and ``Slice`` take run-time
shapes and bounds (``graphgrad/ops/shape_dynamic.py``). The elements known at import (the static
dims) are carried along (``node.entries(i)``), so everything that can still be folded is, and the
shapes downstream keep their static dimensions. Everything computed from the model's data is built with graphgrad ops, so
the same converter runs eagerly, in a graph or in a trace, and stays differentiable.
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import OnnxImportError, const_tensor, converter, np_dtype
from graphgrad.ops.sorting_more import _unique_1d as unique_1d


# ---- helpers --------------------------------------------------------------------------------------------
def _ints(value) -> list:
    """A constant (NumPy array, list or scalar) as a list of Python ints."""
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _int(value) -> int:
    """A one-element constant as a Python int (ONNX passes scalars as shape () or (1,))."""
    return _ints(value)[0]


def _axis(node, axis: int, ndim: int) -> int:
    """``axis`` (negative counts from the end) as a non-negative axis of a rank-``ndim`` tensor."""
    if not -ndim <= axis < ndim:
        raise node.error(f"axis {axis} is out of range for a tensor of rank {ndim}")
    return axis + ndim if axis < 0 else axis


def _known_shape(node, x, why: str) -> tuple:
    """``x``'s shape, or an error when some dimension is only known at run time."""
    if None in x.shape:
        raise node.error(f"{why} needs the input's full shape when the model is imported, got {x.shape}; "
                         "give the model's inputs static shapes (load(..., input_shapes=...))")
    return tuple(x.shape)


def _maybe_const(node, index: int):
    """Input ``index``'s value if known at import time, else ``None`` (for inputs that may be data)."""
    try:
        return node.const(index)
    except OnnxImportError:
        return None


def _along(axis: int, ndim: int, key) -> tuple:
    """An index tuple applying ``key`` on ``axis`` only."""
    return (slice(None),) * axis + (key,) + (slice(None),) * (ndim - axis - 1)


def _extreme(dtype, largest: bool):
    """The value no element exceeds (``largest``) or goes below, for ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.inf if largest else -np.inf
    if dtype.kind == "b":
        return largest
    info = np.iinfo(dtype)
    return info.max if largest else info.min


# ---- constants and shapes ----------------------------------------------------------------------------------
_CONSTANT_ATTRS = (("value", None), ("value_float", "float32"), ("value_floats", "float32"),
                   ("value_int", "int64"), ("value_ints", "int64"))


@converter("Constant")
def constant(node):
    for name, dtype in _CONSTANT_ATTRS:
        if node.has(name):
            value = np.asarray(node.attr(name), dtype=dtype)
            if value.dtype.kind not in "biuf":
                raise node.unsupported(f"a Constant of dtype {value.dtype}")
            return const_tensor(value)
    raise node.unsupported("a Constant without value, value_float(s) or value_int(s) (sparse or string)")


@converter("ConstantOfShape")
def constant_of_shape(node, shape):
    value = node.attr("value")
    value = np.zeros(1, "float32") if value is None else np.asarray(value)
    known = _maybe_const(node, 0)
    if known is None:  # a shape computed at run time
        return G.FullOfShape(value.reshape(-1)[0], value.dtype, node.entries(0)).apply(shape)
    return const_tensor(np.full(_ints(known), value.reshape(-1)[0], dtype=value.dtype))


@converter("Shape")
def shape(node, x):
    # Python slicing clamps start/end exactly as ONNX specifies (opset 15)
    start, end = node.attr("start", 0), node.attr("end")
    dims = tuple(x.shape)[slice(start, end)]
    if None in dims:  # read when the graph runs; the static dims stay known for the arithmetic after it
        return node.shape_value(G.ShapeOf(start, end).apply(x), dims)
    return const_tensor(np.asarray(dims, dtype="int64"))


@converter("Size")
def size(node, x):
    if None in x.shape:
        return G.prod(G.ShapeOf().apply(x))
    return const_tensor(np.asarray(math.prod(x.shape), dtype="int64"))


@converter("Range")
def range_(node, start, limit, delta):
    bounds = [_maybe_const(node, i) for i in range(3)]
    if any(b is None for b in bounds):  # a bound computed at run time (a sequence length)
        return G.ArangeOf().apply(start, limit, delta)
    first, last, step = bounds
    dtype = np.asarray(first).dtype
    return const_tensor(np.arange(first.item(), last.item(), step.item()).astype(dtype))


@converter("EyeLike")
def eye_like(node, x):
    rows, cols = _known_shape(node, x, "EyeLike")
    dtype = np_dtype(node.attr("dtype")) if node.has("dtype") else x.dtype
    return const_tensor(np.eye(rows, cols, node.attr("k", 0), dtype=dtype))


# ---- reshaping ----------------------------------------------------------------------------------------------
@converter("Reshape")
def reshape(node, x, shape=None):
    if node.opset >= 5 and _maybe_const(node, 1) is None:
        return _reshape_at_run_time(node, x, shape)
    target = _ints(node.attr("shape") if node.opset < 5 else node.const(1))
    if not node.attr("allowzero", 0):  # 0 copies the input's dimension
        target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    if None in target:  # a copied dimension known only at run time: let reshape infer it
        if target.count(None) > 1 or -1 in target:
            raise node.error(f"cannot reshape {x.shape} to {target}: several dimensions known only at run time")
        target = [-1 if d is None else d for d in target]
    return G.reshape(x, tuple(target))


def _reshape_at_run_time(node, x, shape):
    """Reshape to a shape computed when the graph runs, keeping the dims known now in the output's shape."""
    allowzero = bool(node.attr("allowzero", 0))
    entries = node.entries(1)
    if entries is None:
        raise node.error(f"the target shape must be a 1-D integer tensor of known length, got {shape.shape}")
    hint = []
    for i, d in enumerate(entries):
        if d == 0 and not allowzero:
            d = x.shape[i] if i < x.ndim else None
        hint.append(d)
    if -1 in hint:
        rest = [d for d in hint if d != -1]
        size = None if None in x.shape else math.prod(x.shape)
        inferred = None if size is None or None in rest or 0 in rest else size // math.prod(rest)
        hint = [inferred if d == -1 else d for d in hint]
    if None not in hint and None not in x.shape:
        return G.reshape(x, tuple(hint))
    if hint.count(None) == 1 and -1 not in entries:  # one unknown dim: a static reshape infers it
        return G.reshape(x, tuple(-1 if d is None else d for d in hint))
    return G.ReshapeTo(allowzero, hint).apply(x, shape)


@converter("Flatten")
def flatten(node, x):
    ndim = x.ndim
    axis = node.attr("axis", 1)
    axis = axis + ndim if axis < 0 else axis
    if None not in x.shape:
        return G.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))
    head = G.flatten(x, 0, axis - 1) if axis > 0 else G.expand_dims(x, 0)
    return G.flatten(head, 1, -1) if head.ndim > 1 else G.expand_dims(head, 1)


@converter("Transpose")
def transpose(node, x):
    return G.transpose(x, node.attr("perm"))


@converter("Squeeze")
def squeeze(node, x, axes=None):
    axes = node.attr("axes") if node.opset < 13 else node.const(1)
    return G.squeeze(x, None if axes is None else tuple(_ints(axes)))


@converter("Unsqueeze")
def unsqueeze(node, x, axes=None):
    axes = node.attr("axes") if node.opset < 13 else node.const(1)
    return G.expand_dims(x, tuple(_ints(axes)))


@converter("Expand")
def expand(node, x, shape):
    if _maybe_const(node, 1) is None:  # a shape computed when the graph runs
        entries = node.entries(1)
        if entries is None:
            raise node.error(f"the target shape must be a 1-D integer tensor of known length, got {shape.shape}")
        rank = max(x.ndim, len(entries))
        dims = [1] * (rank - x.ndim) + list(x.shape)
        wanted = [1] * (rank - len(entries)) + entries
        hint = [w if d == 1 else (d if w in (1, d) else None) if d is not None else (w if w not in (None, 1) else None)
                for d, w in zip(dims, wanted)]
        return G.ExpandTo(hint).apply(x, shape)
    target = tuple(_ints(node.const(1)))
    if None in x.shape:  # broadcasting against zeros keeps the run-time dimensions
        return x + const_tensor(np.zeros(target, dtype=x.dtype))
    return G.broadcast_to(x, np.broadcast_shapes(tuple(x.shape), target))


@converter("CenterCropPad")
def center_crop_pad(node, x, shape):
    axes = node.attr("axes")
    axes = range(x.ndim) if axes is None else [_axis(node, a, x.ndim) for a in axes]
    key, pairs = [slice(None)] * x.ndim, [(0, 0)] * x.ndim
    for axis, size in zip(axes, _ints(node.const(1))):
        n = _known_shape(node, x, "CenterCropPad")[axis]
        if size < n:  # crop: the extra element of an odd difference comes off the end
            start = (n - size) // 2
            key[axis] = slice(start, start + size)
        elif size > n:  # pad with zeros: likewise the extra one goes at the end
            pairs[axis] = ((size - n) // 2, size - n - (size - n) // 2)
    return G.pad(x[tuple(key)], pairs)


@converter("Tile")
def tile(node, x, repeats):
    return G.tile(x, tuple(_ints(node.const(1))))


@converter("DepthToSpace")
def depth_to_space(node, x):
    bs = node.attr("blocksize")
    _, c, h, w = x.shape
    if node.attr("mode", "DCR") == "DCR":
        y = G.transpose(G.reshape(x, (-1, bs, bs, c // bs ** 2, h, w)), (0, 3, 4, 1, 5, 2))
    else:  # CRD
        y = G.transpose(G.reshape(x, (-1, c // bs ** 2, bs, bs, h, w)), (0, 1, 4, 2, 5, 3))
    return G.reshape(y, (-1, c // bs ** 2, h * bs, w * bs))


@converter("SpaceToDepth")
def space_to_depth(node, x):
    bs = node.attr("blocksize")
    _, c, h, w = x.shape
    y = G.reshape(x, (-1, c, h // bs, bs, w // bs, bs))
    # DCR (the default): blocks outermost in the new channels; CRD: channels outermost
    perm = (0, 1, 3, 5, 2, 4) if node.attr("mode", "DCR") == "CRD" else (0, 3, 5, 1, 2, 4)
    return G.reshape(G.transpose(y, perm), (-1, c * bs * bs, h // bs, w // bs))


# ---- joining and splitting ----------------------------------------------------------------------------------
@converter("Concat")
def concat(node, *xs):
    out = G.concatenate([x for x in xs if x is not None], node.attr("axis", 0))
    if out._data is None and out.dtype.kind in "iu" and out.ndim == 1:  # a shape assembled from parts
        parts = [node.entries(i) for i, x in enumerate(xs) if x is not None]
        if all(p is not None for p in parts):
            return node.shape_value(out, [e for p in parts for e in p])
    return out


@converter("Split")
def split(node, x, sizes=None):
    axis = _axis(node, node.attr("axis", 0), x.ndim)
    sizes = node.attr("split") if node.opset < 13 else node.const(1)
    if sizes is None:
        sizes = _equal_parts(node, x.shape[axis], node.attr("num_outputs", node.num_outputs))
    points = np.cumsum(_ints(sizes))[:-1]
    return tuple(G.split(x, [int(p) for p in points], axis))


def _equal_parts(node, n, parts: int) -> list:
    """Sizes of ``parts`` pieces of ``n`` (the last smaller when it does not divide, opset 18)."""
    if n is None:
        raise node.error("splitting an axis whose size is known only at run time needs explicit split sizes")
    size = -(-n // parts)
    return [max(0, min(size, n - i * size)) for i in range(parts)]


@converter("Slice")
def slice_(node, x, *rest):
    if node.opset < 10:
        starts, ends, axes, steps = node.attr("starts"), node.attr("ends"), node.attr("axes"), None
    else:
        if _maybe_const(node, 1) is None or _maybe_const(node, 2) is None:
            return _slice_at_run_time(node, x, *rest)
        starts, ends, axes, steps = node.const(1), node.const(2), node.const(3), node.const(4)
    starts, ends = _ints(starts), _ints(ends)
    axes = range(len(starts)) if axes is None else _ints(axes)
    steps = [1] * len(starts) if steps is None else _ints(steps)
    key = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        # Python's slices clamp out-of-range starts/ends (INT_MAX, INT_MIN) the way ONNX does
        key[_axis(node, axis, x.ndim)] = slice(start, end, step)
    out = x[tuple(key)]
    if out._data is None and x.ndim == 1 and out.dtype.kind in "iu" and None not in out.shape:  # part of a shape
        entries = node.entries(0)
        if entries is not None:
            return node.shape_value(out, entries[key[0]])
    return out


def _slice_at_run_time(node, x, starts, ends, *rest):
    """Slice with starts or ends computed when the graph runs (``x[:, :seq_len]``); a slice of a
    partly known shape keeps its known elements."""
    axes, steps = node.const(3), node.const(4)
    count = starts.shape[0] if starts.ndim else 1
    axes = list(range(count)) if axes is None else [_axis(node, a, x.ndim) for a in _ints(axes)]
    steps = [1] * count if steps is None else _ints(steps)
    begin, stop = node.entries(1), node.entries(2)
    hint = list(x.shape)
    for i, (axis, step) in enumerate(zip(axes, steps)):
        size = x.shape[axis]
        b = None if begin is None else begin[i]
        e = None if stop is None else stop[i]
        hint[axis] = None if None in (size, b, e) else len(range(size)[slice(b, e, step)])
    out = G.SliceDynamic(axes, steps, hint).apply(x, G.reshape(starts, (-1,)), G.reshape(ends, (-1,)))
    return out


# ---- gathering -----------------------------------------------------------------------------------------------
@converter("Gather")
def gather(node, x, indices):
    out = G.take(x, indices, axis=node.attr("axis", 0))
    if out._data is None and out.dtype.kind in "iu" and x.ndim == 1 and out.ndim <= 1:  # picking dims of a shape
        entries, picks = node.entries(0), _maybe_const(node, 1)
        if entries is not None and picks is not None:
            return node.shape_value(out, [entries[int(i)] for i in np.asarray(picks).reshape(-1)])
    return out


@converter("GatherElements")
def gather_elements(node, x, indices):
    return G.gather(x, _axis(node, node.attr("axis", 0), x.ndim), indices)


@converter("GatherND")
def gather_nd(node, x, indices):
    b = node.attr("batch_dims", 0)
    k = indices.shape[-1]
    columns = tuple(indices[..., j] for j in range(k))
    if b == 0:
        return x[columns]
    batch_shape = _known_shape(node, x, "GatherND with batch_dims")[:b]
    n = math.prod(batch_shape)
    flat_x = G.reshape(x, (n,) + tuple(x.shape[b:]))
    flat_columns = tuple(G.reshape(c, (n,) + tuple(c.shape[b:])) for c in columns)
    batch = const_tensor(np.arange(n).reshape((n,) + (1,) * (indices.ndim - b - 1)))
    out = flat_x[(batch,) + flat_columns]
    return G.reshape(out, batch_shape + tuple(out.shape[1:]))


@converter("Compress")
def compress(node, x, condition):
    axis = node.attr("axis")
    if axis is None:
        x, axis = G.reshape(x, (-1,)), 0
    axis = _axis(node, axis, x.ndim)
    if condition.shape[0] is not None:  # a shorter condition leaves the rest out
        x = x[_along(axis, x.ndim, slice(0, condition.shape[0]))]
    return x[_along(axis, x.ndim, condition)]


@converter("NonZero")
def nonzero(node, x):
    # The output length is known only at run time: a boolean-mask index, one per coordinate.
    mask = x != 0
    grid = np.indices(_known_shape(node, x, "NonZero"), dtype="int64")
    return G.stack([const_tensor(g)[mask] for g in grid], 0)


# ---- scattering -----------------------------------------------------------------------------------------------
@converter("ScatterElements", "Scatter")
def scatter_elements(node, x, indices, updates):
    axis = _axis(node, node.attr("axis", 0), x.ndim)
    return _scatter(node, x, axis, indices, updates, node.attr("reduction", "none"))


def _scatter(node, x, axis: int, indices, updates, reduction: str):
    """``x`` with ``updates`` written (or reduced) at ``indices`` along ``axis`` (ScatterElements)."""
    if reduction == "add":
        return G.scatter_add(x, axis, indices, updates)
    if reduction == "none":
        written = G.ScatterAdd(axis, into_zeros=True).apply(x, indices, updates)
        ones = G.ones_like(indices, dtype="int64")
        hits = G.ScatterAdd(axis, into_zeros=True).apply(G.zeros_like(x, dtype="int64"), indices, ones)
        return G.where(hits > 0, written, x)
    if reduction in ("mul", "max", "min"):
        return _scatter_reduce(node, x, axis, indices, updates, reduction)
    raise node.unsupported(f"reduction {reduction!r}")


def _scatter_reduce(node, x, axis: int, indices, updates, reduction: str):
    """mul/max/min scatter: compare every index with every position of ``axis`` (a one-hot of the
    indices, so memory grows as ``indices.size * x.shape[axis]``), reduce the updates that land on
    each position, then combine with ``x``."""
    n = _known_shape(node, x, f"ScatterElements with reduction {reduction!r}")[axis]
    indices = G.astype(indices, "int64")
    indices = G.where(indices < 0, indices + n, indices)
    positions = np.arange(n).reshape([n if d == axis else 1 for d in range(x.ndim + 1)])
    lands = G.expand_dims(indices, axis) == const_tensor(positions)  # (..., n, indices along axis, ...)
    neutral = 1 if reduction == "mul" else _extreme(x.dtype, largest=reduction == "min")
    spread = G.where(lands, G.expand_dims(updates, axis), const_tensor(np.asarray(neutral, dtype=x.dtype)))
    reduce = {"mul": G.prod, "max": G.max, "min": G.min}[reduction]
    reduced = reduce(spread, axis=axis + 1)
    pads = [(0, m - k) for m, k in zip(x.shape, reduced.shape)]  # indices may cover less than x
    reduced = G.pad(reduced, pads, constant_values=neutral)
    combine = {"mul": G.multiply, "max": G.maximum, "min": G.minimum}[reduction]
    return combine(x, reduced)


@converter("ScatterND")
def scatter_nd(node, x, indices, updates):
    # Row-major flat positions over the first k axes turn ScatterND into ScatterElements on axis 0.
    shape = _known_shape(node, x, "ScatterND")
    k = indices.shape[-1]
    lead, rest = shape[:k], shape[k:]
    strides = [math.prod(lead[j + 1:]) for j in range(k)]
    indices = G.astype(indices, "int64")
    flat = None
    for j in range(k):
        column = indices[..., j]
        term = G.where(column < 0, column + lead[j], column) * strides[j]
        flat = term if flat is None else flat + term
    m = math.prod(_known_shape(node, updates, "ScatterND")[:updates.ndim - len(rest)])
    flat = G.broadcast_to(G.reshape(flat, (m,) + (1,) * len(rest)), (m,) + rest)
    out = _scatter(node, G.reshape(x, (math.prod(lead),) + rest), 0, flat,
                   G.reshape(updates, (m,) + rest), node.attr("reduction", "none"))
    return G.reshape(out, shape)


@converter("TensorScatter")
def tensor_scatter(node, cache, update, write_indices=None):
    # update[b, ..., j, ...] goes to cache[b, ..., write_indices[b] + j, ...] along axis
    axis = _axis(node, node.attr("axis", -2), cache.ndim)
    shape = _known_shape(node, update, "TensorScatter")
    batch = (shape[0],) + (1,) * (cache.ndim - 1)
    starts = const_tensor(np.zeros(batch, "int64")) if write_indices is None else \
        G.reshape(G.astype(write_indices, "int64"), batch)
    steps = const_tensor(np.arange(shape[axis]).reshape([-1 if d == axis else 1 for d in range(cache.ndim)]))
    index = starts + steps
    if node.attr("mode", "linear") == "circular":
        index = G.remainder(index, _known_shape(node, cache, "TensorScatter")[axis])
    return _scatter(node, cache, axis, G.broadcast_to(index, shape), update, "none")


# ---- padding --------------------------------------------------------------------------------------------------
@converter("Pad")
def pad(node, x, pads=None, value=None, axes=None):
    if node.opset < 11:
        pads, value, axes = node.attr("pads", node.attr("paddings")), node.attr("value", 0.0), None
    else:
        pads, axes = node.const(1), node.const(3)
    pads = _ints(pads)
    axes = range(x.ndim) if axes is None else [_axis(node, a, x.ndim) for a in _ints(axes)]
    pairs = [(0, 0)] * x.ndim
    for i, axis in enumerate(axes):
        pairs[axis] = (pads[i], pads[i + len(axes)])
    # negative pads crop
    x = x[tuple(slice(max(-b, 0), a if a < 0 else None) for b, a in pairs)]
    pairs = tuple((max(b, 0), max(a, 0)) for b, a in pairs)
    mode = node.attr("mode", "constant")
    if mode != "constant":
        return G.pad(x, pairs, mode=mode)
    if isinstance(value, Tensor):
        known = _maybe_const(node, 2)
        if known is None or value.requires_grad:  # data, or a value to differentiate
            return _pad_with_tensor(node, x, pairs, value)
        value = known
    return G.pad(x, pairs, constant_values=np.asarray(0 if value is None else value).item())


def _pad_with_tensor(node, x, pairs, value):
    """Constant padding with a value computed from the model's data: pad, then select."""
    border = G.pad(G.zeros_like(x, dtype="bool"), pairs, constant_values=True)
    return G.where(border, G.reshape(value, ()), G.pad(x, pairs))


# ---- one-hot, scans, sorting, triangles ------------------------------------------------------------------------
@converter("OneHot")
def one_hot(node, indices, depth, values):
    depth = _int(node.const(1))
    indices = G.astype(indices, "int64")  # ONNX allows float indices (truncated)
    indices = G.where(indices < 0, indices + depth, indices)
    # out-of-range indices give all-off rows in ONNX (gg.one_hot refuses them, as PyTorch does)
    hot = G.equal(G.expand_dims(indices, -1), const_tensor(np.arange(depth, dtype=np.int64)))
    out = G.where(hot, values[1], values[0])
    axis = _axis(node, node.attr("axis", -1), out.ndim)
    return out if axis == out.ndim - 1 else G.moveaxis(out, -1, axis)


@converter("CumSum", "CumProd")
def cumulative(node, x, axis):
    ax = _axis(node, _int(node.const(1)), x.ndim)
    product = node.op_type == "CumProd"
    y = G.flip(x, ax) if node.attr("reverse", 0) else x
    if node.attr("exclusive", 0):  # shift by one: the neutral element first, the last element dropped
        pairs = [(1, 0) if d == ax else (0, 0) for d in range(y.ndim)]
        y = G.pad(y[_along(ax, y.ndim, slice(0, -1))], pairs, constant_values=int(product))
    out = G.cumprod(y, ax) if product else G.cumsum(y, ax)
    out = G.flip(out, ax) if node.attr("reverse", 0) else out
    return G.astype(out, x.dtype)  # NumPy accumulates small integers in int64


@converter("TopK")
def top_k(node, x, k=None):
    k = _int(node.const(1)) if node.opset >= 10 else node.attr("k")
    axis = _axis(node, node.attr("axis", -1), x.ndim)
    # gg.topk's stable sort puts equal values in index order, as ONNX requires (sorted output only)
    return tuple(G.topk(x, k, axis, largest=bool(node.attr("largest", 1))))


@converter("Trilu")
def trilu(node, x, k=None):
    k = _int(node.const(1, 0))
    return G.triu(x, k) if node.attr("upper", 1) else G.tril(x, k)


@converter("ReverseSequence")
def reverse_sequence(node, x, sequence_lens):
    batch_axis, time_axis = node.attr("batch_axis", 1), node.attr("time_axis", 0)
    lens = np.asarray(_ints(node.const(1)))
    steps = _known_shape(node, x, "ReverseSequence")[time_axis]
    t = np.arange(steps)
    index = np.where(t < lens[:, None], lens[:, None] - 1 - t, t)  # (batch, time)
    if batch_axis > time_axis:
        index = index.T
    shape = [1] * x.ndim
    shape[batch_axis], shape[time_axis] = len(lens), steps
    return G.take_along_axis(x, const_tensor(index.reshape(shape)), time_axis)


# ---- unique --------------------------------------------------------------------------------------------------
@converter("Unique")
def unique(node, x):
    """Y, indices, inverse_indices, counts of ``x`` (flattened, or its slices along ``axis``); the
    number of unique values is known only at run time (boolean-mask indexing)."""
    axis = node.attr("axis")
    if axis is None:
        flat = G.reshape(x, (-1,))
        indices, inverse, counts = _unique_1d(flat, bool(node.attr("sorted", 1)))
        return G.take(flat, indices, 0), indices, inverse, counts
    axis = _axis(node, axis, x.ndim)
    keys = _lexicographic_keys(x, axis)
    indices, inverse, counts = _unique_1d(keys, bool(node.attr("sorted", 1)))
    return G.take(x, indices, axis), indices, inverse, counts


def _unique_1d(values, in_sorted_order: bool) -> tuple:
    """(indices, inverse_indices, counts) of the 1-D ``values``, NaNs counted as one value (see
    ``graphgrad.ops.sorting_more._unique_1d``)."""
    return unique_1d(values, in_sorted_order, equal_nan=True)


def _differs(a, b):
    """Elementwise ``a != b``, with NaNs equal to each other (as NumPy's unique counts them)."""
    if a.dtype.kind != "f":
        return a != b
    return (a != b) & ((a == a) | (b == b))


def _less(a, b):
    """Elementwise ``a < b``, with NaN above every number (where NumPy's sort puts it)."""
    if a.dtype.kind != "f":
        return a < b
    return (a < b) | ((b != b) & (a == a))


def _lexicographic_keys(x, axis: int):
    """int64 (m,) keys of the m slices of ``x`` along ``axis``: equal slices get equal keys, and keys
    increase with the slices' lexicographic order (a key counts the slices smaller than it; memory
    grows as m * m * slice size)."""
    rows = G.moveaxis(x, axis, 0)
    rows = G.flatten(rows, 1, -1) if rows.ndim > 1 else G.expand_dims(rows, 1)  # (m, r)
    a, b = G.expand_dims(rows, 1), G.expand_dims(rows, 0)  # (m, 1, r) against (1, m, r)
    unequal = _differs(a, b)
    first_difference = unequal & (G.cumsum(G.astype(unequal, "int64"), 2) == 1)
    smaller = G.any(first_difference & _less(a, b), 2)  # (m, m): slice i < slice j
    return G.sum(G.astype(smaller, "int64"), 0)
