"""gg.Model.fit/evaluate/predict take a tuple of arrays as ``x`` for a model with several inputs (the
module receives a tuple of Tensors per batch); shuffling, validation_split and validation_data keep
the inputs' rows together."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.out = nn.Linear(3, 8), nn.Linear(2, 8), nn.Linear(8, 2)

    def forward(self, inputs):
        a, b = inputs
        return self.out(gg.relu(self.a(a) + self.b(b)))


def _data(n=200):
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal((n, 3)).astype("float32"), rng.standard_normal((n, 2)).astype("float32")
    return x1, x2, (x1[:, 0] - x2[:, 1] > 0).astype("int64")


def test_a_two_input_model_trains_evaluates_and_predicts():
    gg.manual_seed(0)
    x1, x2, y = _data()
    model = gg.Model(TwoInputs())
    model.compile(optimizer=("adam", {"lr": 0.02}), loss="cross_entropy", metrics=["accuracy"])
    history = model.fit((x1, x2), y, epochs=15, batch_size=16, validation_split=0.25, verbose=0, seed=0)
    assert history.history["val_accuracy"][-1] > 0.9
    model.fit((x1, x2), y, epochs=1, validation_data=((x1[:20], x2[:20]), y[:20]), verbose=0)
    assert model.evaluate((x1, x2), y)["accuracy"] > 0.9
    out = model.predict((x1, x2), batch_size=64)
    assert out.shape == (200, 2)
    with gg.no_grad():
        direct = model((gg.tensor(x1), gg.tensor(x2))).numpy()
    assert np.allclose(out, direct, atol=1e-6)


def test_inputs_with_different_sample_counts_are_refused():
    x1, x2, y = _data()
    model = gg.Model(TwoInputs())
    model.compile(optimizer="adam", loss="cross_entropy")
    with pytest.raises(ValueError, match="same number of samples"):
        model.fit((x1, x2[:10]), y, verbose=0)
    with pytest.raises(ValueError, match="samples but y has"):
        model.fit((x1, x2), y[:10], verbose=0)


class TwoOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.cls, self.reg = nn.Linear(3, 16), nn.Linear(16, 2), nn.Linear(16, 1)

    def forward(self, x):
        h = gg.relu(self.body(x))
        return self.cls(h), self.reg(h)


def test_a_two_output_model_trains_on_a_tuple_of_targets_and_predicts_a_list():
    gg.manual_seed(0)
    x1, _, _ = _data()
    y = (x1[:, 0] > 0).astype("int64")
    target = x1[:, 1:2] * 2.0

    def loss(outputs, targets):
        return gg.cross_entropy(outputs[0], targets[0]) + gg.mse_loss(outputs[1], targets[1])

    model = gg.Model(TwoOutputs())
    model.compile(optimizer=("adam", {"lr": 0.02}), loss=loss)
    history = model.fit(x1, (y, target.astype("float32")), epochs=30, batch_size=16, validation_split=0.2,
                        verbose=0, seed=0)
    assert history.history["val_loss"][-1] < 0.3
    classes, values = model.predict(x1, batch_size=64)
    assert classes.shape == (200, 2) and values.shape == (200, 1)
    assert (classes.argmax(1) == y).mean() > 0.9 and np.abs(values - target).mean() < 0.2
    with pytest.raises(ValueError, match="same number of samples"):
        model.fit(x1, (y, target[:10]), verbose=0)
