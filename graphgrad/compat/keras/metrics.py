"""``keras.metrics``: Keras' metric names and classes mapped onto ``gg.train.metrics`` (which take
``(y_pred, y_true)``; Keras' custom metric functions take ``(y_true, y_pred)`` and are wrapped)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg

__all__ = ["Accuracy", "SparseCategoricalAccuracy", "CategoricalAccuracy", "BinaryAccuracy", "TopKCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError", "Precision", "Recall",
           "as_graphgrad_metric"]

_metrics = gg.train.metrics


def _accuracy(default: str):
    def make(name: Optional[str] = None, threshold: float = 0.5, **kwargs) -> Any:
        return _metrics.Accuracy(name=name or default, threshold=threshold)

    make.__name__ = "".join(part.title() for part in default.split("_"))
    return make


Accuracy = _accuracy("accuracy")
SparseCategoricalAccuracy = _accuracy("sparse_categorical_accuracy")
CategoricalAccuracy = _accuracy("categorical_accuracy")
BinaryAccuracy = _accuracy("binary_accuracy")


def TopKCategoricalAccuracy(k: int = 5, name: str = "top_k_categorical_accuracy", **kwargs) -> Any:
    return _metrics.TopKAccuracy(k, name=name)


def SparseTopKCategoricalAccuracy(k: int = 5, name: str = "sparse_top_k_categorical_accuracy", **kwargs) -> Any:
    return _metrics.TopKAccuracy(k, name=name)


def MeanSquaredError(name: str = "mean_squared_error", **kwargs) -> Any:
    return _metrics.MSE(name=name)


def MeanAbsoluteError(name: str = "mean_absolute_error", **kwargs) -> Any:
    return _metrics.MAE(name=name)


def Precision(name: str = "precision", thresholds: Any = None, **kwargs) -> Any:
    return _metrics.Precision(average="binary", threshold=0.5 if thresholds is None else float(thresholds), name=name)


def Recall(name: str = "recall", thresholds: Any = None, **kwargs) -> Any:
    return _metrics.Recall(average="binary", threshold=0.5 if thresholds is None else float(thresholds), name=name)


_BY_NAME = {"accuracy": Accuracy, "acc": lambda: Accuracy(name="acc"),
            "sparse_categorical_accuracy": SparseCategoricalAccuracy, "categorical_accuracy": CategoricalAccuracy,
            "binary_accuracy": BinaryAccuracy, "top_k_categorical_accuracy": TopKCategoricalAccuracy,
            "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
            "mse": lambda: MeanSquaredError(name="mse"), "mean_squared_error": MeanSquaredError,
            "mae": lambda: MeanAbsoluteError(name="mae"), "mean_absolute_error": MeanAbsoluteError}


def as_graphgrad_metric(identifier: Any) -> Any:
    """A ``gg.train.metrics.Metric`` for a Keras metric name, metric object or function ``fn(y_true, y_pred)``."""
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in _BY_NAME:
            raise ValueError(f"keras.metrics: unknown metric {identifier!r}; known: {sorted(_BY_NAME)}")
        return _BY_NAME[key]()
    if isinstance(identifier, _metrics.Metric):
        return identifier
    if callable(identifier):
        def fn(y_pred, y_true):
            value = identifier(y_true, y_pred)
            return float(gg.mean(value).item()) if isinstance(value, gg.Tensor) else float(value)

        return _metrics.MeanMetricWrapper(fn, name=getattr(identifier, "__name__", "metric"))
    raise TypeError(f"keras.metrics: expected a name, a metric or a function, got {type(identifier).__name__}")
