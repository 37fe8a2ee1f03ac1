"""``keras.callbacks``: graphgrad's callbacks (``gg.train.callbacks``, written after Keras') with
Keras' defaults where they differ: ``ModelCheckpoint`` saves the whole model (``model.save``) every
epoch unless ``save_best_only=True`` / ``save_weights_only=True``; ``TensorBoard`` writes no
histograms unless ``histogram_freq`` is set."""
from __future__ import annotations

from typing import Any

import graphgrad as gg

__all__ = ["Callback", "History", "LambdaCallback", "EarlyStopping", "ModelCheckpoint", "CSVLogger", "TensorBoard",
           "LearningRateScheduler", "ReduceLROnPlateau", "TerminateOnNaN", "BackupAndRestore"]

_cb = gg.train.callbacks
Callback, History, LambdaCallback = _cb.Callback, _cb.History, _cb.LambdaCallback
EarlyStopping, CSVLogger, LearningRateScheduler, ReduceLROnPlateau = (
    _cb.EarlyStopping, _cb.CSVLogger, _cb.LearningRateScheduler, _cb.ReduceLROnPlateau)


class ModelCheckpoint(_cb.ModelCheckpoint):
    """``ModelCheckpoint(filepath, monitor="val_loss", save_best_only=False, save_weights_only=False)``:
    ``model.save(filepath)`` (a ``.keras`` file that ``keras.models.load_model`` reads) or, with
    ``save_weights_only``, ``model.save_weights``. ``filepath`` may hold ``{epoch:02d}`` and log keys."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0, save_best_only: bool = False,
                 save_weights_only: bool = False, mode: str = "auto", save_freq: Any = "epoch",
                 initial_value_threshold: Any = None) -> None:
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"ModelCheckpoint: save_freq must be 'epoch' or an int, got {save_freq!r}")
        super().__init__(str(filepath), monitor=monitor, verbose=verbose, save_best_only=save_best_only, mode=mode,
                         save_freq=1 if save_freq == "epoch" else int(save_freq), save_weights_only=True)
        self.keras_weights_only = bool(save_weights_only)
        if initial_value_threshold is not None:
            self.best = float(initial_value_threshold)

    def _save(self, path: str, epoch: int) -> None:
        if self.keras_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
        self.last_saved = path


class TensorBoard(_cb.TensorBoard):
    """``TensorBoard(log_dir="logs", histogram_freq=0, write_graph=True)`` (other Keras arguments are accepted
    and ignored)."""

    def __init__(self, log_dir: str = "logs", histogram_freq: int = 0, write_graph: bool = True, **kwargs) -> None:
        super().__init__(log_dir=log_dir, histogram_freq=histogram_freq, write_graph=write_graph)


class TerminateOnNaN(Callback):
    """Stop training when the loss becomes NaN or infinite."""

    def on_train_batch_end(self, batch: int, logs=None) -> None:
        import math

        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            print(f"Batch {batch}: invalid loss, terminating training")
            self.model.stop_training = True


class BackupAndRestore(Callback):
    """``BackupAndRestore(backup_dir, save_freq="epoch", delete_checkpoint=True)``: after each epoch, the
    weights, the optimizer's state and the epoch go to ``backup_dir``; a ``fit`` that finds a backup there
    (its previous run was interrupted) restores them and resumes after the last finished epoch. A run
    that ends normally deletes the backup (unless ``delete_checkpoint=False``)."""

    def __init__(self, backup_dir: str, save_freq: Any = "epoch", double_checkpoint: bool = False,
                 delete_checkpoint: bool = True) -> None:
        super().__init__()
        if save_freq != "epoch":
            raise NotImplementedError("BackupAndRestore: only save_freq='epoch' is supported by graphgrad.compat.keras")
        if not backup_dir:
            raise ValueError("BackupAndRestore: backup_dir is required")
        self.backup_dir, self.delete_checkpoint = str(backup_dir), bool(delete_checkpoint)

    def _paths(self) -> tuple:
        import os

        return tuple(os.path.join(self.backup_dir, name) for name in ("latest.weights.npz", "optimizer.gg", "epoch.json"))

    def restore_into(self, model) -> int:
        """Load a backup into ``model`` (built and compiled); the epoch to start from (0 without one)."""
        import json
        import os

        weights, optimizer, epoch = self._paths()
        if not os.path.exists(epoch):
            return 0
        model.load_weights(weights)
        if os.path.exists(optimizer) and getattr(model, "optimizer", None) is not None:
            model.optimizer.load_state_dict(gg.load(optimizer))
        with open(epoch) as f:
            return int(json.load(f)["epoch"])

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        import json
        import os

        os.makedirs(self.backup_dir, exist_ok=True)
        weights, optimizer, done = self._paths()
        self.model.save_weights(weights)
        if getattr(self.model, "optimizer", None) is not None:
            gg.save(self.model.optimizer.state_dict(), optimizer)
        with open(done + ".tmp", "w") as f:
            json.dump({"epoch": int(epoch) + 1}, f)
        os.replace(done + ".tmp", done)

    def on_train_end(self, logs=None) -> None:
        import os

        if self.delete_checkpoint:
            for path in self._paths():
                if os.path.exists(path):
                    os.remove(path)
