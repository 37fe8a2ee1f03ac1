"""``keras.backend`` (``from keras import backend as K``): the helpers Keras scripts call
(``clear_session``, ``image_data_format``, ``epsilon``...) and Keras 2's tensor functions that custom
losses, metrics and ``Lambda`` layers use (``K.mean``, ``K.square``, ``K.l2_normalize``,
``K.int_shape``, ``K.random_normal``...), on graphgrad Tensors. A name not defined here is looked up in
``keras.ops`` (``K.exp`` is ``keras.ops.exp``)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import graphgrad as gg
from graphgrad.compat.keras.engine import symbolic_aware

__all__ = ["backend", "clear_session", "floatx", "set_floatx", "image_data_format", "set_image_data_format",
           "epsilon", "set_epsilon", "int_shape", "shape", "ndim", "dtype", "mean", "sum", "max", "min", "std",
           "var", "prod", "square", "sqrt", "maximum", "minimum", "concatenate", "stack", "l2_normalize", "cast",
           "equal", "not_equal", "greater", "less", "clip", "dot", "batch_dot", "random_normal",
           "random_uniform", "variable", "constant", "get_value", "set_value", "eval", "zeros", "ones",
           "zeros_like", "ones_like", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "binary_crossentropy", "flatten", "batch_flatten", "reshape", "permute_dimensions", "expand_dims",
           "squeeze", "argmax", "argmin", "round", "sign", "pow", "abs", "exp", "log", "relu", "softmax",
           "sigmoid", "tanh", "switch", "learning_phase", "is_keras_tensor", "count_params"]

_EPSILON = [1e-7]


def backend() -> str:
    return "graphgrad"


def clear_session(free_memory: bool = True) -> None:
    """Restart the layer-name counters (``dense``, ``dense_1``...), as Keras does."""
    from graphgrad.compat.keras.engine import _NAME_COUNTS

    _NAME_COUNTS.clear()


def floatx() -> str:
    return str(gg.get_default_dtype())


def set_floatx(dtype: str) -> None:
    gg.set_default_dtype(dtype)


def image_data_format() -> str:
    return "channels_last"


def set_image_data_format(data_format: str) -> None:
    if data_format != "channels_last":
        raise NotImplementedError("graphgrad.compat.keras: the layers are channels_last only")


def epsilon() -> float:
    return _EPSILON[0]


def set_epsilon(value: float) -> None:
    _EPSILON[0] = float(value)


def _t(x: Any) -> gg.Tensor:
    from graphgrad.compat.keras.engine import as_tensor

    return as_tensor(x)


def int_shape(x: Any) -> tuple:
    """The static shape as a tuple of ints (``None`` for the batch of a symbolic tensor)."""
    return tuple(None if d is None else int(d) for d in x.shape)


def shape(x: Any) -> tuple:
    return tuple(int(d) for d in _t(x).shape)


def ndim(x: Any) -> int:
    return len(x.shape)


def dtype(x: Any) -> str:
    return str(x.dtype)


def _reduce(fn):
    def reduce(x: Any, axis: Any = None, keepdims: bool = False):
        return fn(_t(x), axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)

    reduce.__name__ = fn.__name__
    return reduce


mean, sum, max, min, std, prod = (_reduce(f) for f in (gg.mean, gg.sum, gg.max, gg.min, gg.std, gg.prod))


def var(x: Any, axis: Any = None, keepdims: bool = False):
    return gg.var(_t(x), axis=axis, keepdims=keepdims)


def square(x: Any):
    x = _t(x)
    return x * x


def sqrt(x: Any):
    return gg.sqrt(_t(x))


def maximum(x: Any, y: Any):
    return gg.maximum(_t(x), _t(y))


def minimum(x: Any, y: Any):
    return gg.minimum(_t(x), _t(y))


def concatenate(tensors: Sequence[Any], axis: int = -1):
    return gg.concatenate([_t(t) for t in tensors], axis=axis)


def stack(tensors: Sequence[Any], axis: int = 0):
    return gg.stack([_t(t) for t in tensors], axis=axis)


def l2_normalize(x: Any, axis: Any = None):
    """``x / sqrt(max(sum(x**2, axis), 1e-12))``, as Keras."""
    x = _t(x)
    return x / gg.sqrt(gg.maximum(gg.sum(x * x, axis=axis, keepdims=True), 1e-12))


def cast(x: Any, dtype: Any):
    return _t(x).astype(dtype)


def equal(x: Any, y: Any):
    return gg.equal(_t(x), _t(y))


def not_equal(x: Any, y: Any):
    return gg.not_equal(_t(x), _t(y))


def greater(x: Any, y: Any):
    return _t(x) > _t(y)


def less(x: Any, y: Any):
    return _t(x) < _t(y)


def clip(x: Any, min_value: Any, max_value: Any):
    return gg.clip(_t(x), min_value, max_value)


def dot(x: Any, y: Any):
    return gg.matmul(_t(x), _t(y))


def batch_dot(x: Any, y: Any, axes: Any = None):
    """Keras' ``batch_dot`` for the common cases: 2-D by 2-D (row-wise dot products, shape ``(b, 1)``)
    and 3-D by 3-D with ``axes=(2, 2)`` / ``(2, 1)`` / ``(1, 1)`` (batched matrix products)."""
    x, y = _t(x), _t(y)
    if axes is None:
        axes = (x.ndim - 1, y.ndim - 2 if y.ndim > 2 else 1)
    axes = (axes, axes) if isinstance(axes, int) else tuple(axes)
    if x.ndim == 2 and y.ndim == 2:
        return gg.sum(x * y, axis=1, keepdims=True)
    a, b = axes
    if x.ndim == 3 and y.ndim == 3:
        xx = x if a == 2 else gg.transpose(x, (0, 2, 1))
        yy = y if b == 1 else gg.transpose(y, (0, 2, 1))
        return gg.matmul(xx, yy)
    raise NotImplementedError(f"batch_dot: shapes {tuple(x.shape)} and {tuple(y.shape)} with axes={axes}")


def random_normal(shape: Sequence[int], mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: Any = None):
    return gg.normal(float(mean), float(stddev), size=tuple(int(d) for d in shape),
                     dtype=dtype or gg.get_default_dtype())


def random_uniform(shape: Sequence[int], minval: float = 0.0, maxval: float = 1.0, dtype: Any = None, seed: Any = None):
    u = gg.rand(*tuple(int(d) for d in shape), dtype=dtype or gg.get_default_dtype())
    return u * (float(maxval) - float(minval)) + float(minval)


def variable(value: Any, dtype: Any = None, name: Optional[str] = None):
    t = gg.tensor(value, dtype=dtype or (gg.get_default_dtype() if gg.tensor(value).dtype.kind == "f" else None))
    return gg.nn.Parameter(t) if t.dtype.kind == "f" else t


def constant(value: Any, dtype: Any = None, shape: Any = None, name: Optional[str] = None):
    from graphgrad.backend import np

    array = np.asarray(value, dtype=str(dtype) if dtype else None)
    if shape is not None:
        array = np.broadcast_to(array, tuple(shape))
    return _t(array)


def get_value(x: Any):
    return x.numpy() if isinstance(x, gg.Tensor) else x


eval = get_value


def set_value(x: Any, value: Any) -> None:
    """Assign in place (a Parameter or an optimizer's learning rate)."""
    if isinstance(x, gg.Tensor):
        with gg.no_grad():
            x.copy_(gg.tensor(value, dtype=x.dtype))
        return
    raise TypeError(f"set_value: expected a variable, got {type(x).__name__}")


def zeros(shape: Sequence[int], dtype: Any = None, name: Optional[str] = None):
    return gg.zeros(tuple(shape), dtype=dtype or gg.get_default_dtype())


def ones(shape: Sequence[int], dtype: Any = None, name: Optional[str] = None):
    return gg.ones(tuple(shape), dtype=dtype or gg.get_default_dtype())


def zeros_like(x: Any, dtype: Any = None, name: Optional[str] = None):
    return gg.zeros_like(_t(x)) if dtype is None else gg.zeros_like(_t(x)).astype(dtype)


def ones_like(x: Any, dtype: Any = None, name: Optional[str] = None):
    return gg.ones_like(_t(x)) if dtype is None else gg.ones_like(_t(x)).astype(dtype)


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1):
    from graphgrad.compat.keras import losses

    return losses.categorical_crossentropy(target, output, from_logits=from_logits)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1):
    from graphgrad.compat.keras import losses

    return losses.sparse_categorical_crossentropy(target, output, from_logits=from_logits)


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False):
    """Element-wise (no mean over the last axis), as Keras' backend function."""
    target, output = _t(target), _t(output)
    if from_logits:
        return gg.maximum(output, 0.0) - output * target + gg.log(1 + gg.exp(-gg.abs(output)))
    p = gg.clip(output, epsilon(), 1 - epsilon())
    return -(target * gg.log(p) + (1 - target) * gg.log(1 - p))


