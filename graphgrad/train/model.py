"""Model: Keras' ``compile`` / ``fit`` / ``evaluate`` / ``predict`` / ``summary`` around a Module.

``Model(module)`` wraps any ``gg.nn.Module``; ``Sequential([layers])`` is a Model over
``gg.nn.Sequential``; subclassing ``Model`` and defining ``forward`` works too. A Model is itself a
Module whose parameters, ``state_dict`` keys and train/eval mode are those of the wrapped module
(no ``module.`` prefix), so checkpoints of the two are interchangeable.

Examples:
    >>> model = gg.Sequential([gg.nn.Linear(2, 16), gg.nn.ReLU(), gg.nn.Linear(16, 3)])
    >>> model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"])
    >>> history = model.fit(x, y, epochs=20, batch_size=32, validation_split=0.2)
    >>> model.evaluate(x, y)
    {'loss': 0.21, 'accuracy': 0.93}
    >>> model.predict(x[:5]).shape
    (5, 3)

Progress output (``verbose``, as in Keras): 0 silent; 1 a tqdm progress bar per epoch with the
running loss and metrics (the ``progress`` extra; without tqdm, one line per epoch); 2 one line
per epoch.
"""
from __future__ import annotations

import copy
import sys
import time
from typing import Any, Callable, Optional, Sequence

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.autograd import no_grad
from graphgrad.core.tensor import Tensor
from graphgrad.nn.layers.container import Sequential as _NNSequential
from graphgrad.nn.module import Module
from graphgrad.ops import losses as _losses
from graphgrad.train import metrics as _metrics
from graphgrad.train.callbacks import Callback, CallbackList, History
from graphgrad.train.loss_meaning import warn_if_softmax_into_logits_loss
from graphgrad.train.data_arrays import _Data, _as_array, _epoch_rng, _validation, batch_rows

__all__ = ["Model", "Sequential"]


