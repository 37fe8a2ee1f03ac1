"""Keras 3's training loop for what graphgrad's ``gg.Model.fit`` does not take: a model subclass that
overrides ``train_step(self, data)`` / ``test_step(self, data)`` (keras-io's GANs and VAEs), and
``sample_weight`` (arrays, or the third item of a dataset's batches). ``fit`` hands each batch to
``train_step`` as Keras does (``x`` alone, ``(x, y)`` or ``(x, y, sample_weight)``), resets
``model.metrics`` at the start of each epoch and records the dict that the step returns.

:class:`GradientTape` is TensorFlow's tape over graphgrad's eager autodiff (``gg.grad``): graphgrad
records every operation on tensors that need gradients, so the tape only chooses what to
differentiate; a tape used while another is recording keeps the graph of its gradients (a gradient
penalty)."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

from graphgrad.compat.keras import utils as _utils
from graphgrad.compat.keras.engine import as_tensor
from graphgrad.compat.keras.utils import pack_x_y_sample_weight, unpack_x_y_sample_weight

__all__ = ["GradientTape", "unpack_x_y_sample_weight", "pack_x_y_sample_weight", "fit_loop", "evaluate_loop",
           "CompileMetrics"]

_TAPES = threading.local()


def _active() -> list:
    if not hasattr(_TAPES, "stack"):
        _TAPES.stack = []
    return _TAPES.stack


def _flatten(structure: Any) -> list:
    if isinstance(structure, dict):
        return [leaf for key in structure for leaf in _flatten(structure[key])]
    if isinstance(structure, (list, tuple)) or type(structure).__name__ == "zip":
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure: Any, leaves: list) -> Any:
    if isinstance(structure, dict):
        return {key: _pack(structure[key], leaves) for key in structure}
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, leaves) for item in structure]
        return items if isinstance(structure, list) else tuple(items)
    return leaves.pop(0)


class GradientTape:
    """``tf.GradientTape(persistent=False, watch_accessed_variables=True)``: ``with GradientTape() as tape:``
    around a forward pass, then ``tape.gradient(target, sources)`` gives d(sum of target)/d(each source)
    in the structure of ``sources`` (``None`` for a source the target does not depend on, unless
    ``unconnected_gradients="zero"``). ``tape.watch(tensor)`` makes a constant tensor differentiable. A
    non-persistent tape gives one set of gradients, as TensorFlow's."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = bool(persistent)
        self.watch_accessed_variables = bool(watch_accessed_variables)
        self._watched: list = []
        self._used = False
        self._grad_mode = None

    def __enter__(self) -> "GradientTape":
        _active().append(self)
        self._grad_mode = gg.enable_grad()
        self._grad_mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._grad_mode.__exit__(*exc)
        stack = _active()
        if self in stack:
            stack.remove(self)

    def watch(self, tensor: Any) -> None:
        for t in _flatten(tensor):
            if isinstance(t, gg.Tensor):
                if not t.requires_grad:
                    t.requires_grad_(True)
                self._watched.append(t)

    def watched_variables(self) -> list:
        return list(self._watched)

    @contextlib.contextmanager
    def stop_recording(self):
        with gg.no_grad():
            yield

    def reset(self) -> None:
        self._watched, self._used = [], False

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = "none") -> Any:
        if self._used and not self.persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or jacobians)")
        self._used = True
        structure = list(sources) if type(sources).__name__ == "zip" else sources
        flat_sources = _flatten(structure)
        targets = [as_tensor(t) for t in _flatten(target)]
        seeds = _flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
        outputs, grad_outputs = [], []
        for t, seed in zip(targets, seeds):
            if not t.requires_grad:
                continue
            outputs.append(t)
            grad_outputs.append(as_tensor(seed).astype(t.dtype) if seed is not None else gg.ones_like(t))
        wanted = [i for i, s in enumerate(flat_sources) if isinstance(s, gg.Tensor) and s.requires_grad]
        grads: list = [None] * len(flat_sources)
        if outputs and wanted:
            # a tape recording now (an outer one) differentiates these gradients again: keep their graph
            higher = any(tape is not self for tape in _active())
            found = gg.grad(outputs, [flat_sources[i] for i in wanted], grad_outputs=grad_outputs,
                            retain_graph=self.persistent or higher, create_graph=higher, allow_unused=True)
            for i, g in zip(wanted, found):
                grads[i] = g
        if str(unconnected_gradients).lower().endswith("zero"):
            grads = [gg.zeros_like(s) if g is None and isinstance(s, gg.Tensor) else g
                     for g, s in zip(grads, flat_sources)]
        return _pack(structure, list(grads))

    def jacobian(self, target: Any, sources: Any, **kwargs) -> Any:
        """d(each element of target)/d(sources): shape ``target.shape + source.shape``."""
        target = as_tensor(target)
        flat_sources = _flatten(sources)
        rows = []
        flat = target.reshape((-1,))
        for k in range(int(flat.shape[0])):
            found = gg.grad([flat[k]], flat_sources, retain_graph=True, allow_unused=True)
            rows.append([gg.zeros_like(s) if g is None else g for g, s in zip(found, flat_sources)])
        out = [gg.stack([row[j] for row in rows], axis=0).reshape(tuple(target.shape) + tuple(s.shape))
               for j, s in enumerate(flat_sources)]
        return _pack(sources, out)


