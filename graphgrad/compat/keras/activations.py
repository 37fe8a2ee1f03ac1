"""``keras.activations``: Keras' activation names mapped onto graphgrad's functions (the last axis is
the class axis of ``softmax``, as in Keras)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import graphgrad as gg
from graphgrad.nn import functional as F

__all__ = ["get", "serialize", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear", "elu", "selu", "gelu",
           "softplus", "softsign", "swish", "silu", "leaky_relu", "relu6", "exponential", "hard_sigmoid", "mish"]


def relu(x, negative_slope: float = 0.0, max_value: Optional[float] = None, threshold: float = 0.0):
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return gg.relu(x)
    if max_value == 6.0 and negative_slope == 0.0 and threshold == 0.0:
        return F.relu6(x)
    raise NotImplementedError("keras.activations.relu: only the plain form (and max_value=6) is supported")


def softmax(x, axis: int = -1):
    return gg.softmax(x, axis=axis)


def log_softmax(x, axis: int = -1):
    return gg.log_softmax(x, axis=axis)


def linear(x):
    return x


def leaky_relu(x, negative_slope: float = 0.2):
    return gg.leaky_relu(x, negative_slope)


def exponential(x):
    return gg.exp(x)


def hard_sigmoid(x):
    return F.hardsigmoid(x)


sigmoid, tanh, elu, selu, gelu = gg.sigmoid, gg.tanh, gg.elu, gg.selu, gg.gelu
softplus, softsign, swish, silu, relu6, mish = gg.softplus, gg.softsign, gg.silu, gg.silu, F.relu6, F.mish

_BY_NAME = {"relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax, "log_softmax": log_softmax,
            "linear": linear, "elu": elu, "selu": selu, "gelu": gelu, "softplus": softplus, "softsign": softsign,
            "swish": swish, "silu": silu, "leaky_relu": leaky_relu, "relu6": relu6, "exponential": exponential,
            "hard_sigmoid": hard_sigmoid, "mish": mish}


def get(identifier: Any) -> Callable:
    """An activation function from a name (``"relu"``), ``None`` (linear) or a callable."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in _BY_NAME:
            raise ValueError(f"keras.activations: unknown activation {identifier!r}; known: {sorted(_BY_NAME)}")
        return _BY_NAME[key]
    if callable(identifier):
        return identifier
    raise TypeError(f"keras.activations: expected a name or a function, got {type(identifier).__name__}")


def serialize(fn: Any) -> Any:
    """The name of an activation (for ``get_config``); other callables are kept as they are."""
    if fn is None or isinstance(fn, str):
        return fn
    for name, candidate in _BY_NAME.items():
        if candidate is fn:
            return name
    return fn
