"""Gradient clipping (PyTorch's ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``).

Both act on the ``.grad`` of parameters after ``backward()`` and before ``optimizer.step()``. The
gradient tensors are kept (same objects, same dtype); their arrays are replaced by the clipped
values (a gradient array may be a read-only view, so it is not written into).
"""
from __future__ import annotations

import math
from typing import Iterable, Union

from graphgrad.backend import namespace_of
from graphgrad.core.tensor import Tensor
from graphgrad.errors import NonFiniteError

Params = Union[Tensor, Iterable[Tensor]]


def _grads(parameters: Params) -> list:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def _vector_norm(xp, a, norm_type: float):
    """The ``norm_type``-norm of all elements of ``a`` (as ``torch.linalg.vector_norm``)."""
    a = xp.abs(a)
    if norm_type == math.inf:
        return xp.max(a) if a.size else xp.zeros((), a.dtype)
    if norm_type == -math.inf:
        return xp.min(a)
    if norm_type == 0.0:
        return xp.asarray(xp.count_nonzero(a), dtype=a.dtype)
    if norm_type == 1.0:
        return xp.sum(a)
    if norm_type == 2.0:
        return xp.sqrt(xp.sum(a * a))
    return xp.sum(a ** norm_type) ** (1.0 / norm_type)


def clip_grad_norm_(parameters: Params, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients of ``parameters`` together so that their total norm (the norm of the
    vector of all gradient elements) is at most ``max_norm``.

    Each gradient is multiplied by ``min(1, max_norm / (total_norm + 1e-6))``, as PyTorch does.

    Args:
        parameters: a Parameter or an iterable of them (those without a gradient are skipped).
        max_norm: the largest total norm allowed.
        norm_type: the p of the p-norm; ``float('inf')`` for the largest absolute value.
        error_if_nonfinite: raise ``NonFiniteError`` (a ``FloatingPointError``) if the total norm is
            nan or inf, instead of scaling the gradients by a nan factor.

    Returns:
        the total norm of the gradients before clipping (a 0-d Tensor).

    Examples:
        >>> loss.backward()
        >>> norm = gg.optim.clip_grad_norm_(model.parameters(), max_norm=1.0)
        >>> opt.step()
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return Tensor(0.0)
    xp = namespace_of(grads[0]._data)
    norms = [_vector_norm(xp, g._data, norm_type) for g in grads]
    total = _vector_norm(xp, xp.stack([xp.asarray(n, dtype=xp.result_type(*norms)) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise NonFiniteError(f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
                             f"{float(total)}, so they cannot be clipped; pass error_if_nonfinite=False to scale "
                             "them anyway (by nan)")
    coef = min(float(max_norm) / (float(total) + 1e-6), 1.0)
    for g in grads:
        g._data = g._data * xp.asarray(coef, dtype=g.dtype)
    return Tensor._wrap(xp.asarray(total))


def clip_grad_value_(parameters: Params, clip_value: float) -> None:
    """Clamp every gradient element of ``parameters`` into ``[-clip_value, clip_value]``.

    Examples:
        >>> gg.optim.clip_grad_value_(model.parameters(), 0.5)
    """
    clip_value = float(clip_value)
    for g in _grads(parameters):
        xp = namespace_of(g._data)
        g._data = xp.clip(g._data, -clip_value, clip_value).astype(g.dtype, copy=False)


__all__ = ["clip_grad_norm_", "clip_grad_value_"]
