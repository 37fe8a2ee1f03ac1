"""``keras.initializers``: initializer objects ``init(shape, dtype=None) -> array`` filled by
``gg.nn.init``; layers also take their names (``kernel_initializer="he_normal"``)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg
from graphgrad.nn import init

__all__ = ["Initializer", "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform", "Zeros", "Ones", "Orthogonal",
           "RandomNormal", "RandomUniform", "Constant", "get", "Identity", "TruncatedNormal", "VarianceScaling",
           "LecunNormal", "LecunUniform"]


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


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes), as Keras' ``Identity`` (``IRNN``'s recurrent kernel)."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = float(gain)

    def __call__(self, shape, dtype: Any = None):
        if len(shape) != 2:
            raise ValueError(f"Identity initializer: needs a 2-D shape, got {tuple(shape)}")
        from graphgrad.backend import np

        return (self.gain * np.eye(*shape)).astype(str(dtype or gg.get_default_dtype()))


class VarianceScaling(Initializer):
    """Keras' ``VarianceScaling``: variance ``scale / n`` with ``n`` the fan in, out or their mean
    (``mode``), drawn from a truncated normal, a normal or a uniform (``distribution``). Shapes are
    Keras' (a kernel is ``(..., fan_in, fan_out)``)."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
                 seed: Optional[int] = None) -> None:
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling: mode must be fan_in, fan_out or fan_avg, got {mode!r}")
        if distribution not in ("truncated_normal", "untruncated_normal", "normal", "uniform"):
            raise ValueError(f"VarianceScaling: unknown distribution {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = float(scale), mode, distribution, seed

    def __call__(self, shape, dtype: Any = None):
        from graphgrad.backend import np
        from graphgrad.compat.keras import random as _random

        shape = tuple(int(d) for d in shape)
        receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        fan_in = shape[-2] * receptive if len(shape) > 1 else shape[0]
        fan_out = shape[-1] * receptive if len(shape) > 1 else shape[0]
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":  # the std of a normal truncated at 2 std is 0.8796...
            out = _random.truncated_normal(shape, stddev=np.sqrt(variance) / 0.87962566103423978, seed=self.seed)
        elif self.distribution in ("normal", "untruncated_normal"):
            out = _random.normal(shape, stddev=np.sqrt(variance), seed=self.seed)
        else:
            limit = np.sqrt(3.0 * variance)
            out = _random.uniform(shape, -limit, limit, seed=self.seed)
        return out.numpy().astype(str(dtype or gg.get_default_dtype()))

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


class TruncatedNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None) -> None:
        self.mean, self.stddev, self.seed = float(mean), float(stddev), seed

    def __call__(self, shape, dtype: Any = None):
        from graphgrad.compat.keras import random as _random

        out = _random.truncated_normal(tuple(shape), self.mean, self.stddev, seed=self.seed)
        return out.numpy().astype(str(dtype or gg.get_default_dtype()))


def LecunNormal(seed: Optional[int] = None) -> VarianceScaling:  # noqa: N802  (Keras' class name)
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def LecunUniform(seed: Optional[int] = None) -> VarianceScaling:  # noqa: N802
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def get(identifier: Any) -> Any:
    return identifier
