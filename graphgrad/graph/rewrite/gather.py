"""Products with embedding rows done on the table's rows instead ("simplify" phase).

A language model multiplies gathered rows by a matrix in its training step twice: the input weight's
gradient ``a @ E[idx]`` (the input projection's weight gradient, ``a`` = (K, R) gradients of R token
positions) and the embedding's gradient ``scatter(g @ W, idx)`` (the input gradient scattered into
the table). When the table has fewer rows V than there are positions R, both are cheaper on the
table's side, by linearity of the scatter-add:

* ``a @ E[idx] -> scatter(a^T, idx)^T @ E``: K*R*D multiply-adds become R*K adds and K*V*D;
* ``scatter(g @ W, idx) -> scatter(g, idx) @ W``: R*K*D become R*K adds and V*K*D.

(W3, an LSTM over a 65-token vocabulary with 1120 positions per batch: two products of 37M
multiply-adds each become 2M.) Rows may reach the product through reshapes and transposes of the
position axes (the rows' own last axis untouched); the indices then go through the same (or the
inverse) reshapes and transposes. Sums are reassociated, so float results differ in the last bits.
"""
from __future__ import annotations

from typing import Optional

from graphgrad.core.tensor import Tensor
from graphgrad.graph.rewrite.engine import producer_op as _op, rewrite
from graphgrad.ops.linalg import MatMul
from graphgrad.ops.nn import Embedding, EmbeddingBackward
from graphgrad.ops.shape import Reshape, Transpose

_DEPTH = 6  # reshapes/transposes followed between the rows and the product


def _position_op(x: Tensor) -> Optional[object]:
    """The op making ``x`` from its input when it only rearranges the position axes (the last axis,
    of known size, stays last and whole), else ``None``."""
    op, node = _op(x), x._node if isinstance(x, Tensor) else None
    if node is None or node.control_inputs or not node.inputs or x.shape is None or not x.shape \
            or x.shape[-1] is None:
        return None
    source = node.inputs[0]
    if not isinstance(source, Tensor) or source.shape is None or not source.shape or source.shape[-1] != x.shape[-1]:
        return None
    if type(op) is Transpose and op.axes and op.axes[-1] == len(op.axes) - 1:
        return op
    if type(op) is Reshape and None not in x.shape and None not in source.shape:
        return op
    return None


def _on_indices(op, source_shape: tuple, inverse: bool):
    """The rearrangement of the indices that ``op`` (or its inverse) makes of the rows."""
    if type(op) is Transpose:
        axes = op.axes[:-1]
        return Transpose(tuple(sorted(range(len(axes)), key=axes.__getitem__)) if inverse else axes)
    return Reshape(tuple(source_shape[:-1]))


def _gathered(x: Tensor):
    """``(table, index ops)`` when ``x`` is ``Embedding(idx, table)`` (no padding row) seen through
    position rearrangements (``index ops``: what to apply to ``idx``, innermost first)."""
    chain = []
    for _ in range(_DEPTH):
        op = _op(x)
        if type(op) is Embedding:
            idx, table = x._node.inputs
            return idx, table, chain[::-1]
        if _position_op(x) is None:
            return None
        chain.append(op if type(op) is Transpose else Reshape(tuple(x.shape[:-1]) + (x.shape[-1],)))
        x = x._node.inputs[0]
    return None


@rewrite("simplify", tracks=[MatMul])
def product_with_gathered_rows(node, ctx):
    """``a @ E[idx]`` (a: (K, R), R positions) -> ``scatter(a^T, idx)^T @ E`` when E has fewer rows than R."""
    a, rows = node.inputs
    if not (isinstance(a, Tensor) and isinstance(rows, Tensor)) or a.shape is None or rows.shape is None \
            or a.ndim != 2 or rows.ndim != 2:
        return None
    found = _gathered(rows)
    if found is None:
        return None
    idx, table, chain = found
    if table.shape is None or None in table.shape or rows.shape[0] is None or table.shape[0] * 2 > rows.shape[0]:
        return None
    for op in chain:  # the index of each row of ``rows``
        idx = ctx.make(Transpose(op.axes[:-1]) if type(op) is Transpose else Reshape(op.shape[:-1]), idx)
    at = a._node.inputs[0] if type(_op(a)) is Transpose and _op(a).axes == (1, 0) else ctx.make(Transpose((1, 0)), a)
    summed = ctx.make(EmbeddingBackward(table.shape[0]), at, idx)  # (V, K)
    out = ctx.make(MatMul(), ctx.make(Transpose((1, 0)), summed), table)
    return out if out.shape == node.out.shape and out.dtype == node.out.dtype else None


@rewrite("simplify", tracks=[EmbeddingBackward])
def scatter_before_product(node, ctx):
    """``scatter(g @ W, idx)`` -> ``scatter(g, idx) @ W`` when the table has fewer rows than there are
    positions and the product has no other reader."""
    rows, idx = node.inputs
    if not isinstance(rows, Tensor) or not isinstance(idx, Tensor) or node.out.shape is None:
        return None
    steps = []  # (op, its input's shape), from the scattered rows down to the product
    x = rows
    for _ in range(_DEPTH):
        if type(_op(x)) is MatMul:
            break
        if _position_op(x) is None or ctx.readers(x) != 1:
            return None
        steps.append((_op(x), x._node.inputs[0].shape))
        x = x._node.inputs[0]
    else:
        return None
    product = x
    g, w = product._node.inputs
    if not (isinstance(g, Tensor) and isinstance(w, Tensor)) or g.shape is None or w.shape is None \
            or g.ndim != 2 or w.ndim != 2 or g.shape[0] is None:
        return None
    if node.op.num * 2 > g.shape[0] or ctx.readers(product) != 1:
        return None
    for op, source_shape in steps:  # the index of each row of the product
        idx = ctx.make(_on_indices(op, source_shape, inverse=True), idx)
    summed = ctx.make(EmbeddingBackward(node.op.num, node.op.padding_idx), g, idx)  # (V, K)
    out = ctx.make(MatMul(), summed, w)
    return out if out.shape == node.out.shape and out.dtype == node.out.dtype else None
