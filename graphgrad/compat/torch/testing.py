"""``torch.testing.assert_close``: values, shapes and (by default) dtypes equal within PyTorch's default
tolerances for the dtype (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7, 1e-7; float16: 1e-3, 1e-5)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as _gg
from graphgrad.backend import np as _np
from graphgrad.backend import to_numpy

Tensor = _gg.Tensor

_DEFAULTS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
             "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _array(x: Any) -> _np.ndarray:
    if isinstance(x, Tensor):
        return to_numpy(x._data)
    return _np.asarray(x)


def assert_close(actual: Any, expected: Any, *, rtol: Optional[float] = None, atol: Optional[float] = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False, msg: Optional[str] = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` (tensors, arrays, numbers, or
    sequences / dicts of them) are close: ``|a - e| <= atol + rtol * |e|`` elementwise."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), msg or "the keys differ"
        for key in expected:
            assert_close(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(expected, (list, tuple)) and not isinstance(actual, (Tensor, _np.ndarray)):
        assert len(actual) == len(expected), msg or f"lengths differ: {len(actual)} and {len(expected)}"
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg)
        return
    a, e = _array(actual), _array(expected)
    if (rtol is None) != (atol is None):
        raise ValueError("assert_close: give both rtol and atol, or neither")
    if rtol is None:
        rtol, atol = _DEFAULTS.get(str(a.dtype), (0.0, 0.0))
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    if check_dtype and isinstance(actual, Tensor) and isinstance(expected, Tensor) and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.")
    try:
        _np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except AssertionError as error:
        raise AssertionError(msg or f"Tensor-likes are not close!\n{error}") from None


__all__ = ["assert_close"]
