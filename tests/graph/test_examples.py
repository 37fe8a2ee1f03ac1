"""The TF1-style graph example runs and reaches its accuracy (examples/graph_spiral.py)."""
from __future__ import annotations

from tests.example_loader import load_example


def test_graph_mode_models_reach_their_accuracy():
    results = load_example("graph_spiral").main(steps=500)
    assert results["perceptron"] >= 0.99  # linearly separable blobs
    # 298/300 is the ceiling on the spirals: the three spirals share their first point, the origin
    assert results["mlp"] >= 0.99 and results["mlp2"] >= 0.99
    assert results["perceptron_on_spiral"] < 0.8  # a linear model cannot separate spirals


def test_graph_basics_example():
    module = load_example("graph_basics")
    assert module.constants() == 3.75
    first, second = module.placeholders()
    assert first == 3.0 and second.tolist() == [4.0, 6.0]
    assert max(module.eager_and_graph(steps=5)) < 1e-6
