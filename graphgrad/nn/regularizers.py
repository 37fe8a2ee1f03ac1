"""Weight penalties to add to a loss: ``loss + 1e-4 * gg.nn.l2_penalty(model.parameters())``.

``l2_penalty`` is ``sum(w ** 2)``, WITHOUT Keras' factor 1/2: with SGD, ``lam * l2_penalty`` adds
``2 * lam * w`` to the gradient, so it equals PyTorch's ``weight_decay=2 * lam``.
"""
from __future__ import annotations

from typing import Iterable, Union

from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.ops.reduce import sum as _sum
from graphgrad.ops.unary import abs as _abs

__all__ = ["l1_penalty", "l2_penalty"]

Params = Union[Module, Tensor, Iterable[Tensor]]


def _params(params: Params) -> list:
    if isinstance(params, Module):
        return list(params.parameters())
    if isinstance(params, Tensor):
        return [params]
    return list(params)


def _total(terms: list) -> Tensor:
    if not terms:
        return Tensor(0.0)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def l1_penalty(params: Params) -> Tensor:
    """``sum(|w|)`` over every element of every tensor in ``params`` (a Module, a tensor or an
    iterable of tensors). Returns a 0-d tensor (0 for no parameters).

    Examples:
        >>> loss = loss + 1e-5 * gg.nn.l1_penalty(model)
    """
    return _total([_sum(_abs(p)) for p in _params(params)])


def l2_penalty(params: Params) -> Tensor:
    """``sum(w ** 2)`` over every element of every tensor in ``params`` (no factor 1/2; see the module
    docstring). Returns a 0-d tensor (0 for no parameters).

    Examples:
        >>> loss = loss + 1e-4 * gg.nn.l2_penalty(model.parameters())
    """
    return _total([_sum(p * p) for p in _params(params)])
