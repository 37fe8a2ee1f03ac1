"""gg.function keeps a bounded number of traces (least recently used dropped) and warns when a function
is traced often."""
import warnings

import numpy as np
import pytest

import graphgrad as gg


def test_trace_cache_is_bounded_and_least_recently_used():
    f = gg.function(lambda x: x * 2, max_traces=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for n in range(1, 6):  # five shapes: five traces, three kept
            assert f(gg.ones(n)).shape == (n,)
        assert f.trace_count == 5 and len(f._cache) == 3
        f(gg.ones(3))  # kept: no new trace; now the most recently used
        assert f.trace_count == 5
        f(gg.ones(6))  # drops the least recently used (shape (4,))
        f(gg.ones(3))
        assert f.trace_count == 6
        f(gg.ones(4))  # was dropped: traced again
        assert f.trace_count == 7 and len(f._cache) == 3
    np.testing.assert_allclose(f(gg.ones(4)).numpy(), 2 * np.ones(4))


def test_many_traces_warn_and_memory_stays_bounded():
    f = gg.function(lambda x: x + 1)
    with pytest.warns(RuntimeWarning, match="was traced 8 times"):
        for n in range(1, 10):
            f(gg.ones(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for n in range(10, 200):
            f(gg.ones(n))
    assert f.trace_count == 199 and len(f._cache) == gg.graph.trace.MAX_TRACES and len(f.signatures) <= 4 * 64
    with pytest.raises(ValueError, match="max_traces"):
        gg.function(lambda x: x, max_traces=0)


def test_tensor_only_calls_trace_once_per_shape_dtype_and_requires_grad():
    """Calls with tensor arguments only take a shorter way to their cache key: it must tell apart
    what the full signature tells apart."""
    f = gg.function(lambda x, y: x * 2.0 + y)
    a = gg.ones((2, 3))
    f(a, a)
    f(gg.zeros((2, 3)), gg.ones((2, 3)))
    assert f.trace_count == 1
    f(gg.ones((3, 3)), gg.ones((3, 3)))
    f(gg.ones((2, 3), dtype="float64"), gg.ones((2, 3), dtype="float64"))
    f(gg.ones((2, 3), requires_grad=True), a)
    assert f.trace_count == 4
    f(a, a)
    f(gg.nn.Parameter(gg.ones((2, 3))), a)  # a subclass of Tensor: the full signature
    assert f.trace_count == 5  # (a Parameter is keyed as before, by the full signature)
    np.testing.assert_array_equal(f(a, a).numpy(), np.full((2, 3), 3.0, np.float32))
