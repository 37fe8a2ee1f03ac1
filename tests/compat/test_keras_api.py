"""graphgrad.compat.keras: Keras' conventions (loss meanings, evaluate's return, lazy building,
weights in Keras' layout, callbacks, saving) on graphgrad."""
from __future__ import annotations

import json
import math
import os
import sys
import warnings
import zipfile

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.compat import keras
from graphgrad.compat.keras import layers


def _blobs(n=240, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
    y = rng.integers(0, 3, n)
    x = (centers[y] + 0.6 * rng.standard_normal((n, 2))).astype("float32")
    return x, y


def _mlp(**compile_kwargs):
    model = keras.Sequential([layers.Dense(16, activation="relu"), layers.Dense(3, activation="softmax")])
    model.compile(**{"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"],
                     **compile_kwargs})
    return model


# ---- losses: Keras' meanings --------------------------------------------------------------------------------------
def test_crossentropies_take_probabilities_unless_from_logits():
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0]], dtype="float32")
    labels = np.array([0, 2])
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    expected = -np.log(p[[0, 1], labels]).mean()
    sparse = keras.losses.SparseCategoricalCrossentropy()
    assert math.isclose(float(sparse(labels, p)), expected, rel_tol=1e-5)
    assert math.isclose(float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)), expected,
                        rel_tol=1e-5)
    one_hot = keras.utils.to_categorical(labels, 3)
    assert math.isclose(float(keras.losses.CategoricalCrossentropy()(one_hot, p)), expected, rel_tol=1e-5)
    per_sample = keras.losses.sparse_categorical_crossentropy(labels, p)
    assert per_sample.shape == (2,)
    q = np.array([[0.9], [0.2]], dtype="float32")
    t = np.array([1.0, 0.0])
    bce = -(np.log(0.9) + np.log(0.8)) / 2
    assert math.isclose(float(keras.losses.BinaryCrossentropy()(t, q)), bce, rel_tol=1e-5)
    assert math.isclose(float(keras.losses.BinaryCrossentropy(from_logits=True)(t, np.log(q / (1 - q)))), bce,
                        rel_tol=1e-4)
    assert math.isclose(float(keras.losses.MeanSquaredError()(t, q)), ((q[:, 0] - t) ** 2).mean(), rel_tol=1e-5)


def test_a_softmax_model_trains_with_keras_names_and_gets_no_warning():
    x, y = _blobs()
    model = _mlp()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.2
    assert model.evaluate(x, y, verbose=0)[1] > 0.95
    probabilities = model.predict(x[:5], verbose=0)
    assert probabilities.shape == (5, 3) and np.allclose(probabilities.sum(1), 1.0, atol=1e-5)


def test_evaluate_returns_the_loss_or_a_list_or_a_dict():
    x, y = _blobs(60)
    model = _mlp(metrics=None)
    model.fit(x, y, epochs=1, verbose=0)
    assert isinstance(model.evaluate(x, y, verbose=0), float)
    model = _mlp(metrics=["accuracy", "sparse_categorical_accuracy"])
    model.fit(x, y, epochs=1, verbose=0)
    loss, accuracy, sparse_accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy == sparse_accuracy and 0 <= accuracy <= 1
    assert set(model.evaluate(x, y, verbose=0, return_dict=True)) == {"loss", "accuracy", "sparse_categorical_accuracy"}


def test_optimizers_have_keras_defaults_and_expose_the_learning_rate():
    model = _mlp(optimizer=keras.optimizers.Adam())
    model.fit(*_blobs(40), epochs=1, verbose=0)
    group = model.optimizer.param_groups[0]
    assert group["lr"] == 0.001 and group["eps"] == 1e-7
    assert model.optimizer.learning_rate == 0.001
    model.optimizer.learning_rate = 0.01
    assert model.optimizer.param_groups[0]["lr"] == 0.01
    for name, lr in (("sgd", 0.01), ("rmsprop", 0.001), ("adagrad", 0.001)):
        m = _mlp(optimizer=name)
        m.fit(*_blobs(40), epochs=1, verbose=0)
        assert m.optimizer.param_groups[0]["lr"] == lr
    assert _mlp(optimizer="rmsprop")._keras_compile[0] == "rmsprop"
    assert keras.optimizers.RMSprop().get_config()["rho"] == 0.9
    assert keras.optimizers.Adagrad().get_config()["initial_accumulator_value"] == 0.1


