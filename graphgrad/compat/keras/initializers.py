"""``keras.initializers``: initializer objects ``init(shape, dtype=None) -> array`` filled by
``gg.nn.init``; layers also take their names (``kernel_initializer="he_normal"``)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg
from graphgrad.nn import init

__all__ = ["Initializer", "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform", "Zeros", "Ones", "Orthogonal",
           "RandomNormal", "RandomUniform", "Constant", "get"]


class Initializer:
    keras_name = ""

    def _fill(self, tensor) -> None:
        raise NotImplementedError

    def __call__(self, shape, dtype: Any = None):
        tensor = gg.zeros(tuple(shape), dtype=dtype or gg.get_default_dtype())
        self._fill(tensor)
        return tensor.numpy()

    def get_config(self) -> dict:
        return {}


def _simple(name: str, fill) -> type:
    return type(name, (Initializer,), {"keras_name": name, "_fill": lambda self, t: fill(t),
                                       "__init__": lambda self, seed=None: None})


GlorotUniform = _simple("GlorotUniform", init.xavier_uniform_)
GlorotNormal = _simple("GlorotNormal", init.xavier_normal_)
HeNormal = _simple("HeNormal", lambda t: init.kaiming_normal_(t, nonlinearity="relu"))
HeUniform = _simple("HeUniform", lambda t: init.kaiming_uniform_(t, nonlinearity="relu"))
Zeros = _simple("Zeros", init.zeros_)
Ones = _simple("Ones", init.ones_)


class Orthogonal(Initializer):
    def __init__(self, gain: float = 1.0, seed: Optional[int] = None) -> None:
        self.gain = float(gain)

    def _fill(self, t) -> None:
        init.orthogonal_(t, gain=self.gain)


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None) -> None:
        self.mean, self.stddev = float(mean), float(stddev)

    def _fill(self, t) -> None:
        init.normal_(t, self.mean, self.stddev)


class RandomUniform(Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Optional[int] = None) -> None:
        self.minval, self.maxval = float(minval), float(maxval)

    def _fill(self, t) -> None:
        init.uniform_(t, self.minval, self.maxval)


class Constant(Initializer):
    def __init__(self, value: float = 0.0) -> None:
        self.value = float(value)

    def _fill(self, t) -> None:
        init.constant_(t, self.value)


def get(identifier: Any) -> Any:
    return identifier
