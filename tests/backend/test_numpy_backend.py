"""Backend kernels and namespace dispatch."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import backend
from graphgrad.backend import numpy_backend


def test_erf_fallback_without_scipy_is_float64_accurate():
    x = np.linspace(-7, 7, 20001)
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(numpy_backend.erf_fallback(x), expected, rtol=1e-13, atol=1e-15)
    assert numpy_backend.erf_fallback(x.astype(np.float32)).dtype == np.float32


def test_namespace_and_device_of_numpy_arrays():
    a = np.zeros(3)
    assert backend.namespace_of(a) is np and backend.device_of(a) == "cpu"
    assert backend.kernel(np, "erf") is numpy_backend.erf
    assert gg.zeros(2).device == "cpu"


def test_unknown_device_is_a_clear_error():
    try:
        backend.namespace_for_device("tpu")
    except ValueError as error:
        assert "tpu" in str(error) and "cuda" in str(error)
    else:
        raise AssertionError("no error")


def test_sigmoid_fallback_is_accurate_and_keeps_dtype():
    x = np.linspace(-700, 700, 20001)
    expected = np.exp(-np.logaddexp(0, -x))
    np.testing.assert_allclose(numpy_backend.sigmoid_fallback(x), expected, rtol=1e-14, atol=0)
    assert numpy_backend.sigmoid_fallback(x.astype(np.float32)).dtype == np.float32


def test_erf_and_sigmoid_keep_float16_like_numpy_ufuncs():
    # SciPy's kernels have no float16 loop and answer in float64; the backend casts back
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0], np.float16)
    for name in ("erf", "sigmoid"):
        out = numpy_backend.KERNELS[name](x)
        assert out.dtype == np.float16, name
    assert gg.sigmoid(gg.tensor(x)).dtype == np.float16
    assert gg.erf(gg.tensor(x)).dtype == np.float16
    np.testing.assert_allclose(numpy_backend.sigmoid(x), 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-3)


def test_scatter_add_rows_matches_add_at():
    from graphgrad.backend.numpy_backend import scatter_add_rows

    rng = np.random.default_rng(0)
    for num, n, tail in ((5, 0, (3,)), (1, 7, (2,)), (65, 1024, (16,)), (10, 40, (2, 3)), (1000, 30, (4,))):
        index = rng.integers(0, num, n)
        rows = rng.standard_normal((n,) + tail)
        expected = np.zeros((num,) + tail)
        np.add.at(expected, index, rows)
        got = scatter_add_rows(index, rows, num)
        assert got.shape == expected.shape and got.dtype == rows.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _ulps(got, expected, dtype):
    """|got - expected| in units in the last place of ``expected`` rounded to ``dtype``."""
    spacing = np.spacing(np.abs(expected).astype(dtype)).astype(np.float64)
    return np.abs(got.astype(np.float64) - expected) / spacing


def test_erf_float32_within_one_ulp_on_a_dense_grid_and_the_tails():
    x = np.concatenate([np.linspace(-6, 6, 400001), np.geomspace(1e-45, 1e-3, 2000), -np.geomspace(1e-45, 1e-3, 2000),
                        np.linspace(3.8, 4.2, 2001), [0.0, -0.0, 10.0, -10.0, 1e30, -1e30]]).astype(np.float32)
    expected = np.array([math.erf(float(v)) for v in x])
    got = numpy_backend.erf(x)
    assert got.dtype == np.float32
    assert _ulps(got, expected, np.float32).max() <= 1.0
    normal = np.abs(expected) > np.finfo(np.float32).tiny
    assert (np.abs(got - expected)[normal] / np.abs(expected[normal])).max() < 1e-7
    assert np.array_equal(np.signbit(got), np.signbit(x))  # erf is odd, -0.0 included
    special = numpy_backend.erf(np.array([np.inf, -np.inf, np.nan], np.float32))
    assert special[0] == 1.0 and special[1] == -1.0 and np.isnan(special[2])


def test_erf_float16_and_odd_shapes():
    x = np.linspace(-5, 5, 3000).astype(np.float16).reshape(3, 1000, 1)[:, ::3]  # non-contiguous
    expected = np.array([math.erf(float(v)) for v in x.reshape(-1)]).reshape(x.shape)
    got = numpy_backend.erf(x)
    assert got.dtype == np.float16 and got.shape == x.shape
    assert _ulps(got, expected, np.float16).max() <= 0.5 + 1e-3  # the rounding of an accurate float32 value
    assert numpy_backend.erf(np.float32(0.5)).shape == ()


def test_erf_float32_agrees_with_scipy_when_installed():
    special = pytest.importorskip("scipy.special")
    x = np.random.default_rng(0).standard_normal(1 << 17).astype(np.float32) * 2
    np.testing.assert_array_max_ulp(numpy_backend.erf(x), special.erf(x).astype(np.float32), maxulp=1)


def test_erf_float64_is_exact_with_or_without_scipy():
    x = np.linspace(-7, 7, 20001)
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(numpy_backend.erf(x), expected, rtol=1e-13, atol=1e-15)


def test_float32_sigmoid_is_within_4_ulp_everywhere():
    x = np.concatenate([np.linspace(-110, 110, 200001), [0.0, -0.0, np.inf, -np.inf]]).astype(np.float32)
    got = numpy_backend.sigmoid(x)
    assert got.dtype == np.float32
    want = np.exp(-np.logaddexp(0, -x.astype(np.float64)))
    ulps = np.abs(got - want) / np.spacing(want.astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 4
    assert np.isnan(numpy_backend.sigmoid(np.float32([np.nan]))).all()


def test_erf_fast_float32_within_4_ulp_odd_and_saturating():
    x = np.concatenate([np.linspace(-6, 6, 400001), np.geomspace(1e-45, 1e-3, 2000), -np.geomspace(1e-45, 1e-3, 2000),
                        [0.0, -0.0, 10.0, -10.0, 1e30, -1e30]]).astype(np.float32)
    expected = np.array([math.erf(float(v)) for v in x])
    got = numpy_backend.erf_fast(x)
    assert got.dtype == np.float32
    assert _ulps(got, expected, np.float32).max() <= 4.0
    assert np.array_equal(np.signbit(got), np.signbit(x))
    special = numpy_backend.erf_fast(np.array([np.inf, -np.inf, np.nan], np.float32))
    assert special[0] == 1.0 and special[1] == -1.0 and np.isnan(special[2])
    assert numpy_backend.erf_fast(np.float64(0.5)) == math.erf(0.5)  # other dtypes: the 1-ulp erf


def test_sigmoid_of_a_0d_array():
    from graphgrad.backend import numpy_backend

    for dtype in (np.float16, np.float32, np.float64):
        y = numpy_backend.sigmoid_fallback(np.array(0.5, dtype))
        assert y.shape == () and y.dtype == dtype
        np.testing.assert_allclose(y, 1 / (1 + np.exp(-0.5)), rtol=1e-3)
