"""The example scripts run and reach their accuracies (fixed split, fixed seed)."""
from __future__ import annotations


import pytest

from tests.example_loader import load_example




def test_digits_mlp_97_and_cnn_98_percent_held_out():
    pytest.importorskip("sklearn")
    results = load_example("digits").main(epochs=30, seed=0)
    assert results["mlp"] >= 0.97
    assert results["cnn"] >= 0.98
