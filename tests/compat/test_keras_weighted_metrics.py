"""compile(weighted_metrics=...): metrics that count each sample with its sample (or class) weight.

The expected numbers were printed by Keras 3.15 (PyTorch backend) for the same model, weights and data.
"""
import numpy as np
import pytest

import graphgrad.compat.keras as keras


def _model_and_data():
    rng = np.random.default_rng(0)
    x = rng.random((64, 4)).astype("float32")
    y = (x.sum(1) > 2).astype("float32")
    w = rng.random(64).astype("float32")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile("sgd", "binary_crossentropy", metrics=["accuracy"], weighted_metrics=["accuracy", "mse"])
    model.set_weights([np.array([[0.3], [-0.2], [0.5], [0.1]], np.float32), np.array([-0.3], np.float32)])
    return model, x, y, w


def _rounded(logs: dict, digits: int) -> dict:
    return {k: round(float(v[0] if isinstance(v, list) else v), digits) for k, v in sorted(logs.items())}


def test_weighted_metrics_take_sample_weights_and_keep_keras_names():
    model, x, y, w = _model_and_data()
    got = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    assert _rounded(got, 5) == {"accuracy": 0.75, "loss": 0.36132, "mse": 0.2279, "weighted_accuracy": 0.77598}
    got = model.evaluate(x, y, verbose=0, return_dict=True)  # without weights: the plain metrics
    assert _rounded(got, 5) == {"accuracy": 0.75, "loss": 0.65167, "mse": 0.22935, "weighted_accuracy": 0.75}
    history = model.fit(x, y, sample_weight=w, epochs=1, verbose=0, batch_size=64, shuffle=False)
    assert _rounded(history.history, 4) == {"accuracy": 0.75, "loss": 0.3613, "mse": 0.2279,
                                             "weighted_accuracy": 0.776}


def test_weighted_metrics_take_class_weights_while_fit_uses_them():
    model, x, y, w = _model_and_data()
    model.fit(x, y, sample_weight=w, epochs=1, verbose=0, batch_size=64, shuffle=False)
    history = model.fit(x, y, class_weight={0: 1.0, 1: 3.0}, epochs=1, verbose=0, batch_size=64, shuffle=False)
    assert _rounded(history.history, 4)["weighted_accuracy"] == 0.8056
    assert _rounded(history.history, 4)["accuracy"] == 0.75


def test_a_metric_without_sample_weights_is_refused():
    import graphgrad as gg

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    with pytest.raises(TypeError, match="weighted_metrics"):
        model.compile("sgd", "mse", weighted_metrics=[gg.train.metrics.Accuracy()])  # (graphgrad's own: no weights)
