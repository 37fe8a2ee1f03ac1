"""``keras.metrics``: Keras' metric names and classes mapped onto ``gg.train.metrics`` (which take
``(y_pred, y_true)``; Keras' custom metric functions take ``(y_true, y_pred)`` and are wrapped)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

__all__ = ["Accuracy", "SparseCategoricalAccuracy", "CategoricalAccuracy", "BinaryAccuracy", "TopKCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError", "Precision", "Recall",
           "as_graphgrad_metric", "AUC", "F1Score", "FBetaScore", "MeanIoU", "Metric", "Mean", "Sum",
           "MeanMetricWrapper", "TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives"]

_metrics = gg.train.metrics


def _keras_labels(p, t) -> tuple:
    """Predicted (and one-hot true) labels of a sequence's scores in Keras' layout, classes on the
    last axis: (batch, time, classes) against (batch, time) labels or one-hot targets. graphgrad's own
    metrics read PyTorch's layout, classes on axis 1, which is the same for (batch, classes)."""
    if p.dtype.kind != "f" or p.ndim < 3 or p.shape[-1] < 2:
        return p, t
    if p.ndim == t.ndim + 1:
        return p.argmax(axis=-1), t
    if p.shape == t.shape:
        return p.argmax(axis=-1), t.argmax(axis=-1)
    if p.ndim == t.ndim and t.shape[-1] == 1:
        return p.argmax(axis=-1), t[..., 0]
    return p, t


class _KerasAccuracy(_metrics.Accuracy):
    """graphgrad's running accuracy (labels from class scores, one-hot or binary targets) with Keras'
    ``update_state(y_true, y_pred, sample_weight=None)`` / ``reset_state()``: with weights, the weighted
    share of correct predictions."""

    def reset(self) -> None:
        self.correct, self.total = 0.0, 0.0

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        y_pred, y_true = _keras_labels(_host(y_pred), _host(y_true))
        if sample_weight is None:
            super().update(y_pred, y_true)
            return
        # weighted: each label counts with its weight (a sample's weight for each of its labels, or one
        # weight per label, e.g. a sequence's mask)
        p, t = _metrics.labels(y_pred, y_true, self.threshold)
        weights = _host(sample_weight).astype(np.float64).reshape(-1)
        if weights.size != p.size:
            if not weights.size or p.size % weights.size:
                raise ValueError(f"accuracy: {weights.size} sample weights for {p.size} labels")
            weights = np.repeat(weights, p.size // weights.size)
        self.correct += float(np.sum(weights * (p == t)))
        self.total += float(np.sum(weights))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        self.update(y_pred, y_true, sample_weight)

    def reset_state(self) -> None:
        self.reset()


def _accuracy(default: str):
    def make(name: Optional[str] = None, threshold: float = 0.5, **kwargs) -> Any:
        return _KerasAccuracy(name=name or default, threshold=threshold)

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
    """Keras' ``MeanSquaredError`` metric: the (weighted) mean over samples of ``mean((y_true - y_pred)**2)``."""
    from graphgrad.compat.keras.losses import mean_squared_error

    return MeanMetricWrapper(mean_squared_error, name=name)


def MeanAbsoluteError(name: str = "mean_absolute_error", **kwargs) -> Any:
    """Keras' ``MeanAbsoluteError`` metric: the (weighted) mean over samples of ``mean(|y_true - y_pred|)``."""
    from graphgrad.compat.keras.losses import mean_absolute_error

    return MeanMetricWrapper(mean_absolute_error, name=name)


def Precision(name: str = "precision", thresholds: Any = None, **kwargs) -> Any:
    return _metrics.Precision(average="binary", threshold=0.5 if thresholds is None else float(thresholds), name=name)


def Recall(name: str = "recall", thresholds: Any = None, **kwargs) -> Any:
    return _metrics.Recall(average="binary", threshold=0.5 if thresholds is None else float(thresholds), name=name)


_EPSILON = 1e-7  # Keras' epsilon


def _host(value: Any):
    return np.asarray(value.numpy() if isinstance(value, gg.Tensor) else value, dtype=np.float64)


def _ratio(a, b):
    """Keras' ``divide_no_nan``: 0 where ``b`` is 0."""
    b = np.asarray(b, dtype=np.float64)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b != 0)


