"""The op library. Every public op function and op class of the family modules is re-exported here
(``gg.ops.exp``, ``gg.ops.Exp``); the functions (not the classes) are re-exported by ``graphgrad``
itself (``gg.exp``), so ``gg.Conv2d`` stays free for the layer of that name."""
import builtins as _builtins
import functools as _functools
import importlib as _importlib
import inspect as _inspect

from graphgrad.core.tensor import Tensor as _Tensor

#: The op family modules, in dependency order.
FAMILIES = ("elementwise", "unary", "composite", "reduce", "shape", "array", "indexing", "scatter", "selection",
            "linalg", "nn", "attention", "losses", "conv", "im2col", "pool", "recurrent", "pointwise", "math_more", "shape_more",
            "sorting", "sorting_more", "pool_nd", "resample", "dropout_more", "norm_spatial",
            "sampling", "pool_fractional", "linalg_more", "linalg_products", "linalg_lu",
            "activations_more", "losses_more", "vision", "cells", "embedding_bag", "ctc", "shape_dynamic")

#: Public op functions (what ``from graphgrad.ops import *`` and ``graphgrad`` export).
__all__ = []
#: Public op classes, by name.
OP_CLASSES = {}

#: The family modules by name.
_families = {}
#: The exported functions as their families define them (without ``name=``), by exported name.
RAW_FUNCTIONS = {}
_WRAPPED = {}


def _finish(out, name: str, args: tuple):
    """Name the graph node that made ``out`` (see :func:`_named`)."""
    if isinstance(out, _Tensor) and out._data is None:
        if _builtins.any(out is a for a in args):  # the function returned an input: name a copy of it
            out = _identity(out)
        node = out._node
        if hasattr(node, "graph"):
            node.graph.rename(node, name)
    return out


def _named(fn):
    """``fn`` taking TensorFlow's ``name=`` too: in graph mode the node that makes the result is named
    ``name`` (its output ``name:0``, found with ``graph.get_tensor_by_name``); eagerly it is ignored.
    Only the exported functions (``gg.tanh``) are wrapped; the ops call each other unwrapped. The
    wrapper is generated with ``fn``'s own parameters, so a call costs one plain extra frame."""
    params = list(_inspect.signature(fn).parameters.values())
    kinds = _inspect.Parameter
    if _builtins.any(p.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD, kinds.POSITIONAL_ONLY) for p in params):
        @_functools.wraps(fn)
        def function(*args, **kwargs):
            if "name" not in kwargs:
                return fn(*args, **kwargs)
            name = kwargs.pop("name")
            return _finish(fn(*args, **kwargs), name, args)

        return function
    env = {"_fn": fn, "_finish": _finish}
    signature, call, positional = [], [], []
    keyword_only = False
    for i, p in enumerate(params):
        if p.kind is kinds.KEYWORD_ONLY and not keyword_only:
            signature.append("*")
            keyword_only = True
        if p.default is kinds.empty:
            signature.append(p.name)
        else:
            env[f"_d{i}"] = p.default
            signature.append(f"{p.name}=_d{i}")
        call.append(f"{p.name}={p.name}" if keyword_only else p.name)
        if not keyword_only:
            positional.append(p.name)
    signature.append("name=None" if keyword_only else "*, name=None")
    call = ", ".join(call)
    source = (f"def {fn.__name__}({', '.join(signature)}):\n"
              f"    if name is None:\n        return _fn({call})\n"
              f"    return _finish(_fn({call}), name, ({', '.join(positional)}{',' if positional else ''}))\n")
    # compiled as this file's code, so error sites and the profiler skip the wrapper as graphgrad's own frame
    exec(compile(source, __file__, "exec"), env)  # noqa: S102  (built from fn's own signature above)
    return _functools.wraps(fn)(env[fn.__name__])


def _takes_name(fn) -> bool:
    try:
        return "name" in _inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True  # not introspectable: leave it as it is


for _family in FAMILIES:
    _module = _families[_family] = _importlib.import_module(f"graphgrad.ops.{_family}")
    for _name, _value in vars(_module).items():
        if not _name.startswith("_") and getattr(_value, "__module__", None) == _module.__name__:
            globals()[_name] = _value
            if isinstance(_value, type):
                OP_CLASSES[_name] = _value
            else:
                if getattr(_value, "__name__", None) in ("fn", "function", "<lambda>"):  # made by a factory
                    _value.__name__ = _value.__qualname__ = _name  # (tracebacks, help() and the API docs)
                RAW_FUNCTIONS[_name] = _value
                if not _takes_name(_value):
                    if id(_value) not in _WRAPPED:  # aliases share one wrapper
                        _WRAPPED[id(_value)] = _named(_value)
                    globals()[_name] = _WRAPPED[id(_value)]
                __all__.append(_name)

_identity = _families["array"].identity

from graphgrad.ops import methods as _methods  # noqa: E402  (installs Tensor operators last)
from graphgrad.ops import torch_methods as _torch_methods  # noqa: E402  (and the PyTorch-named methods)
from graphgrad.ops import torch_methods_more as _torch_methods_more  # noqa: E402
