"""``keras.losses`` with Keras' meanings: ``loss(y_true, y_pred)`` (targets first), and the
crossentropies take probabilities unless ``from_logits=True`` (graphgrad's ``gg.cross_entropy``
takes logits). Each is composed of graphgrad's ops and losses: probabilities are clipped to
``[eps, 1 - eps]`` (eps = 1e-7, Keras' epsilon) and go through ``gg.log`` into ``gg.nll_loss``.

The functions (``sparse_categorical_crossentropy(y_true, y_pred)``) return one loss per sample, as
Keras'; the classes (``SparseCategoricalCrossentropy()``) average them."""
from __future__ import annotations

from typing import Any, Callable

import graphgrad as gg

from graphgrad.compat.keras.engine import as_tensor

__all__ = ["sparse_categorical_crossentropy", "categorical_crossentropy", "binary_crossentropy",
           "mean_squared_error", "mean_absolute_error", "huber", "mse", "mae", "Loss", "SparseCategoricalCrossentropy",
           "CategoricalCrossentropy", "BinaryCrossentropy", "MeanSquaredError", "MeanAbsoluteError", "Huber", "get",
           "as_graphgrad_loss", "with_class_weight", "kl_divergence", "kld", "cosine_similarity",
           "binary_focal_crossentropy", "KLDivergence", "CosineSimilarity", "BinaryFocalCrossentropy", "reduce_weighted",
           "class_weights_of"]

EPSILON = 1e-7


def _probabilities(y_pred):
    """Keras' treatment of probabilities: rescaled to sum to 1 over the last axis, then clipped."""
    y_pred = y_pred / gg.sum(y_pred, axis=-1, keepdims=True)
    return gg.clip(y_pred, EPSILON, 1.0 - EPSILON)


def _labels(y_true, y_pred):
    """Integer class labels of the shape of ``y_pred`` without its class axis ((N, 1) -> (N,))."""
    y_true = as_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true.reshape(tuple(y_true.shape[:-1]))
    if y_true.dtype.kind not in "iu":
        y_true = y_true.astype("int64")
    return y_true


def _log_probabilities(y_pred, from_logits: bool, axis: int = -1):
    return gg.log_softmax(y_pred, axis=axis) if from_logits else gg.log(_probabilities(y_pred))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits: bool = False, axis: int = -1,
                                    ignore_class: Any = None):
    """``-log p[y]`` per sample, for integer labels ``y_true`` and probabilities (or logits) ``y_pred``."""
    y_pred = as_tensor(y_pred)
    labels = _labels(y_true, y_pred)
    log_p = _log_probabilities(y_pred, from_logits, axis)
    if log_p.ndim > 2:  # (N, ..., C) -> nll_loss's (N, C, ...)
        log_p = gg.permute(log_p, (0, log_p.ndim - 1) + tuple(range(1, log_p.ndim - 1)))
    return gg.nll_loss(log_p, labels, ignore_index=-100 if ignore_class is None else int(ignore_class),
                       reduction="none")


def categorical_crossentropy(y_true, y_pred, from_logits: bool = False, label_smoothing: float = 0.0,
                             axis: int = -1):
    """``-sum(y_true * log p)`` per sample, for one-hot (or soft) targets."""
    y_pred = as_tensor(y_pred)
    y_true = as_tensor(y_true).astype(y_pred.dtype)
    if label_smoothing:
        classes = int(y_pred.shape[axis])
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return -gg.sum(y_true * _log_probabilities(y_pred, from_logits, axis), axis=axis)


def _same_shape(y_true, y_pred):
    y_true = as_tensor(y_true)
    if tuple(y_true.shape) != tuple(y_pred.shape) and y_true.size == y_pred.size:
        y_true = y_true.reshape(tuple(y_pred.shape))
    return y_true.astype(y_pred.dtype) if y_true.dtype != y_pred.dtype else y_true


