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


#: how tensors print (``set_printoptions``; graphgrad/core/printing.py); ``None``: PRINT_DEFAULTS' value
print_options: dict = {"precision": None, "threshold": None, "edgeitems": None, "linewidth": None, "sci_mode": None}
#: PyTorch's defaults (sci_mode None: chosen from the values)
PRINT_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
#: what a tensor's repr writes before a dtype that is not a default (``dtype=float64``); the PyTorch
#: facade sets "torch." (``dtype=torch.float64``), and how a ``grad_fn`` is named: a function of the autograd
#: node (None: its op's name)
repr_dtype_prefix = ""
grad_fn_name = None
_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": float("inf"), "edgeitems": 3, "linewidth": 80}}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """How tensors print, with PyTorch's arguments: ``precision`` digits after the point (every element
    with that many, as PyTorch prints), ``threshold`` elements before a summary with ``edgeitems`` at
    each end, ``linewidth`` characters, ``sci_mode`` True/False to force or forbid scientific notation,
    or a ``profile`` ("default", "short", "full") to start from. Arguments left ``None`` keep their value."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        print_options.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth), ("sci_mode", sci_mode)):
        if value is not None:
            print_options[name] = value

# The most bytes any loader reads or allocates for one file: a graph's weights file (gg.load_graph,
# Saver.restore), the arrays an .npz/.npy/.safetensors file declares (gg.load, gg.load_checkpoint, the
# weights inside a graph's .npz, `onnx run` inputs), an ONNX model file, the data an IDX header declares
# (read_idx, load_mnist). Sizes are checked against the file's declarations before allocating, so a zip
# or gzip bomb is refused with graphgrad.errors.LoadLimitError (GraphError for graph loads). Read at each
# load; raise it to load bigger files: graphgrad.config.max_load_bytes = 16 << 30
max_load_bytes = 4 << 30