def _load_tqdm():
    """The ``tqdm`` class, or ``None`` when tqdm is not installed (tests replace this function)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


# ---- compile arguments -------------------------------------------------------------------------------
_OPTIMIZER_DEFAULT_LR = {"sgd": 0.01}  # Keras' defaults; every other optimizer gets 1e-3


def _resolve_optimizer(spec: Any, params: list):
    from graphgrad import optim

    def by_name(name: str):
        key = name.lower().replace("_", "")
        for attr in dir(optim):
            candidate = getattr(optim, attr)
            if attr.lower() == key and isinstance(candidate, type) and hasattr(candidate, "zero_grad"):
                return candidate
        known = sorted(a for a in dir(optim) if a[0].isupper() and isinstance(getattr(optim, a), type)
                       and hasattr(getattr(optim, a), "step") and hasattr(getattr(optim, a), "zero_grad"))
        raise ValueError(f"compile: unknown optimizer {name!r}; gg.optim has {known}")

    if isinstance(spec, str):
        return by_name(spec)(params, lr=_OPTIMIZER_DEFAULT_LR.get(spec.lower(), 1e-3))
    if isinstance(spec, tuple) and len(spec) == 2:
        cls, kwargs = spec
        cls = by_name(cls) if isinstance(cls, str) else cls
        return cls(params, **dict(kwargs))
    if isinstance(spec, type):
        return spec(params)
    if hasattr(spec, "step") and hasattr(spec, "zero_grad"):
        return spec
    raise TypeError(f"compile: optimizer must be a name ('adam', 'sgd'...), an optimizer, a class or "
                    f"(class, kwargs), got {type(spec).__name__}")


def _pointwise(fn: Callable) -> Callable:
    """``fn(input, target)`` that first gives ``target`` the input's shape when only the shapes
    differ ((N,) targets for (N, 1) outputs, as Keras allows)."""

    def loss(y_pred, y_true):
        if tuple(y_true.shape) != tuple(y_pred.shape) and y_true.size == y_pred.size:
            y_true = y_true.reshape(tuple(y_pred.shape))
        return fn(y_pred, y_true)

    loss.__name__ = fn.__name__
    return loss


_LOSSES = {
    "cross_entropy": _losses.cross_entropy, "crossentropy": _losses.cross_entropy,
    "sparse_categorical_crossentropy": _losses.cross_entropy,
    "categorical_crossentropy": _losses.cross_entropy, "nll": _losses.nll_loss,
    "mse": _pointwise(_losses.mse_loss), "mean_squared_error": _pointwise(_losses.mse_loss),
    "mae": _pointwise(_losses.l1_loss), "l1": _pointwise(_losses.l1_loss),
    "mean_absolute_error": _pointwise(_losses.l1_loss), "huber": _pointwise(_losses.huber_loss),
    "bce": _pointwise(_losses.binary_cross_entropy), "binary_crossentropy": _pointwise(_losses.binary_cross_entropy),
    "bce_with_logits": _pointwise(_losses.binary_cross_entropy_with_logits),
}


def _resolve_loss(spec: Any) -> Optional[Callable]:
    if spec is None:
        return None
    if isinstance(spec, str):
        key = spec.lower()
        if key not in _LOSSES:
            raise ValueError(f"compile: unknown loss {spec!r}; known: {sorted(_LOSSES)} (or pass a callable / "
                             "a loss Module such as gg.nn.CrossEntropyLoss())")
        return _LOSSES[key]
    if callable(spec):
        return spec
    raise TypeError(f"compile: loss must be a name, a function loss(y_pred, y_true) or a loss Module, "
                    f"got {type(spec).__name__}")


def _parallel_world():
    """The world when this process is one of several ranks under a launcher, else ``None``."""
    from graphgrad.distributed.training import data_parallel_world

    return data_parallel_world()


def _watches_batches(callback: Callback) -> bool:
    """Whether ``callback`` has a batch hook of its own (it may read batch logs or stop mid-epoch)."""
    hooks = ("on_train_batch_begin", "on_train_batch_end", "on_batch_end")
    return any(name in vars(callback) or getattr(type(callback), name) is not getattr(Callback, name)
               for name in hooks)


def _logs(loss_mean: Optional[_metrics.Mean], metrics: list, samples: int, world) -> dict:
    """``{"loss": ..., <metric name>: ...}``; on several ranks (``world``) over every rank's samples."""
    tracked = ([] if loss_mean is None else [loss_mean]) + list(metrics)
    if world is None:
        values = [m.result() for m in tracked]
    else:
        from graphgrad.distributed.training import reduce_results

        values, _ = reduce_results(tracked, samples, world)
    names = ([] if loss_mean is None else ["loss"]) + [m.name for m in metrics]
    return dict(zip(names, values))


def _fmt(value: float) -> str:
    return f"{value:.4g}" if abs(value) >= 1e4 or (0 < abs(value) < 1e-3) else f"{value:.4f}"


def _line(logs: dict) -> str:
    return " - ".join(f"{k}: {_fmt(v)}" for k, v in logs.items())


class _Progress:
    """Per-epoch progress output: a tqdm bar (verbose=1 with tqdm) or one line at the end."""

    def __init__(self, verbose: int, epoch: int, epochs: int, total: int) -> None:
        self.verbose, self.epoch, self.epochs = verbose, epoch, epochs
        self.start = time.perf_counter()
        self.bar = None
        tqdm = _load_tqdm() if verbose == 1 else None
        if tqdm is not None:
            self.bar = tqdm(total=total or None, desc=f"Epoch {epoch + 1}/{epochs}", unit="batch", file=sys.stdout,
                            leave=True, dynamic_ncols=True)

    def update(self, logs: dict) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix({k: _fmt(v) for k, v in logs.items()}, refresh=False)

    def close(self, logs: dict) -> None:
        if self.bar is not None:
            self.bar.set_postfix({k: _fmt(v) for k, v in logs.items()}, refresh=True)
            self.bar.close()
        elif self.verbose:
            seconds = time.perf_counter() - self.start
            print(f"Epoch {self.epoch + 1}/{self.epochs} - {seconds:.1f}s - {_line(logs)}", file=sys.stdout, flush=True)


