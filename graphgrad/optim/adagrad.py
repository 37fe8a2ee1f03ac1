"""Adagrad (PyTorch's ``Adagrad``)."""
from __future__ import annotations

from typing import Iterable

from graphgrad.core.tensor import Tensor
from graphgrad.optim import rules
from graphgrad.optim.optimizer import Optimizer, _check_nonnegative


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011) with ``rules.adagrad``.

    Rule, for update number ``t``::

        g = grad + weight_decay * param
        s = s + g * g
        param = param - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)

    Args:
        params: Parameters or param groups.
        lr: learning rate (default 1e-2).
        lr_decay: learning-rate decay per update (default 0).
        weight_decay: L2 penalty (default 0).
        initial_accumulator_value: the starting value of ``s`` (default 0).
        eps: added to the denominator (default 1e-10).
        maximize: ascend instead of descend.

    State per parameter: ``step`` and ``state_sum`` (PyTorch's ``sum``), created when the
    optimizer is built, as PyTorch does.

    Examples:
        >>> opt = gg.optim.Adagrad(model.parameters(), lr=0.1)
    """

    TORCH_STATE_NAMES = {"state_sum": "sum"}
    rule = "adagrad"

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative("Adagrad", group, "lr_decay", "weight_decay", "initial_accumulator_value", "eps")

    def _switches(self, group: dict) -> dict:
        return {"initial_accumulator_value": group["initial_accumulator_value"]}

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]  # PyTorch makes Adagrad's state with the group, not at the first step
        for p in group["params"]:
            self.state.setdefault(p, self._init_state(p, group))

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        new_param, state["state_sum"] = rules.adagrad(param, grad, state["state_sum"], state["step"], group["lr"],
                                                      group["lr_decay"], group["eps"], group["weight_decay"])
        return new_param


__all__ = ["Adagrad"]
