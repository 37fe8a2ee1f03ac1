"""The native-kernel extra (graphgrad/backend/native): building, caching, checked calls, switching,
and its float32 building blocks (exp, sigmoid, tanh) against float64 NumPy."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from graphgrad.backend import native
from tests.backend.native_checks import needs_native



def test_signatures_are_read_from_the_export_lines():
    found = native.signatures()
    assert found["gg_sigmoid_f32"] == [("array", np.dtype(np.float32), False), ("array", np.dtype(np.float32), True),
                                       ("scalar", __import__("ctypes").c_int64, False)]
    assert all(name.startswith("gg_") for name in found)


def test_parameter_types_outside_the_list_are_refused():
    with pytest.raises(TypeError, match="unsupported pointer type"):
        native._parameter("gg_f", "const char *s")
    with pytest.raises(TypeError, match="unsupported parameter type"):
        native._parameter("gg_f", "long double x")


@needs_native
def test_calls_check_dtype_contiguity_writability_and_count():
    sigmoid = native.kernel("sigmoid_f32")
    x, y = np.zeros(4, np.float32), np.empty(4, np.float32)
    with pytest.raises(TypeError, match="float32"):
        sigmoid(x.astype(np.float64), y, 4)
    with pytest.raises(TypeError, match="C-contiguous"):
        sigmoid(np.zeros(8, np.float32)[::2], y, 4)
    read_only = np.empty(4, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(TypeError, match="writable"):
        sigmoid(x, read_only, 4)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        sigmoid(x, y)
    with pytest.raises(TypeError, match="NumPy array"):
        sigmoid([0.0] * 4, y, 4)
    x.flags.writeable = False  # a read-only input is fine
    sigmoid(x, y, 4)
    np.testing.assert_array_equal(y, 0.5)


@needs_native
def test_disabled_switches_off_and_back():
    assert native.kernel("sigmoid_f32") is not None
    with native.disabled():
        assert not native.available() and native.kernel("sigmoid_f32") is None
        assert native.status().startswith("off")
    assert native.kernel("sigmoid_f32") is not None
    assert native.kernel("no_such_kernel") is None


@needs_native
def test_build_is_cached_and_rebuilt_atomically(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHGRAD_CACHE_DIR", str(tmp_path))
    first = native.build()
    stamp = first.stat().st_mtime_ns
    assert native.build() == first and first.stat().st_mtime_ns == stamp  # cached: not compiled again
    again = native.build(force=True)
    assert again == first and not list(tmp_path.glob("*.partial"))


def test_a_failing_compiler_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "false")
    with pytest.raises(RuntimeError, match="the C compiler"):
        native.build()
    assert not list(tmp_path.iterdir())  # nothing half-written left behind


def _run(code: str, **env) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env={**os.environ, **env}, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def test_environment_switch_turns_it_off():
    out = _run("""
        from graphgrad.backend import native
        print(native.enabled(), native.kernel("sigmoid_f32"), native.status())
    """, GRAPHGRAD_NATIVE="0")
    assert "False None off" in out


def test_without_a_compiler_graphgrad_warns_once_and_runs_numpy(tmp_path):
    out = _run("""
        import warnings
        warnings.simplefilter("always")
        import numpy as np, graphgrad as gg
        from graphgrad.backend import native
        print("kernel", native.kernel("sigmoid_f32"), native.kernel("tanh_f32"))
        print(gg.gelu(gg.tensor(np.ones(3, np.float32))).numpy())
    """, GRAPHGRAD_CACHE_DIR=str(tmp_path), CC="false")
    assert "kernel None None" in out
    assert out.count("native kernels are off") == 1 and "the C compiler (false) failed" in out


@needs_native
@pytest.mark.parametrize("name, reference, tolerance_ulp", [
    ("sigmoid_f32", lambda x: 1 / (1 + np.exp(-x)), 4),
    ("tanh_f32", np.tanh, 4)])
def test_building_blocks_are_accurate(name, reference, tolerance_ulp):
    x = np.concatenate([np.linspace(-20, 20, 400_001), np.linspace(-1, 1, 100_001)]).astype(np.float32)
    y = np.empty_like(x)
    native.kernel(name)(x, y, x.size)
    expected = reference(x.astype(np.float64))
    ulp = np.spacing(np.maximum(np.abs(expected), 1e-30).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(y - expected) / ulp) <= tolerance_ulp


@needs_native
def test_building_blocks_keep_nan_and_infinities():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0], np.float32)
    y = np.empty_like(x)
    native.kernel("sigmoid_f32")(x, y, x.size)
    np.testing.assert_array_equal(y[:5], [np.nan, 1.0, 0.0, 0.5, 0.5])
    assert y[5] == 1.0 and 0 <= y[6] < 1e-37
    native.kernel("tanh_f32")(x, y, x.size)
    np.testing.assert_array_equal(y, [np.nan, 1.0, -1.0, 0.0, 0.0, 1.0, -1.0])
    native.kernel("tanh_f32")(x[:0], y[:0], 0)  # size 0


@needs_native
@pytest.mark.parametrize("shape", [(512, 32), (32, 512), (13, 7), (16, 24), (9, 17), (1, 5), (8, 8), (0, 3)])
def test_transpose_copies_every_element_whatever_the_edges(shape):
    src = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    dst = np.full(shape[::-1], np.nan, np.float32)
    native.kernel("transpose_f32")(src, dst, *shape)
    np.testing.assert_array_equal(dst, src.T)


def test_info_names_the_native_kernels():
    from graphgrad import cli_commands

    assert "native kernels:" in cli_commands.info()
