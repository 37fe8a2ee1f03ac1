"""Layers agree with PyTorch: the corpus written by tests/oracle/generate_layers.py (PyTorch's weights,
inputs, outputs, gradients and running statistics) replayed with graphgrad. PyTorch is not needed."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
from tests.oracle.generate_layers import CASES, CORPUS

CORPUS_DATA = np.load(CORPUS) if os.path.exists(CORPUS) else None
pytestmark = pytest.mark.skipif(CORPUS_DATA is None, reason="run tests/oracle/generate_layers.py to make the corpus")


def _arrays(name: str) -> dict:
    prefix = name + "/"
    return {k[len(prefix):]: CORPUS_DATA[k] for k in CORPUS_DATA.files if k.startswith(prefix)}


def _sub(arrays: dict, group: str) -> dict:
    return {k[len(group) + 1:]: v for k, v in arrays.items() if k.startswith(group + "/")}


@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_pytorch(name):
    cls_name, kwargs, _, options = CASES[name]
    a = _arrays(name)
    layer = getattr(gg.nn, cls_name)(**kwargs).double()
    layer.load_state_dict({k: gg.tensor(v) for k, v in _sub(a, "state").items()})
    for i in range(options.get("calls", 0)):
        layer(gg.tensor(a[f"warmup{i}"]))
    x = gg.tensor(a["x"], requires_grad=True)
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), a["y"], rtol=1e-10, atol=1e-10)
    y.backward(gg.tensor(a["gy"]))
    np.testing.assert_allclose(x.grad.numpy(), a["grad/x"], rtol=1e-9, atol=1e-10)
    grads = _sub(a, "grad")
    params = dict(layer.named_parameters())
    assert set(params) == set(grads) - {"x"}
    for key, p in params.items():
        np.testing.assert_allclose(p.grad.numpy(), grads[key], rtol=1e-9, atol=1e-10, err_msg=key)
    after = _sub(a, "after")
    state = layer.state_dict()
    assert set(state) == set(after)
    for key, value in after.items():
        np.testing.assert_allclose(state[key].numpy(), value, rtol=1e-10, atol=1e-12, err_msg=key)
        assert state[key].dtype == value.dtype, key
    if options.get("eval"):
        layer.eval()
        with gg.no_grad():
            np.testing.assert_allclose(layer(gg.tensor(a["x"])).numpy(), a["eval_y"], rtol=1e-10, atol=1e-10)


def test_corpus_is_small_and_complete():
    assert os.path.getsize(CORPUS) < 300_000
    for name in CASES:
        a = _arrays(name)
        assert {"x", "y", "gy", "grad/x"} <= set(a), name
