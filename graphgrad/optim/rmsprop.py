"""RMSprop (PyTorch's ``RMSprop``)."""
from __future__ import annotations

from typing import Iterable

from graphgrad.core.tensor import Tensor
from graphgrad.optim import rules
from graphgrad.optim.optimizer import Optimizer, _check_nonnegative


class RMSprop(Optimizer):
    """RMSprop (Hinton; centered: Graves, 2013) with ``rules.rmsprop``.

    Rule::

        g = grad + weight_decay * param
        s = alpha * s + (1 - alpha) * g * g
        a = alpha * a + (1 - alpha) * g                    (centered)
        avg = sqrt(s - a * a) + eps  if centered else  sqrt(s) + eps
        b = momentum * b + g / avg;  param = param - lr * b   (momentum > 0)
        param = param - lr * g / avg                           (otherwise)

    Args:
        params: Parameters or param groups.
        lr: learning rate (default 1e-2).
        alpha: smoothing constant (default 0.99).
        eps: added to the denominator (default 1e-8).
        weight_decay, momentum: default 0.
        centered: normalize by the estimated variance of the gradient.
        maximize: ascend instead of descend.

    State per parameter: ``square_avg``; ``buf`` with momentum (PyTorch's ``momentum_buffer``),
    ``grad_avg`` when centered.

    Examples:
        >>> opt = gg.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9, centered=True)
    """

    TORCH_STATE_NAMES = {"buf": "momentum_buffer"}
    rule = "rmsprop"

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative("RMSprop", group, "alpha", "eps", "weight_decay", "momentum")

    def _switches(self, group: dict) -> dict:
        return {"momentum": group["momentum"], "centered": group["centered"]}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        for name in rules.state_for(self.rule, **self._switches(group)):
            if name not in state:  # switched on after the first step (e.g. OneCycleLR's momentum)
                state[name] = state["square_avg"] * 0.0
        new_param, square_avg, buf, grad_avg = rules.rmsprop(
            param, grad, state["square_avg"], group["lr"], group["alpha"], group["eps"], momentum=group["momentum"],
            centered=group["centered"], buf=state.get("buf"), grad_avg=state.get("grad_avg"),
            weight_decay=group["weight_decay"])
        state["square_avg"] = square_avg
        if buf is not None:
            state["buf"] = buf
        if grad_avg is not None:
            state["grad_avg"] = grad_avg
        return new_param


__all__ = ["RMSprop"]