# ---- building, shapes and weights -------------------------------------------------------------------------------------------
def test_a_sequential_model_builds_from_its_first_data():
    model = _mlp()
    with pytest.raises(ValueError, match="not built"):
        model.count_params()
    model.fit(*_blobs(40), epochs=1, verbose=0)
    assert model.count_params() == 2 * 16 + 16 + 16 * 3 + 3
    text = model.summary(print_fn=lambda s: None)
    assert "(None, 16)" in text and "(None, 3)" in text and "Total params: 99" in text
    kernel, bias, kernel2, bias2 = model.get_weights()
    assert kernel.shape == (2, 16) and kernel2.shape == (16, 3)  # Keras' (in, units)


def test_set_weights_round_trip_and_shape_errors():
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3), layers.BatchNormalization()])
    assert model.count_params() == 4 * 3 + 3 + 4 * 3  # BatchNorm's moving statistics count, as in Keras
    text = model.summary(print_fn=lambda s: None)
    assert "Non-trainable params: 6" in text
    weights = [np.full(w.shape, i, dtype="float32") for i, w in enumerate(model.get_weights())]
    model.set_weights(weights)
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), weights))
    with pytest.raises(ValueError, match="shape"):
        model.layers[0].set_weights([np.zeros((3, 4)), np.zeros(3)])


def test_convolutions_are_channels_last_and_same_padding_keeps_the_size():
    x = np.random.default_rng(0).standard_normal((2, 9, 7, 3)).astype("float32")
    assert layers.Conv2D(5, 3, padding="same")(x).shape == (2, 9, 7, 5)
    assert layers.Conv2D(5, 3, strides=2, padding="same")(x).shape == (2, 5, 4, 5)
    assert layers.Conv2D(5, (3, 2))(x).shape == (2, 7, 6, 5)
    assert layers.MaxPooling2D()(x).shape == (2, 4, 3, 3)
    assert layers.GlobalAveragePooling2D()(x).shape == (2, 3)
    assert layers.Conv1D(4, 3, padding="same")(x[:, 0]).shape == (2, 7, 4)
    assert layers.Flatten()(x).shape == (2, 189)
    assert layers.Reshape((63, 3))(x).shape == (2, 63, 3)
    assert layers.Permute((3, 1, 2))(x).shape == (2, 3, 9, 7)
    assert layers.MaxPooling2D(padding="same")(x).shape == (2, 5, 4, 3)  # ceil(size / stride), as TensorFlow
    with pytest.raises(ValueError, match="padding"):
        layers.MaxPooling2D(padding="full")


def test_recurrent_layers_and_embedding():
    tokens = np.array([[1, 2, 3, 0], [4, 5, 0, 0]])
    e = layers.Embedding(10, 6)(tokens)
    assert e.shape == (2, 4, 6) and float(abs(e).max()) <= 0.05
    assert layers.LSTM(5)(e).shape == (2, 5)
    assert layers.GRU(5, return_sequences=True)(e).shape == (2, 4, 5)
    out, h, c = layers.LSTM(5, return_state=True)(e)
    assert out.shape == h.shape == c.shape == (2, 5) and np.allclose(out.numpy(), h.numpy())
    assert layers.SimpleRNN(3, go_backwards=True)(e).shape == (2, 3)
    assert layers.LSTM(4, activation="relu")(e).shape == (2, 4)  # (any activation: a loop over the steps)


