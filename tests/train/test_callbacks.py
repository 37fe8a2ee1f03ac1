"""gg.train.callbacks: History, EarlyStopping, ModelCheckpoint, LearningRateScheduler,
ReduceLROnPlateau, CSVLogger (the TensorBoard callback is tested in test_tensorboard.py)."""
from __future__ import annotations

import csv
import os

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.train import callbacks as C


def blobs(n=80, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[2.0, 0.0], [-2.0, 1.0], [0.0, -2.5]])
    y = rng.integers(0, 3, n)
    return (centres[y] + rng.normal(scale=0.4, size=(n, 2))).astype(np.float32), y


def model(lr=0.05, seed=0):
    gg.manual_seed(seed)
    m = gg.Sequential([gg.nn.Linear(2, 8), gg.nn.ReLU(), gg.nn.Linear(8, 3)])
    m.compile(optimizer=(gg.optim.SGD, {"lr": lr}), loss="cross_entropy", metrics=["accuracy"])
    return m


class Scripted(gg.train.Callback):
    """Overwrites a log value with a scripted sequence (to drive the monitoring callbacks)."""

    def __init__(self, key, values):
        super().__init__()
        self.key, self.values = key, list(values)

    def on_epoch_end(self, epoch, logs=None):
        logs[self.key] = self.values[epoch]


class Recorder(gg.train.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None): self.calls.append("train_begin")
    def on_epoch_begin(self, epoch, logs=None): self.calls.append(f"epoch_begin {epoch}")
    def on_batch_end(self, batch, logs=None): self.calls.append(f"batch_end {batch}")
    def on_epoch_end(self, epoch, logs=None): self.calls.append(f"epoch_end {epoch} {sorted(logs)}")
    def on_train_end(self, logs=None): self.calls.append("train_end")


def test_hook_order_and_history():
    x, y = blobs(20)
    rec = Recorder()
    m = model()
    h = m.fit(x, y, epochs=2, batch_size=10, verbose=0, callbacks=[rec], validation_data=(x, y))
    logs = "['accuracy', 'loss', 'val_accuracy', 'val_loss']"
    assert rec.calls == ["train_begin", "epoch_begin 0", "batch_end 0", "batch_end 1", f"epoch_end 0 {logs}",
                         "epoch_begin 1", "batch_end 0", "batch_end 1", f"epoch_end 1 {logs}", "train_end"]
    assert rec.model is m
    assert isinstance(h, C.History) and h.epoch == [0, 1]
    assert all(len(v) == 2 for v in h.history.values())


def test_lambda_callback():
    seen = []
    x, y = blobs(20)
    model().fit(x, y, epochs=3, verbose=0, callbacks=[C.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))])
    assert seen == [0, 1, 2]
    with pytest.raises(ValueError):
        C.LambdaCallback(on_nothing=print)


def test_early_stopping_patience_and_restore_best_weights():
    x, y = blobs()
    m = model()
    snapshots = []
    keep = gg.train.callbacks.LambdaCallback(
        on_epoch_end=lambda e, logs: snapshots.append({k: v.numpy().copy() for k, v in m.state_dict().items()}))
    val = [1.0, 0.5, 0.6, 0.7, 0.55, 0.9, 0.3]
    stop = C.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)
    h = m.fit(x, y, epochs=7, verbose=0, callbacks=[Scripted("val_loss", val), keep, stop])
    assert len(h.history["loss"]) == 5  # epochs 2, 3, 4 did not beat 0.5: stop after epoch 4
    assert stop.stopped_epoch == 4 and stop.best_epoch == 1 and stop.best == 0.5
    for key, value in m.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), snapshots[1][key])
    assert not np.array_equal(snapshots[1]["0.weight"], snapshots[4]["0.weight"])


def test_early_stopping_mode_and_min_delta():
    x, y = blobs(20)
    stop = C.EarlyStopping(monitor="val_accuracy", patience=1, min_delta=0.05)
    assert stop.mode == "max"
    h = model().fit(x, y, epochs=5, verbose=0, callbacks=[Scripted("val_accuracy", [0.5, 0.53, 0.9, 0.91, 0.92]), stop])
    assert len(h.history["loss"]) == 2  # +0.03 is below min_delta
    with pytest.warns(RuntimeWarning, match="not in the logs"):
        model().fit(x, y, epochs=1, verbose=0, callbacks=[C.EarlyStopping(monitor="val_loss")])


def test_model_checkpoint_best_only(tmp_path):
    x, y = blobs()
    m = model()
    path = str(tmp_path / "ckpt" / "model-{epoch:02d}-{val_loss:.3f}.npz")
    ckpt = C.ModelCheckpoint(path, monitor="val_loss", save_best_only=True)
    snapshots = []
    watch = C.LambdaCallback(
        on_epoch_end=lambda e, logs: snapshots.append({k: v.numpy().copy() for k, v in m.state_dict().items()}))
    val = [0.9, 0.8, 0.85, 0.7, 0.75]
    m.fit(x, y, epochs=5, verbose=0, callbacks=[Scripted("val_loss", val), ckpt, watch])
    files = sorted(os.listdir(tmp_path / "ckpt"))
    assert files == ["model-01-0.900.npz", "model-02-0.800.npz", "model-04-0.700.npz"]
    assert ckpt.best == 0.7
    # the best file holds the weights of epoch 4, loadable into a fresh model
    fresh = model(seed=5)
    fresh.load_state_dict(gg.load(str(tmp_path / "ckpt" / "model-04-0.700.npz")))
    for key, value in fresh.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), snapshots[3][key])


