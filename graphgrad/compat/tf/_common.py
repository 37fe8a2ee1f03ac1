"""What the TensorFlow-1 facade's modules share: dtype names, building every op in the default graph,
``name=`` on composed functions, and the per-graph collections (``tf.get_collection``)."""
from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Callable

import graphgrad as _gg

float16, float32, float64 = _gg.float16, _gg.float32, _gg.float64
int8, int16, int32, int64, uint8 = _gg.int8, _gg.int16, _gg.int32, _gg.int64, _gg.uint8
bool_ = _gg.bool_

#: TensorFlow's dtype strings that mean something else to NumPy ("float" is float32 in TF, float64 in NumPy)
_DTYPE_NAMES = {"float": float32, "double": float64, "half": float16, "int": int32, "long": int64,
                "bool": bool_, "float32": float32, "float64": float64, "float16": float16, "int32": int32,
                "int64": int64, "int8": int8, "int16": int16, "uint8": uint8}


def as_dtype(dtype: Any):
    """``tf.as_dtype``: a graphgrad dtype from a TF dtype name (``"float"`` is float32, as in TF) or any
    dtype graphgrad accepts; ``None`` stays ``None``."""
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    name = getattr(dtype, "name", None)  # a real TensorFlow DType (tf.float32) passed by mistake
    if isinstance(name, str) and name in _DTYPE_NAMES and not hasattr(dtype, "kind"):
        return _DTYPE_NAMES[name]
    return _gg.as_dtype(dtype)


def default_dtype(value: Any):
    """TensorFlow's dtype for a Python value: floats float32, ints int32, bools bool; NumPy values and
    tensors keep theirs (``None`` means: keep it)."""
    if isinstance(value, (_gg.Tensor,)) or hasattr(value, "dtype"):
        return None
    probe = value
    while isinstance(probe, (list, tuple)) and probe:
        probe = probe[0]
    if isinstance(probe, bool):
        return bool_
    if isinstance(probe, int):
        return int32
    if isinstance(probe, float):
        return float32
    return None


def in_graph(fn: Callable) -> Callable:
    """``fn`` run with the default graph active, so every op it applies builds a node, as in TensorFlow 1
    (Variables used in it become reads of their values), and with TensorFlow's ``name=``."""

    @functools.wraps(fn)
    def wrapper(*args, name: Any = None, **kwargs):
        with _gg.get_default_graph().as_default():
            out = fn(*args, **kwargs)
        return named(out, name, args)

    return wrapper


def named(out: Any, name: Any, args: tuple = ()) -> Any:
    """Give the graph node that made ``out`` the name ``name`` (a copy when ``out`` is an input)."""
    if not name or not isinstance(out, _gg.Tensor) or not isinstance(out._node, _gg.GraphNode):
        return out
    if any(out is a for a in args) or getattr(out, "is_variable", False):
        with out._node.graph.as_default():
            return _gg.identity(out, name=name)
    out._node.graph.rename(out._node, name)
    return out


def need_rank(what: str, *tensors: Any) -> None:
    """Raise an actionable ``ShapeError`` if a tensor's rank is unknown (a placeholder made without a
    shape) where ``tf.<what>`` needs it."""
    for x in tensors:
        if isinstance(x, _gg.Tensor) and x.shape is None:
            raise _gg.ShapeError(f"tf.{what}: the rank of {x.name or 'its input'} is unknown (it comes from a "
                                 "placeholder made without a shape) and this function needs it: give the "
                                 "placeholder a shape, e.g. tf.placeholder(tf.float32, [None, 784])")


def as_axis(axis: Any) -> Any:
    """TF's axis (an int, a list or a tuple, or None) as graphgrad's (an int, a tuple or None)."""
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    if isinstance(axis, _gg.Tensor) and not axis.is_symbolic:
        value = axis.numpy()
        return int(value) if value.ndim == 0 else tuple(int(a) for a in value)
    return axis


# ---- per-graph state: collections and variable stores ---------------------------------------------------
_STATE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def graph_state(graph=None) -> dict:
    """The facade's bookkeeping for ``graph`` (default graph): ``collections`` and ``variables`` (the
    ``get_variable`` store)."""
    graph = graph or _gg.get_default_graph()
    state = _STATE.get(graph)
    if state is None:
        state = _STATE[graph] = {"collections": {}, "variables": {}}
    return state


class _Scopes(threading.local):
    """Each thread's open ``name_scope``/``variable_scope`` blocks: (graph, name prefix, variable prefix,
    reuse, initializer, regularizer)."""

    def __init__(self) -> None:
        self.stack: list = []


SCOPES = _Scopes()


def current_scope() -> tuple:
    """``(name prefix, variable prefix, reuse, initializer, regularizer)`` of the innermost scope of the
    default graph (empty prefixes and no reuse outside any)."""
    graph = _gg.get_default_graph()
    for entry in reversed(SCOPES.stack):
        if entry[0] is graph:
            return entry[1:]
    return ("", "", False, None, None)
