"""Keras 3 idioms of keras-io's programs on graphgrad.compat.keras: ``sample_weight`` in ``fit`` /
``evaluate`` / ``train_on_batch`` (Keras' weighted ``sum_over_batch_size``), a subclass's own
``train_step`` / ``test_step`` with ``GradientTape`` and metric trackers, ``Masking``,
``TextVectorization``; and short programs in keras-io's style (tests/compat/keras_realworld2/) that
must learn. Expected numbers were computed with Keras 3.15 (TensorFlow backend)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from graphgrad.compat import keras
from graphgrad.compat.keras import backend as K

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(0)
    K.clear_session()


# ---- sample_weight --------------------------------------------------------------------------------------------------
def _weighted_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 4)).astype("float32")
    y = rng.integers(0, 3, size=20)
    w = rng.uniform(0, 2, size=20)
    rng.normal(size=(20, 1))
    kernel = rng.normal(size=(4, 3)).astype("float32") * 0.5
    return x, y, w, kernel


def _classifier(kernel, metrics=("accuracy",)):
    inputs = keras.Input((4,))
    outputs = keras.layers.Dense(3, activation="softmax")(inputs)
    model = keras.Model(inputs, outputs)
    model.layers[-1].set_weights([kernel, np.zeros(3, "float32")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=list(metrics) or None)
    return model


def test_fit_evaluate_with_sample_weight_match_keras():
    x, y, w, kernel = _weighted_data()
    model = _classifier(kernel)
    history = model.fit(x, y, sample_weight=w, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert np.allclose(history.history["loss"], [2.64156, 2.27313], atol=2e-5)
    assert np.allclose(history.history["accuracy"], [0.2, 0.2])
    assert np.allclose(model.layers[-1].get_weights()[0].ravel()[:4], [-0.40696, 0.06367, 0.13533, 0.63488], atol=2e-5)
    assert np.allclose(model.evaluate(x, y, sample_weight=w, batch_size=8, verbose=0), [1.98427, 0.25], atol=2e-5)
    assert np.allclose(model.evaluate(x, y, batch_size=8, verbose=0), [1.6445, 0.25], atol=2e-5)
    model = _classifier(kernel)
    assert np.allclose(model.train_on_batch(x, y, sample_weight=w), [2.69051, 0.2], atol=2e-5)
    assert np.allclose(model.test_on_batch(x, y, sample_weight=w), [2.5556, 0.2], atol=2e-5)
    model = _classifier(kernel, metrics=())
    history = model.fit(x, y, sample_weight=w, batch_size=8, epochs=1, shuffle=False, verbose=0,
                        validation_data=(x[:6], y[:6], w[:6]))
    assert np.allclose([history.history["loss"][0], history.history["val_loss"][0]], [2.64156, 1.76294], atol=2e-5)
    with pytest.raises(ValueError, match="class_weight"):
        model.fit(x, y, sample_weight=w, class_weight={0: 1.0}, verbose=0)


def test_loss_and_mean_metric_take_sample_weight_as_keras():
    y_true, y_pred = np.array([[0.0], [1.0], [1.0]]), np.array([[0.2], [0.7], [0.4]], "float32")
    w = np.array([1.0, 2.0, 0.5])
    assert np.isclose(float(keras.losses.BinaryCrossentropy()(y_true, y_pred, sample_weight=w)), 0.4648796, atol=1e-6)
    logits = np.array([[1.0, 2.0], [3.0, 1.0]], "float32")
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert np.isclose(float(loss(np.array([0, 1]), logits, sample_weight=np.array([2.0, 1.0]))), 2.3767257, atol=1e-6)
    mse = keras.losses.MeanSquaredError(reduction="mean_with_sample_weight")
    assert np.isclose(float(mse(np.ones((3, 2)), np.zeros((3, 2)), sample_weight=w)), 1.0)
    assert keras.losses.MeanSquaredError(reduction="none")(np.ones((3, 2)), np.zeros((3, 2)), sample_weight=w).shape == (3,)
    mean = keras.metrics.Mean(name="m")
    mean.update_state([1.0, 2.0, 3.0], sample_weight=[1, 0, 1])
    assert float(mean.result()) == 2.0 and mean.result().numpy() == np.float32(2.0)
    mean.reset_state()
    assert float(mean.result()) == 0.0
    auc = keras.metrics.AUC()
    auc.update_state([0, 1, 1, 0], [0.1, 0.8, 0.3, 0.6], sample_weight=[1.0, 1.0, 2.0, 0.5])
    assert np.isclose(auc.result(), 0.7777777, atol=1e-5)
