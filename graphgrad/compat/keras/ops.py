"""``keras.ops``: Keras' NumPy-style functions for custom losses, metrics and ``Lambda`` layers. Keras
follows NumPy's names and so does graphgrad, so most names are graphgrad's functions
(``keras.ops.mean`` is ``gg.mean``); the few that differ are mapped here."""
from __future__ import annotations

from typing import Any

import graphgrad as gg
from graphgrad.compat.keras.engine import symbolic_aware
from graphgrad.nn import functional as F

__all__ = ["convert_to_tensor", "convert_to_numpy", "cast", "shape", "square", "softmax", "log_softmax",
           "expand_dims", "squeeze", "one_hot", "relu", "sigmoid", "tanh", "normalize"]


def convert_to_tensor(x: Any, dtype: Any = None):
    """A Tensor (floats in the default float dtype, float32, as Keras' floatx)."""
    from graphgrad.compat.keras.engine import as_tensor

    return as_tensor(x) if dtype is None else gg.tensor(x).astype(dtype)


def convert_to_numpy(x: Any):
    return x.numpy() if isinstance(x, gg.Tensor) else gg.tensor(x).numpy()


def cast(x: Any, dtype: Any):
    return convert_to_tensor(x).astype(dtype)


def shape(x: Any) -> tuple:
    return tuple(x.shape)


def square(x: Any):
    return x * x


def softmax(x: Any, axis: int = -1):
    return gg.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1):
    return gg.log_softmax(x, axis=axis)


def expand_dims(x: Any, axis: int):
    return gg.expand_dims(x, axis)


def squeeze(x: Any, axis: Any = None):
    return gg.squeeze(x, axis) if axis is not None else gg.squeeze(x)


def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None):
    out = gg.one_hot(convert_to_tensor(x).astype("int64"), num_classes)
    return out.astype(dtype or gg.get_default_dtype())


relu, sigmoid, tanh = gg.relu, gg.sigmoid, gg.tanh
gelu, silu, softplus = gg.gelu, gg.silu, gg.softplus
relu6 = F.relu6


def normalize(x: Any, axis: int = -1, order: int = 2):
    """``x`` divided by its ``order``-norm along ``axis`` (Keras 3's ``ops.normalize``)."""
    x = convert_to_tensor(x)
    if order == 2:
        return x / gg.sqrt(gg.maximum(gg.sum(x * x, axis=axis, keepdims=True), 1e-12))
    return x / gg.maximum(gg.norm(x, ord=order, axis=axis, keepdims=True), 1e-12)


# on KerasTensors (a functional model being built) each function records an op layer, as Keras 3
for _name in __all__ + ["gelu", "silu", "softplus", "relu6", "normalize"]:
    if _name not in ("convert_to_numpy", "shape"):
        globals()[_name] = symbolic_aware(globals()[_name])
_WRAPPED: dict = {}


def __getattr__(name: str) -> Any:
    value = getattr(gg, name, None)
    if value is None or name.startswith("_"):
        raise AttributeError(f"keras.ops.{name} is not mapped onto graphgrad (see docs/keras.md)")
    if callable(value) and not isinstance(value, type):
        if name not in _WRAPPED:
            _WRAPPED[name] = symbolic_aware(value)
        return _WRAPPED[name]
    return value