# ---- data in Keras' form ------------------------------------------------------------------------------------
def _rows(value: Any) -> int:
    leaves = [v for v in _flatten(value) if v is not None]
    return int(leaves[0].shape[0])


def _take(value: Any, index) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _take(v, index) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_take(v, index) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value[index]


def _tensors(value: Any) -> Any:
    """Arrays as graphgrad Tensors (floats in the default float dtype), keeping lists, tuples and dicts."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _tensors(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and value and not isinstance(value[0], (int, float)):
        items = [_tensors(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    tensor = as_tensor(value if isinstance(value, gg.Tensor) else np.asarray(value))
    return tensor.astype(gg.get_default_dtype()) if tensor.dtype == gg.bool_ else tensor


def _array(value: Any) -> Any:
    if value is None or isinstance(value, (dict, tuple)):
        return value if not isinstance(value, tuple) else tuple(_array(v) for v in value)
    if isinstance(value, list) and value and hasattr(value[0], "shape"):
        return [_array(v) for v in value]
    return value.numpy() if isinstance(value, gg.Tensor) else np.asarray(value)


class ArrayBatches:
    """Batches of arrays ``x`` (one, a list or a dict), ``y`` and ``sample_weight`` in Keras' form, in a new
    order each epoch when shuffled."""

    def __init__(self, x: Any, y: Any = None, sample_weight: Any = None, batch_size: Optional[int] = None) -> None:
        self.x, self.y, self.w = _array(x), _array(y), _array(sample_weight)
        self.batch_size = int(batch_size or 32)
        self.n = _rows(self.x)

    def split(self, fraction: float) -> tuple:
        """``(train, validation)``: the last ``fraction`` of the samples held out (before shuffling)."""
        cut = self.n - int(round(self.n * float(fraction)))
        if cut <= 0 or cut >= self.n:
            raise ValueError(f"validation_split={fraction} leaves no training or no validation samples of {self.n}")
        head, tail = slice(0, cut), slice(cut, self.n)
        return (ArrayBatches(_take(self.x, head), _take(self.y, head), _take(self.w, head), self.batch_size),
                ArrayBatches(_take(self.x, tail), _take(self.y, tail), _take(self.w, tail), self.batch_size))

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)

    def epoch(self, shuffle: bool = False):
        order = np.asarray(gg.randperm(self.n).numpy()) if shuffle else np.arange(self.n)
        for start in range(0, self.n, self.batch_size):
            index = order[start:start + self.batch_size]
            x, y, w = _take(self.x, index), _take(self.y, index), _take(self.w, index)
            yield pack_x_y_sample_weight(_tensors(x), _tensors(y), _tensors(w))


class IterableBatches:
    """The batches of a PyDataset, a generator (``steps`` a epoch) or another iterable of batches."""

    def __init__(self, source: Any, steps: Optional[int] = None) -> None:
        if _utils.is_generator(source) or (steps is not None and _utils.is_dataset(source)):
            source = _utils.steps_of(source, steps)
        elif _utils.is_dataset(source):
            source = _utils.batches_of(source)
        self.source = source

    def __len__(self) -> int:
        try:
            return len(self.source)
        except TypeError:
            return 0

    def epoch(self, shuffle: bool = False):
        for batch in self.source:
            if isinstance(batch, (list, tuple)):
                yield tuple(_tensors(item) for item in batch)
            else:
                yield _tensors(batch)


def batches(x: Any, y: Any = None, sample_weight: Any = None, batch_size: Optional[int] = None,
            steps: Optional[int] = None) -> Any:
    if _utils.is_generator(x) or _utils.is_dataset(x) or (
            hasattr(x, "__iter__") and not hasattr(x, "shape") and not isinstance(x, (list, tuple, dict))):
        if y is not None or sample_weight is not None:
            raise ValueError("when x is a dataset or a generator, y and sample_weight must be None (its batches carry "
                             "them)")
        return IterableBatches(x, steps)
    return ArrayBatches(x, y, sample_weight, batch_size)


def _float(value: Any) -> Any:
    if isinstance(value, gg.Tensor):
        value = value.numpy()
    if hasattr(value, "numpy") and not isinstance(value, (float, int)):
        value = value.numpy()
    array = np.asarray(value)
    return float(array) if array.ndim == 0 else array


def logs_of(result: Any) -> dict:
    """A step's result (a dict of metric results, nested dicts flattened) as plain numbers."""
    if not isinstance(result, dict):
        raise TypeError(f"train_step / test_step must return a dict of metric results, got {type(result).__name__}")
    out = {}
    for key, value in result.items():
        if isinstance(value, dict):
            out.update(logs_of(value))
        else:
            out[key] = _float(value)
    return out


