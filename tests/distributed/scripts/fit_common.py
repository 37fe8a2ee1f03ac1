"""Data and model shared by the fit rank scripts and tests/distributed/test_fit.py (which computes the
one-process references): three Gaussian blobs, a small float64 MLP trained with Adam, with metrics of
each kind fit must combine over the ranks (counts, confusion counts, a function, a custom Metric)."""
import numpy as np

import graphgrad as gg
from graphgrad.train.metrics import Metric

TRAIN, VAL, FEATURES, CLASSES = 96, 29, 4, 3
BATCH = 8      # samples per rank and step
SEED = 3       # the shuffling seed
EPOCHS = 3     # epochs of the 2-rank run; the 3-rank run resumes for 2 more


def blobs():
    """``(x, y, x_val, y_val)``: float64 inputs, int64 labels; the validation count (29) is odd."""
    rng = np.random.default_rng(0)
    centers = rng.normal(0.0, 1.5, (CLASSES, FEATURES))
    labels = rng.integers(0, CLASSES, TRAIN + VAL)
    inputs = centers[labels] + rng.normal(0.0, 1.0, (TRAIN + VAL, FEATURES))
    return inputs[:TRAIN], labels[:TRAIN], inputs[TRAIN:], labels[TRAIN:]


class MeanLabel(Metric):
    """The mean target label: a custom metric whose running sums fit does not know by name, so it is
    averaged over the ranks by its result, weighted by the samples each rank saw."""

    name = "mean_label"

    def reset(self):
        self.label_sum, self.samples = 0.0, 0

    def update(self, y_pred, y_true):
        labels = np.asarray(y_true.numpy() if hasattr(y_true, "numpy") else y_true, dtype=np.float64)
        self.label_sum += float(labels.sum())
        self.samples += labels.size

    def result(self):
        return self.label_sum / self.samples if self.samples else 0.0


def largest_logit(y_pred, y_true):
    return float(np.abs(y_pred.numpy()).max(axis=1).mean())


def make_model(init_seed: int = 0) -> gg.Sequential:
    gg.manual_seed(init_seed)
    model = gg.Sequential([gg.nn.Linear(FEATURES, 16), gg.nn.Tanh(), gg.nn.Linear(16, CLASSES)])
    model.double()
    model.compile(optimizer=(gg.optim.Adam, {"lr": 0.05}), loss="cross_entropy",
                  metrics=["accuracy", "f1", largest_logit, MeanLabel()])
    return model


def weights(model) -> dict:
    return {k: v.numpy() for k, v in model.state_dict().items()}
