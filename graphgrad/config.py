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


#: where factories put new tensors when no ``device=`` is given (None: the CPU); set it with
#: ``gg.set_default_device(...)`` or ``with gg.device("cuda"):`` (PyTorch's forms)
default_device = None


def get_default_dtype():
    """The current default float dtype."""
    return default_float

# The most bytes any loader reads or allocates for one file: a graph's weights file (gg.load_graph,
# Saver.restore), the arrays an .npz/.npy/.safetensors file declares (gg.load, gg.load_checkpoint, the
# weights inside a graph's .npz, `onnx run` inputs), an ONNX model file, the data an IDX header declares
# (read_idx, load_mnist). Sizes are checked against the file's declarations before allocating, so a zip
# or gzip bomb is refused with graphgrad.errors.LoadLimitError (GraphError for graph loads). Read at each
# load; raise it to load bigger files: graphgrad.config.max_load_bytes = 16 << 30
max_load_bytes = 4 << 30