class Scalar(float):
    """A metric's result: a Python float that also answers ``numpy()`` (Keras returns a scalar tensor)."""

    def numpy(self):
        return np.float32(self)


def _samplewise(values, sample_weight) -> tuple:
    """Keras' ``reduce_to_samplewise_values``: values (and weights) as one number per sample, the values
    multiplied by their weights (NumPy, float64)."""
    values = _host(values)
    if sample_weight is not None:
        weights = _host(sample_weight)
        if values.ndim == weights.ndim + 1 and values.shape[-1] == 1:
            values = values[..., 0] if weights.ndim != 1 else values
            weights = weights[:, None] if weights.ndim == 1 and values.ndim == 2 else weights
        elif weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
            weights = weights[..., 0] if values.ndim != 1 else weights
            values = values[:, None] if values.ndim == 1 and weights.ndim == 2 else values
        if values.ndim > weights.ndim:
            values = values.mean(axis=tuple(range(weights.ndim, values.ndim)))
        weights = np.broadcast_to(weights, values.shape)
        values = values * weights
        if weights.ndim > 1:
            weights = weights.mean(axis=tuple(range(1, weights.ndim)))
    else:
        weights = None
    if values.ndim > 1:
        values = values.mean(axis=tuple(range(1, values.ndim)))
    return values, weights


class Metric(_metrics.Metric):
    """``keras.metrics.Metric``: subclass it with ``update_state(...)``, ``result()`` and (optionally)
    ``reset_state()``, keeping the state in ``add_weight``/``add_variable`` variables (``assign_add``...),
    as in Keras. It is also a graphgrad metric, so ``compile(metrics=[...])`` takes it."""

    def __init__(self, name: Optional[str] = None, dtype: Any = None, **kwargs) -> None:
        self._variables: list = []
        self.dtype = dtype or "float32"
        super().__init__(name or _snake(type(self).__name__))

    def add_variable(self, shape: Any = (), initializer: Any = "zeros", dtype: Any = None, aggregation: Any = "sum",
                     name: Optional[str] = None):
        from graphgrad.compat.keras.engine import Variable
        from graphgrad.compat.keras.layers_core import _initialize

        shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in (shape or ()))
        variable = Variable(gg.zeros(shape, dtype=gg.dtypes.as_dtype(dtype or self.dtype)))
        _initialize(variable, initializer if initializer is not None else "zeros")
        variable.requires_grad_(False)
        object.__setattr__(variable, "keras_name", name or "variable")
        object.__setattr__(variable, "_initial", variable.numpy().copy())
        self._variables.append(variable)
        return variable

    def add_weight(self, name: Optional[str] = None, shape: Any = (), initializer: Any = "zeros", dtype: Any = None,
                   aggregation: Any = "sum", **kwargs):
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    @property
    def variables(self) -> list:
        return list(self.__dict__.get("_variables", []))

    def update_state(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"{type(self).__name__}: define update_state(...)")

    def reset_state(self) -> None:
        """Every variable back to its initial value (Keras' default)."""
        for variable in self.__dict__.get("_variables", []):
            variable.assign(variable._initial)

    # graphgrad's metric protocol (fit's and evaluate's loops): update(y_pred, y_true), result(), reset()
    def update(self, y_pred: Any, y_true: Any) -> None:
        self.update_state(y_true, y_pred)

    def reset(self) -> None:
        if "_variables" in self.__dict__:
            self.reset_state()

    def __call__(self, *args, **kwargs):
        """Keras: update with the arguments, return the result."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Sum(Metric):
    """``keras.metrics.Sum``: the (weighted) sum of the values given to ``update_state``."""

    def __init__(self, name: str = "sum", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total = 0.0

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values, _ = _samplewise(values, sample_weight)
        self.total += float(np.sum(values))

    def reset_state(self) -> None:
        self.total = 0.0

    def result(self) -> Scalar:
        return Scalar(self.total)


class Mean(Metric):
    """``keras.metrics.Mean``: the (weighted) mean of the values given to ``update_state(values,
    sample_weight=None)`` (a tracker in custom ``train_step``\ s); ``result()`` is 0 before any update."""

    def __init__(self, name: str = "mean", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total, self.count = 0.0, 0.0

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values, weights = _samplewise(values, sample_weight)
        self.total += float(np.sum(values))
        if weights is not None:
            self.count += float(np.sum(weights))
        else:
            self.count += float(values.shape[0]) if values.ndim >= 1 else 1.0

    def reset_state(self) -> None:
        self.total, self.count = 0.0, 0.0

    def result(self) -> Scalar:
        return Scalar(self.total / self.count if self.count else 0.0)


class MeanMetricWrapper(Mean):
    """``keras.metrics.MeanMetricWrapper(fn, name)``: the mean of ``fn(y_true, y_pred)`` over samples."""

    def __init__(self, fn: Any, name: Optional[str] = None, dtype: Any = None, **kwargs) -> None:
        self._fn, self._fn_kwargs = fn, kwargs
        super().__init__(name=name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        from graphgrad.compat.keras.losses import same_rank

        y_true, y_pred = as_tensor_pair(y_true, y_pred)
        y_true, y_pred = same_rank(y_true, y_pred)
        with gg.no_grad():
            super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


def as_tensor_pair(y_true: Any, y_pred: Any) -> tuple:
    from graphgrad.compat.keras.engine import as_tensor

    y_pred = as_tensor(y_pred)
    y_true = as_tensor(y_true)
    if y_true.dtype != y_pred.dtype and y_pred.dtype.kind == "f":
        y_true = y_true.astype(y_pred.dtype)
    return y_true, y_pred


class _KerasMetric(_metrics.Metric):
    """A graphgrad metric that also answers Keras' ``update_state(y_true, y_pred, sample_weight=None)`` /
    ``reset_state()``; ``sample_weight`` weighs each sample's counts (``update`` with weights)."""

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        self.update(y_pred, y_true, sample_weight)

    def reset_state(self) -> None:
        self.reset()


