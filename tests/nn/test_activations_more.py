"""The activation modules of nn/layers/activation_more.py apply their functions (whose values and
gradients are checked in the op table and against PyTorch)."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg

X = gg.tensor(np.linspace(-4, 4, 24).reshape(4, 6))


@pytest.mark.parametrize("module, fn", [
    (gg.nn.Softsign(), gg.softsign), (gg.nn.LogSigmoid(), gg.logsigmoid), (gg.nn.Hardsigmoid(), gg.hardsigmoid),
    (gg.nn.Hardswish(), gg.hardswish), (gg.nn.Softmin(dim=0), lambda x: gg.softmin(x, 0)),
    (gg.nn.CELU(0.5), lambda x: gg.celu(x, 0.5)), (gg.nn.GLU(dim=1), lambda x: gg.glu(x, 1)),
    (gg.nn.Threshold(0.5, -1.0), lambda x: gg.threshold(x, 0.5, -1.0)),
])
def test_module_is_its_function(module, fn):
    np.testing.assert_array_equal(module(X).numpy(), fn(X).numpy())
    assert getattr(gg.nn.functional, fn.__name__, fn) is not None


def test_glu_needs_an_even_dimension():
    with pytest.raises(gg.ShapeError, match="even size"):
        gg.glu(gg.zeros(2, 3))