def binary_crossentropy(y_true, y_pred, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1):
    """The binary crossentropy averaged over the last axis, per sample (probabilities unless
    ``from_logits``)."""
    y_pred = as_tensor(y_pred)
    y_true = _same_shape(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        per_element = gg.binary_cross_entropy_with_logits(y_pred, y_true, reduction="none")
    else:
        per_element = gg.binary_cross_entropy(gg.clip(y_pred, EPSILON, 1.0 - EPSILON), y_true, reduction="none")
    return gg.mean(per_element, axis=-1) if per_element.ndim > 1 else per_element


def mean_squared_error(y_true, y_pred):
    y_pred = as_tensor(y_pred)
    out = gg.mse_loss(y_pred, _same_shape(y_true, y_pred), reduction="none")
    return gg.mean(out, axis=-1) if out.ndim > 1 else out


def mean_absolute_error(y_true, y_pred):
    y_pred = as_tensor(y_pred)
    out = gg.l1_loss(y_pred, _same_shape(y_true, y_pred), reduction="none")
    return gg.mean(out, axis=-1) if out.ndim > 1 else out


def huber(y_true, y_pred, delta: float = 1.0):
    y_pred = as_tensor(y_pred)
    out = gg.huber_loss(y_pred, _same_shape(y_true, y_pred), reduction="none", delta=delta)
    return gg.mean(out, axis=-1) if out.ndim > 1 else out


def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred))`` over the last axis, both clipped to ``[eps, 1]``."""
    y_pred = as_tensor(y_pred)
    y_true = gg.clip(_same_shape(y_true, y_pred), EPSILON, 1.0)
    y_pred = gg.clip(y_pred, EPSILON, 1.0)
    return gg.sum(y_true * gg.log(y_true / y_pred), axis=-1)


def _l2_normalize(x, axis: int):
    return x / gg.sqrt(gg.maximum(gg.sum(x * x, axis=axis, keepdims=True), gg.tensor(1e-12, dtype=x.dtype)))


def cosine_similarity(y_true, y_pred, axis: int = -1):
    """Minus the cosine similarity along ``axis`` (Keras' loss: -1 when the vectors point the same way)."""
    y_pred = as_tensor(y_pred)
    y_true = _same_shape(y_true, y_pred)
    return -gg.sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1):
    """The binary crossentropy weighted by ``(1 - p_t) ** gamma`` (and by ``alpha`` / ``1 - alpha`` with
    class balancing), averaged over the last axis per sample."""
    y_pred = as_tensor(y_pred)
    y_true = _same_shape(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = gg.sigmoid(y_pred)
    bce = gg.binary_cross_entropy(gg.clip(y_pred, EPSILON, 1.0 - EPSILON), y_true, reduction="none")
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = gg.power(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return gg.mean(focal, axis=axis) if focal.ndim > 1 else focal


mse, mae = mean_squared_error, mean_absolute_error
kld = KLD = kullback_leibler_divergence = kl_divergence


def _same_rank_weights(values, weights) -> tuple:
    """Keras' ``squeeze_or_expand_to_same_rank`` of losses and sample weights: a trailing axis of 1 on one
    side is added to a rank-1 other side (or squeezed away)."""
    if values.ndim == weights.ndim + 1 and values.shape[-1] == 1:
        return (values, gg.expand_dims(weights, -1)) if weights.ndim == 1 else (gg.squeeze(values, -1), weights)
    if weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
        return (gg.expand_dims(values, -1), weights) if values.ndim == 1 else (values, gg.squeeze(weights, -1))
    return values, weights


def reduce_weighted(values, sample_weight: Any = None, reduction: Any = "sum_over_batch_size"):
    """Keras' reduction of per-sample losses: each times its weight (broadcast), then ``"sum"``, or
    ``"sum_over_batch_size"`` / ``"mean"`` (the weighted sum over the number of loss values, not over the
    weights' sum), ``"mean_with_sample_weight"`` (over the weights' sum), or ``"none"`` (kept)."""
    values = as_tensor(values)
    if sample_weight is not None:
        weights = as_tensor(sample_weight)
        weights = weights.astype(values.dtype) if weights.dtype != values.dtype else weights
        values, weights = _same_rank_weights(values, weights)
        values = values * weights
    if reduction in (None, "none") or values.ndim == 0 or tuple(values.shape) == (0,):
        return values
    total = gg.sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = float(gg.sum(gg.broadcast_to(weights, tuple(values.shape))).item())
    else:
        divisor = float(values.size)
    return total / divisor if divisor else total * 0.0


class Loss:
    """A Keras loss object: ``loss(y_true, y_pred)`` is the mean over samples of ``fn``."""

    fn: Callable = staticmethod(mean_squared_error)
    keras_name = "loss"

    def __init__(self, reduction: str = "sum_over_batch_size", name: Any = None, **kwargs) -> None:
        if reduction not in ("sum_over_batch_size", "auto", "mean", "mean_with_sample_weight", "sum", "none", None):
            raise ValueError(f"{type(self).__name__}: unknown reduction {reduction!r}")
        self.reduction, self.name, self.kwargs = reduction, name or self.keras_name, kwargs

    def __call__(self, y_true, y_pred, sample_weight: Any = None):
        per_sample = self.call(y_true, y_pred)
        return reduce_weighted(per_sample, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        """The loss of each sample (a subclass of ``keras.losses.Loss`` overrides this, as in Keras)."""
        return type(self).fn(y_true, y_pred, **self.kwargs)

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction, **self.kwargs}


class SparseCategoricalCrossentropy(Loss):
    fn = staticmethod(sparse_categorical_crossentropy)
    keras_name = "sparse_categorical_crossentropy"

    def __init__(self, from_logits: bool = False, ignore_class: Any = None, reduction: str = "sum_over_batch_size",
                 name: Any = None) -> None:
        super().__init__(reduction, name, from_logits=bool(from_logits), ignore_class=ignore_class)


class CategoricalCrossentropy(Loss):
    fn = staticmethod(categorical_crossentropy)
    keras_name = "categorical_crossentropy"

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: str = "sum_over_batch_size", name: Any = None) -> None:
        super().__init__(reduction, name, from_logits=bool(from_logits), label_smoothing=float(label_smoothing),
                         axis=axis)


class BinaryCrossentropy(Loss):
    fn = staticmethod(binary_crossentropy)
    keras_name = "binary_crossentropy"

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: str = "sum_over_batch_size", name: Any = None) -> None:
        super().__init__(reduction, name, from_logits=bool(from_logits), label_smoothing=float(label_smoothing),
                         axis=axis)


