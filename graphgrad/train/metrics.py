"""Metrics for ``Model.fit``/``evaluate``: plain functions and stateful :class:`Metric` classes.

Every function takes ``(y_pred, y_true)`` in that order, like the losses (``gg.cross_entropy(input,
target)``) and torchmetrics; values may be Tensors, arrays or lists and are compared on the host.

How predictions become labels (classification metrics):

* an integer or boolean ``y_pred`` already holds labels;
* scores with one more dimension than ``y_true`` (``(N, C)`` logits or probabilities, or
  ``(N, C, ...)`` PyTorch-style) give ``argmax`` over the class axis 1;
* scores of the same shape as a one-hot ``y_true`` (``(N, C)``, ``C > 1``) give ``argmax`` of both;
* otherwise (``(N,)`` or ``(N, 1)`` scores) it is binary: ``y_pred > threshold`` (0.5 by default;
  pass ``threshold=0.0`` for logits).

The stateful classes accumulate over batches (``update``), report over everything seen
(``result``) and start again with ``reset``; ``fit`` creates one per compiled metric.

Examples:
    >>> accuracy([[0.1, 0.9], [0.8, 0.2]], [1, 1])
    0.5
    >>> m = Accuracy(); m.update(logits, labels); m.result()
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from graphgrad.backend import np
from graphgrad.core.tensor import host_array

__all__ = ["accuracy", "labels", "top_k_accuracy", "precision", "recall", "f1", "mse", "mae", "Metric", "Mean",
           "Accuracy", "TopKAccuracy", "Precision", "Recall", "F1", "MSE", "MAE", "MeanMetricWrapper", "get"]

_AVERAGES = ("macro", "micro", "binary")


# ---- conversion ---------------------------------------------------------------------------------
_host = host_array  # a Tensor, array or list as a NumPy array


def labels(y_pred: Any, y_true: Any, threshold: float = 0.5) -> tuple:
    """``(predicted labels, true labels)`` as flat int64 arrays of equal length, as the accuracy metrics
    read them: class scores (classes on axis 1) give their argmax, one-hot targets theirs, and binary
    scores are cut at ``threshold`` (see module doc).

    Shapes: y_pred (N, C, ...) or (N, ...), y_true (N, ...) -> two arrays of N * ... labels."""
    p, t = _host(y_pred), _host(y_true)
    if p.dtype.kind not in "biu":
        if p.ndim == t.ndim + 1 and p.ndim >= 2 and p.shape[1] > 1:
            p = p.argmax(axis=1)
        elif p.shape == t.shape and p.ndim >= 2 and p.shape[1] > 1:
            p, t = p.argmax(axis=1), t.argmax(axis=1)
        else:
            if p.ndim == t.ndim + 1 and p.shape[-1] == 1:
                p = p[..., 0]
            p = (p > threshold).astype(np.int64)
    if t.dtype.kind == "f":
        t = t.round()
    p, t = p.reshape(-1).astype(np.int64), t.reshape(-1).astype(np.int64)
    if p.shape != t.shape:
        raise ValueError(f"metrics: predictions give {p.size} labels but targets have {t.size}; "
                         f"y_pred shape {tuple(_host(y_pred).shape)}, y_true shape {tuple(_host(y_true).shape)}")
    return p, t


def _pairs(y_pred: Any, y_true: Any) -> tuple:
    """``(prediction, target)`` as float64 arrays of one shape (``(N, 1)`` vs ``(N,)`` is allowed)."""
    p, t = _host(y_pred).astype(np.float64), _host(y_true).astype(np.float64)
    if p.shape != t.shape:
        if p.size != t.size:
            raise ValueError(f"metrics: y_pred shape {p.shape} does not match y_true shape {t.shape}")
        p = p.reshape(t.shape)
    return p, t


def _check_average(average: str) -> None:
    if average not in _AVERAGES:
        raise ValueError(f"average must be one of {_AVERAGES}, got {average!r}")


# ---- confusion counts -------------------------------------------------------------------------------
class _Counts:
    """Per-class true positives, false positives and false negatives, and the classes seen."""

    def __init__(self) -> None:
        self.tp = np.zeros(0, np.int64)
        self.fp = np.zeros(0, np.int64)
        self.fn = np.zeros(0, np.int64)
        self.seen = np.zeros(0, bool)

    def _grow(self, n: int) -> None:
        if n > self.tp.size:
            pad = n - self.tp.size
            self.tp, self.fp, self.fn = (np.concatenate([a, np.zeros(pad, np.int64)]) for a in (self.tp, self.fp, self.fn))
            self.seen = np.concatenate([self.seen, np.zeros(pad, bool)])

    def add(self, p, t) -> None:
        if p.size and (p.min() < 0 or t.min() < 0):
            raise ValueError("metrics: class labels must be non-negative integers")
        n = int(max(p.max(initial=-1), t.max(initial=-1))) + 1
        self._grow(n)
        hit = p == t
        self.tp += np.bincount(t[hit], minlength=self.tp.size)
        self.fp += np.bincount(p[~hit], minlength=self.tp.size)
        self.fn += np.bincount(t[~hit], minlength=self.tp.size)
        self.seen[p] = True
        self.seen[t] = True

    def score(self, kind: str, average: str, pos_label: int = 1, num_classes: Optional[int] = None) -> float:
        _check_average(average)
        if num_classes is not None:
            self._grow(num_classes)
        tp, fp, fn = self.tp, self.fp, self.fn
        if average == "binary":
            self._grow(pos_label + 1)
            tp, fp, fn = self.tp[pos_label:pos_label + 1], self.fp[pos_label:pos_label + 1], self.fn[pos_label:pos_label + 1]
        elif average == "micro":
            tp, fp, fn = tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True)
        else:  # macro: over the classes present in targets or predictions (or all num_classes)
            keep = self.seen.copy()
            if num_classes is not None:
                keep[:num_classes] = True
            tp, fp, fn = tp[keep], fp[keep], fn[keep]
            if tp.size == 0:
                return 0.0
        tp, fp, fn = (a.astype(np.float64) for a in (tp, fp, fn))
        prec = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
        rec = np.divide(tp, tp + fn, out=np.zeros_like(tp), where=(tp + fn) > 0)
        if kind == "precision":
            values = prec
        elif kind == "recall":
            values = rec
        else:
            values = np.divide(2 * prec * rec, prec + rec, out=np.zeros_like(tp), where=(prec + rec) > 0)
        return float(values.mean())


# ---- functions ---------------------------------------------------------------------------------------
def accuracy(y_pred: Any, y_true: Any, threshold: float = 0.5) -> float:
    """Fraction of samples whose predicted label equals the target.

    Args:
        y_pred: labels ``(N,)``, class scores ``(N, C)``, or binary scores ``(N,)``/``(N, 1)``.
        y_true: labels ``(N,)`` (or one-hot ``(N, C)``).
        threshold: decision threshold for binary scores.
    """
    p, t = labels(y_pred, y_true, threshold)
    return float((p == t).mean()) if t.size else 0.0


def top_k_accuracy(y_pred: Any, y_true: Any, k: int = 5) -> float:
    """Fraction of samples whose target is among the ``k`` highest scores of ``y_pred`` ``(N, C)``."""
    scores, t = _host(y_pred), _host(y_true).reshape(-1).astype(np.int64)
    if scores.ndim != 2 or scores.shape[0] != t.size:
        raise ValueError(f"top_k_accuracy expects scores (N, C) and labels (N,), got {scores.shape} and "
                         f"{_host(y_true).shape}")
    k = min(int(k), scores.shape[1])
    # a target counts when fewer than k classes score strictly higher than it
    target_score = scores[np.arange(t.size), t]
    higher = (scores > target_score[:, None]).sum(axis=1)
    return float((higher < k).mean()) if t.size else 0.0


def _score(kind: str, y_pred, y_true, average: str, pos_label: int, num_classes, threshold: float) -> float:
    counts = _Counts()
    counts.add(*labels(y_pred, y_true, threshold))
    return counts.score(kind, average, pos_label, num_classes)


def precision(y_pred: Any, y_true: Any, average: str = "macro", pos_label: int = 1,
              num_classes: Optional[int] = None, threshold: float = 0.5) -> float:
    """``tp / (tp + fp)``: per class then averaged (``"macro"``, over the classes present in targets
    or predictions, as scikit-learn), pooled (``"micro"``), or for ``pos_label`` only (``"binary"``).
    A class with no predictions scores 0."""
    return _score("precision", y_pred, y_true, average, pos_label, num_classes, threshold)


def recall(y_pred: Any, y_true: Any, average: str = "macro", pos_label: int = 1,
           num_classes: Optional[int] = None, threshold: float = 0.5) -> float:
    """``tp / (tp + fn)``, averaged as in :func:`precision`."""
    return _score("recall", y_pred, y_true, average, pos_label, num_classes, threshold)


def f1(y_pred: Any, y_true: Any, average: str = "macro", pos_label: int = 1,
       num_classes: Optional[int] = None, threshold: float = 0.5) -> float:
    """Harmonic mean of precision and recall per class, averaged as in :func:`precision`."""
    return _score("f1", y_pred, y_true, average, pos_label, num_classes, threshold)


def mse(y_pred: Any, y_true: Any) -> float:
    """Mean squared error."""
    p, t = _pairs(y_pred, y_true)
    return float(((p - t) ** 2).mean()) if t.size else 0.0


def mae(y_pred: Any, y_true: Any) -> float:
    """Mean absolute error."""
    p, t = _pairs(y_pred, y_true)
    return float(np.abs(p - t).mean()) if t.size else 0.0


# ---- stateful metrics -------------------------------------------------------------------------------------
class Metric:
    """A value accumulated over batches: ``update(y_pred, y_true)``, ``result()``, ``reset()``.

    Subclasses set ``name`` (the key in ``fit``'s logs) and implement the three methods.
    """

    name = "metric"

    def __init__(self, name: Optional[str] = None) -> None:
        if name is not None:
            self.name = name
        self.reset()

    def update(self, y_pred: Any, y_true: Any) -> None:
        raise NotImplementedError

    def result(self) -> float:
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def __call__(self, y_pred: Any, y_true: Any) -> float:
        """Update with one batch and return the running result."""
        self.update(y_pred, y_true)
        return self.result()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class Mean(Metric):
    """The weighted mean of the values given to ``update(value, weight=1)`` (e.g. a loss)."""

    name = "mean"

    def reset(self) -> None:
        self.total, self.count = 0.0, 0.0

    def update(self, value: Any, weight: Any = 1.0) -> None:  # type: ignore[override]
        self.total += float(_host(value)) * float(weight)
        self.count += float(weight)

    def result(self) -> float:
        return self.total / self.count if self.count else 0.0


class Accuracy(Metric):
    """Running :func:`accuracy`."""

    name = "accuracy"

    def __init__(self, name: Optional[str] = None, threshold: float = 0.5) -> None:
        self.threshold = threshold
        super().__init__(name)

    def reset(self) -> None:
        self.correct, self.total = 0, 0

    def update(self, y_pred: Any, y_true: Any) -> None:
        p, t = labels(y_pred, y_true, self.threshold)
        self.correct += int((p == t).sum())
        self.total += int(t.size)

    def result(self) -> float:
        return self.correct / self.total if self.total else 0.0


class TopKAccuracy(Metric):
    """Running :func:`top_k_accuracy`."""

    def __init__(self, k: int = 5, name: Optional[str] = None) -> None:
        self.k = int(k)
        super().__init__(name or f"top_{self.k}_accuracy")

    def reset(self) -> None:
        self.correct, self.total = 0.0, 0

    def update(self, y_pred: Any, y_true: Any) -> None:
        n = int(_host(y_true).size)
        self.correct += top_k_accuracy(y_pred, y_true, self.k) * n
        self.total += n

    def result(self) -> float:
        return self.correct / self.total if self.total else 0.0


class _CountMetric(Metric):
    kind = ""

    def __init__(self, average: str = "macro", pos_label: int = 1, num_classes: Optional[int] = None,
                 threshold: float = 0.5, name: Optional[str] = None) -> None:
        _check_average(average)
        self.average, self.pos_label, self.num_classes, self.threshold = average, pos_label, num_classes, threshold
        super().__init__(name or self.kind)

    def reset(self) -> None:
        self.counts = _Counts()

    def update(self, y_pred: Any, y_true: Any) -> None:
        self.counts.add(*labels(y_pred, y_true, self.threshold))

    def result(self) -> float:
        return self.counts.score(self.kind, self.average, self.pos_label, self.num_classes)


class Precision(_CountMetric):
    """Running :func:`precision` (from confusion counts over every batch seen)."""

    kind = "precision"


class Recall(_CountMetric):
    """Running :func:`recall`."""

    kind = "recall"


class F1(_CountMetric):
    """Running :func:`f1`."""

    kind = "f1"


class _ErrorMetric(Metric):
    def reset(self) -> None:
        self.total, self.count = 0.0, 0

    def result(self) -> float:
        return self.total / self.count if self.count else 0.0


class MSE(_ErrorMetric):
    """Running :func:`mse`."""

    name = "mse"

    def update(self, y_pred: Any, y_true: Any) -> None:
        p, t = _pairs(y_pred, y_true)
        self.total += float(((p - t) ** 2).sum())
        self.count += int(t.size)


class MAE(_ErrorMetric):
    """Running :func:`mae`."""

    name = "mae"

    def update(self, y_pred: Any, y_true: Any) -> None:
        p, t = _pairs(y_pred, y_true)
        self.total += float(np.abs(p - t).sum())
        self.count += int(t.size)


class MeanMetricWrapper(Metric):
    """A metric function ``fn(y_pred, y_true) -> float`` averaged over batches, weighted by batch size."""

    def __init__(self, fn: Callable, name: Optional[str] = None) -> None:
        self.fn = fn
        super().__init__(name or getattr(fn, "__name__", type(fn).__name__))

    def reset(self) -> None:
        self.mean = Mean()

    def update(self, y_pred: Any, y_true: Any) -> None:
        t = _host(y_true)
        self.mean.update(self.fn(y_pred, y_true), weight=t.shape[0] if t.ndim else 1)

    def result(self) -> float:
        return self.mean.result()


_BY_NAME: dict = {
    "accuracy": Accuracy, "acc": Accuracy,
    "precision": Precision, "recall": Recall, "f1": F1,
    "mse": MSE, "mean_squared_error": MSE, "mae": MAE, "mean_absolute_error": MAE,
}


def get(metric: Any) -> Metric:
    """A fresh :class:`Metric` from a name (``"accuracy"``, ``"top_5_accuracy"``/``"top5"``,
    ``"precision"``, ``"recall"``, ``"f1"``, ``"mse"``, ``"mae"``), a Metric class or instance, or a
    function ``fn(y_pred, y_true) -> float`` (averaged over batches)."""
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, type) and issubclass(metric, Metric):
        return metric()
    if isinstance(metric, str):
        key = metric.lower()
        if key in _BY_NAME:
            cls = _BY_NAME[key]
            return cls(name=metric) if key in ("acc",) else cls()
        import re

        match = re.fullmatch(r"top_?(\d+)(?:_accuracy)?", key)
        if match:
            return TopKAccuracy(int(match.group(1)), name=metric)
        if key == "top_k_accuracy":
            return TopKAccuracy(5)
        raise ValueError(f"unknown metric {metric!r}; known names: {sorted(_BY_NAME)} and 'top_<k>_accuracy'")
    if callable(metric):
        return MeanMetricWrapper(metric)
    raise TypeError(f"a metric must be a name, a Metric or a function, got {type(metric).__name__}")