def test_a_functional_sequence_model_with_two_branches_learns():
    rng = np.random.default_rng(0)
    x = rng.integers(1, 20, (400, 12))
    y = (x == 7).any(axis=1).astype("int64")  # does token 7 occur?
    inputs = keras.Input(shape=(12,), dtype="int64")
    e = layers.Embedding(20, 16)(inputs)
    sequence = layers.GRU(16)(e)
    pooled = layers.GlobalMaxPooling1D()(layers.Conv1D(16, 1, activation="relu")(e))
    merged = layers.Concatenate()([sequence, pooled])
    outputs = layers.Dense(1, activation="sigmoid")(layers.Add()([layers.Dense(8)(merged), layers.Dense(8)(merged)]))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x[:300], y[:300], epochs=15, batch_size=32, verbose=0)
    assert model.evaluate(x[300:], y[300:], verbose=0)[1] >= 0.9
    assert [type(l).__name__ for l in model.layers][:2] == ["Embedding", "GRU"]


# ---- saving ---------------------------------------------------------------------------------------------------------------------
def test_save_and_load_model_keep_architecture_weights_and_compile(tmp_path):
    x, y = _blobs(120)
    inputs = keras.Input(shape=(2,))
    h = layers.Dense(8, activation="relu")(inputs)
    h = layers.Concatenate()([h, layers.Dense(4, activation="tanh")(inputs)])
    h = layers.BatchNormalization()(h)
    outputs = layers.Dense(3, activation="softmax")(h)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, epochs=3, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:  # JSON and npz only: no pickle
        assert sorted(archive.namelist()) == ["config.json", "metadata.json", "model.weights.npz"]
        config = json.loads(archive.read("config.json"))
    assert config["compile"]["optimizer"]["name"] == "SGD"
    logits_model = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(3)])
    logits_model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    logits_model.save(str(tmp_path / "logits.keras"))
    assert math.isclose(keras.models.load_model(str(tmp_path / "logits.keras")).evaluate(x, y, verbose=0),
                        logits_model.evaluate(x, y, verbose=0), rel_tol=1e-6)  # the loss object, from_logits kept
    restored = keras.models.load_model(path)
    assert np.allclose(restored.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6)
    assert restored.optimizer.param_groups[0]["momentum"] == 0.9
    assert math.isclose(restored.evaluate(x, y, verbose=0)[0], model.evaluate(x, y, verbose=0)[0], rel_tol=1e-5)
    restored.fit(x, y, epochs=1, verbose=0)  # compiled: it trains on


def test_save_weights_load_weights_and_errors(tmp_path):
    x, y = _blobs(60)
    model = _mlp()
    with pytest.raises(ValueError, match="not built"):
        model.save(str(tmp_path / "early.keras"))
    model.fit(x, y, epochs=1, verbose=0)
    model.save_weights(str(tmp_path / "w.weights.h5"))
    other = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(16, activation="relu"),
                              layers.Dense(3, activation="softmax")])
    with pytest.raises(ValueError, match="do not fit"):
        other.load_weights(str(tmp_path / "w.weights.h5"))  # other layer names
    clone = keras.models.clone_model(model)
    clone.load_weights(str(tmp_path / "w.weights.h5"))
    assert np.allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0))
    model.save(str(tmp_path / "m.h5"))  # (Keras 2's name: the facade's own archive, not HDF5)
    assert np.allclose(keras.models.load_model(str(tmp_path / "m.h5")).predict(x, verbose=0), model.predict(x, verbose=0))
    (tmp_path / "bad.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a .keras archive"):
        keras.models.load_model(str(tmp_path / "bad.keras"))
    with pytest.raises(FileNotFoundError):
        keras.models.load_model(str(tmp_path / "missing.keras"))

    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(3, activation="softmax")

        def call(self, inputs):
            return self.dense(inputs)

    sub = Sub()
    sub.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    sub.fit(x, y, epochs=1, verbose=0)
    assert sub.predict(x[:2], verbose=0).shape == (2, 3)
    with pytest.raises(NotImplementedError, match="subclassed"):
        sub.save(str(tmp_path / "sub.keras"))


