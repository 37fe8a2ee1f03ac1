"""``keras.optimizers.schedules``: learning rates as functions of the optimizer's step count
(``schedule(step) -> float``), with Keras' arguments and formulas. Pass one as an optimizer's
``learning_rate``; the optimizer evaluates it before each update (step 0 first)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

__all__ = ["LearningRateSchedule", "ExponentialDecay", "CosineDecay", "PiecewiseConstantDecay", "InverseTimeDecay",
           "PolynomialDecay", "serialize", "deserialize"]


class LearningRateSchedule:
    """The base: ``schedule(step)`` is the learning rate at optimizer step ``step``."""

    def __call__(self, step: int) -> float:
        raise NotImplementedError

    def get_config(self) -> dict:
        return dict(self.__dict__)


class _StepDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments and the decay progress
    ``step / decay_steps`` (floored with ``staircase``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float, staircase: bool = False,
                 name: Optional[str] = None) -> None:
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), int(decay_steps)
        self.decay_rate, self.staircase = float(decay_rate), bool(staircase)

    def _progress(self, step: int) -> float:
        p = float(step) / self.decay_steps
        return math.floor(p) if self.staircase else p


class ExponentialDecay(_StepDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent floored with ``staircase``)."""

    def __call__(self, step: int) -> float:
        return self.initial_learning_rate * self.decay_rate ** self._progress(step)


class InverseTimeDecay(_StepDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    def __call__(self, step: int) -> float:
        return self.initial_learning_rate / (1.0 + self.decay_rate * self._progress(step))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while ``boundaries[i-1] < step <=
    boundaries[i]``, ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries: Sequence[float], values: Sequence[float], name: Optional[str] = None) -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseConstantDecay: {len(values)} values for {len(boundaries)} boundaries "
                             "(expected one more value than boundaries)")
        self.boundaries, self.values = [float(b) for b in boundaries], [float(v) for v in values]

    def __call__(self, step: int) -> float:
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return value
        return self.values[-1]


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - step / decay_steps) ** power + end``, the step held at ``decay_steps``
    (or ``decay_steps`` stretched to the next multiple with ``cycle``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, end_learning_rate: float = 0.0001,
                 power: float = 1.0, cycle: bool = False, name: Optional[str] = None) -> None:
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), int(decay_steps)
        self.end_learning_rate, self.power, self.cycle = float(end_learning_rate), float(power), bool(cycle)

    def __call__(self, step: int) -> float:
        step, steps = float(step), float(self.decay_steps)
        if self.cycle:
            steps = steps * (1.0 if step == 0 else math.ceil(step / steps))
        else:
            step = min(step, steps)
        fraction = step / steps
        return (self.initial_learning_rate - self.end_learning_rate) * (1 - fraction) ** self.power + self.end_learning_rate


class CosineDecay(LearningRateSchedule):
    """``CosineDecay(initial_learning_rate, decay_steps, alpha=0.0, warmup_target=None, warmup_steps=0)``:
    with a ``warmup_target``, a linear rise from ``initial_learning_rate`` to it over ``warmup_steps``
    steps, then a cosine decay from it (from ``initial_learning_rate`` without one) to ``alpha`` times
    it over ``decay_steps`` steps."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0, name: Optional[str] = None,
                 warmup_target: Optional[float] = None, warmup_steps: int = 0) -> None:
        self.initial_learning_rate, self.decay_steps, self.alpha = float(initial_learning_rate), int(decay_steps), float(alpha)
        self.warmup_target = None if warmup_target is None else float(warmup_target)
        self.warmup_steps = int(warmup_steps)

    def _decay(self, step: float, start: float) -> float:
        fraction = min(step, self.decay_steps) / self.decay_steps
        return start * ((1 - self.alpha) * 0.5 * (1.0 + math.cos(math.pi * fraction)) + self.alpha)

    def __call__(self, step: int) -> float:
        step = float(step)
        if self.warmup_target is None:
            return self._decay(step, self.initial_learning_rate)
        if step < self.warmup_steps:
            return self.initial_learning_rate + (self.warmup_target - self.initial_learning_rate) * step / self.warmup_steps
        return self._decay(step - self.warmup_steps, self.warmup_target)


def serialize(schedule: Any) -> dict:
    """``{"class_name": ..., "config": ...}`` (Keras' form), for saving a compiled model."""
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config: dict) -> LearningRateSchedule:
    """The schedule :func:`serialize` wrote (``{"class_name": ..., "config": ...}``, Keras' form)."""
    cls = globals().get(config["class_name"])
    if not (isinstance(cls, type) and issubclass(cls, LearningRateSchedule)):
        raise ValueError(f"keras.optimizers.schedules: unknown schedule {config['class_name']!r}")
    return cls(**config.get("config", {}))
