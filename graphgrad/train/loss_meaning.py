"""The meaning of a loss's input: graphgrad's cross-entropy takes logits (scores before softmax), so a
model whose outputs are already probabilities (it ends in a softmax) would train on
softmax(softmax(x)), slowly or not at all, with no error. ``Model.fit`` checks the first batch's
outputs and warns."""
from __future__ import annotations

import warnings
from typing import Any

from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops import losses as _losses

__all__ = ["warn_if_softmax_into_logits_loss"]


def _takes_logits(loss_fn: Any) -> bool:
    """Whether ``loss_fn`` is graphgrad's cross-entropy (which applies log-softmax to its input)."""
    from graphgrad.nn.losses import CrossEntropyLoss

    while hasattr(loss_fn, "__wrapped__"):  # gg.cross_entropy is a wrapper of the ops function
        loss_fn = loss_fn.__wrapped__
    return loss_fn is _losses.cross_entropy or isinstance(loss_fn, CrossEntropyLoss)


def _looks_like_probabilities(output: Any) -> bool:
    """Whether every row of a ``(N, C)`` float output (C > 1) is non-negative and sums to 1: what a
    final softmax produces (logits almost never do)."""
    if not isinstance(output, Tensor) or output.ndim != 2 or output.shape[1] < 2 or output.dtype.kind != "f":
        return False
    values = np.asarray(output.numpy(), dtype=np.float64)
    return bool(values.size) and bool((values >= 0).all()) and bool(np.abs(values.sum(axis=1) - 1.0).max() < 1e-3)


def warn_if_softmax_into_logits_loss(model: Module, output: Any, loss_fn: Any, loss_name: Any) -> None:
    """Warn when a from-logits loss receives probabilities (a model ending in a softmax)."""
    if not _takes_logits(loss_fn) or not _looks_like_probabilities(output):
        return
    name = f"loss={loss_name!r}" if isinstance(loss_name, str) else "the loss (graphgrad's cross_entropy)"
    warnings.warn(f"{type(model).__name__}.fit: {name} takes logits (it applies log-softmax itself), but the "
                  "model's outputs are probabilities (rows of non-negative numbers summing to 1: the model ends "
                  "in a softmax), so it trains on softmax(softmax(x)) and learns slowly or not at all. Remove the "
                  "final softmax (apply gg.softmax to predict()'s outputs instead), or use a loss on probabilities: "
                  "loss='nll' with a final LogSoftmax, or graphgrad.compat.keras, whose crossentropies take "
                  "probabilities unless from_logits=True.", UserWarning, stacklevel=3)