def _line(logs: dict) -> str:
    return " - ".join(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}" for k, v in logs.items())


# ---- the loops ----------------------------------------------------------------------------------------------------
def fit_loop(model, data, epochs: int, verbose: int, callbacks: Any, validation: Any, shuffle: bool,
             initial_epoch: int, validation_freq: int = 1):
    """Keras' ``fit``: each batch through ``model.train_step``; ``model.metrics`` reset every epoch; the
    epoch's logs are the last step's result (with ``val_`` ones from ``test_step`` over ``validation``)."""
    history = gg.train.callbacks.History()
    callback_list = gg.train.callbacks.CallbackList(list(callbacks or []) + [history], model=model)
    object.__setattr__(model, "stop_training", False)
    object.__setattr__(model, "history", history)
    callback_list.on_train_begin({})
    epoch_logs: dict = {}
    for epoch in range(int(initial_epoch), int(epochs)):
        model.reset_metrics()
        model.train()
        callback_list.on_epoch_begin(epoch, {})
        start = time.perf_counter()
        logs: dict = {}
        for step, batch in enumerate(data.epoch(shuffle)):
            callback_list.on_train_batch_begin(step, {"batch": step})
            logs = logs_of(model.train_step(batch))
            callback_list.on_train_batch_end(step, dict(logs))
            if model.stop_training:
                break
        epoch_logs = dict(logs)
        if validation is not None and (epoch + 1) % int(validation_freq) == 0:
            val_logs = evaluate_loop(model, validation)
            epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
        model.train()
        callback_list.on_epoch_end(epoch, epoch_logs)
        if verbose:
            print(f"Epoch {epoch + 1}/{epochs} - {time.perf_counter() - start:.1f}s - {_line(epoch_logs)}",
                  file=sys.stdout, flush=True)
        if model.stop_training:
            break
    callback_list.on_train_end(epoch_logs)
    return history


def evaluate_loop(model, data, callbacks: Any = None) -> dict:
    """Keras' ``evaluate``: ``model.metrics`` reset, each batch through ``model.test_step`` (eval mode, no
    gradients); the logs are the last step's result."""
    callback_list = gg.train.callbacks.CallbackList(list(callbacks or []), model=model)
    callback_list.on_test_begin({})
    model.reset_metrics()
    was = model.training
    model.eval()
    logs: dict = {}
    try:
        with gg.no_grad():
            for batch in data.epoch(False):
                logs = logs_of(model.test_step(batch))
    finally:
        model.train(was)
    callback_list.on_test_end(logs)
    return logs


