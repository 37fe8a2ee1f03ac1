"""Learning-rate schedules for the eager optimizers, with PyTorch's semantics (``torch.optim.lr_scheduler``).

A scheduler changes ``group["lr"]`` of its optimizer's param groups. Build it after the optimizer;
it sets the learning rate for step 0 at once. Call ``scheduler.step()`` after ``optimizer.step()``
(once per epoch or once per batch, as the schedule is meant):

    >>> opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> sched = gg.optim.StepLR(opt, step_size=30, gamma=0.1)
    >>> for epoch in range(100):
    ...     train_one_epoch(opt)
    ...     sched.step()

As in PyTorch, the first scheduler on an optimizer records each group's starting learning rate in
``group["initial_lr"]`` (its ``base_lrs``), and StepLR, MultiStepLR, ExponentialLR and
CosineAnnealingLR are *chainable*: each step multiplies (or moves) the current ``group["lr"]``, so
two of them on one optimizer compose. ``step(epoch)`` jumps to an epoch with the closed form.
"""
from __future__ import annotations

import copy
import math
from bisect import bisect_right
from collections import Counter
from typing import Any, Optional, Sequence

from graphgrad.optim.optimizer import Optimizer


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    """``value`` for each param group: a list/tuple (one per group) or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have one value per param group: got {len(value)} values for "
                             f"{len(optimizer.param_groups)} groups")
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class of the schedulers.

    A subclass computes the next learning rates in ``get_lr()`` (from ``last_epoch``, the number of
    ``step()`` calls so far; 0 at construction), and optionally in closed form in
    ``_closed_form_lr()`` (used by ``step(epoch)``).

    Args:
        optimizer: the optimizer whose ``group["lr"]`` values change.
        last_epoch: the index of the last epoch when resuming (default -1: start anew). When
            resuming, each group must already have ``"initial_lr"`` (restore the optimizer first).

    Attributes:
        base_lrs: each group's ``initial_lr``.
        last_epoch: the number of steps taken (0 right after construction).
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: {type(optimizer).__name__} is not a gg.optim.Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"{type(self).__name__}: param_groups[{i}] has no 'initial_lr' although "
                                   f"last_epoch={last_epoch} (resuming): load the optimizer's state_dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates for step ``last_epoch`` (called by ``step()``; use ``get_last_lr()``
        to read the current ones)."""
        raise NotImplementedError

    def step(self, epoch: Optional[int] = None) -> None:
        """Advance one step (or jump to ``epoch``, with the closed form where there is one) and
        set the optimizer's learning rates."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: Optional[int] = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._closed_form_lr() if hasattr(self, "_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        """The learning rates set by the last step, one per param group."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        """Everything but the optimizer (copied)."""
        return {k: copy.deepcopy(v) for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(copy.deepcopy(state_dict))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, last_lr={self.get_last_lr()})"

    def _current(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps:
    ``lr = base_lr * gamma ** (epoch // step_size)``.

    Examples:
        >>> sched = gg.optim.StepLR(opt, step_size=30, gamma=0.1)  # 0.1 for 30 epochs, 0.01 for 30...
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = int(step_size), gamma
        if self.step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive integer, got {step_size}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each milestone (an epoch number):
    ``lr = base_lr * gamma ** (number of milestones <= epoch)``.

    Examples:
        >>> sched = gg.optim.MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]

    def _closed_form_lr(self) -> list:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every step: ``lr = base_lr * gamma ** epoch``.

    Examples:
        >>> sched = gg.optim.ExponentialLR(opt, gamma=0.95)
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing (Loshchilov & Hutter, SGDR, without restarts) from ``base_lr`` down to
    ``eta_min`` over ``T_max`` steps::

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2

    computed recursively from the current learning rate, as PyTorch does (so it composes with
    other schedulers); past ``T_max`` it rises again (the cosine continues).

    Examples:
        >>> sched = gg.optim.CosineAnnealingLR(opt, T_max=100, eta_min=1e-5)
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._current())]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (lr - lo) + lo
                for lr in self._current()]

    def _closed_form_lr(self) -> list:
        lo = self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018), stepped once per *batch*: the learning rate rises from
    ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of ``total_steps``, then
    anneals to ``max_lr / div_factor / final_div_factor``; the momentum (``momentum`` or Adam's
    ``beta1``) cycles the other way, between ``max_momentum`` and ``base_momentum``.

    With ``three_phase=True`` it goes up, back down to the initial rate (symmetrically), then
    down to the minimum. PyTorch's defaults throughout.

    Args:
        optimizer: the optimizer (with a ``momentum`` or ``betas`` hyperparameter if
            ``cycle_momentum``).
        max_lr: the peak learning rate (or one per group).
        total_steps: the number of steps, or give ``epochs`` and ``steps_per_epoch``.
        pct_start: the fraction of the steps spent rising (default 0.3).
        anneal_strategy: ``"cos"`` (default) or ``"linear"``.
        cycle_momentum, base_momentum, max_momentum: the momentum cycle (default on, 0.85, 0.95).
        div_factor: ``initial_lr = max_lr / div_factor`` (default 25).
        final_div_factor: ``min_lr = initial_lr / final_div_factor`` (default 1e4).
        three_phase: see above (default False).

    Examples:
        >>> sched = gg.optim.OneCycleLR(opt, max_lr=0.1, total_steps=len(loader) * epochs)
    """

    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: Optional[int] = None,
                 epochs: Optional[int] = None, steps_per_epoch: Optional[int] = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"OneCycleLR: {type(optimizer).__name__} is not a gg.optim.Optimizer")
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"OneCycleLR: expected a positive integer total_steps, got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not (isinstance(epochs, int) and epochs > 0 and isinstance(steps_per_epoch, int)
                    and steps_per_epoch > 0):
                raise ValueError(f"OneCycleLR: expected positive integers epochs and steps_per_epoch, got "
                                 f"{epochs} and {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        n = self.total_steps
        if three_phase:
            self._phases = [
                (float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * n) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if last_epoch == -1:
            for peak, group in zip(_per_group("max_lr", optimizer, max_lr), optimizer.param_groups):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"OneCycleLR: {type(optimizer).__name__} has no momentum or betas to cycle; "
                                 "pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for top, bottom, group in zip(_per_group("max_momentum", optimizer, max_momentum),
                                              _per_group("base_momentum", optimizer, base_momentum),
                                              optimizer.param_groups):
                    self._set_momentum(group, top)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_from], group[m_to], pct))
                    break
                start = end
        return lrs


