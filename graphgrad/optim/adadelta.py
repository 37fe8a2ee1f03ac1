"""Adadelta (PyTorch's ``Adadelta``)."""
from __future__ import annotations

from typing import Iterable

from graphgrad.core.tensor import Tensor
from graphgrad.optim import rules
from graphgrad.optim.optimizer import Optimizer, _check_nonnegative


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012) with ``rules.adadelta``.

    Rule::

        g = grad + weight_decay * param
        s = rho * s + (1 - rho) * g * g
        d = sqrt(u + eps) / sqrt(s + eps) * g
        u = rho * u + (1 - rho) * d * d
        param = param - lr * d

    Args:
        params: Parameters or param groups.
        lr: scales the update (default 1.0).
        rho: the running averages' decay (default 0.9).
        eps: inside the square roots (default 1e-6).
        weight_decay: L2 penalty (default 0).
        maximize: ascend instead of descend.

    State per parameter: ``square_avg`` and ``acc_delta``.

    Examples:
        >>> opt = gg.optim.Adadelta(model.parameters())
    """

    rule = "adadelta"

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative("Adadelta", group, "eps", "weight_decay")
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Adadelta: invalid rho {group['rho']}: it must be in [0, 1]")

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        new_param, state["square_avg"], state["acc_delta"] = rules.adadelta(
            param, grad, state["square_avg"], state["acc_delta"], group["lr"], group["rho"], group["eps"],
            group["weight_decay"])
        return new_param


__all__ = ["Adadelta"]
