"""The op library. Every public op function and op class of the family modules is re-exported here
(``gg.ops.exp``, ``gg.ops.Exp``); the functions (not the classes) are re-exported by ``graphgrad``
itself (``gg.exp``), so ``gg.Conv2d`` stays free for the layer of that name."""
import importlib as _importlib

#: The op family modules, in dependency order.
FAMILIES = ("elementwise", "unary", "composite", "reduce", "shape", "array", "indexing", "scatter", "selection",
            "linalg", "nn", "attention", "losses", "conv", "im2col", "pool", "recurrent", "pointwise", "math_more", "shape_more",
            "sorting", "sorting_more")

#: Public op functions (what ``from graphgrad.ops import *`` and ``graphgrad`` export).
__all__ = []
#: Public op classes, by name.
OP_CLASSES = {}

#: The family modules by name.
_families = {}

for _family in FAMILIES:
    _module = _families[_family] = _importlib.import_module(f"graphgrad.ops.{_family}")
    for _name, _value in vars(_module).items():
        if not _name.startswith("_") and getattr(_value, "__module__", None) == _module.__name__:
            globals()[_name] = _value
            if isinstance(_value, type):
                OP_CLASSES[_name] = _value
            else:
                __all__.append(_name)

from graphgrad.ops import methods as _methods  # noqa: E402  (installs Tensor operators last)
from graphgrad.ops import torch_methods as _torch_methods  # noqa: E402  (and the PyTorch-named methods)
from graphgrad.ops import torch_methods_more as _torch_methods_more  # noqa: E402
