"""Adaptive softmax (Grave et al., 2017), PyTorch's ``nn.AdaptiveLogSoftmaxWithLoss``: the frequent
classes in a head softmax, the rare ones in clusters behind one head entry each, with smaller
projections the rarer the cluster. Parameters and their names follow PyTorch, so a ``state_dict``
loads unchanged."""
from __future__ import annotations

from typing import NamedTuple, Sequence

from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.layers.container import ModuleList, Sequential
from graphgrad.nn.layers.linear import Linear
from graphgrad.nn.module import Module
from graphgrad.ops import argmax, concatenate, expand_dims, gather, index_copy, log_softmax, logical_and, nonzero
from graphgrad.core.creation import zeros
from graphgrad.ops import reshape, take

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


class ASMOutput(NamedTuple):
    """``output``: the log-probability of each row's target, (N,); ``loss``: their negated mean."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of ``n_classes`` classes through an adaptive softmax.

    Args:
        in_features: size of each input row.
        n_classes: number of classes, ordered by decreasing frequency.
        cutoffs: increasing class indices that split the classes into the head (``[0, cutoffs[0])``)
            and ``len(cutoffs)`` tail clusters.
        div_value: the i-th cluster's projection has ``in_features // div_value ** (i + 1)`` features.
        head_bias: whether the head has a bias.

    Parameters: ``head.weight`` (cutoffs[0] + len(cutoffs), in_features) (and ``head.bias``);
    ``tail.<i>.0.weight`` (hidden_i, in_features), ``tail.<i>.1.weight`` (cluster size, hidden_i).

    Shapes: ``forward(input (N, in_features), target (N,))`` (or unbatched (in_features,), ()) ->
    ``ASMOutput(output (N,), loss ())``; ``log_prob(input)`` -> (N, n_classes); ``predict`` -> (N,).
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if (not cutoffs or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers "
                             "sorted in an increasing order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = cutoffs + [n_classes]
        self.shortlist_size, self.n_clusters = cutoffs[0], len(cutoffs)
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias)
        tails = []
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append(Sequential(Linear(in_features, hidden, bias=False), Linear(hidden, size, bias=False)))
        self.tail = ModuleList(tails)
        self._factory(device, dtype)

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for cluster in self.tail:
            for layer in cluster:
                layer.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> ASMOutput:
        input = input if isinstance(input, Tensor) else Tensor(input)
        target = target if isinstance(target, Tensor) else Tensor(target)
        unbatched = target.ndim == 0
        if unbatched:
            input, target = expand_dims(input, 0), reshape(target, (1,))
        if input.ndim != 2 or target.ndim != 1 or input.shape[0] != target.shape[0]:
            raise ShapeError(f"AdaptiveLogSoftmaxWithLoss: input (N, {self.in_features}) and target (N,) expected, "
                             f"got {tuple(input.shape)} and {tuple(target.shape)}")
        if int((target < 0).sum()) or int((target >= self.n_classes).sum()):
            raise IndexError(f"AdaptiveLogSoftmaxWithLoss: target values should be in [0, {self.n_classes - 1}]")
        output = zeros(target.shape[0], dtype=input.dtype)
        head_index = target  # a row's head entry: its class in the shortlist, else its cluster's entry
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            rows = nonzero(logical_and(target >= bounds[i], target < bounds[i + 1]))[:, 0]
            if rows.shape[0] == 0 or i == 0:
                continue
            relative = take(target, rows) - bounds[i]
            cluster = log_softmax(self.tail[i - 1](take(input, rows, axis=0)), axis=1)
            output = index_copy(output, 0, rows, gather(cluster, 1, expand_dims(relative, 1))[:, 0])
            head_index = index_copy(head_index, 0, rows, zeros(rows.shape[0], dtype=target.dtype)
                                    + (self.shortlist_size + i - 1))
        head = log_softmax(self.head(input), axis=1)
        output = output + gather(head, 1, expand_dims(head_index, 1))[:, 0]
        loss = -output.mean()
        return ASMOutput(output[0] if unbatched else output, loss)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class. Shapes: (N, in_features) -> (N, n_classes)."""
        head = log_softmax(self.head(input), axis=1)
        parts = [head[:, :self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            entry = head[:, self.shortlist_size + i:self.shortlist_size + i + 1]
            parts.append(log_softmax(cluster(input), axis=1) + entry)
        return concatenate(parts, axis=1)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row. Shapes: (N, in_features) -> (N,) int64."""
        return argmax(self.log_prob(input), axis=1)
