"""Callbacks for ``Model.fit``, Keras-style: hooks called at the start and end of training, of each
epoch and of each batch, with the logs (``{"loss": ..., "accuracy": ..., "val_loss": ...}``).

A callback reaches the model as ``self.model`` (set by ``fit``); setting ``self.model.stop_training
= True`` ends training after the current batch. Epochs are numbered from 0 in the hooks (shown from
1 in progress output and in ``ModelCheckpoint`` file names, as in Keras).

Under a launcher with several ranks, ``fit`` runs every callback on every rank with the same logs
(averaged over the ranks), except those whose ``main_process_only`` is true (``CSVLogger``,
``TensorBoard``: they only write), which run on rank 0 alone; callbacks print on rank 0 only.

Examples:
    >>> model.fit(x, y, epochs=50, validation_split=0.2,
    ...           callbacks=[EarlyStopping(patience=3, restore_best_weights=True),
    ...                      ModelCheckpoint("ckpt/best.safetensors")])
"""
from __future__ import annotations

import csv
import math
import os
import sys
import warnings
from typing import Any, Callable, Optional

from graphgrad import backend
from graphgrad.backend import np

__all__ = ["Callback", "CallbackList", "History", "EarlyStopping", "ModelCheckpoint", "LearningRateScheduler",
           "ReduceLROnPlateau", "CSVLogger", "TensorBoard", "LambdaCallback"]


