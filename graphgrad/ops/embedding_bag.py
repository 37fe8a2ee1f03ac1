"""Bags of embeddings, as PyTorch's ``F.embedding_bag`` / ``nn.EmbeddingBag``: the sum, mean or
maximum of the embeddings of each bag of indices, composed from the embedding lookup and an
accumulating index write (so it is differentiable in the table). The bag layout is read from the
indices when the call runs (eager and Session graphs with concrete indices)."""
from __future__ import annotations

import math
from typing import Optional

from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops import array, elementwise as ew, reduce, shape, unary


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def embedding_bag(input, weight, offsets=None, mode: str = "mean", per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx: Optional[int] = None) -> Tensor:
    """Sums, means or maxima of bags of embeddings, as PyTorch's ``F.embedding_bag``: ``input`` (B, N)
    is B bags of N indices, or a 1-d ``input`` is cut into bags at ``offsets``. ``padding_idx``
    entries are left out (of the mean's count too); an empty bag gives zeros; ``per_sample_weights``
    scale the rows (``mode='sum'`` only). Shapes: -> (B, D)."""
    from graphgrad.backend import np
    from graphgrad.ops.nn import embedding
    from graphgrad.ops.shape_more import index_put

    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise ValueError("embedding_bag: per_sample_weights only work with mode='sum'")
    input, weight = _tensor(input), _tensor(weight)
    indices = np.asarray(input.numpy(), dtype=np.int64)
    if indices.ndim == 2:
        bags = np.repeat(np.arange(indices.shape[0]), indices.shape[1])
        n_bags = indices.shape[0]
        flat = input.reshape((-1,))
        if per_sample_weights is not None:
            per_sample_weights = _tensor(per_sample_weights).reshape((-1,))
    elif indices.ndim == 1:
        if offsets is None:
            raise ValueError("embedding_bag: a 1-d input needs offsets")
        starts = np.asarray(_tensor(offsets).numpy(), dtype=np.int64)
        if include_last_offset:
            starts = starts[:-1]
        n_bags = len(starts)
        bags = np.searchsorted(starts, np.arange(len(indices)), side="right") - 1
        flat = input
    else:
        raise ShapeError(f"embedding_bag: input must be 1-d (with offsets) or 2-d, got shape {input.shape}")
    keep = np.ones(len(bags), bool) if padding_idx is None else indices.reshape(-1) != padding_idx
    rows = embedding(flat, weight)  # (E, D)
    if per_sample_weights is not None:
        rows = rows * shape.expand_dims(per_sample_weights, 1)
    rows = ew.where(Tensor(keep[:, None]), rows, 0.0).astype(weight.dtype)
    bag_index = Tensor(bags)
    zeros = array.zeros_like(weight[:1]).reshape((1, -1)) * 0
    table = shape.broadcast_to(zeros, (n_bags, weight.shape[1]))
    if mode == "max":
        filled = ew.where(Tensor(keep[:, None]), rows, -math.inf).astype(weight.dtype)
        out = reduce.max(ew.where(Tensor((bags[None, :] == np.arange(n_bags)[:, None])[:, :, None]),
                                  shape.expand_dims(filled, 0), -math.inf).astype(weight.dtype), 1)
        return ew.where(unary.isinf(out), 0.0, out).astype(weight.dtype)
    total = index_put(table, (bag_index,), rows, accumulate=True)
    if mode == "sum":
        return total
    counts = np.bincount(bags[keep], minlength=n_bags).astype(weight.dtype.name)
    return total / Tensor(np.maximum(counts, 1)[:, None])