def flatten(x: Any):
    return gg.reshape(_t(x), (-1,))


def batch_flatten(x: Any):
    x = _t(x)
    return gg.reshape(x, (x.shape[0], -1))


def reshape(x: Any, shape: Sequence[int]):
    return gg.reshape(_t(x), tuple(shape))


def permute_dimensions(x: Any, pattern: Sequence[int]):
    return gg.transpose(_t(x), tuple(pattern))


def expand_dims(x: Any, axis: int = -1):
    return gg.expand_dims(_t(x), axis)


def squeeze(x: Any, axis: int):
    return gg.squeeze(_t(x), axis)


def argmax(x: Any, axis: int = -1):
    return gg.argmax(_t(x), axis=axis)


def argmin(x: Any, axis: int = -1):
    return gg.argmin(_t(x), axis=axis)


def switch(condition: Any, then_expression: Any, else_expression: Any):
    return gg.where(_t(condition), _t(then_expression), _t(else_expression))


def round(x: Any):  # noqa: A001  (Keras' name)
    return gg.round(_t(x))


def sign(x: Any):
    return gg.sign(_t(x))


def pow(x: Any, a: Any):  # noqa: A001
    return _t(x) ** a


def abs(x: Any):  # noqa: A001
    return gg.abs(_t(x))


