"""In-place ops that autograd records, as PyTorch's: ``x += y``, ``x.add_(y)``, ``x.relu_()``,
``x[i] = v`` and ``inplace=True`` activations on a tensor in the autograd graph (or with an operand
that requires grad). The result is computed out of place from ``x``'s current value and ``x`` is
rebound to it (its array and the node that made it: ``core.autograd.rebind_in_place``), so gradients
flow through the op. Without gradients to record, callers write into ``x``'s array as before."""
from __future__ import annotations

from typing import Any, Callable

from graphgrad.core.autograd import in_place_source, is_grad_enabled, rebind_in_place
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError
from graphgrad.ops import elementwise as ew


def recorded(x: Tensor, *operands: Any) -> bool:
    """Whether an in-place op on ``x`` with ``operands`` must be recorded by autograd: gradients are on,
    ``x`` holds a value, and it or an operand requires grad."""
    if x._data is None or not is_grad_enabled():
        return False
    return x.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in operands)


def apply_in_place(x: Tensor, compute: Callable[[Tensor], Tensor], how: str) -> Tensor:
    """``x`` becomes ``compute(value of x)`` (cast to ``x``'s dtype), recorded by autograd. Returns ``x``."""
    source = in_place_source(x, how)
    result = compute(source)
    if not isinstance(result, Tensor):
        result = Tensor(result, dtype=x.dtype)
    if result.dtype != x.dtype:
        result = ew.astype(result, x.dtype)
    return rebind_in_place(x, result, how, source)


def assign_in_graph(x: Tensor, result: Tensor, how: str) -> bool:
    """For an in-place op whose ``result`` was computed while a graph is being built (a graph tensor:
    no value yet): a Variable ``x`` gets an assign node of it, anything else a ``GraphError`` (writing
    the missing value would fill ``x`` with NaN). Returns ``False`` when ``result`` has a value, for
    the caller to write into ``x``'s array."""
    if result._data is not None:
        return False
    if x._data is None or not getattr(x, "is_variable", False):
        raise GraphError(f"{how} while a graph is being built: only Variables (parameters) can be updated inside "
                         "a graph (as an assign node); write x = ... instead, or run it outside the graph's "
                         "`with graph.as_default():` block")
    x.assign(result)
    return True
