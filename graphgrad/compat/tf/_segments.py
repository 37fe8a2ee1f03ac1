"""TensorFlow's segment reductions, ``scatter_nd`` family, ``unique``, ``floormod``, ``space_to_depth`` /
``depth_to_space`` and local response normalization, composed from graphgrad ops (differentiable, in
graphs and eagerly)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import graphgrad as gg
from graphgrad.backend import np

Tensor = gg.Tensor


def _t(x: Any, dtype: Any = None) -> Tensor:
    return x if isinstance(x, Tensor) else gg.tensor(np.asarray(x), dtype=dtype)


def _known_count(segment_ids: Any, fn: str) -> int:
    """The number of segments, ``max(segment_ids) + 1``: from constant ids or an eager tensor."""
    ids = segment_ids
    if isinstance(ids, Tensor):
        if ids._data is None:
            raise ValueError(f"{fn}: with segment_ids fed at run time the number of segments is unknown when the "
                             f"graph is built; use tf.math.unsorted_{fn.split('.')[-1]}(data, ids, num_segments)")
        ids = ids.numpy()
    ids = np.asarray(ids)
    return int(ids.max()) + 1 if ids.size else 0


def _flat(data: Tensor, segment_ids: Tensor) -> tuple:
    """``data`` as (number of ids, *rest) and the ids as a vector."""
    rest = tuple(data.shape[segment_ids.ndim:])
    return gg.reshape(data, (-1,) + rest), gg.reshape(segment_ids, (-1,)), rest


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: int, name: Optional[str] = None) -> Tensor:
    """``out[k] = sum of data[i] with segment_ids[i] == k`` (zero for empty segments); ids of any shape
    matching ``data``'s leading dims. Shapes: data (*ids.shape, *rest) -> (num_segments, *rest)."""
    data, ids = _t(data), _t(segment_ids)
    flat, ids, rest = _flat(data, ids)
    return gg.index_add(gg.zeros((int(num_segments),) + rest, dtype=data.dtype), 0, ids, flat)


def _counts(ids: Tensor, num_segments: int, dtype: Any, rest_ndim: int) -> Tensor:
    ones = gg.ones_like(ids).astype(dtype)
    counts = gg.index_add(gg.zeros((num_segments,), dtype=dtype), 0, ids, ones)
    return gg.reshape(counts, (num_segments,) + (1,) * rest_ndim)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: int, name: Optional[str] = None) -> Tensor:
    """The mean of each segment (zero for empty ones)."""
    data, ids = _t(data), _t(segment_ids)
    flat, flat_ids, rest = _flat(data, ids)
    total = gg.index_add(gg.zeros((int(num_segments),) + rest, dtype=data.dtype), 0, flat_ids, flat)
    return total / gg.maximum(_counts(flat_ids, int(num_segments), data.dtype, len(rest)), 1.0)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: int, name: Optional[str] = None) -> Tensor:
    """Each segment's sum divided by the square root of its size."""
    data, ids = _t(data), _t(segment_ids)
    flat, flat_ids, rest = _flat(data, ids)
    total = gg.index_add(gg.zeros((int(num_segments),) + rest, dtype=data.dtype), 0, flat_ids, flat)
    return total / gg.sqrt(gg.maximum(_counts(flat_ids, int(num_segments), data.dtype, len(rest)), 1.0))


def _extreme(data: Any, segment_ids: Any, num_segments: int, reduce: str) -> Tensor:
    data, ids = _t(data), _t(segment_ids)
    flat, flat_ids, rest = _flat(data, ids)
    num_segments = int(num_segments)
    # an empty segment holds the dtype's lowest (max) or highest (min) value, as TensorFlow's
    if data.dtype.kind == "f":
        fill = float(np.finfo(data.dtype).min if reduce == "amax" else np.finfo(data.dtype).max)
    else:
        fill = int(np.iinfo(data.dtype).min if reduce == "amax" else np.iinfo(data.dtype).max)
    start = gg.full((num_segments,) + rest, fill, dtype=data.dtype)
    index = gg.broadcast_to(gg.reshape(flat_ids, (-1,) + (1,) * len(rest)), tuple(flat.shape)) if rest else flat_ids
    return gg.scatter_reduce(start, 0, index, flat, reduce, include_self=False)


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: int, name: Optional[str] = None) -> Tensor:
    return _extreme(data, segment_ids, num_segments, "amax")


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: int, name: Optional[str] = None) -> Tensor:
    return _extreme(data, segment_ids, num_segments, "amin")


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: int, name: Optional[str] = None) -> Tensor:
    data, ids = _t(data), _t(segment_ids)
    flat, flat_ids, rest = _flat(data, ids)
    index = gg.broadcast_to(gg.reshape(flat_ids, (-1,) + (1,) * len(rest)), tuple(flat.shape)) if rest else flat_ids
    return gg.scatter_reduce(gg.ones((int(num_segments),) + rest, dtype=data.dtype), 0, index, flat, "prod")


