"""Backend kernels and namespace dispatch."""
from __future__ import annotations

import math

import numpy as np

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
