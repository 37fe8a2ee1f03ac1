"""The native depthwise 2-D convolution (backend/native/depthwise.c through ops/depthwise.py):
the same results as graphgrad's NumPy paths for every stride, padding (asymmetric too), dilation and
channel multiplier, and the NumPy paths where it does not apply."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.backend import native
from graphgrad.ops import conv, depthwise
from tests.backend.native_checks import needs_native

pytestmark = needs_native
RNG = np.random.default_rng(0)

CASES = [  # (n, c, h, w, multiplier, kernel, stride, padding ((top, bottom), (left, right)), dilation)
    (2, 8, 24, 24, 1, (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    (2, 6, 30, 34, 1, (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),
    (1, 5, 40, 41, 1, (5, 5), (2, 2), ((2, 2), (2, 2)), (1, 1)),
    (2, 4, 33, 50, 2, (3, 3), (2, 3), ((1, 0), (2, 1)), (2, 2)),
    (1, 3, 20, 47, 3, (2, 4), (1, 2), ((0, 1), (3, 0)), (1, 1)),
    (1, 2, 17, 64, 1, (1, 7), (3, 1), ((0, 0), (3, 3)), (1, 2)),
    (1, 2, 10, 20, 1, (3, 3), (2, 2), ((4, 5), (5, 4)), (1, 1)),  # padding wider than the kernel reaches
    (2, 3, 9, 70, 1, (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),  # rows of three blocks, the last partial
    # small maps (rows under 16): 16 planes at a time, a partial last block
    (2, 9, 14, 14, 1, (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    (1, 40, 7, 7, 1, (5, 5), (2, 2), ((2, 2), (2, 2)), (1, 1)),
    (2, 5, 9, 11, 2, (3, 3), (2, 1), ((1, 0), (2, 1)), (1, 2)),
    (1, 33, 4, 4, 1, (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1)),
]


@pytest.mark.parametrize("n, c, h, w, m, kernel, stride, padding, dilation", CASES)
def test_native_depthwise_matches_the_numpy_paths(n, c, h, w, m, kernel, stride, padding, dilation):
    x = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    weight = RNG.standard_normal((c * m, 1) + kernel).astype(np.float32)
    got = conv._conv_forward(np, x, weight, stride, padding, dilation, c)
    assert depthwise.native_forward(np, x, weight, got.shape[2:], stride, padding, dilation) is not None
    with native.disabled():
        expected = conv._conv_forward(np, x, weight, stride, padding, dilation, c)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32 and got.flags.c_contiguous


def test_module_and_gradients_with_native_forward():
    layer = gg.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=8)
    x = gg.tensor(RNG.standard_normal((2, 8, 40, 40)).astype(np.float32), requires_grad=True)
    y = layer(x)
    y.sum().backward()
    with native.disabled():
        x0 = gg.tensor(x.numpy(), requires_grad=True)
        layer.zero_grad()
        y0 = layer(x0)
        y0.sum().backward()
    np.testing.assert_allclose(y.numpy(), y0.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), x0.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_where_the_native_kernel_does_not_apply():
    w = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    pad = ((1, 1), (1, 1))
    big = RNG.standard_normal((1, 4, 20, 20))
    assert depthwise.native_forward(np, big, w.astype(np.float64), (20, 20), (1, 1), pad, (1, 1)) is None
    strided = RNG.standard_normal((1, 4, 20, 40)).astype(np.float32)[:, :, :, ::2]
    assert depthwise.native_forward(np, strided, w, (20, 20), (1, 1), pad, (1, 1)) is None
    np.testing.assert_allclose(conv._conv_forward(np, strided, w, (1, 1), pad, (1, 1), 4),
                               conv._conv_forward(np, np.ascontiguousarray(strided), w, (1, 1), pad, (1, 1), 4),
                               rtol=1e-5, atol=1e-6)


def test_nan_and_zero_batch():
    x = RNG.standard_normal((1, 2, 20, 20)).astype(np.float32)
    x[0, 0, 5, 5] = np.nan
    w = np.ones((2, 1, 3, 3), np.float32)
    y = conv._conv_forward(np, x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 2)
    assert np.isnan(y[0, 0, 4:7, 4:7]).all() and np.isfinite(y[0, 1]).all() and np.isnan(y).sum() == 9
    empty = conv._conv_forward(np, np.zeros((0, 2, 20, 20), np.float32), w, (1, 1), ((1, 1), (1, 1)), (1, 1), 2)
    assert empty.shape == (0, 2, 20, 20)
