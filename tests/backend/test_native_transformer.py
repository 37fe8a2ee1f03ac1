"""The native transformer kernels (graphgrad/backend/native/transformer.c): GELU, layer norm and their
gradients.
Each float32 op is compared with its NumPy path (``native.disabled()``), forward and gradient ops, over
odd and empty shapes, NaN/inf, non-contiguous inputs, and eager against ``gg.function``."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.backend import native
from graphgrad.ops.nn import LayerNorm, LayerNormGrad
from graphgrad.ops.unary import Gelu, GeluGrad

needs_native = pytest.mark.skipif(not native.available(), reason=f"native kernels: {native.status()}")

SHAPES = [(16, 64, 512), (7, 13), (1,), (0,), (3, 0, 5), (5, 1, 129)]


def _both(fn):
    """``fn()`` with native kernels on, then off (the NumPy path)."""
    on = fn()
    with native.disabled():
        off = fn()
    return on, off


def _random(shape, seed=0, scale=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ---- GELU ---------------------------------------------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", SHAPES)
def test_gelu_and_its_gradient_match_numpy(approximate, shape):
    x, g = _random(shape, 1), _random(shape, 2, 1.0)
    y_on, y_off = _both(lambda: Gelu(approximate).forward(np, x))
    assert y_on.shape == y_off.shape == shape and y_on.dtype == np.float32
    # the native exact form is the more accurate one for x < -3 (NumPy's 1 + erf cancels): absolute tolerance
    np.testing.assert_allclose(y_on, y_off, rtol=2e-6, atol=5e-7)
    d_on, d_off = _both(lambda: GeluGrad(approximate).forward(np, x, y_off, g))
    assert d_on.dtype == np.float32
    np.testing.assert_allclose(d_on, d_off, rtol=2e-6, atol=5e-7)


@needs_native
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_against_float64(approximate):
    x = np.linspace(-12, 12, 200_001).astype(np.float32)
    x64 = x.astype(np.float64)
    y = Gelu(approximate).forward(np, x)
    dy = GeluGrad(approximate).forward(np, x, y, np.ones_like(x))
    with native.disabled():
        y64 = Gelu(approximate).forward(np, x64)
        dy64 = GeluGrad(approximate).forward(np, x64, y64, np.ones_like(x64))
    assert np.max(np.abs(y - y64)) < 1e-6 and np.max(np.abs(dy - dy64)) < 5e-7
    negative = (x < -1) & (x > -4)  # relative accuracy where 1 + erf would cancel
    assert np.max(np.abs(y - y64)[negative] / np.abs(y64[negative])) < 1e-3


@needs_native
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_nan_and_infinities_as_numpy(approximate):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0, 1e20, -1e20], np.float32)
    g = np.ones_like(x)
    with np.errstate(all="ignore"):
        y_on, y_off = _both(lambda: Gelu(approximate).forward(np, x))
        np.testing.assert_array_equal(y_on, y_off)
        d_on, d_off = _both(lambda: GeluGrad(approximate).forward(np, x, y_off, g))
    np.testing.assert_array_equal(d_on[:7], d_off[:7])


@needs_native
def test_gelu_non_contiguous_and_broadcast_inputs():
    x = _random((8, 20), 3)[:, ::2]
    g = _random((10,), 4)
    y_on, y_off = _both(lambda: Gelu().forward(np, x))
    np.testing.assert_allclose(y_on, y_off, rtol=2e-6, atol=5e-7)
    d_on, d_off = _both(lambda: GeluGrad().forward(np, x, y_off, g))  # g broadcasts: the NumPy path
    np.testing.assert_allclose(d_on, d_off, rtol=2e-6, atol=5e-7)
    d_on, d_off = _both(lambda: GeluGrad().forward(np, x, y_off, np.broadcast_to(g, x.shape)))
    np.testing.assert_allclose(d_on, d_off, rtol=2e-6, atol=5e-7)


def test_gelu_eager_equals_compiled():
    x_np = _random((4, 33), 5)

    def step(x):
        x.requires_grad_(True)
        y = gg.gelu(x) * gg.gelu(x, approximate="tanh")
        (gx,) = gg.grad(y.sum(), [x])
        return [y, gx]

    eager = [t.numpy().copy() for t in step(gg.tensor(x_np))]
    compiled = [t.numpy() for t in gg.function(step)(gg.tensor(x_np))]
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-7)


# ---- layer norm -----------------------------------------------------------------------------------------------
LN_CASES = [((16, 64, 128), 1), ((7, 13), 1), ((3, 5, 7), 2), ((1, 1), 1), ((0, 9), 1), ((0, 3, 5), 2), ((2, 3, 33), 1)]


@needs_native
@pytest.mark.parametrize("shape, k", LN_CASES)
@pytest.mark.parametrize("has_weight, has_bias", [(True, True), (True, False), (False, True), (False, False)])
def test_layer_norm_and_its_gradient_match_numpy(shape, k, has_weight, has_bias):
    x, g = _random(shape, 1) + 2.0, _random(shape, 2, 1.0)
    params = [_random(shape[len(shape) - k:], s) for s in (3, 4)]
    params = [p for p, keep in zip(params, (has_weight, has_bias)) if keep]
    op = LayerNorm(k, 1e-5, has_weight, has_bias)
    y_on, y_off = _both(lambda: op.forward(np, x, *params))
    assert y_on.shape == shape and y_on.dtype == np.float32
    np.testing.assert_allclose(y_on, y_off, rtol=1e-5, atol=2e-5)
    grad = LayerNormGrad(k, 1e-5, has_weight)
    d_on, d_off = _both(lambda: grad.forward(np, x, *params[:int(has_weight)], g))
    assert d_on.shape == d_off.shape and d_on.dtype == np.float32
    rows = d_on.shape[0] - 2
    np.testing.assert_allclose(d_on[:rows], d_off[:rows], rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(d_on[rows:], d_off[rows:], rtol=1e-4, atol=1e-4)  # sums over the rows


@needs_native
def test_layer_norm_nan_non_contiguous_and_eps():
    x = _random((6, 40), 5)[:, ::2]  # strided rows
    x[1, 3] = np.nan
    x[2, 0] = np.inf
    w, b = _random((20,), 6), _random((20,), 7)
    g = _random((6, 40), 8)[:, 1::2]
    with np.errstate(all="ignore"):
        y_on, y_off = _both(lambda: LayerNorm(1, 0.5).forward(np, x, w, b))
        np.testing.assert_allclose(y_on, y_off, rtol=1e-5, atol=2e-5)  # NaN rows stay NaN in both
        assert np.isnan(y_on[1]).all() and np.isnan(y_on[2]).all() and np.isfinite(y_on[0]).all()
        d_on, d_off = _both(lambda: LayerNormGrad(1, 0.5, True).forward(np, x, w, g))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=2e-5)


def test_layer_norm_eager_equals_compiled():
    x_np = _random((4, 6, 10), 9)
    norm = gg.nn.LayerNorm(10)

    def step(x):
        norm.zero_grad()
        x.requires_grad_(True)
        loss = (norm(x) ** 2 * gg.tensor(np.arange(10, dtype=np.float32))).sum()
        (gx,) = gg.grad(loss, [x], retain_graph=True)
        loss.backward()
        return [loss, gx, norm.weight.grad, norm.bias.grad]

    eager = [t.numpy().copy() for t in step(gg.tensor(x_np))]
    compiled = [t.numpy() for t in gg.function(step)(gg.tensor(x_np))]
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)
