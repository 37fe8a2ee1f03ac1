"""More loss modules over ``graphgrad.ops.losses_more`` (PyTorch's names and constructor arguments)."""
from __future__ import annotations

from typing import Callable, Optional

from graphgrad.core.tensor import Tensor
from graphgrad.nn.losses import _Loss, _WeightedLoss
from graphgrad.ops import losses_more as L


class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)``. Shapes: (N,) three times -> ()."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return L.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y x))``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.soft_margin_loss(input, target, self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The mean over classes of the binary logistic losses. Shapes: (N, C) twice -> ()."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_soft_margin_loss(input, target, self.weight, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos`` for ``y = 1``, ``max(0, cos - margin)`` for ``y = -1``. Shapes: (N, D) twice, (N,) -> ()."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return L.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with the ``p``-norm distance."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return L.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                     self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss with any ``distance_function`` (default: Euclidean)."""

    def __init__(self, *, distance_function: Optional[Callable] = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return L.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss (targets: class indices ended by -1). Shapes: (N, C) twice -> ()."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_margin_loss(input, target, self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return L.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood with predicted variances."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return L.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)





class CTCLoss(_Loss):
    """Connectionist temporal classification loss. Shapes: log_probs (T, N, C), targets (N, S) or
    concatenated, input_lengths (N,), target_lengths (N,) -> () (or (N,) with 'none')."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths) -> Tensor:
        from graphgrad.ops.ctc import ctc_loss

        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)


__all__ = ["MarginRankingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "MultiLabelMarginLoss", "PoissonNLLLoss",
           "GaussianNLLLoss", "CTCLoss"]
