"""``tf.losses``: TF1's losses with ``weights`` and its default reduction, the sum of the weighted losses
divided by the number of non-zero weights (the mean, with the default ``weights=1.0``). Each loss is added
to the ``tf.GraphKeys.LOSSES`` collection (``tf.losses.get_total_loss()``)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf import nn as _nn
from graphgrad.compat.tf._common import graph_state, named


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    MEAN = "weighted_mean"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"


def _reduce(losses: Any, weights: Any, reduction: str, name: Optional[str], loss_collection: Any) -> Any:
    if not isinstance(weights, (int, float, _gg.Tensor)):
        weights = _gg.constant(weights, dtype=losses.dtype)
    weighted = losses * weights
    if reduction == Reduction.NONE:
        out = weighted
    elif reduction == Reduction.SUM:
        out = _gg.sum(weighted)
    elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
        out = _gg.mean(weighted)
    elif reduction == Reduction.MEAN:
        out = _gg.sum(weighted) / _gg.sum(_gg.ones_like(losses) * weights)
    else:  # SUM_BY_NONZERO_WEIGHTS
        if not isinstance(weights, _gg.Tensor):
            out = _gg.mean(weighted) if weights != 0 else _gg.sum(weighted) * 0
        else:
            present = _gg.sum(_gg.ones_like(losses) * _gg.astype(_gg.not_equal(weights, 0), losses.dtype))
            out = _gg.sum(weighted) / _gg.maximum(present, 1)
    out = named(out, name)
    if loss_collection:
        graph_state()["collections"].setdefault(loss_collection, []).append(out)
    return out


def _loss(compute):
    def loss(*args, weights: Any = 1.0, scope: Any = None, loss_collection: Any = "losses",
             reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS, name: Optional[str] = None, **kwargs):
        with _gg.get_default_graph().as_default():
            return _reduce(compute(*args, **kwargs), weights, reduction, name, loss_collection)

    loss.__name__ = compute.__name__
    loss.__doc__ = compute.__doc__
    return loss


@_loss
def mean_squared_error(labels: Any, predictions: Any):
    """``(predictions - labels) ** 2``, reduced."""
    return _gg.square(predictions - _gg.astype(labels, predictions.dtype))


@_loss
def absolute_difference(labels: Any, predictions: Any):
    return _gg.abs(predictions - _gg.astype(labels, predictions.dtype))


@_loss
def huber_loss(labels: Any, predictions: Any, delta: float = 1.0):
    error = _gg.abs(predictions - _gg.astype(labels, predictions.dtype))
    quadratic = _gg.minimum(error, delta)
    return 0.5 * quadratic * quadratic + delta * (error - quadratic)


@_loss
def softmax_cross_entropy(onehot_labels: Any, logits: Any, label_smoothing: float = 0.0):
    """Cross-entropy of one-hot labels (smoothed towards uniform by ``label_smoothing``)."""
    labels = _gg.astype(onehot_labels, logits.dtype)
    if label_smoothing:
        classes = logits.shape[-1]
        labels = labels * (1 - label_smoothing) + label_smoothing / classes
    return _nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


@_loss
def sparse_softmax_cross_entropy(labels: Any, logits: Any):
    """Cross-entropy of integer class labels."""
    return _nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


@_loss
def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, label_smoothing: float = 0.0):
    labels = _gg.astype(multi_class_labels, logits.dtype)
    if label_smoothing:
        labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
    return _nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)


@_loss
def log_loss(labels: Any, predictions: Any, epsilon: float = 1e-7):
    """``-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)`` for probabilities ``p``."""
    labels = _gg.astype(labels, predictions.dtype)
    return -labels * _gg.log(predictions + epsilon) - (1 - labels) * _gg.log(1 - predictions + epsilon)


@_loss
def hinge_loss(labels: Any, logits: Any):
    """``max(0, 1 - (2 * labels - 1) * logits)`` for labels in {0, 1}."""
    signs = 2 * _gg.astype(labels, logits.dtype) - 1
    return _gg.relu(1 - signs * logits)


def get_losses(scope: Optional[str] = None, loss_collection: str = "losses") -> list:
    return list(graph_state()["collections"].get(loss_collection, []))


def get_regularization_losses(scope: Optional[str] = None) -> list:
    return list(graph_state()["collections"].get("regularization_losses", []))


def get_regularization_loss(scope: Optional[str] = None, name: str = "total_regularization_loss"):
    losses = get_regularization_losses(scope)
    with _gg.get_default_graph().as_default():
        return named(sum(losses[1:], losses[0]), name) if losses else _gg.constant(0.0, dtype=_gg.float32)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss", scope: Any = None):
    losses = get_losses() + (get_regularization_losses() if add_regularization_losses else [])
    if not losses:
        raise ValueError("get_total_loss: no losses were added")
    with _gg.get_default_graph().as_default():
        return named(sum(losses[1:], losses[0]) if len(losses) > 1 else _gg.identity(losses[0]), name)


def add_loss(loss: Any, loss_collection: str = "losses") -> None:
    graph_state()["collections"].setdefault(loss_collection, []).append(loss)
