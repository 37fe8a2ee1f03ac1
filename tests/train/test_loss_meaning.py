"""gg.Model.fit warns when a from-logits loss (graphgrad's cross-entropy, also under Keras' names)
receives a model that ends in a softmax: it would train on softmax(softmax(x)) without an error."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)).astype("float32")
    return x, (x[:, 0] > 0).astype("int64")


def _fit(layers, loss):
    model = gg.Sequential(layers)
    model.compile(optimizer="adam", loss=loss)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(*_data(), epochs=2, verbose=0)
    return [w for w in caught if "takes logits" in str(w.message)]


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy", "cross_entropy", "categorical_crossentropy",
                                  nn.CrossEntropyLoss(), gg.cross_entropy])
def test_a_softmax_ended_model_with_a_from_logits_loss_warns_once(loss):
    caught = _fit([nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Softmax(dim=1)], loss)
    assert len(caught) == 1
    assert "softmax" in str(caught[0].message) and "from_logits" in str(caught[0].message)


@pytest.mark.parametrize("layers, loss", [
    ([nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)], "sparse_categorical_crossentropy"),  # logits: right
    ([nn.Linear(4, 2), nn.LogSoftmax(dim=1)], "nll"),                                   # log-probabilities
])
def test_logits_and_other_losses_do_not_warn(layers, loss):
    assert _fit(layers, loss) == []