class CompileMetrics:
    """The metrics given to ``compile`` as one Keras metric (``model.metrics``' ``compile_metrics``):
    ``update_state(y, y_pred)``, ``result()`` a dict by metric name, ``reset_state()``."""

    name = "compile_metrics"

    def __init__(self, metrics: list) -> None:
        self.metrics = list(metrics)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        """Update every metric with a batch; ``sample_weight`` reaches only compile's ``weighted_metrics``."""
        y_pred = tuple(p.detach() for p in y_pred) if isinstance(y_pred, (list, tuple)) else as_tensor(y_pred).detach()
        y_true = tuple(as_tensor(t) for t in y_true) if isinstance(y_true, (list, tuple)) else as_tensor(y_true)
        for metric in self.metrics:
            if isinstance(metric, (Weighted, Masked)):
                metric.update(y_pred, y_true, sample_weight)
            else:
                metric.update(y_pred, y_true)

    def result(self) -> dict:
        return {metric.name: metric.result() for metric in self.metrics}

    def reset_state(self) -> None:
        for metric in self.metrics:
            metric.reset()


class Weighted(gg.train.metrics.Metric):
    """A metric of compile's ``weighted_metrics``: each batch counts with its sample weights (times the
    class weights while ``fit(class_weight=...)`` runs), through the metric's Keras ``update_state``;
    without weights it is the plain metric, as in Keras."""

    def __init__(self, inner: Any, name: str) -> None:
        if not hasattr(inner, "update_state"):
            raise TypeError(f"compile: weighted_metrics: {inner!r} takes no sample weights (no update_state)")
        self.inner = inner
        super().__init__(name)

    def reset(self) -> None:
        self.inner.reset()

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        if sample_weight is None:
            self.inner.update(y_pred, y_true)
        else:
            self.inner.update_state(y_true, y_pred, sample_weight=as_tensor(sample_weight))

    def result(self) -> float:
        return self.inner.result()


def mask_weight(mask: Any, sample_weight: Any, dtype: Any, mean: bool = False) -> Any:
    """A Keras output mask as sample weights, times ``sample_weight`` (per sample, or of the mask's
    shape) when given, as Keras' ``apply_mask``; with ``mean`` (a loss reduced by the number of values)
    the kept positions weigh total/kept, so the loss is the mean over them."""
    weight = as_tensor(mask).astype(dtype)
    if mean:
        weight = weight * (float(weight.size) / (float(gg.sum(weight).item()) + 1e-7))
    if sample_weight is None:
        return weight
    sample_weight = as_tensor(sample_weight).astype(dtype)
    while sample_weight.ndim < weight.ndim:
        sample_weight = gg.expand_dims(sample_weight, -1)
    return sample_weight * weight


class Masked(gg.train.metrics.Metric):
    """A compiled metric that leaves out the positions the model's output mask hides
    (``Embedding(mask_zero=True)``, ``Masking``), as Keras' metrics do: the mask is the metric's sample
    weight (times the sample weights for ``weighted_metrics``). Without a mask, the metric as it is."""

    def __init__(self, inner: Any, model: Any) -> None:
        self.inner, self.model = inner, model
        super().__init__(inner.name)

    def __deepcopy__(self, memo: dict) -> "Masked":
        import copy

        return Masked(copy.deepcopy(self.inner, memo), self.model)  # (the same model: its masks)

    def reset(self) -> None:
        self.inner.reset()

    def update(self, y_pred: Any, y_true: Any, sample_weight: Any = None) -> None:
        weighted = isinstance(self.inner, Weighted)
        mask = self.model._mask_of(y_pred)
        if mask is not None and weighted:
            self.inner.update(y_pred, y_true, mask_weight(mask, sample_weight, "float32"))
        elif mask is not None and hasattr(self.inner, "update_state"):
            self.inner.update_state(y_true, y_pred, sample_weight=mask_weight(mask, None, "float32"))
        elif weighted:
            self.inner.update(y_pred, y_true, sample_weight)
        else:
            self.inner.update(y_pred, y_true)

    def result(self) -> float:
        return self.inner.result()
