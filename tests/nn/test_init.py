"""Initializers: statistics of each distribution, gains, fans, in-place semantics, generators."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn
from graphgrad.nn import init


def _param(*shape, dtype="float64"):
    return nn.Parameter(gg.zeros(*shape, dtype=dtype))


def test_calculate_gain_table():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert init.calculate_gain("selu") == pytest.approx(0.75)
    with pytest.raises(ValueError, match="unsupported"):
        init.calculate_gain("swishy")
    with pytest.raises(ValueError):
        init.calculate_gain("leaky_relu", "a")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(_param(3, 5)) == (5, 3)
    assert init._calculate_fan_in_and_fan_out(_param(8, 4, 3, 3)) == (36, 72)
    assert init._calculate_fan_in_and_fan_out(_param(6, 2, 5)) == (10, 30)
    with pytest.raises(gg.ShapeError, match="fewer than 2"):
        init._calculate_fan_in_and_fan_out(_param(4))


def test_in_place_and_returns_tensor():
    w = _param(3, 4)
    data = w.data
    assert init.uniform_(w, generator=gg.Generator(0)) is w
    assert w.data is data  # same array, written in place
    assert w.requires_grad and w.grad is None
    assert init.uniform is init.uniform_ and init.kaiming_normal is init.kaiming_normal_


def test_works_on_parameters_that_require_grad_and_keeps_dtype():
    w = nn.Parameter(gg.zeros(10, 10))
    init.normal_(w, std=2.0)
    assert w.dtype == gg.float32 and w.numpy().std() > 1


def test_uniform_and_normal_statistics():
    g = gg.Generator(0)
    w = init.uniform_(_param(200, 200), -2.0, 3.0, generator=g).numpy()
    assert w.min() >= -2 and w.max() < 3
    assert w.mean() == pytest.approx(0.5, abs=0.02) and w.var() == pytest.approx(25 / 12, rel=0.02)
    w = init.normal_(_param(200, 200), 1.5, 0.5, generator=g).numpy()
    assert w.mean() == pytest.approx(1.5, abs=0.01) and w.std() == pytest.approx(0.5, rel=0.02)


def test_trunc_normal():
    w = init.trunc_normal_(_param(300, 300), mean=0.5, std=1.0, a=-0.5, b=1.0, generator=gg.Generator(1)).numpy()
    assert w.min() >= -0.5 and w.max() <= 1.0
    # the mean of N(0.5, 1) truncated to [-0.5, 1]: mu + (phi(alpha) - phi(beta)) / Z
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    alpha, beta = -1.0, 0.5
    expect = 0.5 + (phi(alpha) - phi(beta)) / (cdf(beta) - cdf(alpha))
    assert w.mean() == pytest.approx(expect, abs=0.01)
    with pytest.raises(ValueError):
        init.trunc_normal_(_param(2, 2), a=1.0, b=0.0)


def test_constant_zeros_ones_eye():
    w = _param(3, 4)
    assert (init.constant_(w, 0.3).numpy() == 0.3).all()
    assert (init.ones_(w).numpy() == 1).all()
    assert (init.zeros_(w).numpy() == 0).all()
    np.testing.assert_array_equal(init.eye_(w).numpy(), np.eye(3, 4))
    with pytest.raises(gg.ShapeError):
        init.eye_(_param(2, 2, 2))
    counts = gg.zeros((), dtype="int64")
    init.ones_(counts)
    assert counts.item() == 1


def test_xavier():
    g = gg.Generator(2)
    w = init.xavier_uniform_(_param(300, 200), gain=2.0, generator=g).numpy()
    bound = 2.0 * math.sqrt(6 / 500)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert w.std() == pytest.approx(2.0 * math.sqrt(2 / 500), rel=0.02)
    w = init.xavier_normal_(_param(100, 50, 3, 3), generator=g).numpy()
    assert w.std() == pytest.approx(math.sqrt(2 / (450 + 900)), rel=0.02)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity,a", [("relu", 0), ("leaky_relu", 0.1), ("tanh", 0), ("linear", 0)])
def test_kaiming(mode, nonlinearity, a):
    p = _param(120, 60, 3, 3)
    fan = 60 * 9 if mode == "fan_in" else 120 * 9
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    w = init.kaiming_normal_(p, a=a, mode=mode, nonlinearity=nonlinearity, generator=gg.Generator(3)).numpy()
    assert w.mean() == pytest.approx(0, abs=0.01 * std * 10)
    assert w.std() == pytest.approx(std, rel=0.02)
    w = init.kaiming_uniform_(p, a=a, mode=mode, nonlinearity=nonlinearity, generator=gg.Generator(3)).numpy()
    bound = math.sqrt(3) * std
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert w.std() == pytest.approx(std, rel=0.02)


def test_kaiming_errors():
    with pytest.raises(ValueError, match="fan_in"):
        init.kaiming_uniform_(_param(3, 3), mode="fan_avg")
    with pytest.warns(UserWarning, match="no-op"):  # as PyTorch: nothing to fill
        empty = _param(0, 3)
        assert init.kaiming_uniform_(empty) is empty


def test_kaiming_sqrt5_gives_pytorch_linear_bound():
    w = init.kaiming_uniform_(_param(50, 64), a=math.sqrt(5), generator=gg.Generator(0)).numpy()
    assert np.abs(w).max() <= 1 / 8 and np.abs(w).max() > 0.99 / 8


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (4, 2, 3)])
def test_orthogonal(shape):
    w = init.orthogonal_(_param(*shape), gain=1.5, generator=gg.Generator(4)).numpy().reshape(shape[0], -1)
    rows, cols = w.shape
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, 1.5 ** 2 * np.eye(min(rows, cols)), atol=1e-10)
    with pytest.raises(gg.ShapeError):
        init.orthogonal_(_param(5))


def test_generator_reproducible_and_default_seed():
    a = init.normal_(_param(4, 4), generator=gg.Generator(7)).numpy()
    b = init.normal_(_param(4, 4), generator=gg.Generator(7)).numpy()
    np.testing.assert_array_equal(a, b)
    gg.manual_seed(11)
    c = init.xavier_uniform_(_param(4, 4)).numpy()
    gg.manual_seed(11)
    np.testing.assert_array_equal(init.xavier_uniform_(_param(4, 4)).numpy(), c)


def test_rejects_symbolic_tensors():
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float32, (2, 2))
        with pytest.raises(TypeError, match="symbolic"):
            init.zeros_(x)


def test_init_does_not_record_gradients():
    w = nn.Parameter(gg.ones(3))
    init.uniform_(w)
    y = (w * 2).sum()
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2, 2, 2])


def test_dirac_passes_channels_through():
    conv = gg.nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    x = gg.randn(1, 3, 5, 5)
    np.testing.assert_array_equal(conv(x).detach().numpy(), x.numpy())
    grouped = init.dirac_(_param(4, 2, 3), groups=2)  # out channel i of each group reads input channel i
    expected = np.zeros((4, 2, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = expected[2, 0, 1] = expected[3, 1, 1] = 1.0
    np.testing.assert_array_equal(grouped.detach().numpy(), expected)
