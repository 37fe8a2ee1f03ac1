"""The example scripts run and reach their accuracies (fixed split, fixed seed)."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_mlp_97_and_cnn_98_percent_held_out():
    pytest.importorskip("sklearn")
    results = load_example("digits").main(epochs=30, seed=0)
    assert results["mlp"] >= 0.97
    assert results["cnn"] >= 0.98
