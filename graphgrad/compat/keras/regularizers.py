"""``keras.regularizers``: ``L1``, ``L2``, ``L1L2`` (and ``l1``, ``l2``, ``l1_l2``) with Keras' defaults, for a
layer's ``kernel_regularizer``, ``bias_regularizer`` and ``activity_regularizer``. A regularizer is
``fn(weight) -> scalar`` in graphgrad ops; ``fit`` adds the layers' penalties to the training loss
(the activity penalty divided by the batch size), as Keras does."""
from __future__ import annotations

from typing import Any

import graphgrad as gg
from graphgrad.compat.keras._lookup import lookup

__all__ = ["Regularizer", "L1", "L2", "L1L2", "l1", "l2", "l1_l2", "get"]


class Regularizer:
    """The base: ``regularizer(x)`` is a scalar penalty."""

    def __call__(self, x):
        return gg.zeros(())

    def get_config(self) -> dict:
        return {}


class L1L2(Regularizer):
    """``L1L2(l1=0.0, l2=0.0)``: ``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        penalty = gg.zeros((), dtype=x.dtype)
        if self.l1:
            penalty = penalty + self.l1 * gg.sum(gg.abs(x))
        if self.l2:
            penalty = penalty + self.l2 * gg.sum(x * x)
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``L1(l1=0.01)``."""

    def __init__(self, l1: float = 0.01) -> None:
        super().__init__(l1=l1)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    """``L2(l2=0.01)``."""

    def __init__(self, l2: float = 0.01) -> None:
        super().__init__(l2=l2)

    def get_config(self) -> dict:
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2}


def get(identifier: Any) -> Any:
    """A regularizer from ``None``, a name (``"l2"``: Keras' default factor), a regularizer or a function."""
    return lookup("regularizers", "regularizer", identifier, globals(), _BY_NAME)