class LinearWarmup(LRScheduler):
    """A linear warm-up, then optionally another schedule.

    For the first ``warmup_steps`` steps the learning rate rises linearly from
    ``start_factor * base_lr`` to ``base_lr``::

        lr = base_lr * (start_factor + (1 - start_factor) * min(epoch, warmup_steps) / warmup_steps)

    It stays at ``base_lr`` afterwards, unless ``after`` (a scheduler built on the same optimizer,
    before this one) is given: at step ``warmup_steps`` it is restarted at its epoch 0 and from then
    on each ``step()`` steps it. This is PyTorch's
    ``SequentialLR(opt, [LinearLR(opt, start_factor, 1.0, total_iters=warmup_steps), after],
    milestones=[warmup_steps])``, in one object (the warm-up part in closed form).

    Args:
        optimizer: the optimizer.
        warmup_steps: the length of the warm-up (>= 1).
        start_factor: the fraction of ``base_lr`` at step 0 (in (0, 1]; default 1/3 as LinearLR).
        after: the scheduler to run after the warm-up (not ReduceLROnPlateau), or ``None``.

    Examples:
        >>> cosine = gg.optim.CosineAnnealingLR(opt, T_max=90)
        >>> sched = gg.optim.LinearWarmup(opt, warmup_steps=10, start_factor=0.01, after=cosine)
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, start_factor: float = 1.0 / 3,
                 after: Optional[LRScheduler] = None, last_epoch: int = -1) -> None:
        if int(warmup_steps) < 1:
            raise ValueError(f"LinearWarmup: warmup_steps must be >= 1, got {warmup_steps}")
        if not 0.0 < start_factor <= 1.0:
            raise ValueError(f"LinearWarmup: start_factor must be in (0, 1], got {start_factor}")
        if after is not None:
            if isinstance(after, ReduceLROnPlateau):
                raise ValueError("LinearWarmup: after cannot be ReduceLROnPlateau (its step needs a metric); "
                                 "step it yourself once the warm-up is over")
            if after.optimizer is not optimizer:
                raise ValueError("LinearWarmup: the after scheduler belongs to another optimizer")
            if last_epoch == -1:
                after.last_epoch -= 1  # undo its initial step: it starts when the warm-up ends
        self.warmup_steps, self.start_factor, self.after = int(warmup_steps), start_factor, after
        super().__init__(optimizer, last_epoch)

    def step(self, epoch: Optional[int] = None) -> None:
        if self.after is None or self._is_initial or epoch is not None:
            return super().step(epoch)
        self.last_epoch += 1
        self._step_count += 1
        if self.last_epoch < self.warmup_steps:
            self._update_lr(self.last_epoch)
        elif self.last_epoch == self.warmup_steps:
            self.after._update_lr(0)
            self._last_lr = self.after.get_last_lr()
        else:
            self.after.step()
            self._last_lr = self.after.get_last_lr()

    def get_lr(self) -> list:
        return self._closed_form_lr()

    def _closed_form_lr(self) -> list:
        frac = min(self.last_epoch, self.warmup_steps) / self.warmup_steps
        return [base * (self.start_factor + (1.0 - self.start_factor) * frac) for base in self.base_lrs]

    def state_dict(self) -> dict:
        state = {k: copy.deepcopy(v) for k, v in self.__dict__.items() if k not in ("optimizer", "after")}
        state["after"] = None if self.after is None else self.after.state_dict()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        after = state.pop("after", None)
        self.__dict__.update(copy.deepcopy(state))
        if after is not None and self.after is not None:
            self.after.load_state_dict(after)


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` when a metric has stopped improving for more than
    ``patience`` steps (PyTorch's semantics). Call ``step(metric)`` once per evaluation.

    Args:
        optimizer: the optimizer.
        mode: ``"min"`` (the metric should fall, e.g. a loss) or ``"max"`` (e.g. an accuracy).
        factor: the multiplier (< 1; default 0.1).
        patience: the number of steps without improvement to tolerate (default 10).
        threshold: how much better counts as an improvement (default 1e-4).
        threshold_mode: ``"rel"`` (better than ``best * (1 -+ threshold)``) or ``"abs"`` (better than
            ``best -+ threshold``).
        cooldown: steps to wait after a reduction before counting bad steps again (default 0).
        min_lr: the lower bound of the learning rate (or one per group; default 0).
        eps: a reduction smaller than this is skipped (default 1e-8).

    Examples:
        >>> sched = gg.optim.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=3)
        >>> for epoch in range(100):
        ...     train(); sched.step(validation_loss())
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr: Any = 0.0,
                 eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"ReduceLROnPlateau: {type(optimizer).__name__} is not a gg.optim.Optimizer")
        self.optimizer = optimizer
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr, self.min_lrs = None, _per_group("min_lr", optimizer, min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self.last_epoch = 0
        self._step_count = 0
        self._last_lr = self._current()
        self.best = self.mode_worse = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric ``a`` improves on ``best`` by more than the threshold."""
        if self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold) if self.mode == "min" else a > best * (1.0 + self.threshold)
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def step(self, metrics: Any, epoch: Optional[int] = None) -> None:  # type: ignore[override]
        """Record one value of the metric (a number or a one-element tensor)."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current()

    def _reduce_lr(self) -> None:
        if len(self.min_lrs) != len(self.optimizer.param_groups):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimizer now has {len(self.optimizer.param_groups)} "
                                   f"param groups but min_lr gave {len(self.min_lrs)}; set .min_lrs to match")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, low in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, low)
            if old - new > self.eps:
                group["lr"] = new


__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "OneCycleLR",
           "LinearWarmup", "ReduceLROnPlateau"]
