"""``torch.utils.checkpoint``: activation checkpointing trades compute for memory by recomputing a
segment in backward. graphgrad keeps the segment's activations instead (same values and gradients,
the memory of an unchecked model): ``checkpoint(fn, *args)`` is ``fn(*args)``."""
from __future__ import annotations

from typing import Any, Callable


def checkpoint(function: Callable, *args: Any, use_reentrant: Any = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``."""
    return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: Any = None, **kwargs: Any) -> Any:
    """The modules of ``functions`` (a Sequential or a list) applied in order to ``input``."""
    for fn in (functions.children() if hasattr(functions, "children") else functions):
        input = fn(input)
    return input


__all__ = ["checkpoint", "checkpoint_sequential"]
