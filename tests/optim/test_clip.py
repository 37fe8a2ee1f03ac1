"""Gradient clipping (gg.optim.clip_grad_norm_, clip_grad_value_) against NumPy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg


def params_with_grads(dtype=gg.float64, scale=1.0):
    rng = np.random.default_rng(0)
    ps = [gg.nn.Parameter(gg.zeros(s, dtype=dtype)) for s in [(3, 4), (5,), ()]]
    for p in ps:
        p.grad = gg.tensor(scale * rng.normal(size=p.shape), dtype=dtype)
    return ps


def flat(ps):
    return np.concatenate([p.grad.numpy().ravel() for p in ps]).astype(np.float64)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_scales_to_max_norm(norm_type):
    ps = params_with_grads(scale=5.0)
    g = flat(ps)
    total = np.max(np.abs(g)) if norm_type == math.inf else np.sum(np.abs(g) ** norm_type) ** (1 / norm_type)
    out = gg.optim.clip_grad_norm_(ps, max_norm=1.0, norm_type=norm_type)
    assert isinstance(out, gg.Tensor)
    np.testing.assert_allclose(float(out.item()), total, rtol=1e-12)
    np.testing.assert_allclose(flat(ps), g * (1.0 / (total + 1e-6)), rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_and_skips_missing():
    ps = params_with_grads(scale=0.01)
    ps.append(gg.nn.Parameter(gg.ones(2)))  # no gradient
    g = flat(ps[:3])
    out = gg.optim.clip_grad_norm_(ps, max_norm=10.0)
    np.testing.assert_allclose(float(out.item()), np.linalg.norm(g), rtol=1e-12)
    np.testing.assert_array_equal(flat(ps[:3]), g)
    assert ps[3].grad is None
    assert float(gg.optim.clip_grad_norm_([ps[3]], 1.0).item()) == 0.0


def test_clip_grad_norm_keeps_float32_and_single_parameter():
    p = params_with_grads(gg.float32, scale=10.0)[0]
    grad = p.grad
    gg.optim.clip_grad_norm_(p, 0.5)
    assert p.grad is grad and p.grad.dtype == gg.float32
    np.testing.assert_allclose(np.linalg.norm(p.grad.numpy()), 0.5, rtol=1e-5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (inf * 0: nan, as in PyTorch)
def test_clip_grad_norm_nonfinite():
    ps = params_with_grads()
    ps[0].grad.data[0, 0] = np.inf
    with pytest.raises(gg.NonFiniteError, match="total norm"):
        gg.optim.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    total = gg.optim.clip_grad_norm_(ps, 1.0)
    assert math.isinf(float(total.item()))


def test_clip_grad_value():
    ps = params_with_grads(gg.float32, scale=2.0)
    g = flat(ps)
    gg.optim.clip_grad_value_(ps, 0.5)
    np.testing.assert_allclose(flat(ps), np.clip(g, -0.5, 0.5), rtol=1e-6)
    assert all(p.grad.dtype == gg.float32 for p in ps)


def test_clipping_a_read_only_gradient():
    p = gg.nn.Parameter(gg.zeros(4))
    (p * 3.0).sum().backward()  # the gradient may be a broadcast (read-only) array
    gg.optim.clip_grad_norm_([p], 1.0)
    np.testing.assert_allclose(np.linalg.norm(p.grad.numpy()), 1.0, rtol=1e-5)