def segment_sum(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
    """Sums of the segments of sorted ``segment_ids`` (``max(ids) + 1`` of them)."""
    return unsorted_segment_sum(data, segment_ids, _known_count(segment_ids, "segment_sum"))


def segment_mean(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
    return unsorted_segment_mean(data, segment_ids, _known_count(segment_ids, "segment_mean"))


def segment_max(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
    return unsorted_segment_max(data, segment_ids, _known_count(segment_ids, "segment_max"))


def segment_min(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
    return unsorted_segment_min(data, segment_ids, _known_count(segment_ids, "segment_min"))


def segment_prod(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
    return unsorted_segment_prod(data, segment_ids, _known_count(segment_ids, "segment_prod"))


def _nd_index(indices: Any) -> tuple:
    """TensorFlow's index array (..., K) as K index tensors into the first K dims."""
    indices = _t(indices)
    return tuple(indices[..., k] for k in range(indices.shape[-1]))


def scatter_nd(indices: Any, updates: Any, shape: Sequence[int], name: Optional[str] = None) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (duplicates add up).
    Shapes: indices (..., K), updates (..., *shape[K:]) -> shape."""
    updates = _t(updates)
    shape = tuple(int(s) for s in (shape.numpy() if isinstance(shape, Tensor) else shape))
    return gg.index_put(gg.zeros(shape, dtype=updates.dtype), _nd_index(indices), updates, accumulate=True)


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: Optional[str] = None) -> Tensor:
    """``tensor`` with the entries at ``indices`` replaced by ``updates``."""
    return gg.index_put(_t(tensor), _nd_index(indices), _t(updates), accumulate=False)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: Optional[str] = None) -> Tensor:
    """``tensor`` with ``updates`` added at ``indices``."""
    return gg.index_put(_t(tensor), _nd_index(indices), _t(updates), accumulate=True)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: Optional[str] = None) -> Tensor:
    return gg.index_put(_t(tensor), _nd_index(indices), -_t(updates), accumulate=True)


def unique(x: Any, out_idx: Any = "int32", name: Optional[str] = None) -> tuple:
    """``(y, idx)``: the distinct values of the vector ``x`` in order of first appearance, and for each
    element of ``x`` its position in ``y`` (TensorFlow's order, not sorted)."""
    x = _t(x)
    values, inverse = gg.unique(x, return_inverse=True)  # sorted
    positions = gg.cumsum(gg.ones_like(inverse), 0) - 1  # 0, 1, ... (the length may be known only at run time)
    start = gg.zeros_like(values).astype("int64") + (2 ** 62)
    first = gg.scatter_reduce(start, 0, inverse, positions, "amin", include_self=False)
    order = gg.argsort(first)
    rank = gg.argsort(order)
    return gg.take(values, order), gg.take(rank, inverse).astype(str(np.dtype(getattr(out_idx, "name", out_idx))))


def floormod(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """``x - floor(x / y) * y``: the remainder with the divisor's sign (Python's ``%``)."""
    return gg.remainder(x, y)


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC", name: Optional[str] = None) -> Tensor:
    """Blocks of ``block_size`` x ``block_size`` pixels moved into the channels.
    Shapes (NHWC): (N, H, W, C) -> (N, H / b, W / b, b * b * C)."""
    x, b = _t(input), int(block_size)
    if data_format == "NCHW":
        return gg.transpose(space_to_depth(gg.transpose(x, (0, 2, 3, 1)), b), (0, 3, 1, 2))
    n, h, w, c = x.shape
    x = gg.reshape(x, (-1 if n is None else n, h // b, b, w // b, b, c))
    return gg.reshape(gg.transpose(x, (0, 1, 3, 2, 4, 5)), (-1 if n is None else n, h // b, w // b, b * b * c))


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC", name: Optional[str] = None) -> Tensor:
    """The inverse of :func:`space_to_depth`. Shapes (NHWC): (N, H, W, b * b * C) -> (N, H * b, W * b, C)."""
    x, b = _t(input), int(block_size)
    if data_format == "NCHW":
        return gg.transpose(depth_to_space(gg.transpose(x, (0, 2, 3, 1)), b), (0, 3, 1, 2))
    n, h, w, c = x.shape
    x = gg.reshape(x, (-1 if n is None else n, h, w, b, b, c // (b * b)))
    return gg.reshape(gg.transpose(x, (0, 1, 3, 2, 4, 5)), (-1 if n is None else n, h * b, w * b, c // (b * b)))


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0,
                                 beta: float = 0.5, name: Optional[str] = None) -> Tensor:
    """``input / (bias + alpha * sum of squares over depth_radius channels either side) ** beta``, over
    the last axis (NHWC)."""
    x = _t(input)
    r = int(depth_radius)
    squares = gg.pad(x * x, [(0, 0)] * (x.ndim - 1) + [(r, r)])
    c = x.shape[-1]
    window = squares[..., 0:c]
    for k in range(1, 2 * r + 1):
        window = window + squares[..., k:k + c]
    return x / (bias + alpha * window) ** beta


lrn = local_response_normalization