def exp(x: Any):
    return gg.exp(_t(x))


def log(x: Any):
    return gg.log(_t(x))


def relu(x: Any, alpha: float = 0.0, max_value: Any = None, threshold: float = 0.0):
    x = _t(x)
    out = gg.relu(x) if not alpha else gg.where(x > 0, x, x * alpha)
    return out if max_value is None else gg.minimum(out, float(max_value))


def softmax(x: Any, axis: int = -1):
    return gg.softmax(_t(x), axis=axis)


def sigmoid(x: Any):
    return gg.sigmoid(_t(x))


def tanh(x: Any):
    return gg.tanh(_t(x))


def learning_phase() -> int:
    return 0


def is_keras_tensor(x: Any) -> bool:
    from graphgrad.compat.keras.engine import KerasTensor

    return isinstance(x, KerasTensor)


def count_params(x: Any) -> int:
    return int(_t(x).size)


_NOT_TENSOR_FUNCTIONS = {"backend", "clear_session", "floatx", "set_floatx", "image_data_format",
                         "set_image_data_format", "epsilon", "set_epsilon", "int_shape", "shape", "ndim", "dtype",
                         "random_normal", "random_uniform", "variable", "constant", "get_value", "set_value", "eval",
                         "zeros", "ones", "learning_phase", "is_keras_tensor", "count_params"}
for _name in __all__:  # on KerasTensors (a functional model being built) each records an op layer
    if _name not in _NOT_TENSOR_FUNCTIONS:
        globals()[_name] = symbolic_aware(globals()[_name])


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(name)
    from graphgrad.compat.keras import ops

    try:
        return getattr(ops, name)
    except AttributeError:
        raise AttributeError(f"keras.backend.{name} is not mapped onto graphgrad (see docs/keras.md)") from None
