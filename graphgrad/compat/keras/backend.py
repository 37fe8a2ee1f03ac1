"""``keras.backend``: the few helpers Keras scripts call (``clear_session``, ``backend()``...)."""
from __future__ import annotations

import graphgrad as gg

__all__ = ["backend", "clear_session", "floatx", "set_floatx", "image_data_format", "epsilon"]


def backend() -> str:
    return "graphgrad"


def clear_session(free_memory: bool = True) -> None:
    """Restart the layer-name counters (``dense``, ``dense_1``...), as Keras does."""
    from graphgrad.compat.keras.engine import _NAME_COUNTS

    _NAME_COUNTS.clear()


def floatx() -> str:
    return str(gg.get_default_dtype())


def set_floatx(dtype: str) -> None:
    gg.set_default_dtype(dtype)


def image_data_format() -> str:
    return "channels_last"


def epsilon() -> float:
    return 1e-7