class Callback:
    """Base class: override the hooks you need. ``logs`` is a dict of floats (may be empty).

    Set ``main_process_only = True`` on a callback that only writes (files, output): under several
    ranks ``fit`` then runs it on rank 0 alone. Callbacks that decide (stop, change the learning
    rate) must run on every rank.
    """

    main_process_only = False

    def __init__(self) -> None:
        self.model = None

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_train_end(self, logs: Optional[dict] = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None: ...
    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self.on_batch_end(batch, logs)

    def on_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        """Alias of ``on_train_batch_end`` (Keras' older name)."""

    def on_test_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_test_end(self, logs: Optional[dict] = None) -> None: ...
    def on_predict_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_predict_end(self, logs: Optional[dict] = None) -> None: ...


class CallbackList(Callback):
    """Calls each hook on every callback, in order."""

    def __init__(self, callbacks=(), model=None) -> None:
        super().__init__()
        self.callbacks = list(callbacks)
        if model is not None:
            self.set_model(model)

    def set_model(self, model) -> None:
        super().set_model(model)
        for cb in self.callbacks:
            cb.set_model(model)

    def _call(self, hook: str, *args) -> None:
        for cb in self.callbacks:
            getattr(cb, hook)(*args)

    def on_train_begin(self, logs=None): self._call("on_train_begin", logs)
    def on_train_end(self, logs=None): self._call("on_train_end", logs)
    def on_epoch_begin(self, epoch, logs=None): self._call("on_epoch_begin", epoch, logs)
    def on_epoch_end(self, epoch, logs=None): self._call("on_epoch_end", epoch, logs)
    def on_train_batch_begin(self, batch, logs=None): self._call("on_train_batch_begin", batch, logs)
    def on_train_batch_end(self, batch, logs=None): self._call("on_train_batch_end", batch, logs)
    def on_test_begin(self, logs=None): self._call("on_test_begin", logs)
    def on_test_end(self, logs=None): self._call("on_test_end", logs)
    def on_predict_begin(self, logs=None): self._call("on_predict_begin", logs)
    def on_predict_end(self, logs=None): self._call("on_predict_end", logs)


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(self, **hooks: Callable) -> None:
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise ValueError(f"LambdaCallback: unknown hook {name!r}")
            setattr(self, name, fn)


# ---- History --------------------------------------------------------------------------------------
class History(Callback):
    """Records the epoch logs: ``history.history["loss"]`` is the list of epoch losses, and
    ``history.epoch`` the epoch numbers. ``fit`` returns one (also kept as ``model.history``)."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict = {}
        self.epoch: list = []

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)

    def plot(self, path: str, keys: Optional[list] = None, title: Optional[str] = None) -> str:
        """Draw the loss and metric curves to an image file (``.png``, ``.svg``, ``.pdf``...): one
        panel per quantity, training and ``val_`` curves together. Needs matplotlib (the ``plots``
        extra). Returns ``path``."""
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise ImportError("History.plot needs matplotlib: pip install 'graphgrad[plots]'") from exc
        names = keys or [k for k in self.history if not k.startswith("val_")]
        names = [k for k in names if k in self.history or f"val_{k}" in self.history]
        if not names:
            raise ValueError("History.plot: nothing recorded yet (run fit first)")
        fig = Figure(figsize=(5 * len(names), 3.6))
        FigureCanvasAgg(fig)
        for i, key in enumerate(names):
            ax = fig.add_subplot(1, len(names), i + 1)
            for name, style in ((key, "-"), (f"val_{key}", "--")):
                if name in self.history:
                    values = self.history[name]
                    ax.plot([e + 1 for e in self.epoch[:len(values)]], values, style, marker="o", markersize=3,
                            label=name)
            ax.set_xlabel("epoch")
            ax.set_title(key)
            ax.grid(alpha=0.3)
            ax.legend()
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        fig.savefig(path)
        return path


# ---- monitoring helpers ----------------------------------------------------------------------------------
def _mode(monitor: str, mode: str, who: str) -> str:
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"{who}: mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode != "auto":
        return mode
    name = monitor.removeprefix("val_")
    higher = ("acc", "accuracy", "precision", "recall", "f1", "auc")
    return "max" if any(name == h or name.startswith(h) or name.endswith(h) for h in higher) else "min"


def _better(mode: str, value: float, best: float, min_delta: float) -> bool:
    return value < best - min_delta if mode == "min" else value > best + min_delta


def _monitored(logs: Optional[dict], monitor: str, who: str) -> Optional[float]:
    value = (logs or {}).get(monitor)
    if value is None:
        warnings.warn(f"{who}: {monitor!r} is not in the logs (available: {sorted(logs or {})}); "
                      "pass validation data or monitor another quantity", RuntimeWarning, stacklevel=3)
        return None
    return float(value)


def _optimizer(model, who: str):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "param_groups"):
        raise RuntimeError(f"{who} needs a compiled model with an optimizer that has param_groups")
    return optimizer


def _get_lr(optimizer) -> float:
    return float(optimizer.param_groups[0]["lr"])


def _set_lr(optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = float(lr)


def _print(*args, **kwargs) -> None:
    """``print``, on rank 0 only when several ranks run the same callbacks."""
    from graphgrad.distributed.world import is_main_process

    if is_main_process():
        print(*args, **kwargs)


def _copy_state(model) -> dict:
    return {k: v._data.copy() for k, v in model.state_dict().items()}


# ---- EarlyStopping -----------------------------------------------------------------------------------------
class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience`` epochs.

    Args:
        monitor: the log key to watch (``"val_loss"``; ``"loss"`` when there is no validation data).
        min_delta: the smallest change that counts as an improvement.
        patience: epochs without improvement before stopping.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (max for accuracy-like names).
        baseline: stop if the quantity does not beat this within ``patience`` epochs.
        restore_best_weights: at the end of training, put back the weights of the best epoch.
        start_from_epoch: epochs to wait before watching (warm-up).

    After training ``stopped_epoch`` is the epoch at which it stopped (0 if it did not) and
    ``best_epoch`` the best one.
    """

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0.0, patience: int = 0, verbose: int = 0,
                 mode: str = "auto", baseline: Optional[float] = None, restore_best_weights: bool = False,
                 start_from_epoch: int = 0) -> None:
        super().__init__()
        self.monitor, self.min_delta, self.patience = monitor, abs(float(min_delta)), int(patience)
        self.verbose, self.baseline, self.restore_best_weights = verbose, baseline, restore_best_weights
        self.start_from_epoch = int(start_from_epoch)
        self.mode = _mode(monitor, mode, "EarlyStopping")

    def on_train_begin(self, logs=None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best_epoch = 0
        self.best = math.inf if self.mode == "min" else -math.inf
        self.best_weights = None

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        if epoch < self.start_from_epoch:
            return
        value = _monitored(logs, self.monitor, "EarlyStopping")
        if value is None:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = _copy_state(self.model)  # so there is always something to restore
        self.wait += 1
        if _better(self.mode, value, self.best, self.min_delta):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights:
                self.best_weights = _copy_state(self.model)
            if self.baseline is None or _better(self.mode, value, self.baseline, 0.0):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None) -> None:
        if self.stopped_epoch > 0 and self.verbose:
            _print(f"Epoch {self.stopped_epoch + 1}: early stopping", file=sys.stdout)
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose:
                _print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.load_state_dict(self.best_weights)


