"""More learning-rate schedules with PyTorch's semantics: LambdaLR, MultiplicativeLR, ConstantLR,
LinearLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR, and the combinators SequentialLR and
ChainedScheduler (see ``schedule.py`` for the contract every scheduler keeps)."""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any, Callable, Optional, Sequence, Union

from graphgrad.optim.optimizer import Optimizer
from graphgrad.optim.schedule import LRScheduler, _per_group


def _lambdas(name: str, optimizer: Optimizer, fn: Union[Callable, Sequence[Callable]]) -> list:
    fns = _per_group(name, optimizer, fn)
    for f in fns:
        if not callable(f):
            raise TypeError(f"{name}: lr_lambda must be a function (or one per param group), got {type(f).__name__}")
    return fns


class _Lambda(LRScheduler):
    """Shared by the schedules driven by user functions: their state_dict leaves plain functions
    out (they are code, not state), as PyTorch's does."""

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["lr_lambdas"] = [None if getattr(f, "__name__", "") == "<lambda>" or not hasattr(f, "__dict__")
                               else dict(f.__dict__) for f in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas", None) or []
        super().load_state_dict(state)
        for f, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                f.__dict__.update(saved)


class LambdaLR(_Lambda):
    """``lr = base_lr * lr_lambda(epoch)`` (one function, or one per param group).

    Examples:
        >>> sched = gg.optim.LambdaLR(opt, lambda epoch: 0.95 ** epoch)
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.lr_lambdas = _lambdas("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_Lambda):
    """Multiply the learning rate by ``lr_lambda(epoch)`` at every step after the first."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.lr_lambdas = _lambdas("MultiplicativeLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch > 0:
            return [lr * f(self.last_epoch) for lr, f in zip(self._current(), self.lr_lambdas)]
        return self._current()


class ConstantLR(LRScheduler):
    """``base_lr * factor`` for the first ``total_iters`` steps, then ``base_lr``."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, int(total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current()]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [lr / self.factor for lr in self._current()]

    def _closed_form_lr(self) -> list:
        scale = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base * scale for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on ``base_lr`` goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` steps, then stays."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got "
                             f"{start_factor} and {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, int(total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current()]
        if self.last_epoch > self.total_iters:
            return self._current()
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in self._current()]

    def _closed_form_lr(self) -> list:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * done) for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters, self.power = int(total_iters), power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return self._current()
        decay = ((1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * decay for lr in self._current()]

    def _closed_form_lr(self) -> list:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left ** self.power for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``base_lr`` to ``eta_min`` over ``T_0`` steps, restarting; each period is
    ``T_mult`` times the previous. ``step(epoch)`` takes fractional epochs (steps within an epoch)."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive integer, got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an integer >= 1, got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch: Optional[float] = None) -> None:
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts: expected a non-negative epoch, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CyclicLR(LRScheduler):
    """Cycle the learning rate between ``base_lr`` and ``max_lr`` (Smith's cyclical learning rates),
    ``step_size_up`` steps up and ``step_size_down`` down, with amplitude policy ``mode``:
    'triangular' (constant), 'triangular2' (halved each cycle) or 'exp_range' (``gamma ** step``),
    or a custom ``scale_fn``. With ``cycle_momentum`` the momentum (or Adam's beta1) cycles the other
    way between ``max_momentum`` and ``base_momentum``. Step it once per batch."""

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: Optional[int] = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Optional[Callable] = None, scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1) -> None:
        base_lrs = _per_group("CyclicLR base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("CyclicLR max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range', got {mode!r}")
        self.mode, self.gamma = mode, gamma
        if scale_fn is None:
            self._scale_fn, self.scale_mode = {"triangular": (lambda x: 1.0, "cycle"),
                                               "triangular2": (lambda x: 1.0 / 2.0 ** (x - 1), "cycle"),
                                               "exp_range": (lambda x: gamma ** x, "iterations")}[mode]
        else:
            self._scale_fn, self.scale_mode = scale_fn, scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = getattr(optimizer, "defaults", {})
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError("CyclicLR: optimizer must support momentum or betas with cycle_momentum on "
                                 "(pass cycle_momentum=False)")
            self.use_beta1 = "betas" in defaults
            self.base_momentums = _per_group("CyclicLR base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("CyclicLR max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, group in zip(self.max_momentums, optimizer.param_groups):
                    self._set_momentum(group, m)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value,) + tuple(group["betas"][1:])
        else:
            group["momentum"] = value

    def _scale_factor(self) -> tuple:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self._scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        return factor, scale

    def get_lr(self) -> list:
        factor, scale = self._scale_factor()
        lrs = [base + (top - base) * factor * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, high - (high - low) * factor * scale)
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        state.pop("_scale_fn", None)  # code: rebuilt from mode/gamma by the constructor
        return state


class _Combinator(LRScheduler):
    """A scheduler made of others: its state holds theirs."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        for s, saved in zip(self._schedulers, state.pop("_schedulers")):
            s.load_state_dict(saved)
        self.__dict__.update(state)


class SequentialLR(_Combinator):
    """Run ``schedulers`` one after the other, switching at each of ``milestones`` (step numbers);
    each starts from its own step 0 when its turn comes.

    Examples:
        >>> warm = gg.optim.LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> sched = gg.optim.SequentialLR(opt, [warm, gg.optim.CosineAnnealingLR(opt, 95)], milestones=[5])
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR: expects at least one scheduler")
        for i, s in enumerate(schedulers):
            if getattr(s, "optimizer", None) is not optimizer:
                raise ValueError(f"SequentialLR: schedulers[{i}] belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: expects {len(schedulers) - 1} milestones for {len(schedulers)} "
                             f"schedulers, got {len(milestones)}")
        self.optimizer = optimizer
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:  # undo the steps the schedulers took when they were built
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            s.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self, epoch: Optional[int] = None) -> None:
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()



class ChainedScheduler(_Combinator):
    """Step every one of ``schedulers`` at each ``step()`` (their effects compose, e.g. a warm-up
    factor on top of a decay)."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optional[Optimizer] = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler: expects at least one scheduler")
        self.optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if s.optimizer is not self.optimizer:
                raise ValueError(f"ChainedScheduler: schedulers[{i}] belongs to another optimizer")
        self._schedulers = list(schedulers)
        self.base_lrs = [group["initial_lr"] for group in self.optimizer.param_groups]
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def step(self, epoch: Any = None) -> None:
        for s in self._schedulers:
            s.step()
        self.last_epoch += 1
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

