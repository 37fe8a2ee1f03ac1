"""Every global setting in one place."""
from __future__ import annotations

from graphgrad.backend import np

#: dtype of tensors made from Python floats and of random/float factories.
default_float = np.dtype("float32")
#: dtype of tensors made from Python ints.
default_int = np.dtype("int64")


def set_default_dtype(dtype) -> None:
    """Set the default float dtype (``gg.float32`` or ``gg.float64``)."""
    global default_float
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"default dtype must be a float dtype, got {dtype}")
    default_float = dtype


def get_default_dtype():
    """The current default float dtype."""
    return default_float

# Largest file (bytes) that gg.load_graph / Saver.restore read as a graph's weights file; larger files
# are refused with an error before reading. Raise it to load bigger graphs: graphgrad.config.max_load_bytes = ...
max_load_bytes = 4 << 30