# ---- ModelCheckpoint -------------------------------------------------------------------------------------------
class ModelCheckpoint(Callback):
    """Save the model's ``state_dict`` with ``gg.save`` at the end of epochs.

    Under several ranks it runs on every rank (all see the same logs, so all decide alike): rank 0
    writes the file while the others wait for it, so every rank may read it afterwards.

    Args:
        filepath: where to save; may contain ``{epoch}`` (from 1) and log keys with formats, e.g.
            ``"ckpt/model-{epoch:02d}-{val_loss:.3f}.safetensors"``.
        monitor: the log key that decides what "best" is.
        save_best_only: save only when ``monitor`` improves (else every ``save_freq`` epochs).
        mode: ``"min"``, ``"max"`` or ``"auto"``.
        save_freq: with ``save_best_only=False``, save every this many epochs.
        save_weights_only: ``True`` (the default) writes the ``state_dict`` (``gg.load`` reads it);
            ``False`` writes a training checkpoint (``gg.save_checkpoint``: weights, optimizer state,
            epoch and random states), from which ``gg.load_checkpoint`` and ``fit(initial_epoch=...)``
            resume exactly.

    ``last_saved`` is the path of the latest file written, ``best`` the best value seen.
    """

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0, save_best_only: bool = True,
                 mode: str = "auto", save_freq: int = 1, save_weights_only: bool = True) -> None:
        super().__init__()
        self.save_weights_only = bool(save_weights_only)
        self.filepath, self.monitor, self.verbose = str(filepath), monitor, verbose
        self.save_best_only, self.save_freq = save_best_only, int(save_freq)
        self.mode = _mode(monitor, mode, "ModelCheckpoint")
        self.best = math.inf if self.mode == "min" else -math.inf
        self.last_saved: Optional[str] = None

    def _path(self, epoch: int, logs: dict) -> str:
        try:
            return self.filepath.format(epoch=epoch + 1, **logs)
        except KeyError as exc:
            raise KeyError(f"ModelCheckpoint: file path {self.filepath!r} uses {exc.args[0]!r}, which is not in the "
                           f"logs {sorted(logs)}") from None

    def _save(self, path: str, epoch: int) -> None:
        from graphgrad.io.checkpoint import save, save_checkpoint  # io is a sibling layer, loaded on first use

        from graphgrad.distributed.training import written_by_rank_zero

        def write() -> None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if self.save_weights_only:
                save(self.model.state_dict(), path)
            else:
                save_checkpoint(path, self.model, getattr(self.model, "optimizer", None), epoch=epoch + 1)

        written_by_rank_zero(write, repr(path))
        self.last_saved = path

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        logs = dict(logs or {})
        if not self.save_best_only:
            if (epoch + 1) % self.save_freq == 0:
                self._save(self._path(epoch, logs), epoch)
            return
        value = _monitored(logs, self.monitor, "ModelCheckpoint")
        if value is None or not _better(self.mode, value, self.best, 0.0):
            return
        if self.verbose:
            _print(f"Epoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to {value:.5f}, saving model")
        self.best = value
        self._save(self._path(epoch, logs), epoch)