class AUC(_KerasMetric):
    """``AUC(num_thresholds=200, curve="ROC", summation_method="interpolation", from_logits=False)``: the
    area under the ROC (or ``"PR"``) curve from true/false positive counts at ``num_thresholds``
    thresholds evenly spread over [0, 1] (plus one just below 0 and one just above 1), summed as Keras
    sums them (trapezoids for ROC; Davis and Goadrich's interpolation for PR). Labels and scores are
    flattened (``multi_label=False``)."""

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC", summation_method: str = "interpolation",
                 name: Optional[str] = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: Any = None, label_weights: Any = None, from_logits: bool = False, **kwargs) -> None:
        if multi_label or label_weights is not None:
            raise NotImplementedError("AUC: multi_label / label_weights are not supported by graphgrad.compat.keras")
        self.curve, self.summation_method = str(curve).upper(), str(summation_method).lower()
        if self.curve not in ("ROC", "PR") or self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR' and summation_method 'interpolation', 'minoring' or "
                             f"'majoring'; got {curve!r}, {summation_method!r}")
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(int(num_thresholds) - 2)]
        self.thresholds = np.array([0.0 - _EPSILON] + inner + [1.0 + _EPSILON])
        self.from_logits = bool(from_logits)
        super().__init__(name or "auc")

    def reset(self) -> None:
        n = len(self.thresholds)
        self.tp, self.fp, self.tn, self.fn = (np.zeros(n) for _ in range(4))

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        p, t = _host(y_pred).reshape(-1), _host(y_true).reshape(-1) > 0.5
        w = np.ones_like(p) if sample_weight is None else np.broadcast_to(
            _host(sample_weight).reshape(_host(sample_weight).shape + (1,) * (_host(y_pred).ndim - _host(sample_weight).ndim)),
            _host(y_pred).shape).reshape(-1)
        if self.from_logits:
            p = 1.0 / (1.0 + np.exp(-p))
        above = p[None, :] > self.thresholds[:, None]  # (thresholds, samples)
        self.tp += ((above & t) * w).sum(1)
        self.fp += ((above & ~t) * w).sum(1)
        self.fn += ((~above & t) * w).sum(1)
        self.tn += ((~above & ~t) * w).sum(1)

    def _interpolate_pr(self) -> float:
        tp, fp, fn = self.tp, self.fp, self.fn
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _ratio(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, _ratio(p[:-1], np.maximum(p[1:], 0)), 1.0)
        ratio = np.where(ratio > 0, ratio, 1.0)
        return float(np.sum(_ratio(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))))

    def result(self) -> float:
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr()
        recall = _ratio(self.tp, self.tp + self.fn)
        if self.curve == "ROC":
            x, y = _ratio(self.fp, self.fp + self.tn), recall
        else:
            x, y = recall, _ratio(self.tp, self.tp + self.fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return float(np.sum((x[:-1] - x[1:]) * heights))


class FBetaScore(_KerasMetric):
    """``FBetaScore(average=None, beta=1.0, threshold=None)`` for one-hot (or multi-label) targets
    ``(N, C)`` and scores ``(N, C)``: a prediction is the row's maximum (or every score above
    ``threshold``). ``average`` None gives one score per class (an array); ``"micro"``, ``"macro"`` or
    ``"weighted"`` one number, as Keras."""

    def __init__(self, average: Optional[str] = None, beta: float = 1.0, threshold: Optional[float] = None,
                 name: Optional[str] = None, **kwargs) -> None:
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(f"FBetaScore: average must be None, 'micro', 'macro' or 'weighted', got {average!r}")
        self.average, self.beta, self.threshold = average, float(beta), threshold
        super().__init__(name or "fbeta_score")

    def reset(self) -> None:
        self.tp = self.fp = self.fn = self.support = 0.0

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        p, t = _host(y_pred), _host(y_true)
        if p.ndim == 1:
            p, t = p[:, None], t.reshape(-1, 1)
        if self.threshold is None:
            p = (p == p.max(axis=-1, keepdims=True)).astype(np.float64)
        else:
            p = (p > self.threshold).astype(np.float64)
        w = 1.0 if sample_weight is None else _host(sample_weight).reshape(-1, 1)  # one weight per sample (row)
        axis = None if self.average == "micro" else 0
        self.tp = self.tp + (p * t * w).sum(axis)
        self.fp = self.fp + (p * (1 - t) * w).sum(axis)
        self.fn = self.fn + ((1 - p) * t * w).sum(axis)
        self.support = self.support + (t * w).sum(0)

    def result(self) -> Any:
        precision = self.tp / (self.tp + self.fp + _EPSILON)
        recall = self.tp / (self.tp + self.fn + _EPSILON)
        b2 = self.beta ** 2
        score = precision * recall / (b2 * precision + recall + _EPSILON) * (1 + b2)
        if self.average == "weighted":
            weights = self.support / (np.sum(self.support) + _EPSILON)
            return float(np.sum(score * weights))
        if self.average is not None:
            return float(np.mean(score))
        return np.asarray(score, dtype=np.float32)


def F1Score(average: Optional[str] = None, threshold: Optional[float] = None, name: str = "f1_score",
            **kwargs) -> FBetaScore:
    """``F1Score(average=None, threshold=None)``: :class:`FBetaScore` with ``beta=1``."""
    return FBetaScore(average=average, beta=1.0, threshold=threshold, name=name)


class MeanIoU(_KerasMetric):
    """``MeanIoU(num_classes, ignore_class=None, sparse_y_true=True, sparse_y_pred=True, axis=-1)``: the
    intersection over union per class from the confusion matrix, averaged over the classes that occur
    (in targets or predictions). Sparse predictions are class ids; ``sparse_y_pred=False`` takes the
    argmax over ``axis``."""

    def __init__(self, num_classes: int, name: Optional[str] = None, ignore_class: Optional[int] = None,
                 sparse_y_true: bool = True, sparse_y_pred: bool = True, axis: int = -1, **kwargs) -> None:
        self.num_classes, self.ignore_class = int(num_classes), ignore_class
        self.sparse_y_true, self.sparse_y_pred, self.axis = bool(sparse_y_true), bool(sparse_y_pred), int(axis)
        super().__init__(name or "mean_io_u")

    def reset(self) -> None:
        self.matrix = np.zeros((self.num_classes, self.num_classes))

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        p, t = _host(y_pred), _host(y_true)
        if not self.sparse_y_pred:
            p = p.argmax(axis=self.axis)
        if not self.sparse_y_true:
            t = t.argmax(axis=self.axis)
        w = np.ones(p.size) if sample_weight is None else np.broadcast_to(_host(sample_weight).reshape(
            _host(sample_weight).shape + (1,) * (t.ndim - _host(sample_weight).ndim)), t.shape).reshape(-1)
        p, t = p.reshape(-1).astype(np.int64), t.reshape(-1).astype(np.int64)
        if self.ignore_class is not None:
            keep = t != int(self.ignore_class)
            p, t, w = p[keep], t[keep], w[keep]
        np.add.at(self.matrix, (t, p), w)

    def result(self) -> float:
        tp = np.diag(self.matrix)
        denominator = self.matrix.sum(0) + self.matrix.sum(1) - tp
        valid = np.sum(denominator != 0)
        return float(np.sum(_ratio(tp, denominator)) / valid) if valid else 0.0


class _Confusion(_KerasMetric):
    """A count of the confusion matrix of binary predictions (``y_pred > threshold``) against ``y_true``
    (``TruePositives`` and the three others), weighted by ``sample_weight``; ``thresholds`` a number (one
    count) or a list (one count each, as Keras)."""

    kind = ("tp", "true_positives")

    def __init__(self, thresholds: Any = None, name: Optional[str] = None, dtype: Any = None) -> None:
        self.many = isinstance(thresholds, (list, tuple))
        values = thresholds if self.many else [0.5 if thresholds is None else thresholds]
        self.thresholds = np.asarray([float(t) for t in values])
        super().__init__(name or self.kind[1])

    def reset(self) -> None:
        self.count = np.zeros(len(self.thresholds))

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        p, t = _host(y_pred), _host(y_true) > 0.5
        t = np.broadcast_to(t.reshape(t.shape + (1,) * (p.ndim - t.ndim)) if t.ndim < p.ndim else t, p.shape)
        w = np.ones(p.shape) if sample_weight is None else np.broadcast_to(
            _host(sample_weight).reshape(_host(sample_weight).shape + (1,) * (p.ndim - _host(sample_weight).ndim)),
            p.shape)
        p, t, w = p.reshape(-1), t.reshape(-1), w.reshape(-1)
        above = p[None, :] > self.thresholds[:, None]
        pick = {"tp": above & t, "fp": above & ~t, "tn": ~above & ~t, "fn": ~above & t}[self.kind[0]]
        self.count = self.count + (pick * w).sum(axis=1)

    def result(self) -> Any:
        return np.asarray(self.count, dtype=np.float32) if self.many else Scalar(self.count[0])


class TruePositives(_Confusion):
    kind = ("tp", "true_positives")


class FalsePositives(_Confusion):
    kind = ("fp", "false_positives")


class TrueNegatives(_Confusion):
    kind = ("tn", "true_negatives")


class FalseNegatives(_Confusion):
    kind = ("fn", "false_negatives")


_BY_NAME = {"auc": AUC, "accuracy": Accuracy, "acc": lambda: Accuracy(name="acc"),
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
    if isinstance(identifier, FBetaScore) and identifier.average is None:
        raise NotImplementedError(f"keras.metrics: {identifier.name} with average=None gives one score per class, which "
                                  "fit's and evaluate's logs (one number per metric) cannot hold; compile with "
                                  "average='macro', 'micro' or 'weighted', or call the metric's update_state/result")
    if isinstance(identifier, _metrics.Metric):
        return identifier
    if callable(identifier):
        def fn(y_pred, y_true):
            from graphgrad.compat.keras.losses import same_rank

            value = identifier(*same_rank(y_true, y_pred))
            return float(gg.mean(value).item()) if isinstance(value, gg.Tensor) else float(value)

        return _metrics.MeanMetricWrapper(fn, name=getattr(identifier, "__name__", "metric"))
    raise TypeError(f"keras.metrics: expected a name, a metric or a function, got {type(identifier).__name__}")
