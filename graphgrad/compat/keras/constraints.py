"""``keras.constraints``: ``MaxNorm``, ``NonNeg``, ``UnitNorm``, ``MinMaxNorm`` for a layer's
``kernel_constraint`` / ``bias_constraint``. A constraint is ``fn(weight) -> weight`` in graphgrad ops on
the weight in Keras' layout (Dense's kernel ``(in, units)``, so ``axis=0`` is per unit); ``fit`` applies
it after each optimizer step, as Keras does."""
from __future__ import annotations

from typing import Any

import graphgrad as gg
from graphgrad.compat.keras._lookup import lookup

__all__ = ["Constraint", "MaxNorm", "NonNeg", "UnitNorm", "MinMaxNorm", "max_norm", "non_neg", "unit_norm",
           "min_max_norm", "get"]

EPSILON = 1e-7  # Keras' epsilon


def _norms(w, axis: Any):
    return gg.sqrt(gg.sum(w * w, axis=axis, keepdims=True))


class Constraint:
    """The base: ``constraint(w)`` returns the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}


class MaxNorm(Constraint):
    """``MaxNorm(max_value=2, axis=0)``: rescale slices whose l2 norm along ``axis`` exceeds ``max_value``."""

    def __init__(self, max_value: float = 2.0, axis: Any = 0) -> None:
        self.max_value, self.axis = float(max_value), axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = gg.clip(norms, 0.0, self.max_value)
        return w * (desired / (norms + EPSILON))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """``NonNeg()``: negative entries set to zero."""

    def __call__(self, w):
        return gg.relu(w)


class UnitNorm(Constraint):
    """``UnitNorm(axis=0)``: slices along ``axis`` scaled to unit l2 norm."""

    def __init__(self, axis: Any = 0) -> None:
        self.axis = axis

    def __call__(self, w):
        return w / (EPSILON + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """``MinMaxNorm(min_value=0.0, max_value=1.0, rate=1.0, axis=0)``: norms moved toward
    ``[min_value, max_value]`` (all the way with ``rate=1``)."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0, axis: Any = 0) -> None:
        self.min_value, self.max_value, self.rate, self.axis = float(min_value), float(max_value), float(rate), axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = self.rate * gg.clip(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (EPSILON + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
_BY_NAME = {"max_norm": MaxNorm, "maxnorm": MaxNorm, "non_neg": NonNeg, "nonneg": NonNeg, "unit_norm": UnitNorm,
            "unitnorm": UnitNorm, "min_max_norm": MinMaxNorm, "minmaxnorm": MinMaxNorm}


def get(identifier: Any) -> Any:
    """A constraint from ``None``, a name, a constraint object or a function."""
    return lookup("constraints", "constraint", identifier, globals(), _BY_NAME)
