"""gg.train.metrics: functions and stateful Metric classes vs NumPy definitions (and scikit-learn
when installed)."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.train import metrics as M

try:
    import sklearn.metrics as skm
except ImportError:  # pragma: no cover - optional
    skm = None

needs_sklearn = pytest.mark.skipif(skm is None, reason="scikit-learn is not installed")


def _data(n=200, c=4, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n, c)).astype(np.float32)
    labels = rng.integers(0, c, size=n)
    return scores, labels


def _prf_numpy(pred, true, labels):
    out = []
    for k in labels:
        tp = np.sum((pred == k) & (true == k))
        fp = np.sum((pred == k) & (true != k))
        fn = np.sum((pred != k) & (true == k))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out.append((p, r, f))
    return np.array(out)


def test_accuracy_from_scores_labels_and_tensors():
    scores, labels = _data()
    expected = np.mean(scores.argmax(1) == labels)
    assert M.accuracy(scores, labels) == pytest.approx(expected)
    assert M.accuracy(gg.tensor(scores), gg.tensor(labels)) == pytest.approx(expected)
    assert M.accuracy(scores.argmax(1), labels) == pytest.approx(expected)
    onehot = np.eye(4, dtype=np.float32)[labels]
    assert M.accuracy(scores, onehot) == pytest.approx(expected)
    assert M.accuracy([[0.1, 0.9], [0.8, 0.2]], [1, 1]) == 0.5


def test_binary_accuracy_threshold():
    probs = np.array([0.2, 0.7, 0.6, 0.1])
    y = np.array([0, 1, 0, 0])
    assert M.accuracy(probs, y) == 0.75
    assert M.accuracy(probs[:, None], y) == 0.75
    logits = np.array([-1.0, 2.0, 0.5, -3.0])
    assert M.accuracy(logits, y, threshold=0.0) == 0.75


@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_accuracy(k):
    scores, labels = _data()
    topk = np.argsort(-scores, axis=1)[:, :k]
    expected = np.mean([labels[i] in topk[i] for i in range(len(labels))])
    assert M.top_k_accuracy(scores, labels, k=k) == pytest.approx(expected)
    if skm is not None:
        assert M.top_k_accuracy(scores, labels, k=k) == pytest.approx(
            skm.top_k_accuracy_score(labels, scores, k=k, labels=range(4)))


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_precision_recall_f1_multiclass(average):
    scores, labels = _data()
    pred = scores.argmax(1)
    table = _prf_numpy(pred, labels, range(4))
    if average == "macro":
        expected = table.mean(axis=0)
    else:
        acc = np.mean(pred == labels)  # micro P = R = F1 = accuracy for single-label multiclass
        expected = np.array([acc, acc, acc])
    got = [M.precision(scores, labels, average), M.recall(scores, labels, average), M.f1(scores, labels, average)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_binary_average_and_missing_class():
    pred = np.array([1, 1, 0, 0, 1, 0])
    true = np.array([1, 0, 0, 1, 1, 0])
    p, r, f = _prf_numpy(pred, true, [1])[0]
    assert M.precision(pred, true, "binary") == pytest.approx(p)
    assert M.recall(pred, true, "binary") == pytest.approx(r)
    assert M.f1(pred, true, "binary") == pytest.approx(f)
    # a class that is never predicted scores 0 (scikit-learn's zero_division=0)
    assert M.precision(np.zeros(4, int), np.array([0, 1, 0, 1]), "binary") == 0.0
    with pytest.raises(ValueError, match="average"):
        M.f1(pred, true, average="weighted")


@needs_sklearn
@pytest.mark.parametrize("average", ["macro", "micro", "binary"])
def test_against_sklearn(average):
    rng = np.random.default_rng(3)
    c = 2 if average == "binary" else 5
    true = rng.integers(0, c, 300)
    pred = np.where(rng.random(300) < 0.6, true, rng.integers(0, c, 300))
    pred[pred == 3] = 2  # a class present in targets only
    kw = dict(average=average, zero_division=0)
    assert M.precision(pred, true, average) == pytest.approx(skm.precision_score(true, pred, **kw))
    assert M.recall(pred, true, average) == pytest.approx(skm.recall_score(true, pred, **kw))
    assert M.f1(pred, true, average) == pytest.approx(skm.f1_score(true, pred, **kw))


def test_regression_metrics():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(50, 1)), rng.normal(size=50)
    assert M.mse(a, b) == pytest.approx(np.mean((a[:, 0] - b) ** 2))
    assert M.mae(a, b) == pytest.approx(np.mean(np.abs(a[:, 0] - b)))
    if skm is not None:
        assert M.mse(a, b) == pytest.approx(skm.mean_squared_error(b, a[:, 0]))


def test_stateful_metrics_accumulate_over_batches():
    scores, labels = _data(n=203, c=5)
    full = {"accuracy": M.accuracy(scores, labels), "precision": M.precision(scores, labels),
            "recall": M.recall(scores, labels, "micro"), "f1": M.f1(scores, labels),
            "top": M.top_k_accuracy(scores, labels, 2)}
    metrics = {"accuracy": M.Accuracy(), "precision": M.Precision(), "recall": M.Recall(average="micro"),
               "f1": M.F1(), "top": M.TopKAccuracy(2)}
    for start in range(0, 203, 32):
        for m in metrics.values():
            m.update(scores[start:start + 32], labels[start:start + 32])
    for key, m in metrics.items():
        assert m.result() == pytest.approx(full[key]), key
    for m in metrics.values():
        m.reset()
        assert m.result() == 0.0
    mse = M.MSE()
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=100), rng.normal(size=100)
    mse.update(a[:30], b[:30])
    mse.update(a[30:], b[30:])
    assert mse.result() == pytest.approx(np.mean((a - b) ** 2))
    mae = M.MAE()
    assert mae(a, b) == pytest.approx(np.mean(np.abs(a - b)))


def test_get_by_name_and_functions():
    assert isinstance(M.get("accuracy"), M.Accuracy)
    assert M.get("acc").name == "acc"
    top = M.get("top_3_accuracy")
    assert isinstance(top, M.TopKAccuracy) and top.k == 3 and top.name == "top_3_accuracy"
    assert M.get("top5").k == 5
    wrapped = M.get(M.mae)
    assert wrapped.name == "mae"
    wrapped.update(np.zeros(4), np.ones(4))
    wrapped.update(np.zeros(2), np.full(2, 4.0))
    assert wrapped.result() == pytest.approx((4 * 1 + 2 * 4) / 6)
    with pytest.raises(ValueError, match="unknown metric"):
        M.get("nope")
