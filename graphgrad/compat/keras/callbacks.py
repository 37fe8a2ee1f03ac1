"""``keras.callbacks``: graphgrad's callbacks (``gg.train.callbacks``, written after Keras') with
Keras' defaults where they differ: ``ModelCheckpoint`` saves the whole model (``model.save``) every
epoch unless ``save_best_only=True`` / ``save_weights_only=True``; ``TensorBoard`` writes no
histograms unless ``histogram_freq`` is set."""
from __future__ import annotations

from typing import Any

import graphgrad as gg

__all__ = ["Callback", "History", "LambdaCallback", "EarlyStopping", "ModelCheckpoint", "CSVLogger", "TensorBoard",
           "LearningRateScheduler", "ReduceLROnPlateau", "TerminateOnNaN"]

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