class MeanSquaredError(Loss):
    fn = staticmethod(mean_squared_error)
    keras_name = "mean_squared_error"


class MeanAbsoluteError(Loss):
    fn = staticmethod(mean_absolute_error)
    keras_name = "mean_absolute_error"


class Huber(Loss):
    fn = staticmethod(huber)
    keras_name = "huber"

    def __init__(self, delta: float = 1.0, reduction: str = "sum_over_batch_size", name: Any = None) -> None:
        super().__init__(reduction, name, delta=float(delta))


class KLDivergence(Loss):
    fn = staticmethod(kl_divergence)
    keras_name = "kl_divergence"


class CosineSimilarity(Loss):
    fn = staticmethod(cosine_similarity)
    keras_name = "cosine_similarity"

    def __init__(self, axis: int = -1, reduction: str = "sum_over_batch_size", name: Any = None) -> None:
        super().__init__(reduction, name, axis=int(axis))


class BinaryFocalCrossentropy(Loss):
    fn = staticmethod(binary_focal_crossentropy)
    keras_name = "binary_focal_crossentropy"

    def __init__(self, apply_class_balancing: bool = False, alpha: float = 0.25, gamma: float = 2.0,
                 from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: str = "sum_over_batch_size", name: Any = None) -> None:
        super().__init__(reduction, name, apply_class_balancing=bool(apply_class_balancing), alpha=float(alpha),
                         gamma=float(gamma), from_logits=bool(from_logits), label_smoothing=float(label_smoothing),
                         axis=axis)


_BY_NAME = {"kl_divergence": KLDivergence, "kld": KLDivergence, "kullback_leibler_divergence": KLDivergence,
            "cosine_similarity": CosineSimilarity, "binary_focal_crossentropy": BinaryFocalCrossentropy,
            "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
            "categorical_crossentropy": CategoricalCrossentropy, "binary_crossentropy": BinaryCrossentropy,
            "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
            "mae": MeanAbsoluteError, "huber": Huber, "huber_loss": Huber}


def get(identifier: Any) -> Callable:
    """A loss ``fn(y_true, y_pred) -> scalar`` from a Keras name, a ``Loss`` object or a function."""
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in _BY_NAME:
            raise ValueError(f"keras.losses: unknown loss {identifier!r}; known: {sorted(_BY_NAME)}")
        return _BY_NAME[key]()
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise TypeError(f"keras.losses: expected a name, a Loss or a function, got {type(identifier).__name__}")


def same_rank(y_true, y_pred) -> tuple:
    """Keras' ``squeeze_or_expand_to_same_rank`` for a loss or metric function: labels ``(batch,)`` against
    outputs ``(batch, 1)`` get the trailing axis (and the other way round), so nothing broadcasts to
    ``(batch, batch)``."""
    if not isinstance(y_true, gg.Tensor) or not isinstance(y_pred, gg.Tensor) or y_true.ndim == y_pred.ndim:
        return y_true, y_pred
    if y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        return (gg.expand_dims(y_true, -1), y_pred) if y_true.ndim == 1 else (y_true, gg.squeeze(y_pred, -1))
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        return (y_true, gg.expand_dims(y_pred, -1)) if y_pred.ndim == 1 else (gg.squeeze(y_true, -1), y_pred)
    return y_true, y_pred