# ---- learning rate --------------------------------------------------------------------------------------------------
class LearningRateScheduler(Callback):
    """Set the learning rate each epoch.

    ``schedule`` is either a function ``fn(epoch, lr) -> new lr`` (called at the start of each epoch,
    epochs from 0, as in Keras) or a ``gg.optim`` scheduler built on the model's optimizer
    (``StepLR``...), whose ``step()`` is called at the end of each epoch (``step(logs[monitor])``
    for schedulers that take a metric, like ``gg.optim.ReduceLROnPlateau``). The learning rate is
    recorded in the logs as ``"lr"``.
    """

    def __init__(self, schedule: Any, verbose: int = 0, monitor: str = "val_loss") -> None:
        super().__init__()
        if not (callable(schedule) or hasattr(schedule, "step")):
            raise TypeError("LearningRateScheduler needs a function fn(epoch, lr) or a gg.optim scheduler")
        self.schedule, self.verbose, self.monitor = schedule, verbose, monitor
        self.is_scheduler = hasattr(schedule, "step") and not _plain_function(schedule)

    def on_epoch_begin(self, epoch: int, logs=None) -> None:
        if self.is_scheduler:
            return
        optimizer = _optimizer(self.model, "LearningRateScheduler")
        lr = self.schedule(epoch, _get_lr(optimizer))
        lr = float(lr.item() if hasattr(lr, "item") else lr)
        if not math.isfinite(lr):
            raise ValueError(f"LearningRateScheduler: the schedule returned {lr} for epoch {epoch}")
        _set_lr(optimizer, lr)
        if self.verbose:
            _print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr:g}.")

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        if self.is_scheduler:
            if _takes_metric(self.schedule.step):
                key = self.monitor if logs and self.monitor in logs else "loss"
                self.schedule.step(_monitored(logs, key, "LearningRateScheduler"))
            else:
                self.schedule.step()
        if logs is not None and self.model is not None and getattr(self.model, "optimizer", None) is not None:
            logs["lr"] = _get_lr(self.model.optimizer)


def _plain_function(obj) -> bool:
    import types

    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType))


