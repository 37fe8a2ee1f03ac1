"""Keras' compile arguments for a model with several outputs: ``loss`` (one for all, a list, or a dict
by output name), ``loss_weights``, ``metrics`` (a list for every output, a list of lists, or a dict),
and targets ``y`` as a list or a dict. graphgrad's ``gg.Model`` takes the targets as a tuple and one
loss over ``(outputs, targets)``; the logs get ``<output>_loss`` and ``<output>_<metric>`` as Keras'."""
from __future__ import annotations

from typing import Any, Sequence

import graphgrad as gg

from graphgrad.compat.keras import losses as _losses
from graphgrad.compat.keras import metrics as _metrics

__all__ = ["output_names", "is_multi_output", "compile_arguments", "targets_of"]

_Metric = gg.train.metrics.Metric


def is_multi_output(model) -> bool:
    return model._outputs is not None and model._output_was_list and len(model._outputs) > 1


def output_names(model) -> list:
    return [getattr(t.layer, "name", f"output_{i}") for i, t in enumerate(model._outputs)]


def _per_output(spec: Any, names: Sequence[str], what: str, nested: bool = False) -> list:
    """One entry per output from a single value, a list or a dict by output name."""
    if isinstance(spec, dict):
        unknown = set(spec) - set(names)
        if unknown:
            raise ValueError(f"compile: {what} names outputs {sorted(unknown)}; the outputs are {list(names)}")
        return [spec.get(name) for name in names]
    if isinstance(spec, (list, tuple)) and (not nested or all(isinstance(s, (list, tuple)) or s is None for s in spec)):
        if len(spec) != len(names):
            raise ValueError(f"compile: {len(spec)} {what} for {len(names)} outputs {list(names)}")
        return list(spec)
    return [spec] * len(names)


class OutputMetric(_Metric):
    """A metric of one output of several: ``update`` reads ``y_pred[index]`` and ``y_true[index]``."""

    def __init__(self, inner: Any, index: int, name: str) -> None:
        self.inner, self.index = inner, int(index)
        super().__init__(name)

    def reset(self) -> None:
        self.inner.reset()

    def update(self, y_pred: Any, y_true: Any) -> None:
        self.inner.update(y_pred[self.index], y_true[self.index])

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        """Keras' form, with sample weights (compile's ``weighted_metrics`` of a model with several outputs)."""
        self.inner.update_state(y_true[self.index], y_pred[self.index], sample_weight=sample_weight)

    def result(self) -> float:
        return self.inner.result()


class OutputLoss(_Metric):
    """The mean loss of one output (``<output>_loss`` in the logs)."""

    def __init__(self, loss: Any, index: int, name: str) -> None:
        self.loss, self.index = loss, int(index)
        super().__init__(name)

    def reset(self) -> None:
        self.total, self.count = 0.0, 0

    def update(self, y_pred: Any, y_true: Any) -> None:
        n = int(y_pred[self.index].shape[0])
        with gg.no_grad():
            self.total += float(self.loss(y_pred[self.index], y_true[self.index]).item()) * n
        self.count += n

    def result(self) -> float:
        return self.total / self.count if self.count else 0.0


def compile_arguments(model, loss: Any, metrics: Any, loss_weights: Any) -> tuple:
    """``(loss, metrics)`` in gg.Model's conventions for ``model``'s outputs."""
    if not is_multi_output(model):
        if isinstance(metrics, dict) or (isinstance(loss, (list, tuple)) and len(loss) != 1):
            raise ValueError("compile: per-output losses or metrics given for a model with one output")
        if isinstance(loss, (list, tuple)):
            loss = loss[0]
        return _losses.as_graphgrad_loss(loss), [_metrics.as_graphgrad_metric(m) for m in (metrics or [])]
    names = output_names(model)
    losses = [_losses.as_graphgrad_loss(spec) for spec in _per_output(loss, names, "losses")]
    weights = [1.0 if w is None else float(w) for w in _per_output(loss_weights, names, "loss_weights")]
    active = [i for i, fn in enumerate(losses) if fn is not None]

    def total(outputs, targets):
        return sum(weights[i] * losses[i](outputs[i], targets[i]) for i in active)

    total.__name__ = "loss"
    gg_metrics: list = [OutputLoss(losses[i], i, f"{names[i]}_loss") for i in active]
    per_output = _per_output(metrics, names, "metrics", nested=True) if metrics else [None] * len(names)
    for i, specs in enumerate(per_output):
        for spec in ([specs] if isinstance(specs, str) else list(specs or [])):
            inner = _metrics.as_graphgrad_metric(spec)
            gg_metrics.append(OutputMetric(inner, i, f"{names[i]}_{inner.name}"))
    return total, gg_metrics


def targets_of(model, y: Any) -> Any:
    """Keras' list (or dict by output name) of target arrays as graphgrad's tuple."""
    if y is None or not is_multi_output(model):
        return y
    names = output_names(model)
    if isinstance(y, dict):
        missing = set(names) - set(y)
        if missing:
            raise ValueError(f"{model.name}: no targets for the outputs {sorted(missing)}")
        y = [y[name] for name in names]
    if not isinstance(y, (list, tuple)) or len(y) != len(names):
        raise ValueError(f"{model.name}: expected a list of {len(names)} target arrays (outputs {names})")
    return tuple(gg.tensor(v).numpy() if not hasattr(v, "shape") else v for v in y)