def test_model_checkpoint_every_epoch(tmp_path):
    x, y = blobs(20)
    ckpt = C.ModelCheckpoint(str(tmp_path / "e{epoch}.npz"), save_best_only=False)
    model().fit(x, y, epochs=3, verbose=0, callbacks=[ckpt])
    assert sorted(os.listdir(tmp_path)) == ["e1.npz", "e2.npz", "e3.npz"]
    with pytest.raises(KeyError, match="val_loss"):
        model().fit(x, y, epochs=1, verbose=0,
                    callbacks=[C.ModelCheckpoint(str(tmp_path / "{val_loss}.npz"), save_best_only=False)])


def test_learning_rate_scheduler_function():
    x, y = blobs(20)
    m = model(lr=0.1)
    seen = []
    sched = C.LearningRateScheduler(lambda epoch, lr: 0.1 * 0.5 ** epoch)
    spy = C.LambdaCallback(on_epoch_begin=lambda e, logs: seen.append(m.optimizer.param_groups[0]["lr"]))
    h = m.fit(x, y, epochs=4, verbose=0, callbacks=[sched, spy])
    assert seen == pytest.approx([0.1, 0.05, 0.025, 0.0125])
    assert h.history["lr"] == pytest.approx([0.1, 0.05, 0.025, 0.0125])


def test_learning_rate_scheduler_with_gg_optim_scheduler():
    x, y = blobs(20)
    m = model(lr=1.0)
    step = gg.optim.StepLR(m.optimizer, step_size=2, gamma=0.1)
    h = m.fit(x, y, epochs=5, verbose=0, callbacks=[C.LearningRateScheduler(step)])
    assert h.history["lr"] == pytest.approx([1.0, 0.1, 0.1, 0.01, 0.01])
    m = model(lr=1.0)
    plateau = gg.optim.ReduceLROnPlateau(m.optimizer, patience=0, factor=0.5)
    h = m.fit(x, y, epochs=3, verbose=0,
              callbacks=[Scripted("val_loss", [1.0, 2.0, 3.0]), C.LearningRateScheduler(plateau)])
    assert h.history["lr"] == pytest.approx([1.0, 0.5, 0.25])


def test_reduce_lr_on_plateau():
    x, y = blobs(20)
    m = model(lr=1.0)
    cb = C.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2, min_lr=0.2, cooldown=1)
    val = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]
    h = m.fit(x, y, epochs=9, verbose=0, callbacks=[Scripted("val_loss", val), cb])
    # Keras' rule: reduce after 2 bad epochs (epoch 3); the cooldown epoch (4) resets the count but
    # counts as bad once over, so epoch 5 reduces again; then 6, 7 -> min_lr
    assert h.history["lr"] == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2])
    m2 = model(lr=1.0)
    cb2 = C.ReduceLROnPlateau(factor=0.1, patience=1, min_lr=0.2)
    h = m2.fit(x, y, epochs=4, verbose=0, callbacks=[Scripted("val_loss", [1, 1, 1, 1]), cb2])
    assert h.history["lr"] == pytest.approx([1.0, 0.2, 0.2, 0.2])
    with pytest.raises(ValueError):
        C.ReduceLROnPlateau(factor=1.5)


def test_csv_logger(tmp_path):
    x, y = blobs(20)
    path = tmp_path / "logs" / "train.csv"
    m = model()
    h = m.fit(x, y, epochs=3, verbose=0, validation_data=(x, y), callbacks=[C.CSVLogger(str(path))])
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["epoch", "accuracy", "loss", "val_accuracy", "val_loss"]
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    for key in ("loss", "val_accuracy"):
        np.testing.assert_allclose([float(r[key]) for r in rows], h.history[key], rtol=1e-6)
    # append keeps the header and adds rows; overwrite starts again
    m.fit(x, y, epochs=2, verbose=0, validation_data=(x, y), callbacks=[C.CSVLogger(str(path), append=True)])
    with open(path, newline="") as f:
        text = f.read()
    assert text.count("epoch,") == 1 and len(text.strip().splitlines()) == 6
    m.fit(x, y, epochs=1, verbose=0, callbacks=[C.CSVLogger(str(path), separator=";")])
    assert open(path).read().splitlines()[0] == "epoch;accuracy;loss"


def test_history_plot(tmp_path):
    pytest.importorskip("matplotlib")
    x, y = blobs(20)
    h = model().fit(x, y, epochs=3, verbose=0, validation_data=(x, y))
    out = h.plot(str(tmp_path / "curves.png"))
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError):
        C.History().plot(str(tmp_path / "empty.png"))


def test_history_plot_without_matplotlib(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    h = C.History()
    h.on_epoch_end(0, {"loss": 1.0})
    with pytest.raises(ImportError, match=r"graphgrad\[plots\]"):
        h.plot(str(tmp_path / "x.png"))
