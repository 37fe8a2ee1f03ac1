"""``torch._dynamo``: what programs and libraries touch of it (einops registers its functions with
``allow_in_graph``; programs set ``config`` switches or call ``reset``). ``torch.compile`` returns the
model or function unchanged here, so each of these only has to accept its arguments."""
from __future__ import annotations

import types
from typing import Any, Callable, Optional

#: ``torch._dynamo.config``: any switch may be set and read back
config = types.SimpleNamespace(verbose=False, suppress_errors=False, cache_size_limit=8, capture_scalar_outputs=False,
                               automatic_dynamic_shapes=True, assume_static_by_default=True)


def allow_in_graph(fn: Callable) -> Callable:
    return fn


def disable(fn: Optional[Callable] = None, recursive: bool = True, **kwargs: Any):
    """A decorator (or, given ``fn``, ``fn``): nothing is compiled, so there is nothing to turn off."""
    return fn if fn is not None else (lambda f: f)


def optimize(*args: Any, **kwargs: Any) -> Callable:
    return lambda fn: fn


def reset() -> None:
    """Nothing is cached by a compiler here."""


def mark_dynamic(tensor: Any, index: Any, **kwargs: Any) -> None:
    """Accepted: every dimension may change between calls."""


def mark_static(tensor: Any, index: Any = None) -> None:
    """Accepted."""


def is_compiling() -> bool:
    return False