# ---- Model ---------------------------------------------------------------------------------------------------
class Model(Module):
    """Keras' training API around ``module`` (or around ``self`` in a subclass that defines
    ``forward``).

    Args:
        module: the network; its parameters, buffers and modes are the Model's.

    Attributes:
        optimizer, loss_fn, metrics: set by :meth:`compile`.
        history: the :class:`History` of the last :meth:`fit`.
        stop_training: set it (from a callback) to end ``fit`` after the current batch.
        input_spec: ``(shape of one sample, dtype)`` of the inputs seen, used by :meth:`summary`
            and the TensorBoard graph.
    """

    def __init__(self, module: Optional[Module] = None) -> None:
        super().__init__()
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"Model wraps a gg.nn.Module, got {type(module).__name__}")
        object.__setattr__(self, "module", module)  # not registered: the Model *is* its module (see below)
        object.__setattr__(self, "optimizer", None)
        object.__setattr__(self, "loss_fn", None)
        object.__setattr__(self, "metric_specs", [])
        object.__setattr__(self, "compiled", False)
        object.__setattr__(self, "stop_training", False)
        object.__setattr__(self, "history", None)
        object.__setattr__(self, "input_spec", None)
        object.__setattr__(self, "_data_parallel", None)  # the DistributedDataParallel of a data-parallel fit

    # ---- the wrapped module is the Model's content --------------------------------------------------
    def forward(self, *args, **kwargs):
        if self.module is None:
            raise NotImplementedError(f"{type(self).__name__}: pass a module to Model(...) or define forward()")
        if self._data_parallel is not None and self.training:  # it keeps the ranks' buffers equal
            return self._data_parallel(*args, **kwargs)
        return self.module(*args, **kwargs)

    def named_modules(self, memo: Optional[set] = None, prefix: str = "", remove_duplicate: bool = True):
        if self.module is None:
            yield from super().named_modules(memo, prefix, remove_duplicate)
        else:  # parameters(), state_dict(), load_state_dict(), train() all walk this
            yield from self.module.named_modules(memo, prefix, remove_duplicate)

    def named_children(self):
        if self.module is None:
            yield from super().named_children()
        else:
            yield from self.module.named_children()

    def train(self, mode: bool = True) -> "Model":
        super().train(mode)
        object.__setattr__(self, "training", bool(mode))
        return self

    def __repr__(self) -> str:
        if self.module is None:
            return super().__repr__()
        return f"{type(self).__name__}({self.module!r})"

    # ---- compile -----------------------------------------------------------------------------------------
    def compile(self, optimizer: Any = "adam", loss: Any = None, metrics: Optional[Sequence[Any]] = None) -> None:
        """Choose how to train.

        Args:
            optimizer: ``"adam"``, ``"sgd"``, ``"rmsprop"``... (a ``gg.optim`` class by name, with
                Keras' default learning rates: 0.01 for SGD, 1e-3 otherwise), an optimizer instance,
                a class, or ``(class_or_name, kwargs)`` such as ``(gg.optim.SGD, {"lr": 0.1})``.
            loss: ``"cross_entropy"``, ``"mse"``, ``"mae"``, ``"bce"``, ``"bce_with_logits"``,
                ``"huber"``, a function ``loss(y_pred, y_true) -> scalar Tensor`` or a loss Module.
                The cross-entropies (also under Keras' names ``"sparse_categorical_crossentropy"``
                and ``"categorical_crossentropy"``) take logits, as ``gg.cross_entropy``: a model
                ending in a softmax gets a warning from ``fit`` (Keras' meaning, probabilities
                unless ``from_logits=True``, is ``graphgrad.compat.keras``'s).
            metrics: names (``"accuracy"``, ``"top_5_accuracy"``, ``"precision"``, ``"recall"``,
                ``"f1"``, ``"mse"``, ``"mae"``), ``gg.train.metrics.Metric`` objects or functions
                ``fn(y_pred, y_true) -> float``.
        """
        params = list(self.parameters())
        object.__setattr__(self, "optimizer", _resolve_optimizer(optimizer, params) if optimizer is not None else None)
        object.__setattr__(self, "loss_fn", _resolve_loss(loss))
        object.__setattr__(self, "_loss_spec", loss)
        specs = list(metrics or [])
        for spec in specs:
            _metrics.get(spec)  # validate now, not at the end of the first epoch
        object.__setattr__(self, "metric_specs", specs)
        object.__setattr__(self, "compiled", True)

    def _make_metrics(self) -> list:
        return [copy.deepcopy(_metrics.get(spec)) for spec in self.metric_specs]

    def _need(self, what: str, loss: bool = True) -> None:
        if not self.compiled:
            raise RuntimeError(f"{what}: call model.compile(optimizer=..., loss=..., metrics=...) first")
        if loss and self.loss_fn is None:
            raise RuntimeError(f"{what}: the model was compiled without a loss")

    # ---- tensors ---------------------------------------------------------------------------------------------
    def _float_dtype(self):
        for p in self.parameters():
            if p.dtype.kind == "f":
                return p.dtype
        return np.dtype(config.default_float)

    def _tensor(self, value: Any, float_dtype) -> Optional[Tensor]:
        if value is None:
            return None
        if isinstance(value, tuple):  # the inputs of a model with several
            return tuple(self._tensor(v, float_dtype) for v in value)
        if isinstance(value, Tensor):
            if value.dtype.kind == "f" and value.dtype != float_dtype:
                return Tensor(value._value().astype(float_dtype))
            return value
        array = _as_array(value)
        if array.dtype.kind == "f" and array.dtype != float_dtype:
            array = array.astype(float_dtype)
        return Tensor(array)

    def _remember_input(self, xb: Tensor) -> None:
        if self.input_spec is None and isinstance(xb, Tensor) and xb.ndim >= 1:
            object.__setattr__(self, "input_spec", (tuple(xb.shape[1:]), xb.dtype))

    # ---- training ----------------------------------------------------------------------------------------------
    def train_step(self, x: Tensor, y: Tensor) -> tuple:
        """One update on a batch: forward, loss, backward, optimizer step. Returns ``(loss, output)``."""
        output = self(x)
        loss = self.loss_fn(output, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss, output

    def fit(self, x: Any = None, y: Any = None, batch_size: Optional[int] = 32, epochs: int = 1, verbose: int = 1,
            callbacks: Optional[Sequence[Callback]] = None, validation_split: float = 0.0, validation_data: Any = None,
            shuffle: bool = True, seed: Optional[int] = None, initial_epoch: int = 0) -> History:
        """Train for ``epochs`` epochs.

        Args:
            x, y: inputs ``(N, ...)`` and targets ``(N, ...)`` (arrays, Tensors or lists), or ``x`` a
                ``gg.data.DataLoader`` (or any iterable of ``(x, y)`` batches) and ``y`` None. For a
                model with several inputs, ``x`` is a tuple of arrays with ``N`` rows each; the module
                then receives a tuple of Tensors (also in ``evaluate`` and ``predict``). For several
                outputs, ``y`` is a tuple of arrays and the loss receives ``(outputs, targets)``
                tuples (``predict`` returns a list of arrays).
            batch_size: samples per update for array inputs.
            epochs: the index of the last epoch (training runs ``initial_epoch..epochs-1``).
            verbose: 0 silent, 1 progress bar (tqdm; else one line per epoch), 2 one line per epoch.
            callbacks: ``gg.train.callbacks`` objects.
            validation_split: fraction of the array data (the last samples) held out for validation.
            validation_data: ``(x_val, y_val)`` or a loader; evaluated at the end of each epoch
                (``val_loss``, ``val_<metric>`` in the logs).
            shuffle: reshuffle array data every epoch (a loader shuffles itself).
            seed: seed of the shuffling: epoch ``e``'s order depends on ``(seed, e)`` alone, so a run
                resumed with ``initial_epoch`` shuffles as the uninterrupted one. Without a seed the
                order is drawn from graphgrad's default generator (``gg.manual_seed``), whose state
                ``gg.save_checkpoint`` saves and ``gg.load_checkpoint`` restores: resuming from a
                checkpoint written at an epoch's end is bit-exact too.

        Returns:
            The :class:`History` (``history.history["loss"]``...).

        Under a launcher with several ranks (``python -m graphgrad.distributed.run -n 4 train.py``)
        fit trains data-parallel, with nothing to change: each rank trains on its share of the data
        (a ``DistributedSampler``'s: a new order every epoch from ``seed + epoch``, the same on every
        rank; ``seed=None`` lets rank 0 draw one; a ``DataLoader`` over a sequential or shuffled
        sampler is rebuilt on one, any other iterable is taken to be this rank's share), gradients
        are averaged during ``backward`` (``DistributedDataParallel``), and the epoch logs are over
        all the ranks' samples, so every rank's callbacks decide alike (``EarlyStopping`` stops all
        ranks at the same epoch). ``batch_size`` per rank on ``R`` ranks makes steps on
        ``R * batch_size`` samples. Batch logs (and ``stop_training``) are combined after every
        batch only when a callback has a batch hook; else the progress bar shows rank 0's values
        until the epoch ends. Only rank 0 prints and runs the callbacks that only write
        (``main_process_only``: ``CSVLogger``, ``TensorBoard``); ``ModelCheckpoint`` runs on every
        rank and rank 0 writes.
        """
        self._need("fit")
        if self.optimizer is None:
            raise RuntimeError("fit: the model was compiled without an optimizer")
        data = _Data(x, y, batch_size, "fit")
        val = None
        if validation_data is not None:
            val = _validation(validation_data, batch_size or 32)
        elif validation_split:
            data, val = data.split(float(validation_split))
        callbacks = list(callbacks or [])
        world = _parallel_world()
        batch_world = None
        if world is not None:  # one of several ranks: train on this rank's share, average the gradients
            from graphgrad.distributed import training as data_parallel

            seed = data_parallel.shared_seed(seed, world)
            data = data.sharded(world, training=True, shuffle=shuffle, seed=seed)
            val = None if val is None else val.sharded(world, training=False)
            verbose = verbose if world.rank == 0 else 0
            callbacks = [cb for cb in callbacks if world.rank == 0 or not cb.main_process_only]
            if any(_watches_batches(cb) for cb in callbacks if not cb.main_process_only):
                batch_world = world  # the same on every rank: combine the batch logs and stop flags too
            object.__setattr__(self, "_data_parallel", data_parallel.average_gradients(self))
        float_dtype = self._float_dtype()
        history = History()
        callback_list = CallbackList(callbacks + [history], model=self)
        object.__setattr__(self, "stop_training", False)
        object.__setattr__(self, "history", history)
        logs: dict = {}
        callback_list.on_train_begin(logs)
        for epoch in range(initial_epoch, epochs):
            self.train()
            loss_mean, metrics = _metrics.Mean(), self._make_metrics()
            callback_list.on_epoch_begin(epoch, {})
            progress = _Progress(verbose, epoch, epochs, len(data))
            for index, (xb, yb) in enumerate(data.batches(shuffle, _epoch_rng(seed, epoch), epoch)):
                xb, yb = self._tensor(xb, float_dtype), self._tensor(yb, float_dtype)
                if yb is None:
                    raise ValueError("fit: the batches have no targets; pass y or a loader of (x, y) batches")
                self._remember_input(xb)
                n = batch_rows(xb)
                callback_list.on_train_batch_begin(index, {"batch": index, "size": n})
                loss, output = self.train_step(xb, yb)
                if index == 0 and epoch == initial_epoch:
                    warn_if_softmax_into_logits_loss(self, output, self.loss_fn, getattr(self, "_loss_spec", None))
                loss_mean.update(loss.item(), n)
                output = output.detach() if isinstance(output, Tensor) else type(output)(o.detach() for o in output)
                for metric in metrics:
                    metric.update(output, yb)
                batch_logs = _logs(loss_mean, metrics, int(loss_mean.count), batch_world)
                callback_list.on_train_batch_end(index, batch_logs)
                progress.update(batch_logs)
                if self._stop_everywhere(batch_world):
                    break
            if world is not None:
                data_parallel.sync_buffers(self)
            logs = _logs(loss_mean, metrics, int(loss_mean.count), world)
            if val is not None:
                val_logs = self._evaluate(val, float_dtype, world)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callback_list.on_epoch_end(epoch, logs)
            progress.close(logs)
            if self._stop_everywhere(world):
                break
        self.train()
        callback_list.on_train_end(logs)
        if self._data_parallel is not None:
            self._data_parallel.remove_hooks()
            object.__setattr__(self, "_data_parallel", None)
        return history

    def _stop_everywhere(self, world) -> bool:
        """``stop_training``, on several ranks true everywhere as soon as one rank set it (a callback
        deciding on its own must not leave the other ranks waiting in a collective)."""
        if world is not None:
            from graphgrad.distributed.training import reduce_results

            _, stop = reduce_results([], 0, world, stop=self.stop_training, name="stop_training")
            object.__setattr__(self, "stop_training", stop)
        return self.stop_training

    # ---- evaluation ------------------------------------------------------------------------------------------------
    def _evaluate(self, data: _Data, float_dtype, world=None) -> dict:
        """Loss and metrics over ``data``; on several ranks (``world``) over every rank's share."""
        was_training = self.training
        self.eval()
        loss_mean, metrics = _metrics.Mean(), self._make_metrics()
        samples = 0
        try:
            with no_grad():
                for xb, yb in data.batches():
                    xb, yb = self._tensor(xb, float_dtype), self._tensor(yb, float_dtype)
                    if yb is None:
                        raise ValueError("evaluate: the batches have no targets")
                    self._remember_input(xb)
                    output = self(xb)
                    samples += batch_rows(xb)
                    if self.loss_fn is not None:
                        loss_mean.update(self.loss_fn(output, yb).item(), batch_rows(xb))
                    for metric in metrics:
                        metric.update(output, yb)
        finally:
            self.train(was_training)
        return _logs(loss_mean if self.loss_fn is not None else None, metrics, samples, world)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: Optional[int] = 32, verbose: int = 0,
                 callbacks: Optional[Sequence[Callback]] = None) -> dict:
        """The loss and metrics over ``(x, y)`` (or a loader), in eval mode without gradients:
        ``{"loss": ..., "accuracy": ...}``.

        Under a launcher with several ranks, call it on every rank: each evaluates its share (a
        strided split, no sample twice) and every rank returns the values over the whole data."""
        self._need("evaluate", loss=False)
        data = _Data(x, y, batch_size, "evaluate")
        callbacks = list(callbacks or [])
        world = _parallel_world()
        if world is not None:
            data = data.sharded(world, training=False)
            verbose = verbose if world.rank == 0 else 0
            callbacks = [cb for cb in callbacks if world.rank == 0 or not cb.main_process_only]
        callback_list = CallbackList(callbacks, model=self)
        callback_list.on_test_begin({})
        logs = self._evaluate(data, self._float_dtype(), world)
        callback_list.on_test_end(logs)
        if verbose:
            print(_line(logs), file=sys.stdout, flush=True)
        return logs

    def predict(self, x: Any, batch_size: Optional[int] = 32, verbose: int = 0) -> Any:
        """The model's outputs for ``x`` (array, Tensor or loader; batches' targets are ignored),
        concatenated over batches, as a NumPy array. Eval mode, no gradients.

        Under a launcher with several ranks, call it on every rank: each predicts its share of array
        data (or of a ``DataLoader`` over a ``SequentialSampler``) and every rank returns all the
        predictions, in order. Another loader or iterable is predicted as it is, on each rank."""
        data = _Data(x, None, batch_size, "predict")
        world = _parallel_world()
        if world is not None:
            verbose = verbose if world.rank == 0 else 0
            total = batch_rows(data.x) if data.loader is None else len(getattr(data.loader, "dataset", ()))
            share = data.sharded(world, training=False, in_order=True)
            if total >= world.size and (data.loader is None or share.loader is not data.loader):
                data = share
            else:
                world = None  # too few samples to split, or a loader that cannot be split in order
        float_dtype = self._float_dtype()
        was_training = self.training
        self.eval()
        outputs = []
        try:
            with no_grad():
                for xb, _ in data.batches():
                    xb = self._tensor(xb, float_dtype)
                    self._remember_input(xb)
                    out = self(xb)
                    outputs.append(out.numpy() if isinstance(out, Tensor) else tuple(o.numpy() for o in out))
        finally:
            self.train(was_training)
        if outputs and isinstance(outputs[0], tuple):  # several outputs: a list of arrays
            joined = [np.concatenate(parts, axis=0) for parts in zip(*outputs)]
            if world is not None:
                from graphgrad.distributed.training import gather_rows

                return [gather_rows(part, total, world) for part in joined]
            return joined
        if world is not None:
            from graphgrad.distributed.training import gather_rows

            return gather_rows(np.concatenate(outputs, axis=0), total, world)
        if verbose:
            print(f"predict: {sum(o.shape[0] for o in outputs)} samples", file=sys.stdout)
        if not outputs:
            return np.zeros((0,), dtype=float_dtype)
        return np.concatenate(outputs, axis=0)

    def predict_classes(self, x: Any, batch_size: Optional[int] = 32):
        """``argmax`` of :meth:`predict` over the class axis (1)."""
        return self.predict(x, batch_size).argmax(axis=1)

    # ---- weights ----------------------------------------------------------------------------------------------------
    def save_weights(self, path: str) -> str:
        """Save ``state_dict()`` with ``gg.save``. Returns ``path``."""
        from graphgrad.io.checkpoint import save

        save(self.state_dict(), path)
        return path

    def load_weights(self, path: str, strict: bool = True) -> None:
        """Load weights saved by :meth:`save_weights` (or ``gg.save(module.state_dict())``, also from a
        ``DistributedDataParallel``: its ``module.`` prefix is dropped)."""
        from graphgrad.io.checkpoint import _without_wrapper_prefix, load

        self.load_state_dict(_without_wrapper_prefix(load(path), self.state_dict()), strict=strict)

    # ---- summary -----------------------------------------------------------------------------------------------------
    def build(self, input_shape: Sequence[int], dtype: Any = None) -> None:
        """Record the shape of one input sample (no batch dimension) for :meth:`summary`."""
        from graphgrad.dtypes import as_dtype

        dtype = as_dtype(dtype) if dtype is not None else self._float_dtype()
        object.__setattr__(self, "input_spec", (tuple(input_shape), dtype))

    def _output_shapes(self, root: Module, input_shape: tuple, dtype) -> dict:
        """``id(module) -> output shape`` of each submodule on a zero batch of two samples, found by
        wrapping each submodule's ``forward`` for one call."""
        shapes: dict = {}
        patched = []

        def wrap(module):
            forward = module.forward

            def recording(*args, **kwargs):
                out = forward(*args, **kwargs)
                shapes.setdefault(id(module), _shape_of(out))
                return out

            object.__setattr__(module, "forward", recording)
            patched.append(module)

        for name, module in root.named_modules():
            if module is not root:
                wrap(module)
        was_training = self.training
        self.eval()
        try:
            params = list(root.parameters())
            xp = backend.namespace_of(params[0]._data) if params else np
            with no_grad():
                out = root(Tensor(xp.zeros((2,) + tuple(input_shape), dtype=dtype)))
            shapes[id(root)] = _shape_of(out)
        finally:
            for module in patched:
                if "forward" in module.__dict__:
                    object.__delattr__(module, "forward")
            self.train(was_training)
        return shapes

    def summary(self, input_shape: Optional[Sequence[int]] = None, dtype: Any = None, depth: int = 1,
                print_fn: Optional[Callable[[str], Any]] = print) -> str:
        """A table of the layers (to ``depth`` levels of nesting), their output shapes and parameter
        counts, with total, trainable and non-trainable parameter counts. Output shapes come from
        running a zero batch through the model; they need ``input_shape`` (one sample's shape), or a
        model that has already seen data (``fit``/``predict``/``build``); else they show ``?``.
        Prints the table with ``print_fn`` (``None``: don't) and returns it."""
        root = self.module if self.module is not None else self
        spec = self.input_spec
        if input_shape is not None:
            spec = (tuple(input_shape), dtype)
        shapes: dict = {}
        if spec is not None:
            from graphgrad.dtypes import as_dtype

            shape_dtype = as_dtype(spec[1]) if spec[1] is not None else self._float_dtype()
            shapes = self._output_shapes(root, spec[0], shape_dtype)
        rows = []
        for name, module in root.named_modules():
            level = name.count(".") + 1 if name else 0
            if module is root or level > depth:
                continue
            label = "  " * (level - 1) + f"{name.rsplit('.', 1)[-1]} ({type(module).__name__})"
            shape = shapes.get(id(module), "?" if not shapes else "-")
            rows.append((label, shape, f"{module.num_parameters():,}"))
        header = ("Layer (type)", "Output Shape", "Param #")
        widths = [max([len(header[i])] + [len(str(r[i])) for r in rows]) + 3 for i in range(3)]
        total_width = sum(widths)

        def line(cells) -> str:
            return "".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()

        total = root.num_parameters()
        trainable = root.num_parameters(trainable_only=True)
        out = [f'Model: "{type(self).__name__}"']
        if spec is not None:
            out.append(f"Input shape: {_format_shape((None,) + tuple(spec[0]))}")
        out += ["_" * total_width, line(header), "=" * total_width]
        for i, row in enumerate(rows):
            out.append(line(row))
            if i != len(rows) - 1:
                out.append("_" * total_width)
        if spec is not None and id(root) in shapes:
            out.append("=" * total_width)
            out.append(f"Output shape: {shapes[id(root)]}")
        out += ["=" * total_width, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
                f"Non-trainable params: {total - trainable:,}", "_" * total_width]
        text = "\n".join(out)
        if print_fn is not None:
            print_fn(text)
        return text


