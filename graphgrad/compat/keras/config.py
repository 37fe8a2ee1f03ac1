"""``keras.config``: Keras 3's global settings (float type, epsilon, image layout, backend name) and
the switches scripts flip at the top (traceback filtering, interactive logging, unsafe
deserialization), which are accepted and, where graphgrad has nothing to switch, ignored."""
from __future__ import annotations

from graphgrad.compat.keras.backend import (backend, epsilon, floatx, image_data_format, set_epsilon, set_floatx,
                                            set_image_data_format)

__all__ = ["backend", "epsilon", "floatx", "image_data_format", "set_epsilon", "set_floatx",
           "set_image_data_format", "disable_traceback_filtering", "enable_traceback_filtering",
           "is_traceback_filtering_enabled", "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "enable_unsafe_deserialization", "set_dtype_policy", "dtype_policy"]

_STATE = {"traceback_filtering": True, "interactive_logging": True}


def disable_traceback_filtering() -> None:
    _STATE["traceback_filtering"] = False


def enable_traceback_filtering() -> None:
    _STATE["traceback_filtering"] = True


def is_traceback_filtering_enabled() -> bool:
    return _STATE["traceback_filtering"]


def enable_interactive_logging() -> None:
    _STATE["interactive_logging"] = True


def disable_interactive_logging() -> None:
    _STATE["interactive_logging"] = False


def is_interactive_logging_enabled() -> bool:
    return _STATE["interactive_logging"]


def enable_unsafe_deserialization() -> None:
    """Accepted: loading a ``.keras`` file here never runs code from it (a ``Lambda`` keeps its weights only)."""


def set_dtype_policy(policy: str) -> None:
    """``"float32"`` (or ``"float64"``) sets the float type; mixed precision is not supported."""
    name = getattr(policy, "name", policy)
    if name in ("float32", "float64"):
        set_floatx(name)
        return
    raise NotImplementedError(f"keras.config.set_dtype_policy({name!r}): graphgrad.compat.keras trains in one float "
                              f"type (float32 or float64)")


def dtype_policy() -> str:
    return floatx()
