"""More of Keras' training API on graphgrad.compat.keras (losses, metrics, optimizers and schedules, regularizers and constraints, utils and callbacks): each checked against real Keras (Keras 3
on its PyTorch backend, in a subprocess; skipped when it is absent) from the same weights, and by plain
tests that need no Keras."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.compat import keras
from graphgrad.compat.keras import layers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_KERAS = importlib.util.find_spec("keras") is not None and importlib.util.find_spec("torch") is not None


def _run_keras(script: str, cwd) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", KERAS_BACKEND="torch")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


PARITY = r'''
import numpy as np
import keras
from graphgrad.compat import keras as gk

rng = np.random.default_rng(1)
K = lambda v: keras.ops.convert_to_numpy(v)
p = rng.dirichlet(np.ones(4), 6).astype("float32")
q = rng.dirichlet(np.ones(4), 6).astype("float32")
a, b = rng.standard_normal((6, 4)).astype("float32"), rng.standard_normal((6, 4)).astype("float32")
t = (rng.random((6, 3)) > 0.5).astype("float32")
s = rng.random((6, 3)).astype("float32")
logits = rng.standard_normal((6, 3)).astype("float32")
cases = [("KLDivergence", {}, p, q), ("CosineSimilarity", {}, a, b), ("CosineSimilarity", {"axis": 0}, a, b),
         ("BinaryFocalCrossentropy", {}, t, s),
         ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "gamma": 1.5, "label_smoothing": 0.1}, t, s),
         ("BinaryFocalCrossentropy", {"from_logits": True}, t, logits)]
for name, kwargs, y_true, y_pred in cases:
    expected = float(K(getattr(keras.losses, name)(**kwargs)(y_true, y_pred)))
    got = float(getattr(gk.losses, name)(**kwargs)(y_true, y_pred).item())
    assert abs(got - expected) < 1e-5, (name, kwargs, got, expected)
for fn, y_true, y_pred in (("kl_divergence", p, q), ("cosine_similarity", a, b), ("binary_focal_crossentropy", t, s)):
    assert np.allclose(getattr(gk.losses, fn)(y_true, y_pred).numpy(), K(getattr(keras.losses, fn)(y_true, y_pred)),
                       atol=1e-5), fn
# metrics, fed in two batches
labels = (rng.random(300) > 0.6).astype("float32")
scores = np.clip(labels * 0.3 + rng.random(300) * 0.7, 0, 1).astype("float32")
for kwargs in ({}, {"num_thresholds": 17}, {"curve": "PR"}, {"summation_method": "minoring"},
               {"curve": "PR", "summation_method": "majoring"}):
    real, mine = keras.metrics.AUC(**kwargs), gk.metrics.AUC(**kwargs)
    for part in (slice(0, 120), slice(120, 300)):
        real.update_state(labels[part], scores[part])
        mine.update_state(labels[part], scores[part])
    assert abs(mine.result() - float(K(real.result()))) < 1e-5, (kwargs, mine.result(), float(K(real.result())))
one_hot = np.eye(4, dtype="float32")[rng.integers(0, 4, 40)]
probs = rng.dirichlet(np.ones(4), 40).astype("float32")
for kwargs in ({}, {"average": "macro"}, {"average": "micro"}, {"average": "weighted"}, {"threshold": 0.3}):
    real, mine = keras.metrics.F1Score(**kwargs), gk.metrics.F1Score(**kwargs)
    real.update_state(one_hot, probs)
    mine.update_state(one_hot, probs)
    assert np.allclose(mine.result(), K(real.result()), atol=1e-5), kwargs
classes = rng.integers(0, 5, (3, 8))
guesses = rng.integers(0, 4, (3, 8))
for kwargs in ({}, {"ignore_class": 0}):
    real, mine = keras.metrics.MeanIoU(num_classes=5, **kwargs), gk.metrics.MeanIoU(num_classes=5, **kwargs)
    real.update_state(classes, guesses)
    mine.update_state(classes, guesses)
    assert abs(mine.result() - float(K(real.result()))) < 1e-5, kwargs
# schedules
S, GS = keras.optimizers.schedules, gk.optimizers.schedules
for name, kwargs in (("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3, decay_rate=0.5)),
                     ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3, decay_rate=0.5, staircase=True)),
                     ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5)),
                     ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5, staircase=True)),
                     ("PiecewiseConstantDecay", dict(boundaries=[2, 5], values=[0.1, 0.05, 0.01])),
                     ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=6, power=2.0)),
                     ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=4, cycle=True)),
                     ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=8, alpha=0.1)),
                     ("CosineDecay", dict(initial_learning_rate=0.0, decay_steps=8, warmup_target=0.1, warmup_steps=3))):
    real, mine = getattr(S, name)(**kwargs), getattr(GS, name)(**kwargs)
    for step in range(12):
        assert abs(mine(step) - float(K(real(step)))) < 1e-6, (name, kwargs, step, mine(step), float(K(real(step))))
# optimizers and a schedule in training: fit's epoch losses are Keras' from the same weights
x = rng.standard_normal((64, 5)).astype("float32")
y = rng.integers(0, 3, 64)
for make in (lambda k: k.optimizers.Nadam(0.01), lambda k: k.optimizers.Adamax(0.01), lambda k: k.optimizers.Adadelta(1.0),
             lambda k: k.optimizers.SGD(k.optimizers.schedules.ExponentialDecay(0.5, 2, 0.5)),
             lambda k: k.optimizers.Adam(k.optimizers.schedules.CosineDecay(0.0, 6, warmup_target=0.02, warmup_steps=3))):
    models = [k.Sequential([k.Input(shape=(5,)), k.layers.Dense(8, activation="relu"), k.layers.Dense(3, activation="softmax")])
              for k in (keras, gk)]
    models[1].set_weights(models[0].get_weights())
    histories = []
    for k, model in zip((keras, gk), models):
        model.compile(optimizer=make(k), loss="sparse_categorical_crossentropy")
        histories.append(model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0).history["loss"])
    assert np.allclose(histories[0], histories[1], rtol=1e-4), histories
# regularizers (added to the training loss) and constraints (after each step), as Keras
def regularized(k):
    return k.Sequential([k.Input(shape=(5,)),
                         k.layers.Dense(8, activation="relu", kernel_regularizer=k.regularizers.l2(0.01),
                                        bias_regularizer=k.regularizers.L1(0.02),
                                        activity_regularizer=k.regularizers.l1_l2(l1=0.001, l2=0.002),
                                        kernel_constraint=k.constraints.MaxNorm(0.5), bias_constraint=k.constraints.NonNeg()),
                         k.layers.ActivityRegularization(l2=0.01),
                         k.layers.Dense(3, activation="softmax",
                                        kernel_constraint=k.constraints.UnitNorm(), bias_regularizer="l2")])
models = [regularized(keras), regularized(gk)]
models[1].set_weights(models[0].get_weights())
histories = []
for k, model in zip((keras, gk), models):
    model.compile(optimizer=k.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_split=0.25).history
    histories.append(history["loss"] + history["val_loss"] + [model.evaluate(x, y, verbose=0)])
assert np.allclose(histories[0], histories[1], rtol=1e-4), histories
assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(models[0].get_weights(), models[1].get_weights()))
# the same for the other weight names (depthwise, pointwise, embeddings) and Conv2DTranspose
def other_weights(k):
    images = k.Sequential([k.Input(shape=(6, 6, 2)),
                           k.layers.SeparableConv2D(3, 3, depthwise_regularizer=k.regularizers.l2(0.01),
                                                    pointwise_constraint=k.constraints.MaxNorm(1.0),
                                                    bias_regularizer=k.regularizers.l1(0.01)),
                           k.layers.Conv2DTranspose(2, 2, strides=2, kernel_regularizer=k.regularizers.l2(0.01),
                                                    kernel_constraint=k.constraints.NonNeg()),
                           k.layers.Flatten(), k.layers.Dense(3, activation="softmax")])
    words = k.Sequential([k.Input(shape=(5,)),
                          k.layers.Embedding(10, 4, embeddings_regularizer=k.regularizers.l2(0.01),
                                             embeddings_constraint=k.constraints.UnitNorm(axis=1)),
                          k.layers.GlobalAveragePooling1D(), k.layers.Dense(3, activation="softmax")])
    sequences = k.Sequential([k.Input(shape=(5, 3)),
                              k.layers.GRU(4, return_sequences=True, kernel_regularizer=k.regularizers.l2(0.01),
                                           recurrent_constraint=k.constraints.MaxNorm(0.8)),
                              k.layers.LSTM(3, recurrent_regularizer=k.regularizers.l1(0.01),
                                            kernel_constraint=k.constraints.UnitNorm()),
                              k.layers.Dense(3, activation="softmax")])
    return images, words, sequences


pairs = list(zip(other_weights(keras), other_weights(gk)))
inputs = (rng.standard_normal((32, 6, 6, 2)).astype("float32"), rng.integers(0, 10, (32, 5)),
          rng.standard_normal((32, 5, 3)).astype("float32"))
targets = rng.integers(0, 3, 32)
for (real, mine), data in zip(pairs, inputs):
    mine.set_weights(real.get_weights())
    histories = []
    for k, model in ((keras, real), (gk, mine)):
        model.compile(optimizer=k.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
        histories.append(model.fit(data, targets, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"])
    assert np.allclose(histories[0], histories[1], rtol=1e-4), histories
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(real.get_weights(), mine.get_weights()))
w = np.abs(rng.standard_normal((5, 4))).astype("float32") * 2
for name, kwargs in (("MaxNorm", {"max_value": 1.5}), ("NonNeg", {}), ("UnitNorm", {"axis": 1}),
                     ("MinMaxNorm", {"min_value": 0.5, "max_value": 2.0, "rate": 0.5})):
    assert np.allclose(getattr(gk.constraints, name)(**kwargs)(gk.ops.convert_to_tensor(w - 1)).numpy(),
                       K(getattr(keras.constraints, name)(**kwargs)(w - 1)), atol=1e-5), name
print("ok")
'''


@pytest.mark.skipif(not HAVE_KERAS, reason="Keras (and PyTorch, its backend here) is not installed")
def test_losses_metrics_schedules_optimizers_regularizers_match_keras(tmp_path):
    assert _run_keras(PARITY, tmp_path).strip().endswith("ok")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_new_losses_by_value_and_by_name():
    p = np.array([[0.2, 0.8], [0.5, 0.5]], dtype="float32")
    assert abs(float(keras.losses.KLDivergence()(p, p).item())) < 1e-6
    assert abs(float(keras.losses.CosineSimilarity()(p, 3 * p).item()) + 1.0) < 1e-5
    t = np.array([[1.0], [0.0]], dtype="float32")
    s = np.array([[0.9], [0.3]], dtype="float32")
    bce = keras.losses.binary_crossentropy(t, s).numpy()
    focal = keras.losses.binary_focal_crossentropy(t, s, gamma=2.0).numpy()
    assert np.allclose(focal, bce * np.array([0.1 ** 2, 0.3 ** 2]), rtol=1e-4)
    for name in ("kl_divergence", "cosine_similarity", "binary_focal_crossentropy"):
        assert keras.losses.get(name)(t, s).shape == ()


def test_auc_f1_and_mean_iou():
    auc = keras.metrics.AUC()
    auc.update_state([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert abs(auc.result() - 0.75) < 0.01
    f1 = keras.metrics.F1Score(average="macro")
    f1.update_state(np.eye(3)[[0, 1, 2]], np.eye(3)[[0, 1, 1]])
    assert abs(f1.result() - (1 + 2 / 3 + 0) / 3) < 1e-4
    assert keras.metrics.F1Score()(np.eye(2)[[0, 1]], np.eye(2)[[0, 1]]).shape == (2,)
    iou = keras.metrics.MeanIoU(num_classes=2)
    iou.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    assert abs(iou.result() - 1 / 3) < 1e-6
    x = _x(80, 3)
    y = (x[:, 0] > 0).astype("float32")
    model = keras.Sequential([layers.Dense(1, activation="sigmoid")])
    model.compile("adam", "binary_crossentropy", metrics=[keras.metrics.AUC(), "auc"])
    model.fit(x, y, epochs=2, verbose=0)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    with pytest.raises(NotImplementedError, match="average="):
        model.compile("adam", "binary_crossentropy", metrics=[keras.metrics.F1Score()])
        model.fit(x, y, epochs=1, verbose=0)
    assert set(logs) == {"loss", "auc", "auc_1"} or set(logs) == {"loss", "auc"}


def test_new_optimizers_and_a_schedule_advanced_per_step():
    for name in ("nadam", "adamax", "adadelta"):
        assert keras.optimizers.get(name).learning_rate == 0.001
    schedule = keras.optimizers.schedules.PiecewiseConstantDecay([2], [0.1, 0.01])
    optimizer = keras.optimizers.SGD(schedule)
    model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(1)])
    model.compile(optimizer, "mse")
    model.fit(_x(16, 3), _x(16, 1), batch_size=4, epochs=1, verbose=0)  # 4 steps: lr 0.1, 0.1, 0.1, 0.01
    assert optimizer.iterations == 4 and abs(optimizer.learning_rate - 0.01) < 1e-12
    cosine = keras.optimizers.schedules.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=4)
    assert [round(cosine(s), 6) for s in (0, 2, 4, 9, 14, 20)] == [0.0, 0.5, 1.0, round(0.5 * (1 + np.cos(np.pi / 2)), 6), 0.0, 0.0]


def test_regularizers_join_the_loss_and_constraints_hold_after_steps():
    dense = layers.Dense(4, kernel_regularizer=keras.regularizers.l2(0.1), kernel_constraint=keras.constraints.NonNeg(),
                         bias_constraint=keras.constraints.MaxNorm(0.1))
    model = keras.Sequential([keras.Input(shape=(3,)), dense, layers.Dense(1)])
    kernel = dense.get_weights()[0]
    assert len(model.losses) == 1 and abs(float(model.losses[0].item()) - 0.1 * (kernel ** 2).sum()) < 1e-5
    model.compile(keras.optimizers.SGD(0.1), "mse")
    model.fit(_x(32, 3), _x(32, 1), epochs=2, verbose=0)
    kernel, bias = dense.get_weights()
    assert (kernel >= 0).all() and np.linalg.norm(bias) <= 0.1 + 1e-6
    activity = layers.Dense(2, activity_regularizer="l1")
    out = activity(_x(5, 3), training=True)
    assert abs(float(activity.losses[0].item()) - 0.01 * np.abs(out.numpy()).sum() / 5) < 1e-6


def test_pad_sequences_as_keras():
    seqs = [[1, 2, 3], [4], [5, 6, 7, 8, 9], []]
    out = keras.utils.pad_sequences(seqs, maxlen=4)
    assert out.dtype == np.int32
    assert out.tolist() == [[0, 1, 2, 3], [0, 0, 0, 4], [6, 7, 8, 9], [0, 0, 0, 0]]
    out = keras.utils.pad_sequences(seqs, padding="post", truncating="post", value=-1)
    assert out.shape == (4, 5) and out.tolist()[1] == [4, -1, -1, -1, -1] and out.tolist()[2] == [5, 6, 7, 8, 9]
    assert keras.utils.pad_sequences([[0.5, 1.5]], maxlen=3, dtype="float32").tolist() == [[0.0, 0.5, 1.5]]


class _Batches(keras.utils.PyDataset):
    def __init__(self):
        super().__init__()
        self.x = _x(40, 3)
        self.y = (self.x.sum(1) > 0).astype("int64")
        self.epochs = 0

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return self.x[index * 10:(index + 1) * 10], self.y[index * 10:(index + 1) * 10]

    def on_epoch_end(self):
        self.epochs += 1


def test_fit_evaluate_predict_take_a_py_dataset_and_backup_and_restore_resumes(tmp_path):
    data = _Batches()
    model = keras.Sequential([layers.Dense(4, activation="relu"), layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(data, epochs=2, verbose=0, validation_data=data)
    assert len(history.history["val_loss"]) == 2 and data.epochs >= 2
    assert len(model.evaluate(data, verbose=0)) == 2 and model.predict(data, verbose=0).shape == (40, 2)

    class Interrupt(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt

    backup = str(tmp_path / "backup")
    with pytest.raises(KeyboardInterrupt):
        model.fit(data, epochs=4, verbose=0, callbacks=[keras.callbacks.BackupAndRestore(backup), Interrupt()])
    assert sorted(os.listdir(backup)) == ["epoch.json", "latest.weights.npz", "optimizer.gg"]
    history = model.fit(data, epochs=4, verbose=0, callbacks=[keras.callbacks.BackupAndRestore(backup)])
    assert len(history.history["loss"]) == 2 and os.listdir(backup) == []


def test_a_model_compiled_with_a_schedule_saves_and_loads_it(tmp_path):
    model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(1)])
    model.compile(keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)), "mse")
    model.fit(_x(8, 3), _x(8, 1), batch_size=4, verbose=0)
    model.save(str(tmp_path / "m.keras"))
    loaded = keras.models.load_model(str(tmp_path / "m.keras"))
    schedule = loaded.keras_optimizer.schedule
    assert isinstance(schedule, keras.optimizers.schedules.ExponentialDecay) and schedule(2) == 0.05


def test_losses_are_those_of_the_last_call_as_keras():
    layer = layers.ActivityRegularization(l1=1.0)
    model = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(2), layer])
    for _ in range(3):
        out = model(_x(4, 2))
    assert len(model.losses) == 1
    assert abs(float(model.losses[0].item()) - np.abs(out.numpy()).sum() / 4) < 1e-5
    layer(np.ones((2, 2), "float32"))
    assert len(layer.losses) == 1 and abs(float(layer.losses[0].item()) - 2.0) < 1e-6


def test_lstm_trains_one_bias_as_keras():
    model = keras.Sequential([keras.Input(shape=(4, 3)), layers.Bidirectional(layers.LSTM(3)), layers.Dense(2)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    model.fit(_x(8, 4, 3), _x(8, 2), verbose=0)
    recurrent = model.layers[0].forward_layer.rnn
    assert np.all(recurrent.bias_hh_l0.numpy() == 0) and np.any(recurrent.bias_ih_l0.numpy() != 0)
    model.trainable = False
    model.trainable = True
    assert not recurrent.bias_hh_l0.requires_grad and model.count_non_trainable() == 0