def _format_shape(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _shape_of(out: Any) -> str:
    """The output shape with the batch dimension as ``None`` (lists of shapes for tuple outputs)."""
    if isinstance(out, Tensor) or backend.is_array(out):
        shape = tuple(out.shape)
        return _format_shape((None,) + shape[1:]) if shape else "()"
    if isinstance(out, (tuple, list)):
        return "[" + ", ".join(_shape_of(o) for o in out) + "]"
    return type(out).__name__


class Sequential(Model):
    """A :class:`Model` over ``gg.nn.Sequential(*layers)``; layers can be added with :meth:`add`.

    Examples:
        >>> model = gg.Sequential([gg.nn.Linear(4, 8), gg.nn.ReLU(), gg.nn.Linear(8, 3)])
        >>> model.summary(input_shape=(4,))
    """

    def __init__(self, layers: Optional[Sequence[Module]] = None) -> None:
        layers = list(layers or [])
        for layer in layers:
            if not isinstance(layer, Module):
                raise TypeError(f"Sequential: every layer must be a gg.nn.Module, got {type(layer).__name__}")
        super().__init__(_NNSequential(*layers))

    def add(self, layer: Module) -> "Sequential":
        """Append ``layer`` (before ``compile``: the optimizer is made from the parameters then)."""
        if not isinstance(layer, Module):
            raise TypeError(f"Sequential.add: expected a gg.nn.Module, got {type(layer).__name__}")
        self.module.append(layer)
        return self

    @property
    def layers(self) -> list:
        return list(self.module)

    def __len__(self) -> int:
        return len(self.module)

    def __getitem__(self, index):
        return self.module[index]

    def __iter__(self):
        return iter(self.module)