def _takes_metric(step: Callable) -> bool:
    import inspect

    try:
        params = [p for p in inspect.signature(step).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0].name in ("metrics", "metric", "value", "loss", "current")


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when ``monitor`` has stopped improving for
    ``patience`` epochs (Keras' callback; ``gg.optim.ReduceLROnPlateau`` is the PyTorch-style one).

    Args:
        monitor: the quantity watched, ``"val_loss"`` by default.
        factor: the multiplier, below 1.
        patience: epochs with no improvement before reducing.
        mode: ``"min"``, ``"max"`` or ``"auto"``.
        min_delta: the smallest change that counts as an improvement.
        cooldown: epochs to wait after a reduction before counting again.
        min_lr: the learning rate never goes below this.
    """

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10, verbose: int = 0,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0.0) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be below 1, got {factor}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, float(factor), int(patience), verbose
        self.min_delta, self.cooldown, self.min_lr = float(min_delta), int(cooldown), float(min_lr)
        self.mode = _mode(monitor, mode, "ReduceLROnPlateau")

    def on_train_begin(self, logs=None) -> None:
        self.best = math.inf if self.mode == "min" else -math.inf
        self.wait = 0
        self.cooldown_counter = 0

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        optimizer = _optimizer(self.model, "ReduceLROnPlateau")
        value = _monitored(logs, self.monitor, "ReduceLROnPlateau")
        if value is not None:
            if self.cooldown_counter > 0:
                self.cooldown_counter -= 1
                self.wait = 0
            if _better(self.mode, value, self.best, self.min_delta):
                self.best, self.wait = value, 0
            elif self.cooldown_counter <= 0:
                self.wait += 1
                if self.wait >= self.patience:
                    old = _get_lr(optimizer)
                    new = max(old * self.factor, self.min_lr)
                    if old - new > 1e-12:
                        _set_lr(optimizer, new)
                        if self.verbose:
                            _print(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new:g}.")
                        self.cooldown_counter = self.cooldown
                        self.wait = 0
        if logs is not None:
            logs["lr"] = _get_lr(optimizer)


# ---- CSVLogger ---------------------------------------------------------------------------------------------------------
class CSVLogger(Callback):
    """Append one row per epoch (``epoch`` and every log key, sorted) to a CSV file.

    Args:
        filename: the CSV path (directories are created).
        separator: the field separator.
        append: keep an existing file and add rows (no second header) instead of overwriting.
    """

    main_process_only = True

    def __init__(self, filename: str, separator: str = ",", append: bool = False) -> None:
        super().__init__()
        self.filename, self.separator, self.append = str(filename), separator, append
        self.keys: Optional[list] = None
        self._file = None
        self._writer = None

    def on_train_begin(self, logs=None) -> None:
        directory = os.path.dirname(os.path.abspath(self.filename))
        os.makedirs(directory, exist_ok=True)
        has_header = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename) > 0
        if has_header:
            with open(self.filename, newline="") as f:
                header = next(csv.reader(f, delimiter=self.separator), None)
            self.keys = header[1:] if header else None
        else:
            self.keys = None
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._writer = None

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self._writer is None:
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self.keys, delimiter=self.separator,
                                          extrasaction="ignore")
            if self._file.tell() == 0:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update({k: _csv_value(logs.get(k, "NA")) for k in self.keys})
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None) -> None:
        if self._file is not None:
            self._file.close()
            self._file, self._writer = None, None


def _csv_value(value: Any):
    if isinstance(value, (float, int, str)):
        return value
    if backend.is_array(value) or hasattr(value, "item"):
        return float(np.asarray(value))
    return value


# ---- TensorBoard -------------------------------------------------------------------------------------------------------
class TensorBoard(Callback):
    """Write TensorBoard logs: epoch scalars (``log_dir/train`` and ``log_dir/validation``, tags
    ``epoch_loss``, ``epoch_accuracy``... so both curves overlay), parameter histograms every
    ``histogram_freq`` epochs (0: never), and the model's graph (``write_graph``) traced on the
    shape of the first training batch. Needs the ``tensorboard`` extra.
    """

    main_process_only = True

    def __init__(self, log_dir: str = "logs", histogram_freq: int = 1, write_graph: bool = True) -> None:
        super().__init__()
        self.log_dir, self.histogram_freq, self.write_graph = str(log_dir), int(histogram_freq), write_graph
        self._writers: dict = {}

    def _writer(self, which: str):
        if which not in self._writers:
            from graphgrad.train.tensorboard import SummaryWriter

            self._writers[which] = SummaryWriter(os.path.join(self.log_dir, which))
        return self._writers[which]

    def on_train_begin(self, logs=None) -> None:
        self._writer("train")  # fail early when tensorboard is missing
        self._graph_written = False

    def _maybe_graph(self) -> None:
        if self._graph_written or not self.write_graph:
            return
        spec = getattr(self.model, "input_spec", None)
        if spec is None:
            return
        self._graph_written = True
        try:
            self._writer("train").add_graph(self.model, input_shape=spec[0], dtype=spec[1])
        except Exception as exc:  # a graph the tracer cannot build must not stop training
            warnings.warn(f"TensorBoard: could not trace the model's graph: {exc}", RuntimeWarning, stacklevel=2)

    def on_train_batch_end(self, batch: int, logs=None) -> None:
        self._maybe_graph()

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        self._maybe_graph()
        for key, value in (logs or {}).items():
            which, tag = ("validation", key[4:]) if key.startswith("val_") else ("train", key)
            self._writer(which).add_scalar(f"epoch_{tag}", float(value), epoch)
        if self.histogram_freq and (epoch + 1) % self.histogram_freq == 0:
            writer = self._writer("train")
            for name, p in self.model.named_parameters():
                writer.add_histogram(name.replace(".", "/"), p.numpy(), epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
