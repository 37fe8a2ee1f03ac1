"""The dtypes graphgrad tensors carry: NumPy dtype objects, so they work unchanged with CuPy.

``gg.float32 == np.float32`` holds, and promotion follows NumPy (NEP 50: Python scalars are weak,
``float32_tensor * 2.5`` stays float32) except where NumPy would widen to float64 with no float64
operand: there PyTorch's rule holds (``int_tensor / 2``, ``int_tensor * 0.5``, ``exp(int_tensor)`` give the
default float dtype; ``float32_tensor * int64_tensor`` stays float32), so float64 never appears by surprise.
"""
from __future__ import annotations

from typing import Any

from graphgrad.backend import np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")
half, float_, double = float16, float32, float64
long, int_ = int64, int32

DType = Any  # anything np.dtype() accepts: gg.float32, "float32", np.float32, float


def as_dtype(dtype: DType) -> np.dtype:
    """Normalize ``dtype`` (a gg dtype, a NumPy dtype or type, a string, or ``float``/``int``/``bool``)."""
    if dtype is float:
        from graphgrad import config

        return config.default_float
    if dtype is bool:
        return bool_
    if dtype is int:
        return int64
    return np.dtype(dtype)


def is_floating(dtype: DType) -> bool:
    """True for float16/32/64."""
    return np.dtype(dtype).kind == "f"


def is_integer(dtype: DType) -> bool:
    """True for signed and unsigned integer dtypes (not bool)."""
    return np.dtype(dtype).kind in "iu"


def promote_types(*dtypes: DType) -> np.dtype:
    """The dtype two or more operands promote to (NumPy rules)."""
    return np.result_type(*[np.dtype(d) for d in dtypes])


def result_dtype(*dtypes: DType) -> np.dtype:
    """The dtype tensors of ``dtypes`` combine to (``cat``, ``stack``), with the module's rule: NumPy's
    promotion, except that float64 appears only from a float64 operand (int64 with float32 is float32,
    as in PyTorch)."""
    dtypes = [np.dtype(d) for d in dtypes]
    out = np.result_type(*dtypes)
    if out != float64 or float64 in dtypes:
        return out
    floats = [d for d in dtypes if d.kind in "fc"]
    return np.result_type(*floats) if floats else float_result(int64)


def float_result(dtype: DType) -> np.dtype:
    """The dtype a float function (exp, sqrt, true division...) returns for an input of ``dtype``: a
    float dtype stays, integers and bool give the default float dtype (float32 unless changed by
    ``gg.set_default_dtype``), as in PyTorch and JAX: never float64 by surprise."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        from graphgrad import config

        return config.default_float
    return np.promote_types(dtype, float16)


def check_same_float(fn: str, *dtypes) -> None:
    """Raise ``DTypeError`` when the float dtypes among ``dtypes`` differ (a float64 input into a float32
    layer): PyTorch refuses this too, and silently promoting would make the whole model float64."""
    floats = [np.dtype(d) for d in dtypes if d is not None and np.dtype(d).kind == "f"]
    if len(floats) > 1 and any(d != floats[0] for d in floats[1:]):
        from graphgrad.errors import DTypeError

        first, other = floats[0], next(d for d in floats[1:] if d != floats[0])
        raise DTypeError(f"{fn}: expected the same float dtype, got input {first} and weight {other}; convert the "
                         f"input (x.astype('{other}'), or x.float() for float32) or the layer "
                         f"(module.to(gg.{first})) so both match")
