"""Symbolic differentiation: ``gradients(ys, xs)`` adds the gradient nodes to the graph.

It is the same reverse walk as eager ``backward()`` (``core.autograd``), run with
``create_graph=True`` on graph tensors: each op's ``backward`` rule, applied to symbolic tensors,
builds nodes instead of computing. Differentiating the result again gives second derivatives.
"""
from __future__ import annotations

from typing import Any

from graphgrad.core.autograd import grad as _grad
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError
from graphgrad.graph.graph import GraphNode, graph_of
from graphgrad.ops import ones_like, reshape, stack


def _as_list(values) -> list:
    return list(values) if isinstance(values, (list, tuple)) else [values]


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients") -> list:
    """Graph tensors ``d(sum of ys)/dx`` for each ``x`` in ``xs`` (``None`` where ``x`` does not
    affect ``ys``), TensorFlow's ``tf.gradients``.

    Args:
        ys: a graph tensor or list of them.
        xs: graph tensors (placeholders, intermediate tensors) or Variables.
        grad_ys: upstream gradients, one per y (default: ones).

    Returns:
        A list with one graph tensor (or ``None``) per ``x``.
    """
    ys, xs = _as_list(ys), _as_list(xs)
    graph = graph_of(ys)
    for y in ys:
        if not (isinstance(y, Tensor) and isinstance(y._node, GraphNode)):
            raise GraphError(f"gradients: ys must be graph tensors, got {type(y).__name__} "
                             "(for eager tensors use gg.grad or .backward())")
    # a Variable's read is the one a loss built outside control dependencies uses (inside them,
    # read_variable makes a fresh read that no loss depends on: every gradient would be None)
    with graph._no_scope():
        targets = [graph.read_variable(x) if getattr(x, "is_variable", False) else x for x in xs]
    result: list = [None] * len(targets)
    live = [i for i, x in enumerate(targets) if isinstance(x, Tensor) and x.requires_grad]
    roots = [(i, y) for i, y in enumerate(ys) if y.requires_grad]
    if not live or not roots:
        return result
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise GraphError(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys (give one per y, or None)")
    with graph.as_default(), graph.name_scope(name):
        seeds = [ones_like(y) if grad_ys[i] is None else grad_ys[i] for i, y in roots]
        found = _grad([y for _, y in roots], [targets[i] for i in live], grad_outputs=seeds,
                      retain_graph=True, create_graph=True, allow_unused=True)
    for i, g in zip(live, found):
        result[i] = g
    return result


def hessians(ys: Any, xs: Any, name: str = "hessians") -> list:
    """The Hessian of ``sum(ys)`` with respect to each ``x``: a graph tensor of shape
    ``x.shape + x.shape`` (``x``'s shape must be fully known)."""
    out = []
    for x in _as_list(xs):
        (g,) = gradients(ys, [x], name=name)
        if g is None:
            out.append(None)
            continue
        shape = tuple(x.shape)
        if None in shape:
            raise GraphError(f"hessians: the shape of {getattr(x, 'name', 'x')} must be fully known, got {shape}")
        flat = reshape(g, (-1,))
        rows = [gradients([flat[i]], [x], name=name)[0] for i in range(flat.shape[0])]
        rows = [r if r is not None else ones_like(x) * 0 for r in rows]
        with graph_of([g]).as_default():
            out.append(reshape(stack(rows, axis=0), shape + shape))
    return out
