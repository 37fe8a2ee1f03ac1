"""``torch.nn.utils``: gradient clipping, parameters as one flat vector, and ``rnn`` (packed sequences)."""
from __future__ import annotations

import graphgrad as _gg
from graphgrad import Tensor
from graphgrad import nn as _nn

#: ``torch.nn.utils.rnn``: padding and packing variable-length sequences.
rnn = _nn.rnn_utils
from graphgrad.optim import clip_grad_norm_, clip_grad_value_  # noqa: F401


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated into one 1-d tensor (differentiable)."""
    return _gg.concatenate([p.reshape(-1) for p in parameters], axis=0)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (in place, not recorded)."""
    start = 0
    with _gg.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(p.shape))
            start += n
