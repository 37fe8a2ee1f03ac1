"""Common subexpression elimination: compute each distinct value once.

Two nodes are merged when they have equal ops (ops are immutable values: ``op == other``), the same
inputs (the very same tensors, or equal literals of the same Python type, so ``x * 1`` and
``x * 1.0`` stay apart) and the same control inputs. Visiting nodes in topological order with the
inputs already remapped to their representatives merges whole duplicated subgraphs in one round.
``Add`` and ``Mul`` are commutative: ``a * b`` and ``b * a`` merge (the dtype rule is symmetric).

Impure ops are never merged (nor folded, see ``fold.py``): their result is not a function of their
inputs. They are

* graph inputs: ``Placeholder`` (two placeholders of one shape are different inputs), ``Fed`` (its
  subclass inside an optimized copy), ``PlaceholderWithDefault`` (an input that may be fed);
* effects: ``Assign`` (each write must happen), ``NoOp`` (it exists for its control inputs);
* random ops: ``DropoutMask`` (two dropout masks are independent draws), and any op whose props
  name a ``generator``;
* any op class that sets ``pure = False`` (the hook for user-defined ops: no core change needed).

``ReadVariable`` is merged only when it has no control inputs: two reads of one variable made
under different (or any) control dependencies may be ordered around an ``Assign`` on purpose.
"""
from __future__ import annotations

from graphgrad.core.tensor import Tensor
from graphgrad.graph.rewrite.engine import Fed, rewrite
from graphgrad.graph.variables import Assign, NoOp, Placeholder, PlaceholderWithDefault, ReadVariable
from graphgrad.ops.elementwise import Add, Mul
from graphgrad.ops.nn import DropoutMask

#: Op classes whose two operands may be swapped (exact in IEEE arithmetic and for integers).
COMMUTATIVE_OPS: tuple = (Add, Mul)

#: Op classes whose nodes must never be merged or folded (subclasses included).
IMPURE_OPS: tuple = (Placeholder, Fed, PlaceholderWithDefault, Assign, NoOp, DropoutMask)


def is_pure(op) -> bool:
    """Whether ``op``'s output is a function of its inputs alone (same inputs, same value, no effect)."""
    if isinstance(op, IMPURE_OPS) or not getattr(op, "pure", True):
        return False
    return "generator" not in getattr(op, "props", ())


def _literal_key(value):
    """A hashable key that tells literals apart by type and exact value (``-0.0`` is not ``0.0``)."""
    if isinstance(value, (float, complex)):
        return (type(value), repr(value))
    try:
        hash(value)
    except TypeError:
        return None
    return (type(value), value)


def _key(node):
    """What identifies ``node``'s value, or ``None`` when it must not be merged."""
    if node.out is None or not is_pure(node.op):
        return None
    if isinstance(node.op, ReadVariable) and node.control_inputs:
        return None
    inputs = []
    for x in node.inputs:
        if isinstance(x, Tensor):
            inputs.append(("t", id(x._node)))
        else:
            key = _literal_key(x)
            if key is None:
                return None
            inputs.append(("v", key))
    try:
        hash(node.op)
    except TypeError:
        return None
    if isinstance(node.op, COMMUTATIVE_OPS):
        inputs.sort(key=repr)  # a + b and b + a are one value (IEEE add and multiply commute)
    return (node.op, tuple(inputs), tuple(id(c) for c in node.control_inputs))


@rewrite("cse")
def merge_common_subexpression(node, ctx):
    """Replace ``node`` by an earlier node computing the same value."""
    key = _key(node)
    if key is None:
        return None
    table = ctx.__dict__.setdefault("_cse_table", {})
    try:
        seen = table.get(key)
    except TypeError:  # an op whose props hash but do not compare
        return None
    if seen is None or seen is node or _key(seen) != key:  # the representative must still match
        table[key] = node
        return None
    if seen.out.shape != node.out.shape or seen.out.dtype != node.out.dtype:
        return None
    return seen.out