def as_graphgrad_loss(identifier: Any) -> Any:
    """The loss in ``gg.Model``'s convention, ``fn(y_pred, y_true) -> scalar``. A plain function receives
    the targets as floats of the outputs' rank, as Keras' ``LossFunctionWrapper`` gives them."""
    if identifier is None:
        return None
    keras_loss = get(identifier)
    plain = not isinstance(keras_loss, Loss)

    def loss(y_pred, y_true, sample_weight: Any = None):
        if plain and isinstance(y_true, gg.Tensor) and isinstance(y_pred, gg.Tensor):
            if y_true.dtype != y_pred.dtype and y_pred.dtype.kind == "f":
                y_true = y_true.astype(y_pred.dtype)
            y_true, y_pred = same_rank(y_true, y_pred)
        if sample_weight is not None:  # Keras' LossFunctionWrapper: weighted, over the number of values
            if plain:
                return reduce_weighted(keras_loss(y_true, y_pred), sample_weight)
            return keras_loss(y_true, y_pred, sample_weight=sample_weight)
        value = keras_loss(y_true, y_pred)
        return gg.mean(value) if value.ndim else value

    loss.__name__ = getattr(keras_loss, "name", getattr(keras_loss, "__name__", "loss"))
    loss.keras_loss = keras_loss
    return loss


def _per_sample(keras_loss: Callable, y_true, y_pred):
    """One loss per sample: a Loss object's function, or a plain function's own result."""
    if isinstance(keras_loss, Loss):
        return type(keras_loss).fn(y_true, y_pred, **keras_loss.kwargs)
    return keras_loss(y_true, y_pred)


def with_class_weight(loss: Any, class_weight: dict) -> Any:
    """``fit(class_weight={0: 1.0, 1: 5.0})``: each sample's loss times its class's weight, averaged
    over the batch (Keras' ``sum_over_batch_size``). Classes are integer labels, the argmax of one-hot
    targets, or 0/1 for binary targets."""
    keras_loss = loss.keras_loss
    size = max(int(k) for k in class_weight) + 1
    table = [float(class_weight.get(k, class_weight.get(str(k), 1.0))) for k in range(size)]

    def weighted(y_pred, y_true):
        per_sample = _per_sample(keras_loss, y_true, y_pred)
        labels = as_tensor(y_true)
        if labels.ndim == per_sample.ndim + 1 and labels.shape[-1] > 1:
            labels = gg.argmax(labels, axis=-1)
        labels = labels.reshape(tuple(per_sample.shape))
        if labels.dtype.kind == "f":
            labels = gg.round(labels)
        weights = gg.tensor(table, dtype=per_sample.dtype)[labels.astype("int64")]
        return gg.mean(per_sample * weights)

    weighted.__name__ = loss.__name__
    weighted.keras_loss = keras_loss
    return weighted


def class_weights_of(class_weight: dict, y_true) -> Any:
    """Each sample's weight from ``fit(class_weight={class: weight})`` (Keras: the class is the label, the
    argmax of one-hot targets, or the rounded value of binary targets; a class not in the dict weighs 1)."""
    size = max(int(k) for k in class_weight) + 1
    table = gg.tensor([float(class_weight.get(k, class_weight.get(str(k), 1.0))) for k in range(size)])
    labels = as_tensor(y_true)
    if labels.ndim > 1 and labels.shape[-1] > 1:
        labels = gg.argmax(labels, axis=-1)
    elif labels.ndim > 1:
        labels = labels.reshape((int(labels.shape[0]),))
    if labels.dtype.kind == "f":
        labels = gg.round(labels)
    return table[labels.astype("int64")]


# on KerasTensors (Keras 2's losses written on a functional model's tensors, then model.add_loss) each
# loss function records an op layer
from graphgrad.compat.keras.engine import symbolic_aware  # noqa: E402

for _name in ("sparse_categorical_crossentropy", "categorical_crossentropy", "binary_crossentropy",
              "mean_squared_error", "mean_absolute_error", "huber", "mse", "mae", "kl_divergence", "kld", "KLD",
              "kullback_leibler_divergence", "cosine_similarity", "binary_focal_crossentropy"):
    if _name in globals() and callable(globals()[_name]):
        globals()[_name] = symbolic_aware(globals()[_name])