# ---- callbacks ------------------------------------------------------------------------------------------------------------------
def test_callbacks_with_keras_defaults(tmp_path):
    x, y = _blobs(120)
    model = _mlp()
    seen = []
    callbacks = [
        keras.callbacks.ModelCheckpoint(str(tmp_path / "m-{epoch:02d}.keras")),  # every epoch, whole model
        keras.callbacks.ModelCheckpoint(str(tmp_path / "best.weights.h5"), save_best_only=True, save_weights_only=True),
        keras.callbacks.CSVLogger(str(tmp_path / "log.csv")),
        keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.01 if epoch < 2 else 0.001),
        keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=100),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(model.optimizer.learning_rate)),
    ]
    history = model.fit(x, y, epochs=3, validation_split=0.25, callbacks=callbacks, verbose=0)
    assert sorted(p.name for p in tmp_path.glob("m-*.keras")) == ["m-01.keras", "m-02.keras", "m-03.keras"]
    assert (tmp_path / "best.weights.h5").exists()
    assert seen == [0.01, 0.01, 0.001]
    assert len((tmp_path / "log.csv").read_text().strip().splitlines()) == 4
    assert set(history.history) >= {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert keras.models.load_model(str(tmp_path / "m-03.keras")).count_params() == model.count_params()
    stopper = keras.callbacks.EarlyStopping(monitor="val_loss", patience=0, min_delta=10.0)
    assert len(_mlp().fit(x, y, epochs=10, validation_split=0.25, callbacks=[stopper], verbose=0).history["loss"]) == 2


# ---- utils, datasets, install ----------------------------------------------------------------------------------------------------------
def test_to_categorical_and_mnist_load_data(tmp_path):
    assert keras.utils.to_categorical([0, 2, 1]).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert keras.utils.to_categorical(np.array([[1], [0]]), 3).shape == (2, 3)
    with pytest.raises(FileNotFoundError, match="does not download"):
        keras.datasets.mnist.load_data(path=str(tmp_path / "mnist.npz"))
    arrays = {"x_train": np.zeros((5, 28, 28), "uint8"), "y_train": np.arange(5), "x_test": np.ones((2, 28, 28), "uint8"),
              "y_test": np.arange(2)}
    np.savez(tmp_path / "mnist.npz", **arrays)
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data(path=str(tmp_path / "mnist.npz"))
    assert x_train.shape == (5, 28, 28) and y_test.tolist() == [0, 1]


def test_install_makes_import_keras_the_facade(monkeypatch):
    for name in [n for n in sys.modules if n == "keras" or n.startswith("keras.") or n.startswith("tensorflow.keras")]:
        monkeypatch.delitem(sys.modules, name)
    keras.install()
    try:
        import keras as imported
        from keras import layers as imported_layers
        from keras.callbacks import EarlyStopping

        assert imported is keras and imported_layers is layers
        assert EarlyStopping is keras.callbacks.EarlyStopping
        assert sys.modules["tensorflow.keras"] is keras
    finally:  # monkeypatch then puts back whatever was imported before
        for name in [n for n in sys.modules if n == "keras" or n.startswith(("keras.", "tensorflow.keras"))]:
            del sys.modules[name]


def test_a_frozen_model_used_as_a_layer(tmp_path):
    base = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(8, activation="relu"), layers.BatchNormalization()],
                            name="base")
    inputs = keras.Input(shape=(4,))
    outputs = layers.Dense(3, activation="softmax")(base(inputs))
    model = keras.Model(inputs, outputs)
    base.trainable = False
    text = model.summary(print_fn=lambda s: None)
    assert "base (Sequential)" in text and "Trainable params: 27" in text and "Non-trainable params: 72" in text
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x, y = np.random.default_rng(0).standard_normal((64, 4)).astype("float32"), np.arange(64) % 3
    before = base.get_weights()
    model.fit(x, y, epochs=2, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(before, base.get_weights()))  # moving statistics too
    model.save(str(tmp_path / "nested.keras"))
    restored = keras.models.load_model(str(tmp_path / "nested.keras"))
    assert np.allclose(restored.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6)


