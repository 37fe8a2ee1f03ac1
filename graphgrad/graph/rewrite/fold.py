"""Constant folding: a node whose tensor inputs are all constants is computed once, at compile time.

The node's ``op.forward`` runs on the constants' arrays (and its literal inputs) with NumPy, on the
host (a constant captured from a device tensor is read to the host first: rewrites compute on the
host, and the Session moves constants to the run's device), and the node is replaced by a ``Const``
holding the result. Not folded:

* impure ops (see ``cse.IMPURE_OPS``: placeholders, assignments, random masks...) and variable
  reads (a variable's value changes between runs);
* nodes with control inputs (folding would drop the dependency);
* nodes with no tensor input (``Const`` itself and the ops above);
* results over ``MAX_FOLD_ELEMENTS`` elements (a broadcast of a scalar would otherwise become a huge
  constant), results whose shape or dtype is not exactly the node's, and ops that fail (the error
  is left for run time, where it names the node).
"""
from __future__ import annotations

import math

from graphgrad.backend import np
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.graph.rewrite.cse import is_pure
from graphgrad.graph.rewrite.engine import host_value, rewrite
from graphgrad.graph.variables import Const, ReadVariable

#: The largest result (in elements) constant folding stores in the graph.
MAX_FOLD_ELEMENTS = 1_000_000


def _const_array(x):
    node = x._node
    return host_value(node.op) if node is not None and type(node.op) is Const else None


@rewrite("fold")
def fold_constant_node(node, ctx):
    """Replace a pure node whose tensor inputs are all constants by a constant of its value."""
    if type(node.op) is Const or node.out is None or node.control_inputs:
        return None
    if not is_pure(node.op) or isinstance(node.op, ReadVariable):
        return None
    spec = node.out.spec
    if spec.shape is None or None in spec.shape or math.prod(spec.shape) > MAX_FOLD_ELEMENTS:
        return None
    args, first = [], None
    for x in node.inputs:
        if isinstance(x, Tensor):
            value = _const_array(x)
            if value is None:
                return None
            if first is None:
                first = value
            args.append(value)
        else:
            args.append(x)
    if first is None:
        return None
    try:
        with np.errstate(all="ignore"):
            out = node.op.forward(np, *args)
    except Exception:
        return None
    if out is None:
        return None
    out = np.array(out, copy=True)  # owned and writable: never a view of another constant
    if tuple(out.shape) != tuple(spec.shape) or out.dtype != spec.dtype:
        return None
    return ctx.graph.add_node(Const(out), (), TensorSpec(tuple(out.shape), out.dtype), name="Const").out
