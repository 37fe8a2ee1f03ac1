"""Stochastic gradient descent, with optional (heavy-ball or Nesterov) momentum: PyTorch's ``SGD``."""
from __future__ import annotations

from typing import Iterable

from graphgrad.core.tensor import Tensor
from graphgrad.optim import rules
from graphgrad.optim.optimizer import Optimizer, _check_nonnegative


class SGD(Optimizer):
    """Gradient descent (``rules.sgd``), with momentum ``rules.momentum`` when ``momentum > 0``.

    Rule (PyTorch's)::

        g = grad + weight_decay * param            (g = -g first with maximize)
        v = momentum * v + (1 - dampening) * g     (v = g at the first update)
        d = g + momentum * v if nesterov else v    (d = g without momentum)
        param = param - lr * d

    Args:
        params: Parameters or param groups.
        lr: learning rate (default 1e-3, as PyTorch 2).
        momentum, dampening, weight_decay: see the rule (default 0).
        nesterov: Nesterov momentum (needs momentum > 0 and dampening = 0).
        maximize: ascend instead of descend.

    State per parameter: ``velocity`` (PyTorch's ``momentum_buffer``), with momentum only.

    Examples:
        >>> opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    """

    TORCH_STATE_NAMES = {"velocity": "momentum_buffer"}
    rule = "momentum"

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative("SGD", group, "momentum", "weight_decay")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0")

    def _init_state(self, param: Tensor, group: dict) -> dict:
        return {}  # the velocity starts at the first gradient (PyTorch), so it is made then

    def _zero_state_is_exact(self, group: dict) -> bool:
        # v' = momentum * 0 + g is exactly g, the first velocity, unless dampening scales g
        return not rules._is_on(group["dampening"])

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        if not group["momentum"]:
            return rules.sgd(param, grad, group["lr"], group["weight_decay"])
        new_param, state["velocity"] = rules.momentum(
            param, grad, state.get("velocity"), group["lr"], group["momentum"], dampening=group["dampening"],
            nesterov=group["nesterov"], weight_decay=group["weight_decay"])
        return new_param


__all__ = ["SGD"]
