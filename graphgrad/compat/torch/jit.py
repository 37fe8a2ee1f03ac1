"""``torch.jit``: graphgrad has no TorchScript; ``script`` and ``trace`` return the module or function
unchanged (it runs as before, eagerly), so programs that script a model for speed or export run on.
For a compiled callable use ``gg.function``; to save a model for other tools, ``torch.onnx.export``.
``torch.jit.save``/``load`` are not provided: save a ``state_dict`` with ``torch.save``."""
from __future__ import annotations

from typing import Any, Callable


def script(obj: Any = None, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """``obj`` itself (a module, a function or a class), to be run eagerly."""
    return obj


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """``func`` itself (a module or a function), to be run eagerly."""
    return func


def trace_module(mod: Any, inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    return mod


def _identity_decorator(fn: Callable = None, **kwargs: Any) -> Any:
    if fn is None:
        return lambda f: f
    return fn


ignore = unused = export = _identity_decorator


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    return the_value


def interface(obj: Any) -> Any:
    return obj


class Final:
    """``torch.jit.Final[T]`` in annotations: accepted, means nothing here."""

    def __class_getitem__(cls, item: Any) -> Any:
        return item


__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "interface", "Final"]
