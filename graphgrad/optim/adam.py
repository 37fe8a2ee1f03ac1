"""Adam and AdamW (PyTorch's ``Adam``, ``AdamW``)."""
from __future__ import annotations

from typing import Iterable

from graphgrad.core.tensor import Tensor
from graphgrad.optim import rules
from graphgrad.optim.optimizer import Optimizer, _check_nonnegative


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015) with bias correction (``rules.adam``).

    Rule, for update number ``t``::

        g = grad + weight_decay * param                  (L2; AdamW decays the parameter instead)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        v_max = maximum(v_max, v)                        (amsgrad; used in place of v)
        param = param - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: Parameters or param groups.
        lr: learning rate (default 1e-3).
        betas: ``(beta1, beta2)`` (default ``(0.9, 0.999)``).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        amsgrad: use the running maximum of ``v`` (Reddi et al., 2018).
        maximize: ascend instead of descend.
        epsilon_hat: add ``eps`` to ``sqrt(v)`` before the bias correction, as TF1's and Keras' Adam do
            (an effective epsilon of ``eps / sqrt(1 - beta2**t)``, larger in the first steps).

    State per parameter: ``step``, ``m``, ``v`` (PyTorch's ``exp_avg``, ``exp_avg_sq``), ``v_max``
    with amsgrad (``max_exp_avg_sq``).

    Examples:
        >>> opt = gg.optim.Adam(model.parameters(), lr=3e-4)
    """

    TORCH_STATE_NAMES = {"m": "exp_avg", "v": "exp_avg_sq", "v_max": "max_exp_avg_sq"}
    rule = "adam"
    decoupled = False

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False,
                 epsilon_hat: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, epsilon_hat=bool(epsilon_hat)))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        name = type(self).__name__
        _check_nonnegative(name, group, "eps", "weight_decay")
        beta1, beta2 = group["betas"]
        for i, beta in enumerate((beta1, beta2)):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"{name}: invalid beta parameter at index {i}: {beta} (it must be in [0, 1))")

    def _switches(self, group: dict) -> dict:
        return {"amsgrad": group["amsgrad"], "epsilon_hat": group.get("epsilon_hat", False)}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        beta1, beta2 = group["betas"]
        amsgrad = bool(group["amsgrad"])
        if amsgrad and "v_max" not in state:  # amsgrad switched on after the first step
            state["v_max"] = state["v"] * 0.0
        out = rules.adam(param, grad, state["m"], state["v"], state["step"], group["lr"], beta1, beta2, group["eps"],
                         weight_decay=group["weight_decay"], amsgrad=amsgrad, v_max=state.get("v_max"),
                         decoupled_weight_decay=self.decoupled, epsilon_hat=bool(group.get("epsilon_hat", False)))
        state["m"], state["v"] = out[1], out[2]
        if amsgrad:
            state["v_max"] = out[3]
        return out[0]


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): ``param *= 1 - lr * weight_decay``
    before the Adam update, instead of adding ``weight_decay * param`` to the gradient. The default
    ``weight_decay`` is 1e-2, as in PyTorch. Same arguments and state as :class:`Adam`.

    Examples:
        >>> opt = gg.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """

    decoupled = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


__all__ = ["Adam", "AdamW"]
