"""More losses under PyTorch's names and formulas (``torch.nn.functional``), composed from the
primitives: margin and ranking losses, soft-margin losses, triplet losses, Poisson and Gaussian
negative log-likelihoods. Each takes ``reduction`` ('mean', 'sum' or 'none')."""
from __future__ import annotations

import math
from typing import Callable, Optional

from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops import array, elementwise as ew, reduce, shape, unary
from graphgrad.ops.activations_more import pairwise_distance
from graphgrad.ops.composite import softplus
from graphgrad.ops.losses import _check_reduction, _reduce
from graphgrad.ops.pointwise import logsigmoid


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _relu(x: Tensor) -> Tensor:
    return ew.maximum(x, 0.0) if x.dtype.kind == "f" else ew.maximum(x, 0)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, ``target`` in {1, -1}. Shapes: (N,) -> reduced."""
    _check_reduction("margin_ranking_loss", reduction)
    input1, input2, target = _tensor(input1), _tensor(input2), _tensor(target)
    return _reduce(_relu(-target * (input1 - input2) + margin), reduction, "margin_ranking_loss")


def soft_margin_loss(input, target, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, ``target`` in {1, -1}. Shapes: (*) -> reduced."""
    _check_reduction("soft_margin_loss", reduction)
    input, target = _tensor(input), _tensor(target)
    return _reduce(softplus(-target * input), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """Per sample, the mean over the C classes of the binary logistic loss of each class (``target``
    0/1), optionally weighted per class. Shapes: (N, C) -> (N,) reduced."""
    _check_reduction("multilabel_soft_margin_loss", reduction)
    input, target = _tensor(input), _tensor(target)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = reduce.sum(loss, -1) / input.shape[-1]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: str = "mean") -> Tensor:
    """``1 - cos(input1, input2)`` where ``target == 1``, ``max(0, cos - margin)`` where ``target == -1``
    (cosine over the last dimension, PyTorch's 1e-12 added to each squared norm). Shapes: (N, D) -> (N,)."""
    _check_reduction("cosine_embedding_loss", reduction)
    input1, input2, target = _tensor(input1), _tensor(input2), _tensor(target)
    dot = reduce.sum(input1 * input2, -1)
    squared1 = reduce.sum(input1 * input1, -1) + 1e-12
    squared2 = reduce.sum(input2 * input2, -1) + 1e-12
    cos = dot / unary.sqrt(squared1 * squared2)
    positive = ew.where(ew.equal(target, 1), 1.0 - cos, 0.0)
    negative = ew.where(ew.equal(target, -1), _relu(cos - margin), 0.0)
    return _reduce((positive + negative).astype(cos.dtype), reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``p``-norm pairwise distance; ``swap``
    uses ``min(d(a, n), d(p, n))``. Shapes: (N, D) three times -> (N,) reduced."""
    _check_reduction("triplet_margin_loss", reduction)
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = ew.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduce(_relu(margin + d_ap - d_an), reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function: Optional[Callable] = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """:func:`triplet_margin_loss` with any distance ``distance_function(x, y)`` (default: the
    Euclidean pairwise distance)."""
    _check_reduction("triplet_margin_with_distance_loss", reduction)
    distance = distance_function or pairwise_distance
    d_ap, d_an = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_an = ew.minimum(d_an, distance(positive, negative))
    return _reduce(_relu(margin + d_ap - d_an), reduction, "triplet_margin_with_distance_loss")


def multilabel_margin_loss(input, target, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: ``target`` lists each sample's classes, ended by -1; per sample
    ``sum_{j target, i not target} max(0, 1 - (x[j] - x[i])) / C``. Shapes: (N, C), (N, C) int -> (N,)."""
    _check_reduction("multilabel_margin_loss", reduction)
    input, target = _tensor(input), _tensor(target)
    unbatched = input.ndim == 1
    if unbatched:
        input, target = shape.reshape(input, (1, -1)), shape.reshape(target, (1, -1))
    classes = input.shape[-1]
    valid = reduce.cumprod(ew.astype(ew.not_equal(target, -1), "int64"), 1)  # 1 until the first -1
    label = ew.where(ew.equal(valid, 1), target, classes)  # classes: "no label", matching no column
    columns = Tensor(list(range(classes)))
    is_target = reduce.any(ew.equal(shape.expand_dims(label, -1), columns), 1)  # (N, C)
    # hinge of every (target j, other i) pair: 1 - (x[j] - x[i])
    hinge = _relu(1.0 - (shape.expand_dims(input, -1) - shape.expand_dims(input, -2)))  # (N, j, i)
    pairs = ew.logical_and(shape.expand_dims(is_target, -1), shape.expand_dims(unary.logical_not(is_target), -2))
    loss = reduce.sum(ew.where(pairs, hinge, 0.0).astype(input.dtype), (1, 2)) / classes
    if unbatched:
        loss = shape.reshape(loss, ())
    return _reduce(loss, reduction, "multilabel_margin_loss")


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                     reduce_=None, reduction: str = "mean") -> Tensor:
    """Poisson negative log-likelihood: ``exp(input) - target * input`` (``log_input``), else
    ``input - target * log(input + eps)``; ``full`` adds Stirling's ``target * log(target) - target +
    0.5 * log(2 pi target)`` where ``target > 1``. Shapes: (*) -> reduced."""
    _check_reduction("poisson_nll_loss", reduction)
    input, target = _tensor(input), _tensor(target)
    loss = unary.exp(input) - target * input if log_input else input - target * unary.log(input + eps)
    if full:
        safe = ew.where(ew.greater(target, 1), target, 1.0).astype(loss.dtype)
        stirling = safe * unary.log(safe) - safe + 0.5 * unary.log(2 * math.pi * safe)
        loss = loss + ew.where(ew.greater(target, 1), stirling, 0.0).astype(loss.dtype)
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target)^2 / var)`` (+ ``0.5 log(2 pi)``
    with ``full``); ``var`` is clamped at ``eps`` for the value only, the gradient passes as PyTorch's.
    ``var`` may have the input's shape, or one dimension fewer / a last dimension of 1 (one variance per
    sample), or be a number. Shapes: (N, *) -> reduced."""
    _check_reduction("gaussian_nll_loss", reduction)
    input, target = _tensor(input), _tensor(target)
    var = var if isinstance(var, Tensor) else array.full_like(input, float(var))
    if var.ndim == input.ndim - 1 and tuple(var.shape) == tuple(input.shape[:-1]):
        var = shape.expand_dims(var, -1)
    elif tuple(var.shape) != tuple(input.shape) and not (var.ndim == input.ndim and var.shape[-1] == 1
                                                          and tuple(var.shape[:-1]) == tuple(input.shape[:-1])):
        raise ShapeError(f"gaussian_nll_loss: var of shape {var.shape} does not fit input {input.shape}")
    if bool(reduce.any(ew.less(var, 0)).item()) if var._data is not None else False:
        raise ValueError("gaussian_nll_loss: var has negative entries")
    clamped = var + array.stop_gradient(ew.clip(var, eps, None) - var)
    loss = 0.5 * (unary.log(clamped) + (input - target) ** 2 / clamped)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")

