"""Loss modules: thin wrappers over the functional losses (``graphgrad.ops.losses``), with PyTorch's
names, arguments and defaults. Call them as ``loss_fn(input, target)``.

Class weights (``weight``, ``pos_weight``) are registered as buffers, as PyTorch, so they follow
``to()`` and appear in ``state_dict`` when given.
"""
from __future__ import annotations

from typing import Optional

from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops import losses as L

__all__ = ["_Loss", "_WeightedLoss", "MSELoss", "L1Loss", "HuberLoss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiMarginLoss", "KLDivLoss"]


def _as_buffer(value) -> Optional[Tensor]:
    if value is None or isinstance(value, Tensor):
        return value
    return Tensor(value)


class _Loss(Module):
    """A loss with a ``reduction``: ``'mean'`` (default), ``'sum'`` or ``'none'``."""

    _reductions = ("mean", "sum", "none")

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in self._reductions:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {self._reductions}, got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", _as_buffer(weight))


class MSELoss(_Loss):
    """Mean squared error ``(input - target)^2``. Shapes: input, target (*) -> () (or (*) with 'none').

    Examples:
        >>> gg.nn.MSELoss()(gg.tensor([1.0, 2.0]), gg.tensor([1.0, 4.0]))
        tensor(2.)
    """

    def forward(self, input, target) -> Tensor:
        return L.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|``. Shapes: input, target (*) -> ()."""

    def forward(self, input, target) -> Tensor:
        return L.l1_loss(input, target, reduction=self.reduction)


class HuberLoss(_Loss):
    """Huber loss: quadratic below ``delta``, linear above. Shapes: input, target (*) -> ()."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = float(delta)

    def forward(self, input, target) -> Tensor:
        return L.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """Smooth L1: ``0.5 d^2 / beta`` below ``beta``, ``|d| - 0.5 beta`` above. Shapes: (*) -> ()."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = float(beta)

    def forward(self, input, target) -> Tensor:
        return L.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits against class indices or class probabilities.

    Args:
        weight: (C,) per-class weights.
        ignore_index: targets with this index contribute nothing (class-index targets).
        reduction: 'mean' (weighted mean over non-ignored targets), 'sum' or 'none'.
        label_smoothing: mix the targets with the uniform distribution, in [0, 1].

    Shapes: input (N, C) or (N, C, d1, ...) logits; target (N,) / (N, d1, ...) integer, or float of
    the input's shape -> () (or (N, ...) with 'none').

    Examples:
        >>> loss = gg.nn.CrossEntropyLoss()(gg.randn(3, 5), gg.tensor([1, 0, 4]))
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        self.ignore_index, self.label_smoothing = int(ignore_index), float(label_smoothing)

    def forward(self, input, target) -> Tensor:
        return L.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices given log-probabilities (pair with ``LogSoftmax``).

    Shapes: input (N, C) or (N, C, d1, ...); target (N,) / (N, d1, ...) integer -> ().
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = int(ignore_index)

    def forward(self, input, target) -> Tensor:
        return L.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities in [0, 1] (logs clamped at -100).

    Shapes: input, target (*) -> (); weight broadcastable to them.
    """

    def forward(self, input, target) -> Tensor:
        return L.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross-entropy of logits (a stable ``sigmoid`` + ``BCELoss``).

    Args:
        weight: broadcastable to the input; pos_weight: (C,) weight of positive examples per class.

    Shapes: input, target (*) -> ().
    """

    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None) -> None:
        super().__init__(weight, reduction)
        self.register_buffer("pos_weight", _as_buffer(pos_weight))

    def forward(self, input, target) -> Tensor:
        return L.binary_cross_entropy_with_logits(input, target, weight=self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` where the target is 1, ``max(0, margin - x)`` where it is -1. Shapes: (*) -> ()."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = float(margin)

    def forward(self, input, target) -> Tensor:
        return L.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss ``sum_{j != y} max(0, margin - x[y] + x[j])^p / C`` per sample.

    Shapes: input (N, C) or (C,); target (N,) or () integer -> ().
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p = 1 and p = 2 are supported, got {p}")
        self.p, self.margin = int(p), float(margin)

    def forward(self, input, target) -> Tensor:
        return L.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence ``target * (log(target) - input)`` with ``input`` log-probabilities.

    Args:
        reduction: 'mean' (over all elements, PyTorch's default), 'batchmean' (the true KL
            divergence: the sum over the batch size), 'sum' or 'none'.
        log_target: the target holds log-probabilities too.

    Shapes: input, target (*) -> ().
    """

    _reductions = ("mean", "batchmean", "sum", "none")

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction)
        self.log_target = bool(log_target)

    def forward(self, input, target) -> Tensor:
        return L.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