def test_rescaling_lambda_initializers_and_backend():
    images = np.full((1, 2, 2, 1), 255, dtype="uint8")
    assert np.allclose(layers.Rescaling(1.0 / 255)(images).numpy(), 1.0)
    assert np.allclose(layers.Lambda(lambda t: t * 2)(np.ones((2, 3))).numpy(), 2.0)
    dense = layers.Dense(64, kernel_initializer=keras.initializers.RandomNormal(stddev=1.0), bias_initializer="ones")
    dense(np.ones((2, 400)))
    kernel, bias = dense.get_weights()
    assert 0.9 < kernel.std() < 1.1 and np.all(bias == 1)
    keras.backend.clear_session()
    assert layers.Dense(2).name == "dense" and layers.Dense(2).name == "dense_1"
    assert keras.backend.image_data_format() == "channels_last"


def test_bidirectional_saves_and_loads(tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 5, 4)).astype("float32")
    model = keras.Sequential([keras.Input(shape=(5, 4)), layers.Bidirectional(layers.GRU(3, return_sequences=True)),
                              layers.Bidirectional(layers.LSTM(2), merge_mode="sum")])
    assert model.predict(x, verbose=0).shape == (3, 2)
    assert [w.shape for w in model.layers[1].get_weights()] == [(6, 8), (2, 8), (8,)] * 2
    model.save(str(tmp_path / "bi.keras"))
    restored = keras.models.load_model(str(tmp_path / "bi.keras"))
    assert np.allclose(restored.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6)


def test_tensorboard_callback_writes_train_and_validation_logs(tmp_path):
    pytest.importorskip("tensorboard")
    model = _mlp()
    model.fit(*_blobs(60), epochs=2, validation_split=0.2, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path / "logs"))])
    assert list((tmp_path / "logs" / "train").glob("events.out.tfevents.*"))
    assert list((tmp_path / "logs" / "validation").glob("events.out.tfevents.*"))


def test_the_tensorflow_beginner_quickstart_runs_as_written():
    """TensorFlow's "TensorFlow 2 quickstart for beginners", on random 28x28 images."""
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    y_train = rng.integers(0, 3, 256)
    x_train = rng.random((256, 28, 28)).astype("float32")
    x_train[:, :14] += 0.2 * (y_train == 1)[:, None, None]  # class 1 brighter at the top, 2 at the bottom
    x_train[:, 14:] += 0.2 * (y_train == 2)[:, None, None]
    model = keras.models.Sequential([
        layers.Flatten(input_shape=(28, 28)),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(10),
    ])
    predictions = model(x_train[:1]).numpy()
    assert predictions.shape == (1, 10)
    assert np.allclose(keras.activations.softmax(gg.tensor(predictions)).numpy().sum(), 1.0, atol=1e-5)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert abs(loss_fn(y_train[:1], predictions).numpy() - np.log(10)) < 1.0
    model.compile(optimizer="adam", loss=loss_fn, metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=8, verbose=0)
    loss, accuracy = model.evaluate(x_train, y_train, verbose=0)
    assert accuracy > 0.9
    probability_model = keras.Sequential([model, layers.Softmax()])
    assert np.allclose(probability_model(x_train[:5]).numpy().sum(axis=1), 1.0, atol=1e-5)
    assert probability_model.predict(x_train[:5], verbose=0).shape == (5, 10)


