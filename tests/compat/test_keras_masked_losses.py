"""Losses and metrics leave out the time steps a Keras mask hides (Embedding(mask_zero=True) and the
layers it flows through), as Keras 3 does; sequence accuracy reads classes on the last axis.

The expected numbers were printed by Keras 3.15 (PyTorch backend) for the same weights and data.
"""
import numpy as np
import pytest

import graphgrad.compat.keras as keras


def _data():
    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, (8, 5))
    x[:, 3:] = 0
    x[:2, 2:] = 0
    y = rng.integers(0, 3, (8, 5))
    return x, y, rng.integers(0, 2, (8,)).astype("float32")


def _set_linspace_weights(model):
    model.set_weights([np.linspace(-1, 1, w.size).reshape(w.shape).astype("float32") for w in model.get_weights()])


def _rounded(logs: dict) -> dict:
    return {k: [round(float(a), 5) for a in v] if isinstance(v, list) else round(float(v), 5)
            for k, v in sorted(logs.items())}


@pytest.mark.parametrize("functional", [False, True])
def test_a_masked_sequence_loss_and_accuracy_count_the_kept_steps_only(functional):
    x, y, _ = _data()
    if functional:
        inputs = keras.Input((5,))
        hidden = keras.layers.Embedding(6, 4, mask_zero=True)(inputs)
        model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(hidden))
    else:
        model = keras.Sequential([keras.Input((5,)), keras.layers.Embedding(6, 4, mask_zero=True),
                                  keras.layers.Dense(3, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.set_weights([np.linspace(-1, 1, 24).reshape(6, 4).astype("float32"),
                       np.linspace(-0.5, 0.5, 12).reshape(4, 3).astype("float32"), np.zeros(3, "float32")])
    assert _rounded(model.evaluate(x, y, verbose=0, return_dict=True)) == {"accuracy": 0.36364, "loss": 1.09522}
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    assert _rounded(history.history) == {"accuracy": [0.36364, 0.36364], "loss": [1.09522, 1.09476]}


def test_the_mask_flows_through_an_lstm_and_stops_where_the_time_axis_does():
    x, y, y_binary = _data()
    model = keras.Sequential([keras.Input((5,)), keras.layers.Embedding(6, 4, mask_zero=True),
                              keras.layers.LSTM(3, return_sequences=True), keras.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    _set_linspace_weights(model)
    assert _rounded(model.evaluate(x, y, verbose=0, return_dict=True)) == {"accuracy": 0.45455, "loss": 1.18064}
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    assert _rounded(history.history) == {"accuracy": [0.45455, 0.45455], "loss": [1.17816, 1.17581]}
    last = keras.Sequential([keras.Input((5,)), keras.layers.Embedding(6, 4, mask_zero=True),
                             keras.layers.LSTM(3), keras.layers.Dense(1, activation="sigmoid")])
    last.compile("sgd", "binary_crossentropy", metrics=["accuracy"])
    _set_linspace_weights(last)
    assert _rounded(last.evaluate(x, y_binary, verbose=0, return_dict=True)) == {"accuracy": 0.375, "loss": 0.87975}


def test_sequence_accuracy_without_a_mask_reads_the_last_axis():
    x, y, _ = _data()
    model = keras.Sequential([keras.Input((5,)), keras.layers.Embedding(6, 4), keras.layers.Dense(3, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    _set_linspace_weights(model)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    probs = model.predict(x, verbose=0)
    assert abs(logs["accuracy"] - float(np.mean(probs.argmax(-1) == y))) < 1e-6


def test_a_masking_layer_masks_the_loss_and_metrics_too():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 4, 2)).astype("float32")
    x[:2, 2:] = 0.0
    y = rng.normal(size=(6, 4, 1)).astype("float32")
    model = keras.Sequential([keras.Input((4, 2)), keras.layers.Masking(0.0), keras.layers.LSTM(3, return_sequences=True),
                              keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    _set_linspace_weights(model)
    assert _rounded(model.evaluate(x, y, verbose=0, return_dict=True)) == {"loss": 1.39646, "mae": 1.01135}