def test_a_model_with_two_inputs_trains_on_a_list_of_arrays():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    image = rng.standard_normal((300, 6, 6, 1)).astype("float32")
    meta = rng.standard_normal((300, 3)).astype("float32")
    y = ((image[:, :3].mean(axis=(1, 2, 3)) > 0) ^ (meta[:, 0] > 0)).astype("int64")
    image_in, meta_in = keras.Input(shape=(6, 6, 1), name="image"), keras.Input(shape=(3,), name="meta")
    h = layers.Flatten()(layers.Conv2D(8, 3, activation="relu")(image_in))
    h = layers.concatenate([h, layers.Dense(8, activation="relu")(meta_in)])
    h = layers.Dense(16, activation="relu")(h)
    model = keras.Model(inputs=[image_in, meta_in], outputs=layers.Dense(2, activation="softmax")(h))
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit([image[:240], meta[:240]], y[:240], epochs=25, batch_size=16, verbose=0,
                        validation_data=([image[240:], meta[240:]], y[240:]))
    assert history.history["accuracy"][-1] > 0.9
    assert model.predict([image[:7], meta[:7]], verbose=0).shape == (7, 2)
    assert isinstance(model.train_on_batch([image[:8], meta[:8]], y[:8]), list)  # [loss, *metrics], as Keras
    with pytest.raises(ValueError, match="expected 2 input arrays"):
        model.predict([image], verbose=0)


def test_class_weight_weights_the_training_loss_only():
    x, y = _blobs(90)
    model = _mlp()
    model.fit(x, y, epochs=1, verbose=0)
    weights = model.get_weights()
    xb, yb = x[:32], y[:32]
    per_sample = keras.losses.sparse_categorical_crossentropy(yb, model.predict(xb, verbose=0)).numpy()
    class_weight = {0: 1.0, 1: 3.0, 2: 0.5}
    expected = float(np.mean(per_sample * np.array([class_weight[int(c)] for c in yb])))
    losses = []
    model.set_weights(weights)
    model.fit(xb, yb, epochs=1, batch_size=32, shuffle=False, class_weight=class_weight, verbose=0,
              validation_data=(xb, yb),
              callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: losses.append(dict(logs)))])
    assert math.isclose(losses[0]["loss"], expected, rel_tol=1e-4)       # the weighted loss, before the step
    assert math.isclose(losses[0]["val_loss"], model.evaluate(xb, yb, verbose=0)[0], rel_tol=1e-5)  # unweighted


def test_a_model_with_two_outputs_and_per_output_losses_metrics_and_weights(tmp_path):
    keras.utils.set_random_seed(0)
    x, y = _blobs(240)
    target = (x[:, :1] * 2.0).astype("float32")
    inputs = keras.Input(shape=(2,))
    h = layers.Dense(16, activation="relu")(inputs)
    label = layers.Dense(3, activation="softmax", name="label")(h)
    value = layers.Dense(1, name="value")(h)
    model = keras.Model(inputs=inputs, outputs=[label, value])
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss={"label": "sparse_categorical_crossentropy", "value": "mse"},
                  loss_weights={"label": 1.0, "value": 0.5}, metrics={"label": ["accuracy"], "value": ["mae"]})
    history = model.fit(x, {"label": y, "value": target}, epochs=30, batch_size=16, validation_split=0.2, verbose=0)
    assert {"loss", "label_loss", "value_loss", "label_accuracy", "value_mae", "val_label_accuracy"} <= set(history.history)
    last = {k: v[-1] for k, v in history.history.items()}
    assert math.isclose(last["loss"], last["label_loss"] + 0.5 * last["value_loss"], rel_tol=0.05)
    loss, label_loss, value_loss, accuracy, mae = model.evaluate(x, [y, target], verbose=0)
    assert accuracy > 0.95 and mae < 0.3
    probabilities, values = model.predict(x[:4], verbose=0)
    assert probabilities.shape == (4, 3) and values.shape == (4, 1)
    model.save(str(tmp_path / "two.keras"))
    restored = keras.models.load_model(str(tmp_path / "two.keras"))
    assert np.allclose(restored.predict(x[:4], verbose=0)[1], values, atol=1e-6)
    assert np.allclose(restored.evaluate(x, [y, target], verbose=0), [loss, label_loss, value_loss, accuracy, mae],
                       rtol=1e-5)
    with pytest.raises(ValueError, match="outputs"):
        model.compile(optimizer="adam", loss={"nope": "mse"})
        model.fit(x, [y, target], verbose=0)
